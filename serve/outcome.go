package serve

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/explain"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// Outcome is a plan's simulated figures, as the plan view and the what-if
// page show them (the CLI's plan --json, with the schedule to draw).
type Outcome struct {
	ID            string  `json:"id,omitempty"` // /api/plans/{id} returns it again
	Workload      string  `json:"workload"`
	Platform      string  `json:"platform"`
	Planner       string  `json:"planner"`
	SearchSeconds float64 `json:"search_seconds,omitempty"`
	Evals         int     `json:"evals,omitempty"`
	// Cancelled: the search was stopped before its budget; the plan is
	// the best it had found.
	Cancelled bool `json:"cancelled,omitempty"`
	// MaxRateScale is the max sustainable rate scale (0: infeasible).
	MaxRateScale float64 `json:"max_rate_scale"`
	// Feasible: the plan sustains the nominal rates.
	Feasible bool   `json:"feasible"`
	Reason   string `json:"reason,omitempty"`
	Limit    string `json:"limit,omitempty"`
	// UpperBoundScale is the proven upper bound (null: none).
	UpperBoundScale *float64 `json:"upper_bound_scale"`
	UpperBoundWhy   string   `json:"upper_bound_why,omitempty"`
	// UpperBoundProven is false when the bound is only an estimate (the
	// estimator gives no per-layer lower bound); UpperBoundLabel names it.
	UpperBoundProven bool   `json:"upper_bound_proven"`
	UpperBoundLabel  string `json:"upper_bound_label"`
	Subgraphs        int    `json:"subgraphs"`
	// Groups and Processors are the run at MaxRateScale (at the bracket's
	// low end when infeasible); Nominal the run at the nominal rates.
	Groups     []GroupOut `json:"groups"`
	Processors []ProcOut  `json:"processors"`
	Nominal    []GroupOut `json:"nominal"`
	Gantt      Gantt      `json:"gantt"`
	// Plan is the plan file (YAML), for simulate, what-if and download.
	Plan string `json:"plan"`
	// Explain says why each subgraph is where it is (plan --explain;
	// plans only, not what-if re-simulations).
	Explain *explain.Explanation `json:"explain,omitempty"`
}

// GroupOut is one group's figures in one run.
type GroupOut struct {
	Name       string  `json:"name"`
	RateHz     float64 `json:"rate_hz"`     // offered: nominal × scale
	AchievedHz float64 `json:"achieved_hz"` // completed per second
	DeadlineMs float64 `json:"deadline_ms"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	Requests   int     `json:"requests"`
	Late       int     `json:"late"`
	Dropped    int     `json:"dropped"`
	MissRate   float64 `json:"miss_rate"`
}

// ProcOut is one processor's use.
type ProcOut struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	Utilisation float64 `json:"utilisation"`
	BusyMs      float64 `json:"busy_ms"`
}

// Gantt is the schedule of the run at MaxRateScale inside a window from
// its start: every subgraph execution and transfer that starts in it.
type Gantt struct {
	WindowMs float64 `json:"window_ms"`
	// Lanes are the processors, then the links that carried a transfer.
	Lanes []string `json:"lanes"`
	// Work lists what the spans ran, each once: a subgraph, or a transfer
	// between two subgraphs.
	Work  []Work    `json:"work"`
	Spans []SpanOut `json:"spans"`
}

// Work is a subgraph (or a transfer from one) that spans ran.
type Work struct {
	Model    string `json:"model"`
	Layers   string `json:"layers"` // layer-set key, "0-41"; a transfer's "0-41>42-80"
	DType    string `json:"dtype,omitempty"`
	Backend  string `json:"backend,omitempty"`
	Transfer bool   `json:"transfer,omitempty"`
}

// SpanOut is one box of the Gantt chart.
type SpanOut struct {
	Lane    int     `json:"lane"`
	Work    int     `json:"work"` // index into Gantt.Work
	Group   string  `json:"group"`
	Request int     `json:"request"`
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	Late    bool    `json:"late,omitempty"`
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// evaluate simulates a plan on a workload and platform the way inlay plan
// and inlay simulate do: max sustainable scale, the run there, the run at
// the nominal rates and the bound.
func evaluate(ctx context.Context, w *workload.Workload, pl *hw.Platform, est cost.Estimator, p *plan.Plan, seed int64) (*Outcome, error) {
	if err := p.Validate(w, pl); err != nil {
		return nil, bad(err)
	}
	prog, err := sim.Compile(w, pl, est, p)
	if err != nil {
		return nil, bad(err)
	}
	bound, err := ratebound.Upper(w, pl, est)
	if err != nil {
		return nil, err
	}
	opt := sim.Options{Seed: seed}
	sust, res, err := sim.SustainContext(ctx, prog, opt)
	if err != nil {
		return nil, err
	}
	nominal, err := sim.Run(prog, sim.Options{Seed: seed, NoSpans: true})
	if err != nil {
		return nil, err
	}
	text, err := p.Encode(plan.YAML)
	if err != nil {
		return nil, err
	}
	o := &Outcome{
		Workload: w.Path, Platform: pl.Name, Planner: p.Planner,
		MaxRateScale: sust.Scale, Feasible: sust.Feasible && sust.Scale >= 1, Limit: sust.Limit,
		UpperBoundWhy: bound.Why, UpperBoundProven: bound.Proven(), UpperBoundLabel: bound.Label(), Plan: string(text),
		Groups: []GroupOut{}, Processors: []ProcOut{}, Nominal: groupsOut(nominal),
	}
	if !math.IsInf(bound.Scale, 1) && !math.IsNaN(bound.Scale) {
		b := bound.Scale
		o.UpperBoundScale = &b
	}
	if !o.Feasible {
		o.Reason = sim.InfeasibleReason(sust, bound)
	}
	for _, mp := range p.Models {
		o.Subgraphs += len(mp.Subgraphs)
	}
	if res != nil {
		o.Groups = groupsOut(res)
		for i, pr := range res.Procs {
			kind := ""
			if i < len(pl.Processors) {
				kind = pl.Processors[i].Kind
			}
			o.Processors = append(o.Processors, ProcOut{Name: pr.Name, Kind: kind, Utilisation: pr.Utilisation, BusyMs: millis(pr.Busy)})
		}
		o.Gantt = gantt(w, pl, p, res)
	}
	return o, nil
}

func groupsOut(res *sim.Result) []GroupOut {
	out := []GroupOut{}
	for _, g := range res.Groups {
		out = append(out, GroupOut{Name: g.Name, RateHz: g.OfferedHz, AchievedHz: g.RateHz, DeadlineMs: millis(g.Deadline),
			P50Ms: millis(g.P50), P99Ms: millis(g.P99), Requests: g.Requests, Late: g.Late, Dropped: g.Dropped, MissRate: g.MissRate})
	}
	return out
}

// ganttWindow is the CLI's default window (report.GanttWindow).
func ganttWindow(w *workload.Workload, res *sim.Result) time.Duration {
	periods := make([]time.Duration, len(w.Groups))
	for i, g := range w.Groups {
		periods[i] = g.Period
	}
	return report.GanttWindow(periods, res.Scale, res.End)
}

// gantt lists the spans that start in the window, each with its
// subgraph's data type and backend from the plan.
func gantt(w *workload.Workload, pl *hw.Platform, p *plan.Plan, res *sim.Result) Gantt {
	window := ganttWindow(w, res)
	g := Gantt{WindowMs: millis(window), Lanes: res.Lanes, Work: []Work{}, Spans: []SpanOut{}}
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
		g.Spans = append(g.Spans, SpanOut{Lane: li, Work: wi, Group: sp.Group, Request: sp.Request,
			StartMs: roundMs(sp.Start), EndMs: roundMs(sp.End), Late: sp.Late})
	}
	return g
}

// roundMs is a time in milliseconds to the nanosecond (shorter JSON).
func roundMs(d time.Duration) float64 { return math.Round(millis(d)*1e6) / 1e6 }
