// Package single is the baseline planner "single:<processor or kind>":
// every model whole on one processor at its default configuration. Layers
// the processor cannot run (hw.Platform.Supports) fall back to the fastest
// CPU as separate subgraphs, as real NPU delegates do; the split keeps
// every subgraph convex and as large as it can (partition.Maximal).
// Priorities are deadline-monotonic. It never asks the evaluator.
package single

import (
	"context"
	"errors"
	"fmt"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/internal/planutil"
	"github.com/inlay-dev/inlay/search/partition"
	"github.com/inlay-dev/inlay/workload"
)

// Planner puts everything on one processor.
type Planner struct{ target string }

var _ plan.Planner = (*Planner)(nil)

// New returns the planner for a processor name or kind ("npu", "cpu0").
func New(target string) (*Planner, error) {
	if target == "" {
		return nil, errors.New("search: single needs a processor name or kind, e.g. single:npu")
	}
	return &Planner{target: target}, nil
}

// Name is "single:<target>".
func (p *Planner) Name() string { return "single:" + p.target }

// Plan maps every model onto the target processor, with CPU fallback.
func (p *Planner) Plan(ctx context.Context, req *plan.Request, _ plan.Evaluator) (*plan.Plan, error) {
	if err := planutil.CheckRequest(req); err != nil {
		return nil, err
	}
	pl := req.Platform
	proc, err := pl.Find(p.target)
	if err != nil {
		return nil, fmt.Errorf("search: %s: %w", p.Name(), err)
	}
	fallback := planutil.FallbackProc(pl)
	prio := planutil.Priorities(req.Workload)
	out := &plan.Plan{Planner: p.Name(), Platform: pl.Name}
	for _, m := range req.Workload.Models {
		if err := planutil.Canceled(ctx, p.Name()); err != nil {
			return nil, err
		}
		key, err := planutil.Fallback(pl, m, proc, fallback)
		if err != nil {
			return nil, fmt.Errorf("search: %s: model %q: %w", p.Name(), m.Name, err)
		}
		blocks := partition.Maximal(m.Layers, key)
		subs, err := planutil.Subgraphs(pl, m, blocks)
		if err != nil {
			return nil, fmt.Errorf("search: %s: %w", p.Name(), err)
		}
		out.Models = append(out.Models, plan.ModelPlan{Model: m.Name, Priority: prio[m.Name], Subgraphs: subs})
		for _, b := range blocks {
			out.Decisions = append(out.Decisions, p.decision(pl, m, b, proc))
		}
	}
	return out, nil
}

// decision records why block b went where it did: the target by design,
// or the fallback CPU where the target cannot run the block's first layer.
// single weighs no scores.
func (p *Planner) decision(pl *hw.Platform, m *workload.Model, b partition.Block, proc int) plan.Decision {
	d := plan.Decision{Model: m.Name, Layers: b.Layers.Key(), Step: "every model on " + pl.Processors[proc].Name, Candidates: planutil.Candidates(pl)}
	for q := range d.Candidates {
		c := &d.Candidates[q]
		switch {
		case q == b.Key:
			c.Chosen = true
		case q == proc:
			c.Filter = plan.FilterSupport
			if err := planutil.LayerRuns(pl, m, proc, b.Layers[0]); err != nil {
				c.Why = fmt.Sprintf("layer %d (%s): %v", b.Layers[0], m.Layers.Layers[b.Layers[0]].Name, err)
			}
		default:
			c.Filter, c.Why = plan.FilterPlanner, p.Name()+" considers "+pl.Processors[proc].Name+" alone, and the CPU for what it cannot run"
		}
	}
	if b.Key != proc {
		d.Step = "CPU fallback for what " + pl.Processors[proc].Name + " cannot run"
	}
	return d
}
