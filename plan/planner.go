package plan

import (
	"context"
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

// Planner maps a workload onto a platform. Deterministic for a given request
// and seed; no file system access.
type Planner interface {
	Name() string
	Plan(ctx context.Context, req *Request, eval Evaluator) (*Plan, error)
}
