// Package bestmap is the baseline planner "bestmap", Puzzle's "Best
// Mapping": each whole model on the single processor configuration
// (processor × backend × data type) that runs it fastest by the cost
// estimator, ties going to the lower processor ID, then to the earlier
// configuration. When no processor runs a whole model, the model falls
// back as in planner single on the processor whose fallback partition has
// the lowest estimated latency (subgraph times plus transfers).
// Priorities are deadline-monotonic. It never asks the evaluator.
package bestmap

import (
	"context"
	"fmt"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/internal/planutil"
	"github.com/inlay-dev/inlay/search/partition"
	"github.com/inlay-dev/inlay/workload"
)

// Planner is Best Mapping.
type Planner struct{}

var _ plan.Planner = Planner{}

// Name is "bestmap".
func (Planner) Name() string { return "bestmap" }

// Plan maps each model whole onto its fastest configuration.
func (p Planner) Plan(ctx context.Context, req *plan.Request, _ plan.Evaluator) (*plan.Plan, error) {
	if err := planutil.CheckRequest(req); err != nil {
		return nil, err
	}
	prio := planutil.Priorities(req.Workload)
	out := &plan.Plan{Planner: p.Name(), Platform: req.Platform.Name}
	for _, m := range req.Workload.Models {
		if err := planutil.Canceled(ctx, p.Name()); err != nil {
			return nil, err
		}
		subs, err := bestFor(req, m)
		if err != nil {
			return nil, fmt.Errorf("search: bestmap: model %q: %w", m.Name, err)
		}
		out.Models = append(out.Models, plan.ModelPlan{Model: m.Name, Priority: prio[m.Name], Subgraphs: subs})
	}
	return out, nil
}

func bestFor(req *plan.Request, m *workload.Model) ([]plan.Subgraph, error) {
	pl, lg := req.Platform, m.Layers
	all := graph.Range(0, len(lg.Layers))
	best, bestCfg := time.Duration(-1), hw.Config{}
	for proc := range pl.Processors {
		if !runsAll(pl, m, proc) {
			continue
		}
		for _, cfg := range m.Configs(pl, proc) {
			d, err := req.Cost.Subgraph(lg, all, cfg)
			if err != nil {
				continue // the estimator may reject a data type or backend
			}
			if best < 0 || d < best {
				best, bestCfg = d, cfg
			}
		}
	}
	if best >= 0 {
		blocks := []partition.Block{{Layers: all, Key: bestCfg.Proc}}
		return planutil.SubgraphsOn(pl, blocks, []hw.Config{bestCfg}), nil
	}
	// No processor runs the whole model: fall back per processor.
	fallback := planutil.FallbackProc(pl)
	var bestSubs []plan.Subgraph
	var firstErr error
	for proc := range pl.Processors {
		key, err := planutil.Fallback(pl, m, proc, fallback)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		blocks := partition.Maximal(lg, key)
		cfgs, err := planutil.DefaultConfigs(pl, m, blocks)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		d, err := planutil.Latency(req.Cost, lg, blocks, cfgs)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if best < 0 || d < best {
			best, bestSubs = d, planutil.SubgraphsOn(pl, blocks, cfgs)
		}
	}
	if best < 0 {
		return nil, fmt.Errorf("no processor runs it, not even with CPU fallback; first reason: %w", firstErr)
	}
	return bestSubs, nil
}

func runsAll(pl *hw.Platform, m *workload.Model, proc int) bool {
	for l := range m.Layers.Layers {
		if planutil.LayerRuns(pl, m, proc, l) != nil {
			return false
		}
	}
	return true
}
