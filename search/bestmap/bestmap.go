// Package bestmap is the baseline planner "bestmap", Puzzle's "Best
// Mapping": each whole model on the single processor configuration
// (processor × backend × data type) that runs it fastest by the cost
// estimator, ties going to the lower processor ID, then to the earlier
// configuration. When no processor runs a whole model, the model falls
// back as in planner single on the processor whose fallback partition has
// the lowest estimated latency (subgraph times plus transfers).
// Priorities are deadline-monotonic. Where the platform gives memory
// capacities (memory_mib, capacity_mib), models are placed in workload
// order and a configuration whose weights would take a processor or domain
// over its capacity, with the models placed before, is passed over for the
// next fastest that fits (none fits: the fastest, which plan validation
// then rejects naming the capacity). It never asks the evaluator.
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
	mem := newMemory(req.Platform)
	for _, m := range req.Workload.Models {
		if err := planutil.Canceled(ctx, p.Name()); err != nil {
			return nil, err
		}
		subs, why, err := bestFor(req, m, mem)
		if err != nil {
			return nil, fmt.Errorf("search: bestmap: model %q: %w", m.Name, err)
		}
		mem.add(req.Platform, m, subs)
		out.Decisions = append(out.Decisions, why)
		out.Models = append(out.Models, plan.ModelPlan{Model: m.Name, Priority: prio[m.Name], Subgraphs: subs})
	}
	return out, nil
}

func bestFor(req *plan.Request, m *workload.Model, mem *memory) ([]plan.Subgraph, plan.Decision, error) {
	pl, lg := req.Platform, m.Layers
	all := graph.Range(0, len(lg.Layers))
	why := plan.Decision{Model: m.Name, Layers: all.Key(), Step: "fastest whole-model configuration", Candidates: planutil.Candidates(pl)}
	best, bestCfg := time.Duration(-1), hw.Config{}
	fitting, fitCfg := time.Duration(-1), hw.Config{}
	for proc := range pl.Processors {
		c := &why.Candidates[proc]
		if err := runsAll(pl, m, proc); err != nil {
			c.Filter, c.Why = plan.FilterSupport, err.Error()
			continue
		}
		here, hereCfg, fits := time.Duration(-1), hw.Config{}, false
		for _, cfg := range m.Configs(pl, proc) {
			d, err := req.Cost.Subgraph(lg, all, cfg)
			if err != nil {
				continue // the estimator may reject a data type or backend
			}
			if best < 0 || d < best {
				best, bestCfg = d, cfg
			}
			fit := mem.fits(m, cfg)
			if (fitting < 0 || d < fitting) && fit {
				fitting, fitCfg = d, cfg
			}
			if here < 0 || d < here {
				here, hereCfg = d, cfg
			}
			fits = fits || fit
		}
		switch {
		case here < 0:
			c.Filter, c.Why = plan.FilterSupport, "the cost model runs it in none of the allowed configurations"
		case !fits:
			c.Filter, c.Why = plan.FilterMemory, "its weights would take the processor or its domain over capacity, with the models placed before"
		default:
			c.Config = planutil.ConfigName(hereCfg)
			c.Scores = []plan.NamedScore{{Name: plan.ScoreTime, Value: planutil.Millis(here), Unit: "ms"}}
		}
	}
	if fitting >= 0 {
		best, bestCfg = fitting, fitCfg
	}
	if best >= 0 {
		why.Candidates[bestCfg.Proc].Chosen = true
		blocks := []partition.Block{{Layers: all, Key: bestCfg.Proc}}
		return planutil.SubgraphsOn(pl, blocks, []hw.Config{bestCfg}), why, nil
	}
	why.Step = "least latency with CPU fallback (no processor runs the whole model)"
	fallback := planutil.FallbackProc(pl)
	var bestSubs []plan.Subgraph
	var firstErr error
	// reject filters a candidate out, keeping the first reason for when
	// every processor is filtered out.
	reject := func(c *plan.Candidate, filter string, err error) {
		if firstErr == nil {
			firstErr = err
		}
		c.Filter, c.Why = filter, err.Error()
	}
	chosen := -1
	for proc := range pl.Processors {
		c := &why.Candidates[proc]
		c.Filter, c.Why, c.Scores = "", "", nil
		key, err := planutil.Fallback(pl, m, proc, fallback)
		if err != nil {
			reject(c, plan.FilterSupport, err)
			continue
		}
		blocks := partition.Maximal(lg, key)
		cfgs, err := planutil.DefaultConfigs(pl, m, blocks)
		if err != nil {
			reject(c, plan.FilterPrecision, err)
			continue
		}
		d, err := planutil.Latency(req.Cost, lg, blocks, cfgs)
		if err != nil {
			reject(c, plan.FilterSupport, err)
			continue
		}
		c.Scores = []plan.NamedScore{{Name: plan.ScoreFinish, Value: planutil.Millis(d), Unit: "ms"}}
		if best < 0 || d < best {
			best, bestSubs, chosen = d, planutil.SubgraphsOn(pl, blocks, cfgs), proc
		}
	}
	if best < 0 {
		return nil, why, fmt.Errorf("no processor runs it, not even with CPU fallback; first reason: %w", firstErr)
	}
	why.Candidates[chosen].Chosen = true
	return bestSubs, why, nil
}

func runsAll(pl *hw.Platform, m *workload.Model, proc int) error {
	for l := range m.Layers.Layers {
		if err := planutil.LayerRuns(pl, m, proc, l); err != nil {
			return fmt.Errorf("layer %d (%s): %v", l, m.Layers.Layers[l].Name, err)
		}
	}
	return nil
}

// memory is the weights placed so far against the platform's capacities.
type memory struct {
	limits []hw.MemoryLimit
	used   []int64 // per limit
}

func newMemory(pl *hw.Platform) *memory {
	return &memory{limits: pl.MemoryLimits(), used: make([]int64, len(pl.MemoryLimits()))}
}

// weights is the whole model's weights in the data type of cfg.
func weights(m *workload.Model, cfg hw.Config) int64 {
	var b int64
	for _, l := range m.Layers.Layers {
		b += hw.WeightBytes(l.Work, cfg.DType)
	}
	return b
}

// fits reports whether the whole model in cfg keeps every capacity that
// counts cfg's processor.
func (mem *memory) fits(m *workload.Model, cfg hw.Config) bool {
	if len(mem.limits) == 0 {
		return true
	}
	b := weights(m, cfg)
	for i, l := range mem.limits {
		for _, q := range l.Procs {
			if q == cfg.Proc && mem.used[i]+b > l.Bytes {
				return false
			}
		}
	}
	return true
}

// add counts the weights of a model's subgraphs.
func (mem *memory) add(pl *hw.Platform, m *workload.Model, subs []plan.Subgraph) {
	for _, s := range subs {
		cfg, err := s.Config(pl)
		if err != nil {
			continue
		}
		var b int64
		for _, l := range s.Layers {
			b += hw.WeightBytes(m.Layers.Layers[l].Work, cfg.DType)
		}
		for i, l := range mem.limits {
			for _, q := range l.Procs {
				if q == cfg.Proc {
					mem.used[i] += b
				}
			}
		}
	}
}
