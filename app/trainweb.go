package app

import (
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
// Planner is ignored) and traces each plan found. The target and the
// prices are checked first: an error there is the caller's (InputError);
// a planner that finds no plan gets its error in its row.
func TrainCompare(in TrainPlanInput, planners []string) ([]TrainCompared, error) {
	m, c, err := train.ResolveTarget(in.Spec)
	if err != nil {
		return nil, InputError{err}
	}
	if _, err := ParsePrices(in.Prices); err != nil {
		return nil, InputError{err}
	}
	out := make([]TrainCompared, len(planners))
	for i, name := range planners {
		one := in
		one.Planner, one.Export = name, ""
		out[i].Planner = name
		res, err := TrainPlan(one)
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i].Plan = res
		out[i].Trace, out[i].Err = train.Simulate(&m, c, res.Result.Plan, train.Options{Trace: true})
	}
	return out, nil
}
