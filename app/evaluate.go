package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/explain"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// InputError marks an error in what the caller gave (a plan that does not
// fit the workload or platform): the web API answers it with a 400.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// Problem is a workload on a platform with the cost model that times it.
type Problem struct {
	Workload *workload.Workload
	Platform *hw.Platform
	Cost     cost.Estimator
}

// SearchInput asks a planner of the registry for a plan.
type SearchInput struct {
	Problem
	// Planner is a registry name ("inlay", "single:npu", "puzzle:cut=0.01").
	Planner string
	// Seed seeds the planner and the simulation that scores its plans.
	Seed int64
	// Budget is the search's wall-clock budget and Evals its evaluation
	// budget (0 and 0: the driver's default budget).
	Budget time.Duration
	Evals  int
	// Workers is how many evaluations run at once (0: one per core).
	Workers int
	// NoContention scores plans without the contention model during the
	// search (the plan is evaluated with it either way).
	NoContention bool
	// ClockLimit, when positive, ends the search's context after this
	// long whatever the planner does with its budget.
	ClockLimit time.Duration
	// Progress receives the search's progress (may be nil).
	Progress func(plan.Progress)
}

// Searched is a planner's plan and how the search went.
type Searched struct {
	Plan    *plan.Plan
	Planner string // the planner's name
	// Proof is an exact planner's proof (nil for the others).
	Proof   *plan.Proof
	Seconds float64
	// Evals is the evaluations the planner asked for.
	Evals int
	// Stopped says why a search planner stopped ("" when it did not say).
	Stopped string
}

// Search runs one planner of the registry on the problem and returns its
// plan, validated and stamped with the models' hashes (inlay run refuses
// the plan once a model file changes).
func Search(ctx context.Context, in SearchInput) (*Searched, error) {
	planner, err := search.New(in.Planner)
	if err != nil {
		return nil, err
	}
	return searchWith(ctx, planner, in)
}

func searchWith(ctx context.Context, planner plan.Planner, in SearchInput) (*Searched, error) {
	w, pl, est := in.Workload, in.Platform, in.Cost
	workers := in.Workers
	if workers <= 0 {
		workers = goruntime.NumCPU()
	}
	out := &Searched{Planner: planner.Name()}
	var mu sync.Mutex
	req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: in.Seed, Budget: in.Budget, Evals: in.Evals, Workers: workers,
		Progress: func(pg plan.Progress) {
			if pg.Stopped != "" {
				mu.Lock()
				out.Stopped = pg.Stopped
				mu.Unlock()
			}
			if in.Progress != nil {
				in.Progress(pg)
			}
		}}
	eval := &plan.Counting{E: sim.NewEvaluator(w, pl, est, sim.Options{Seed: in.Seed, NoContention: in.NoContention})}
	if in.ClockLimit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.ClockLimit)
		defer cancel()
	}
	start := time.Now()
	p, proof, err := plan.PlanWithProof(ctx, planner, req, eval)
	out.Seconds = time.Since(start).Seconds()
	out.Evals = eval.Count()
	if err == nil && p == nil {
		err = errors.New("the planner returned no plan")
	}
	if err != nil {
		return out, err
	}
	if err := p.Validate(w, pl); err != nil {
		return out, fmt.Errorf("plan: planner %s made an invalid plan: %w", planner.Name(), err)
	}
	p.StampHashes(w)
	out.Plan, out.Proof = p, proof
	return out, nil
}

// EvaluateInput asks for a plan's outcome in simulation.
type EvaluateInput struct {
	Problem
	Plan *plan.Plan
	Seed int64
	// Bound is the problem's upper bound when the caller has it already
	// (nil: Evaluate computes it).
	Bound *ratebound.Bound
	// Scale, when positive, simulates at that rate scale instead of
	// searching for the max sustainable one.
	Scale float64
	// Nominal adds the run at the nominal rates; Gantt the schedule to
	// draw; PlanText the plan file's text; Explain why each subgraph is
	// where it is.
	Nominal, Gantt, PlanText, Explain bool
	// Proof is the exact planner's proof, reported beside the bound.
	Proof *plan.Proof
}

// Evaluation is a plan's outcome with the simulator's own results, for
// front ends that draw or tabulate them.
type Evaluation struct {
	Outcome *Outcome
	Plan    *plan.Plan
	Bound   ratebound.Bound
	// Sustained is the max-rate search's result (zero with a given scale).
	Sustained sim.Sustained
	// Run is the simulation at Outcome.Scale (nil when infeasible at every
	// rate); Alone the same without the contention model (nil: the cost
	// model has none).
	Run, Alone *sim.Result
	Proof      *plan.Proof
	Why        *explain.Explanation
}

// Evaluate validates a plan, simulates it (the max sustainable rate scale
// and the run there, or the run at the given scale), sets it beside the
// upper bound and, when asked, explains it.
func Evaluate(ctx context.Context, in EvaluateInput) (*Evaluation, error) {
	w, pl, est, p := in.Workload, in.Platform, in.Cost, in.Plan
	if err := p.Validate(w, pl); err != nil {
		return nil, InputError{err}
	}
	prog, err := sim.Compile(w, pl, est, p)
	if err != nil {
		return nil, InputError{err}
	}
	ev := &Evaluation{Plan: p, Proof: in.Proof}
	if in.Bound != nil {
		ev.Bound = *in.Bound
	} else if ev.Bound, err = ratebound.Upper(w, pl, est); err != nil {
		return nil, err
	}
	opt := sim.Options{Seed: in.Seed}
	if in.Scale > 0 {
		opt.Scale = in.Scale
		ev.Run, err = sim.Run(prog, opt)
	} else {
		ev.Sustained, ev.Run, err = sim.SustainContext(ctx, prog, opt)
	}
	if err != nil {
		return nil, err
	}
	if ev.Alone, err = uncontended(prog, ev.Run, opt); err != nil {
		return nil, err
	}
	if in.Explain {
		if ev.Why, err = explain.Explain(w, pl, est, p); err != nil {
			return nil, err
		}
	}
	ev.Outcome = ev.outcome(w, pl, in.Scale > 0)
	o := ev.Outcome
	if in.Nominal {
		nominal, err := sim.Run(prog, sim.Options{Seed: in.Seed, NoSpans: true})
		if err != nil {
			return nil, err
		}
		o.Nominal = SimGroups(nominal, nil)
	}
	if in.Gantt {
		g := Gantt{Lanes: []string{}, Work: []Work{}, Spans: []Span{}}
		if ev.Run != nil {
			g = gantt(w, pl, p, ev.Run)
		}
		o.Gantt = &g
	}
	if in.PlanText {
		text, err := p.Encode(plan.YAML)
		if err != nil {
			return nil, err
		}
		o.Plan = string(text)
	}
	return ev, nil
}

// uncontended runs res's simulation again (same program, scale, seed and
// policy) without the contention model; nil when the program has none.
func uncontended(prog *sim.Program, res *sim.Result, opt sim.Options) (*sim.Result, error) {
	if prog == nil || prog.Contention == nil || res == nil {
		return nil, nil
	}
	opt.Scale, opt.NoContention, opt.NoSpans = res.Scale, true, true
	return sim.Run(prog, opt)
}

// outcome fills the schema's outcome; atScale: a run at a given scale.
func (ev *Evaluation) outcome(w *workload.Workload, pl *hw.Platform, atScale bool) *Outcome {
	p, sust, bound, res := ev.Plan, ev.Sustained, ev.Bound, ev.Run
	o := &Outcome{Workload: w.Path, Platform: pl.Name, Planner: p.Planner,
		UpperBoundScale: finite(bound.Scale), UpperBoundWhy: bound.Why, UpperBoundProven: bound.Proven(), UpperBoundLabel: bound.Label(),
		Groups: SimGroups(res, ev.Alone), Processors: SimProcessors(pl, res), Explain: ev.Why}
	for _, mp := range p.Models {
		o.Subgraphs += len(mp.Subgraphs)
	}
	if res != nil {
		o.Scale, o.HorizonMs, o.Links = res.Scale, Ms(res.Horizon), simLinks(res)
	}
	if atScale {
		o.Feasible, o.Limit = res.Meets(), res.Misses
		return o
	}
	s := sust.Scale
	o.MaxRateScale, o.Feasible, o.Limit = &s, sust.Feasible && s >= 1, sust.Limit
	if !o.Feasible {
		o.Reason = sim.InfeasibleReason(sust, bound)
	}
	if ev.Proof != nil {
		o.Proof = proofOf(ev.Proof, s, bound.Scale)
	}
	return o
}

// PlanInput asks for a plan and its outcome: inlay plan and the web API's
// plan.
type PlanInput struct {
	SearchInput
	// Explain, Nominal, Gantt and PlanText are EvaluateInput's.
	Explain, Nominal, Gantt, PlanText bool
	// Started, when not nil, receives the planner's name and the problem's
	// upper bound before the search starts (a progress display's ceiling).
	Started func(planner string, bound ratebound.Bound)
}

// Plan is the evaluate-a-plan use case: the upper bound (once), the
// search, the plan's validation and its outcome in simulation.
func Plan(ctx context.Context, in PlanInput) (*Evaluation, *Searched, error) {
	planner, err := search.New(in.Planner)
	if err != nil {
		return nil, nil, err
	}
	bound, err := ratebound.Upper(in.Workload, in.Platform, in.Cost)
	if err != nil {
		return nil, nil, err
	}
	if in.Started != nil {
		in.Started(planner.Name(), bound)
	}
	found, err := searchWith(ctx, planner, in.SearchInput)
	if err != nil {
		return nil, found, err
	}
	ev, err := Evaluate(ctx, EvaluateInput{Problem: in.Problem, Plan: found.Plan, Seed: in.Seed, Bound: &bound, Proof: found.Proof,
		Explain: in.Explain, Nominal: in.Nominal, Gantt: in.Gantt, PlanText: in.PlanText})
	if err != nil {
		return nil, found, err
	}
	o := ev.Outcome
	o.Planner, o.SearchSeconds, o.SearchStopped, o.Evals = found.Planner, found.Seconds, found.Stopped, found.Evals
	return ev, found, nil
}

// GanttWindow is the Gantt chart's default window for a run of w
// (report.GanttWindow).
func GanttWindow(w *workload.Workload, res *sim.Result) time.Duration {
	periods := make([]time.Duration, len(w.Groups))
	for i, g := range w.Groups {
		periods[i] = g.Period
	}
	return report.GanttWindow(periods, res.Scale, res.End)
}

// gantt lists the spans that start in the window, each with its
// subgraph's data type and backend from the plan.
func gantt(w *workload.Workload, pl *hw.Platform, p *plan.Plan, res *sim.Result) Gantt {
	window := GanttWindow(w, res)
	g := Gantt{WindowMs: Ms(window), Lanes: res.Lanes, Work: []Work{}, Spans: []Span{}}
	lane := map[string]int{}
	for i, l := range res.Lanes {
		lane[l] = i
	}
	type where struct{ dtype, backend string }
	subs := map[string]where{} // "model[key]" → subgraph
	for _, mp := range p.Models {
		for _, sg := range mp.Subgraphs {
			subs[mp.Model+"["+sg.Layers.Key()+"]"] = where{sg.DType, sg.Backend}
		}
	}
	work := map[string]int{} // span label → index into g.Work
	nproc := len(pl.Processors)
	for _, sp := range res.Spans {
		if sp.Start >= window {
			continue
		}
		li := lane[sp.Processor]
		wi, ok := work[sp.Label]
		if !ok {
			wk := Work{Model: sp.Model, Transfer: li >= nproc}
			if _, rest, ok := strings.Cut(sp.Label, "["); ok {
				wk.Layers = strings.NewReplacer("]", "", "[", "").Replace(rest)
			}
			if wh, ok := subs[sp.Label]; ok {
				wk.DType, wk.Backend = wh.dtype, wh.backend
			}
			wi = len(g.Work)
			work[sp.Label] = wi
			g.Work = append(g.Work, wk)
		}
		g.Spans = append(g.Spans, Span{Lane: li, Work: wi, Group: sp.Group, Request: sp.Request,
			StartMs: roundMs(sp.Start), EndMs: roundMs(sp.End), Late: sp.Late})
	}
	return g
}

// roundMs is a time in milliseconds to the nanosecond (shorter JSON).
func roundMs(d time.Duration) float64 { return math.Round(Ms(d)*1e6) / 1e6 }
