package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// DemoPlanners are inlay demo's planners, in its table's order.
var DemoPlanners = []string{"single:npu", "single:cpu", "bestmap", "heft", "puzzle", "inlay"}

// Demo is inlay demo's scenario: the camera and voice workload written
// into Dir, the platform, and the analytic model it is planned with.
type Demo struct {
	Dir      string
	Workload *workload.Workload
	Platform *hw.Platform
	// Real says the workload uses the fetched real models (else zoo
	// stand-ins).
	Real bool
	Cost cost.Estimator
	// Bound is the rate bound, Rows each planner's plan and Best the index
	// of the row with the highest scale (-1: none); Plan fills them.
	Bound ratebound.Bound
	Rows  []DemoRow
	Best  int
}

// DemoRow is one planner's plan in the demo and what it sustains; WhyZero
// says in one line why a plan sustains no rate at all.
type DemoRow struct {
	Name      string
	Plan      *plan.Plan
	Scale     float64
	Seconds   float64
	Subgraphs int
	WhyZero   string
}

// NewDemo writes the demo's workload (workload.DemoYAML) into dir and loads
// it with the platform.
func NewDemo(dir, platform string, forceZoo bool) (*Demo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	text, real := workload.DemoYAML(platform, forceZoo)
	wpath := filepath.Join(dir, "workload.yaml")
	if err := os.WriteFile(wpath, []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	w, err := workload.Load(wpath)
	if err != nil {
		return nil, err
	}
	pl, err := hw.Resolve(platform)
	if err != nil {
		return nil, err
	}
	return &Demo{Dir: dir, Workload: w, Platform: pl, Real: real, Best: -1}, nil
}

// DemoOptions are how the demo plans: each planner's budget and seed, and
// the callers' views of the searches.
type DemoOptions struct {
	Budget time.Duration
	Seed   int64
	// Workers is the evaluations run at once (0: one per core).
	Workers int
	// Started, when not nil, is called before each planner searches and
	// returns its progress callback and what to call when it ends.
	Started func(planner string, bound float64) (progress func(plan.Progress), done func())
	// Failed is told of a planner that failed (the demo goes on without it).
	Failed func(planner string, err error)
}

// Plan bounds the demo's rate, plans the scenario with every demo planner,
// judges each plan in the same simulation, saves it into the demo's folder
// and says why a plan that sustains no rate does not.
func (d *Demo) Plan(ctx context.Context, opt DemoOptions) error {
	d.Cost = cost.NewAnalytic(d.Platform)
	var err error
	if d.Bound, err = ratebound.Upper(d.Workload, d.Platform, d.Cost); err != nil {
		return err
	}
	prob := Problem{Workload: d.Workload, Platform: d.Platform, Cost: d.Cost}
	judge := sim.NewEvaluator(d.Workload, d.Platform, d.Cost, sim.Options{Seed: opt.Seed})
	for _, name := range DemoPlanners {
		in := SearchInput{Problem: prob, Planner: name, Seed: opt.Seed, Budget: opt.Budget, Workers: opt.Workers}
		done := func() {}
		if opt.Started != nil {
			in.Progress, done = opt.Started(name, d.Bound.Scale)
		}
		got, err := Search(ctx, in)
		done()
		if err != nil {
			if opt.Failed != nil {
				opt.Failed(name, err)
			}
			continue
		}
		r := DemoRow{Name: name, Plan: got.Plan, Seconds: got.Seconds}
		for _, mp := range got.Plan.Models {
			r.Subgraphs += len(mp.Subgraphs)
		}
		s, err := judge.Evaluate(ctx, got.Plan)
		if err != nil {
			return err
		}
		r.Scale = s.Scale
		d.Rows = append(d.Rows, r)
		if err := got.Plan.Save(filepath.Join(d.Dir, "plan-"+strings.ReplaceAll(name, ":", "-")+".yaml")); err != nil {
			return err
		}
	}
	for i, r := range d.Rows {
		if r.Scale <= 0 {
			if d.Rows[i].WhyZero, err = d.whyZero(r.Plan, sim.Options{Seed: opt.Seed}); err != nil {
				return err
			}
		}
		if d.Best < 0 || r.Scale > d.Rows[d.Best].Scale {
			d.Best = i
		}
	}
	return nil
}

// whyZero says in one line why a plan sustains no rate at all: the groups
// that miss their deadline even at a vanishing rate, with their latency
// alone beside the deadline.
func (d *Demo) whyZero(p *plan.Plan, opt sim.Options) (string, error) {
	prog, err := sim.Compile(d.Workload, d.Platform, d.Cost, p)
	if err != nil {
		return "", err
	}
	opt.NoSpans = true
	sust, res, err := sim.Sustain(prog, opt)
	if err != nil {
		return "", err
	}
	if sust.Feasible || res == nil {
		return sust.Limit, nil
	}
	var late []string
	for _, g := range res.Groups {
		if g.MissRate > 0.01 {
			late = append(late, fmt.Sprintf("%s takes %.1f ms alone, over its %.1f ms deadline", g.Name, msOf(g.P99), msOf(g.Deadline)))
		}
	}
	if len(late) == 0 {
		return sust.Limit, nil
	}
	return strings.Join(late, "; "), nil
}

// Schedule simulates the best plan at the scale it sustains, with its
// spans (res is nil when the simulation kept none).
func (d *Demo) Schedule(seed int64) (sim.Sustained, *sim.Result, error) {
	prog, err := sim.Compile(d.Workload, d.Platform, d.Cost, d.Rows[d.Best].Plan)
	if err != nil {
		return sim.Sustained{}, nil, err
	}
	return sim.Sustain(prog, sim.Options{Seed: seed})
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
