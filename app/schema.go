package app

import (
	"encoding/json"
	"math"
	"time"

	"github.com/inlay-dev/inlay/explain"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/sim"
)

// Group is one group's figures in one run, simulated or measured. Rates
// are per second: RateHz is the offered rate (nominal × scale),
// AchievedHz the completed requests per second of the arrival window.
// The predicted figures are a measured run's simulation of the same plan
// and rate (absent from a simulation's own groups).
type Group struct {
	Name       string  `json:"name"`
	RateHz     float64 `json:"rate_hz"`
	AchievedHz float64 `json:"achieved_hz"`
	DeadlineMs float64 `json:"deadline_ms"`
	Requests   int     `json:"requests"`
	Completed  int     `json:"completed"`
	Late       int     `json:"late"`
	Dropped    int     `json:"dropped"`
	// Drops are a measured run's dropped requests by reason.
	Drops    []Drop  `json:"drops,omitempty"`
	MissRate float64 `json:"miss_rate"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MeanMs   float64 `json:"mean_ms"`
	MaxMs    float64 `json:"max_ms"`
	// P50UncontendedMs is the p50 of the same simulation without the
	// contention model (0: the cost model has none).
	P50UncontendedMs float64 `json:"p50_uncontended_ms,omitempty"`
	PredictedP50Ms   float64 `json:"predicted_p50_ms,omitempty"`
	PredictedP99Ms   float64 `json:"predicted_p99_ms,omitempty"`
	// PredictedUncontendedP50Ms is the prediction without the contention
	// model; PredictedNowP50Ms the prediction at the host's speed now
	// (run's speed probe). 0: none.
	PredictedUncontendedP50Ms float64 `json:"predicted_uncontended_p50_ms,omitempty"`
	PredictedNowP50Ms         float64 `json:"predicted_now_p50_ms,omitempty"`
}

// Drop is one reason requests of a group were dropped: how many, and the
// first such request's message.
type Drop struct {
	Reason  string `json:"reason"`
	Count   int    `json:"count"`
	Example string `json:"example"`
}

// Processor is one processor's (or link's) use over a run.
type Processor struct {
	Name        string  `json:"name"`
	Kind        string  `json:"kind,omitempty"`
	Runs        int     `json:"runs,omitempty"`
	Utilisation float64 `json:"utilisation"`
	BusyMs      float64 `json:"busy_ms"`
}

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// SimGroups converts a simulation's groups; alone, when not nil, is the
// same run without the contention model, whose p50 goes beside each.
func SimGroups(res, alone *sim.Result) []Group {
	out := []Group{}
	if res == nil {
		return out
	}
	for i, g := range res.Groups {
		gr := Group{Name: g.Name, RateHz: g.OfferedHz, AchievedHz: g.RateHz, DeadlineMs: Ms(g.Deadline),
			Requests: g.Requests, Completed: g.Completed, Late: g.Late, Dropped: g.Dropped, MissRate: g.MissRate,
			P50Ms: Ms(g.P50), P99Ms: Ms(g.P99), MeanMs: Ms(g.Mean), MaxMs: Ms(g.Max)}
		if alone != nil && i < len(alone.Groups) {
			gr.P50UncontendedMs = Ms(alone.Groups[i].P50)
		}
		out = append(out, gr)
	}
	return out
}

// RunGroups converts a measured run's groups, with their predictions.
func RunGroups(res *runtime.Result) []Group {
	out := []Group{}
	for _, g := range res.Groups {
		gr := Group{Name: g.Name, RateHz: g.OfferedHz, AchievedHz: g.RateHz, DeadlineMs: Ms(g.Deadline),
			Requests: g.Requests, Completed: g.Completed, Late: g.Late, Dropped: g.Dropped, Drops: []Drop{}, MissRate: g.MissRate,
			P50Ms: Ms(g.P50), P99Ms: Ms(g.P99), MeanMs: Ms(g.Mean), MaxMs: Ms(g.Max),
			PredictedP50Ms: Ms(g.PredictedP50), PredictedP99Ms: Ms(g.PredictedP99), PredictedUncontendedP50Ms: Ms(g.PredictedUncontendedP50)}
		for _, d := range g.Drops {
			gr.Drops = append(gr.Drops, Drop{Reason: d.Reason, Count: d.Count, Example: d.Example})
		}
		out = append(out, gr)
	}
	return out
}

// SimProcessors converts a simulation's processors, with their kinds
// from pl.
func SimProcessors(pl *hw.Platform, res *sim.Result) []Processor {
	out := []Processor{}
	if res == nil {
		return out
	}
	for i, pr := range res.Procs {
		out = append(out, Processor{Name: pr.Name, Kind: kindOf(pl, i), Utilisation: pr.Utilisation, BusyMs: Ms(pr.Busy)})
	}
	return out
}

// simLinks converts the links that carried a transfer.
func simLinks(res *sim.Result) []Processor {
	var out []Processor
	for _, l := range res.Links {
		if l.Busy > 0 {
			out = append(out, Processor{Name: l.Name, Utilisation: l.Utilisation, BusyMs: Ms(l.Busy)})
		}
	}
	return out
}

func kindOf(pl *hw.Platform, i int) string {
	if pl == nil || i >= len(pl.Processors) {
		return ""
	}
	return pl.Processors[i].Kind
}

// Outcome is a plan's outcome in simulation: inlay plan --json and
// simulate --json, and the web API's answer to a plan, a simulation and
// a what-if. Fields a front end does not fill are left out.
type Outcome struct {
	ID            string  `json:"id,omitempty"` // the web API's /api/plans/{id}
	Workload      string  `json:"workload"`
	Platform      string  `json:"platform"`
	Planner       string  `json:"planner"`
	PlanFile      string  `json:"plan_file,omitempty"`
	SearchSeconds float64 `json:"search_seconds,omitempty"`
	// SearchStopped says why a search planner stopped.
	SearchStopped string `json:"search_stopped,omitempty"`
	Evals         int    `json:"evals,omitempty"`
	// Cancelled: the search was stopped before its budget; the plan is
	// the best it had found.
	Cancelled bool `json:"cancelled,omitempty"`
	// Scale is the rate scale Groups and Processors were simulated at
	// (MaxRateScale's run, or the scale asked for).
	Scale float64 `json:"scale"`
	// MaxRateScale is the max sustainable rate scale (0: infeasible;
	// null: a run at a given scale, which does not search for it).
	MaxRateScale *float64 `json:"max_rate_scale"`
	// Feasible: the plan sustains the nominal rates (at a given scale: it
	// meets the deadlines there).
	Feasible bool   `json:"feasible"`
	Reason   string `json:"reason,omitempty"`
	Limit    string `json:"limit,omitempty"`
	// UpperBoundScale is the upper bound (null: none); not proven, only
	// estimated, when UpperBoundProven is false (the estimator gives no
	// per-layer lower bound). UpperBoundLabel names it.
	UpperBoundScale  *float64 `json:"upper_bound_scale"`
	UpperBoundWhy    string   `json:"upper_bound_why,omitempty"`
	UpperBoundProven bool     `json:"upper_bound_proven"`
	UpperBoundLabel  string   `json:"upper_bound_label"`
	Subgraphs        int      `json:"subgraphs"`
	HorizonMs        float64  `json:"horizon_ms"`
	// Groups and Processors are the run at Scale; Nominal the run at the
	// nominal rates (web API).
	Groups     []Group     `json:"groups"`
	Processors []Processor `json:"processors"`
	Links      []Processor `json:"links,omitempty"`
	Nominal    []Group     `json:"nominal,omitempty"`
	// Proof is the exact planner's: its MILP bound beside the fluid one.
	Proof *Proof `json:"proof,omitempty"`
	// Gantt is the schedule to draw (web API).
	Gantt *Gantt `json:"gantt,omitempty"`
	// Plan is the plan file (YAML), for simulate, what-if and download
	// (web API).
	Plan string `json:"plan,omitempty"`
	// Explain says why each subgraph is where it is (--explain).
	Explain *explain.Explanation `json:"explain,omitempty"`
}

// Proof is an exact planner's proof (plan.Proof) with the gap it proves.
type Proof struct {
	Solver     string   `json:"solver"`
	Status     string   `json:"status"`
	Objective  string   `json:"objective"`
	Incumbent  *float64 `json:"incumbent"`
	Bound      *float64 `json:"bound"`
	Gap        *float64 `json:"gap"`
	ScaleBound *float64 `json:"scale_bound"`
	Note       string   `json:"note,omitempty"`
	Vars       int      `json:"vars"`
	Rows       int      `json:"rows"`
	Integers   int      `json:"integers"`
	Seconds    float64  `json:"seconds"`
	// ProvenGap is (tightest bound − max_rate_scale) / tightest bound
	// (null: no finite bound).
	ProvenGap *float64 `json:"proven_gap"`
}

// finite is v, or nil for NaN and ±Inf (JSON null).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// proofOf is p's schema form with the gap of scale to the tightest of
// p's bound and bound.
func proofOf(p *plan.Proof, scale, bound float64) *Proof {
	if p == nil {
		return nil
	}
	return &Proof{Solver: p.Solver, Status: p.Status, Objective: p.Objective,
		Incumbent: finite(p.Incumbent), Bound: finite(p.Bound), Gap: finite(p.Gap), ScaleBound: finite(p.ScaleBound),
		Note: p.Note, Vars: p.Vars, Rows: p.Rows, Integers: p.Integers, Seconds: p.Seconds,
		ProvenGap: finite(plan.ProvenGap(scale, math.Min(bound, p.ScaleBound)))}
}

// Gantt is the schedule of the run at Scale inside a window from its
// start: every subgraph execution and transfer that starts in it.
type Gantt struct {
	WindowMs float64 `json:"window_ms"`
	// Lanes are the processors, then the links that carried a transfer.
	Lanes []string `json:"lanes"`
	// Work lists what the spans ran, each once: a subgraph, or a transfer
	// between two subgraphs.
	Work  []Work `json:"work"`
	Spans []Span `json:"spans"`
}

// Work is a subgraph (or a transfer from one) that spans ran.
type Work struct {
	Model    string `json:"model"`
	Layers   string `json:"layers"` // layer-set key, "0-41"; a transfer's "0-41>42-80"
	DType    string `json:"dtype,omitempty"`
	Backend  string `json:"backend,omitempty"`
	Transfer bool   `json:"transfer,omitempty"`
}

// Span is one box of the Gantt chart.
type Span struct {
	Lane    int     `json:"lane"`
	Work    int     `json:"work"` // index into Gantt.Work
	Group   string  `json:"group"`
	Request int     `json:"request"`
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	Late    bool    `json:"late,omitempty"`
}

// MarshalIndent is v as indented JSON with a final newline, the way the
// front ends print it.
func MarshalIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

// MaxScale is MaxRateScale, 0 when the outcome has none (a run at a given
// scale).
func (o *Outcome) MaxScale() float64 {
	if o.MaxRateScale == nil {
		return 0
	}
	return *o.MaxRateScale
}
