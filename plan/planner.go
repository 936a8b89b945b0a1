package plan

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/workload"
)

// Request is what a planner is asked to plan.
type Request struct {
	// Workload has its models loaded (layer graphs built).
	Workload *workload.Workload
	Platform *hw.Platform
	// Cost predicts subgraph and transfer times.
	Cost cost.Estimator
	// Seed drives every random choice: a planner returns the same plan for
	// the same request and seed.
	Seed int64
	// Budget bounds a search planner's time (0: the planner's default).
	// Baseline planners ignore it.
	Budget time.Duration
	// Evals bounds the number of evaluations (0: no bound).
	Evals int
	// Workers is how many evaluations may run at once (0: 1).
	Workers int
	// Progress, when not nil, is called as the search advances.
	Progress func(Progress)
}

// Progress reports a search's state.
type Progress struct {
	// Evals counts the evaluations so far.
	Evals int
	// Best is the best score so far.
	Best Score
	// Note says what the planner is doing ("generation 12"), may be empty.
	Note string
	// Stopped, once the search has stopped, says why ("evaluation budget
	// spent (200)"); "" before.
	Stopped string
}

// Score is an evaluated plan's quality.
type Score struct {
	// Scale is the maximum sustainable rate scale: the largest common factor
	// on every group's nominal rate at which every group still meets its
	// deadlines (see package sim).
	Scale float64
	// Feasible reports whether the plan sustains the nominal rates (Scale ≥ 1).
	Feasible bool
	// Reason says why a plan is infeasible (empty when feasible).
	Reason string
}

// Evaluator scores plans; package sim implements it. Planners ask, never
// simulate themselves.
type Evaluator interface {
	Evaluate(ctx context.Context, p *Plan) (Score, error)
}

// Counting is an Evaluator that passes each plan on to E and counts the
// evaluations (the "evals" of the reports); it is safe for concurrent use.
type Counting struct {
	E  Evaluator
	mu sync.Mutex
	n  int
}

// Evaluate counts the evaluation and returns E's.
func (c *Counting) Evaluate(ctx context.Context, p *Plan) (Score, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.E.Evaluate(ctx, p)
}

// Count is the number of evaluations so far.
func (c *Counting) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Planner maps a workload onto a platform. Deterministic for a given request
// and seed; no file system access.
type Planner interface {
	Name() string
	Plan(ctx context.Context, req *Request, eval Evaluator) (*Plan, error)
}

// Proof is what an exact planner proved while planning: a bound on every
// plan of the request, beside its own incumbent.
type Proof struct {
	// Solver names the solver ("cbc").
	Solver string `json:"solver"`
	// Status is "optimal" when the incumbent is proven optimal, else how
	// the solver stopped ("time limit", "interrupted", "infeasible", ...).
	Status string `json:"status"`
	// Objective names what was optimised ("max normalised load").
	Objective string `json:"objective"`
	// Incumbent is the best objective found; Bound the best proven bound on
	// it (a lower bound: no plan's objective is smaller); Gap their
	// relative difference, 0 when proven optimal.
	Incumbent float64 `json:"incumbent"`
	Bound     float64 `json:"bound"`
	Gap       float64 `json:"gap"`
	// ScaleBound is the bound as a max sustainable rate scale: no plan of
	// the request sustains more (+Inf when nothing was proven; 0 when no
	// plan meets the deadlines).
	ScaleBound float64 `json:"-"`
	// Note says what else the solver found ("deadlines bind: ...").
	Note string `json:"note,omitempty"`
	// Vars, Rows and Integers are the formulation's size.
	Vars     int `json:"vars"`
	Rows     int `json:"rows"`
	Integers int `json:"integers"`
	// Seconds is the solver's wall-clock time.
	Seconds float64 `json:"seconds"`
}

// MarshalJSON writes the proof with non-finite figures as null.
func (p Proof) MarshalJSON() ([]byte, error) {
	type plain Proof
	finite := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		plain
		Incumbent  *float64 `json:"incumbent"`
		Bound      *float64 `json:"bound"`
		Gap        *float64 `json:"gap"`
		ScaleBound *float64 `json:"scale_bound"`
	}{plain(p), finite(p.Incumbent), finite(p.Bound), finite(p.Gap), finite(p.ScaleBound)})
}

// Prover is a Planner that also proves a bound on every plan of the
// request. The proof is nil when the planner could not run its solver (it
// then plans as a heuristic would) and says so in Proof-less errors only
// when it could not plan at all.
type Prover interface {
	Planner
	PlanProof(ctx context.Context, req *Request, eval Evaluator) (*Plan, *Proof, error)
}

// PlanWithProof runs a planner, with its proof when it is a Prover (nil
// otherwise).
func PlanWithProof(ctx context.Context, p Planner, req *Request, eval Evaluator) (*Plan, *Proof, error) {
	if pr, ok := p.(Prover); ok {
		return pr.PlanProof(ctx, req, eval)
	}
	pl, err := p.Plan(ctx, req, eval)
	return pl, nil, err
}

// ProvenGap is how far a plan's scale is from the tightest proven upper
// bound, (bound − scale) / bound, never below 0; NaN when bound is not a
// positive finite number.
func ProvenGap(scale, bound float64) float64 {
	if !(bound > 0) || bound > 1e300 {
		return math.NaN()
	}
	return math.Max(0, (bound-scale)/bound)
}
