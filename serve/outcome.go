package serve

import (
	"context"
	"errors"

	"github.com/inlay-dev/inlay/app"
)

// Outcome is a plan's outcome as the plan view and the what-if page show
// it: app.Outcome, the schema of inlay plan --json and simulate --json,
// with the run at the nominal rates, the schedule to draw and the plan
// file filled in.
type Outcome = app.Outcome

// evaluate simulates a plan on a workload and platform the way inlay plan
// and inlay simulate do (app.Evaluate): max sustainable scale, the run
// there, the run at the nominal rates, the schedule and the bound.
func evaluate(ctx context.Context, in app.EvaluateInput) (*Outcome, error) {
	in.Nominal, in.Gantt, in.PlanText = true, true, true
	ev, err := app.Evaluate(ctx, in)
	var bad app.InputError
	if errors.As(err, &bad) {
		return nil, badRequest{err}
	}
	if err != nil {
		return nil, err
	}
	return ev.Outcome, nil
}
