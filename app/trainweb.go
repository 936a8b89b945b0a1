package app

import (
	"context"

	"github.com/inlay-dev/inlay/train"
)

// TrainCompared is one planner's answer in a side-by-side comparison:
// the search's result (inlay train plan) and its plan's iteration
// simulated once more with every task recorded (train.Options{Trace:
// true}), or the error that stopped the planner.
type TrainCompared struct {
	Planner string
	Plan    *TrainPlanResult
	Trace   *train.Result
	Err     error
}

// TrainCompare plans one target with each of planners in turn (in's
// Planner and Export are ignored) and traces each plan found; done, when
// given, hears of each planner as it ends. The target and the prices are
// checked first: an error there is the caller's (InputError); a planner
// that finds no plan gets its error in its row. When ctx ends, the
// planners not yet started are left out.
func TrainCompare(ctx context.Context, in TrainPlanInput, planners []string, done func(i int, row TrainCompared)) ([]TrainCompared, error) {
	m, c, err := train.ResolveTarget(in.Spec)
	if err != nil {
		return nil, InputError{err}
	}
	if _, err := ParsePrices(in.Prices); err != nil {
		return nil, InputError{err}
	}
	var out []TrainCompared
	for i, name := range planners {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		one := in
		one.Planner, one.Export = name, ""
		row := TrainCompared{Planner: name}
		if row.Plan, row.Err = TrainPlan(one); row.Err == nil {
			row.Trace, row.Err = train.Simulate(&m, c, row.Plan.Result.Plan, train.Options{Trace: true})
		}
		out = append(out, row)
		if done != nil {
			done(i, row)
		}
	}
	return out, nil
}
