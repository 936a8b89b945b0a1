// Package planutil holds what the baseline planners share: operator
// support per layer, the CPU fallback real delegates do, deadline-monotonic
// priorities and the conversion of blocks into plan subgraphs.
package planutil

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/partition"
	"github.com/inlay-dev/inlay/workload"
)

// CheckRequest rejects requests a planner cannot work on.
func CheckRequest(req *plan.Request) error {
	switch {
	case req == nil:
		return fmt.Errorf("search: no request")
	case req.Workload == nil || len(req.Workload.Models) == 0:
		return fmt.Errorf("search: request has no workload")
	case req.Platform == nil || len(req.Platform.Processors) == 0:
		return fmt.Errorf("search: request has no platform")
	case req.Cost == nil:
		return fmt.Errorf("search: request has no cost estimator")
	}
	for _, m := range req.Workload.Models {
		if m.Layers == nil {
			return fmt.Errorf("search: model %q is not loaded", m.Name)
		}
	}
	return nil
}

// LayerSupport returns nil when the processor runs every node of the layer.
func LayerSupport(pl *hw.Platform, proc int, lg *graph.LayerGraph, layer int) error {
	for _, id := range lg.Layers[layer].Nodes {
		if err := pl.Supports(proc, lg.Model, lg.Model.Nodes[id]); err != nil {
			return err
		}
	}
	return nil
}

// LayerRuns returns nil when the processor runs every node of the layer
// in a data type the model allows (workload.Model.Allowed).
func LayerRuns(pl *hw.Platform, m *workload.Model, proc, layer int) error {
	if _, err := m.DefaultConfig(pl, proc); err != nil {
		return err
	}
	return LayerSupport(pl, proc, m.Layers, layer)
}

// Fallback assigns every layer of a model to proc, or to the fallback
// processor where proc cannot run it (an operator it lacks, or no data
// type the model allows), as NPU delegates hand unsupported operators
// back to the CPU. It fails when neither runs a layer.
func Fallback(pl *hw.Platform, m *workload.Model, proc, fallback int) ([]int, error) {
	lg := m.Layers
	key := make([]int, len(lg.Layers))
	for l := range lg.Layers {
		key[l] = proc
		if err := LayerRuns(pl, m, proc, l); err != nil {
			if fallback < 0 || fallback == proc {
				return nil, fmt.Errorf("layer %d (%s): %v", l, lg.Layers[l].Name, err)
			}
			if err2 := LayerRuns(pl, m, fallback, l); err2 != nil {
				return nil, fmt.Errorf("layer %d (%s): %v; fallback: %v", l, lg.Layers[l].Name, err, err2)
			}
			key[l] = fallback
		}
	}
	return key, nil
}

// FallbackProc is the fastest CPU-kind processor, or -1 when there is none.
func FallbackProc(pl *hw.Platform) int {
	p, err := pl.Find("cpu")
	if err != nil {
		return -1
	}
	return p
}

// Subgraphs turns blocks keyed by processor ID into plan subgraphs at
// each processor's default configuration for the model (its first
// allowed data type).
func Subgraphs(pl *hw.Platform, m *workload.Model, blocks []partition.Block) ([]plan.Subgraph, error) {
	cfgs, err := DefaultConfigs(pl, m, blocks)
	if err != nil {
		return nil, err
	}
	return SubgraphsOn(pl, blocks, cfgs), nil
}

// DefaultConfigs is each block's processor's default configuration for
// the model.
func DefaultConfigs(pl *hw.Platform, m *workload.Model, blocks []partition.Block) ([]hw.Config, error) {
	cfgs := make([]hw.Config, len(blocks))
	for i, b := range blocks {
		c, err := m.DefaultConfig(pl, b.Key)
		if err != nil {
			return nil, err
		}
		cfgs[i] = c
	}
	return cfgs, nil
}

// SubgraphsOn turns blocks into plan subgraphs with the given configs.
func SubgraphsOn(pl *hw.Platform, blocks []partition.Block, cfgs []hw.Config) []plan.Subgraph {
	out := make([]plan.Subgraph, len(blocks))
	for i, b := range blocks {
		c := cfgs[i]
		out[i] = plan.Subgraph{Layers: b.Layers, Processor: pl.Processors[c.Proc].Name, Backend: c.Backend, DType: c.DType.String()}
	}
	return out
}

// Latency estimates a model's one-request latency under a partition run
// one subgraph after another: the sum of subgraph times and of the
// transfers between subgraphs on different processors.
func Latency(est cost.Estimator, lg *graph.LayerGraph, blocks []partition.Block, cfgs []hw.Config) (time.Duration, error) {
	var total time.Duration
	own := make([]int, len(lg.Layers))
	for i, b := range blocks {
		d, err := est.Subgraph(lg, b.Layers, cfgs[i])
		if err != nil {
			return 0, err
		}
		total += d
		for _, l := range b.Layers {
			own[l] = i
		}
	}
	for _, e := range lg.Edges {
		a, b := own[e.From], own[e.To]
		if a != b && cfgs[a].Proc != cfgs[b].Proc {
			total += est.Transfer(e.Bytes, cfgs[a].Proc, cfgs[b].Proc)
		}
	}
	return total, nil
}

// Priorities orders models deadline-monotonically: the model whose
// tightest group deadline is shortest gets priority 0; ties keep the
// workload's listing order.
func Priorities(w *workload.Workload) map[string]int {
	type entry struct {
		name     string
		deadline time.Duration
		index    int
	}
	entries := make([]entry, len(w.Models))
	for i, m := range w.Models {
		d := time.Duration(1<<63 - 1)
		for _, g := range w.GroupsOf(m.Name) {
			if g.Deadline < d {
				d = g.Deadline
			}
		}
		entries[i] = entry{m.Name, d, i}
	}
	sort.SliceStable(entries, func(a, b int) bool { return entries[a].deadline < entries[b].deadline })
	out := make(map[string]int, len(entries))
	for i, e := range entries {
		out[e.name] = i
	}
	return out
}

// Canceled returns the context's error with the planner's name.
func Canceled(ctx context.Context, planner string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("search: %s: %w", planner, err)
	}
	return nil
}

// Candidates starts a decision's record: one candidate per processor of
// the platform, in its order, neither scored nor excluded yet.
func Candidates(pl *hw.Platform) []plan.Candidate {
	out := make([]plan.Candidate, len(pl.Processors))
	for i, pr := range pl.Processors {
		out[i].Processor = pr.Name
	}
	return out
}

// ConfigName is a configuration as decisions record it: "backend/dtype".
func ConfigName(c hw.Config) string { return c.Backend + "/" + c.DType.String() }

// Millis is d in milliseconds, the unit decisions record times in.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
