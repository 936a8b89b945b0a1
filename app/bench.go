package app

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/bench"
	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/workload"
)

// BenchInput asks for Puzzle's experiment (inlay bench, the web API's
// bench): every planner on random scenarios, or on the given workloads.
type BenchInput struct {
	Platform *hw.Platform
	Cost     cost.Estimator
	// Planners are registry names (SplitPlanners reads a list).
	Planners []string
	// Scenarios random scenarios of MinModels to MaxModels models (0: the
	// bench's defaults), unless Workloads are given.
	Scenarios            int
	MinModels, MaxModels int
	Workloads            []*workload.Workload
	Seed                 int64
	// Budget is each search's wall-clock budget (0 with Evals 0: 5 s);
	// Evals its evaluation budget; Workers the evaluations at once (0: one
	// per core); Repeats the runs of every planner per scenario.
	Budget  time.Duration
	Evals   int
	Workers int
	Repeats int
	// Versus lists "A/B" ratios to report (default inlay/puzzle when both
	// run).
	Versus []string
	// Progress hears when a planner starts on a scenario (may be nil).
	Progress func(scenario, planner int, name string)
	// Done hears each scenario's results as it ends (may be nil).
	Done func(bench.ScenarioResult)
}

// SplitPlanners reads a list of planners: comma-separated, or
// semicolon-separated when one has options with commas
// ("bestmap;puzzle:pop=24,cut=0.01").
func SplitPlanners(list string) []string {
	var planners []string
	sep := ","
	if strings.Contains(list, ";") {
		sep = ";"
	}
	for _, p := range strings.Split(list, sep) {
		if p = strings.TrimSpace(p); p != "" {
			planners = append(planners, p)
		}
	}
	return planners
}

// BenchConfig checks the input and fills the bench's configuration.
func BenchConfig(in BenchInput) (bench.Config, error) {
	planners := in.Planners
	if in.Budget == 0 && in.Evals == 0 {
		in.Budget = 5 * time.Second
	}
	if in.Workers <= 0 {
		in.Workers = goruntime.NumCPU()
	}
	if in.Repeats < 1 {
		return bench.Config{}, fmt.Errorf("bench: --repeats %d: want at least 1", in.Repeats)
	}
	if in.MinModels < 0 || in.MaxModels < 0 || in.MaxModels > 0 && in.MinModels > in.MaxModels {
		return bench.Config{}, fmt.Errorf("bench: --min-models %d, --max-models %d: want 0 ≤ min ≤ max", in.MinModels, in.MaxModels)
	}
	cfg := bench.Config{Platform: in.Platform, Cost: in.Cost, Planners: planners, Scenarios: in.Scenarios, Seed: in.Seed,
		Budget: in.Budget, Evals: in.Evals, Workers: in.Workers, Repeats: in.Repeats, Workloads: in.Workloads,
		Scenario: workload.ScenarioOptions{MinModels: in.MinModels, MaxModels: in.MaxModels},
		Progress: in.Progress, Done: in.Done}
	has := map[string]bool{}
	for _, p := range planners {
		has[p] = true
	}
	versus := in.Versus
	if len(versus) == 0 && has["inlay"] && has["puzzle"] {
		versus = []string{"inlay/puzzle"}
	}
	for _, v := range versus {
		a, b, ok := strings.Cut(v, "/")
		if !ok || !has[a] || !has[b] {
			return bench.Config{}, fmt.Errorf("bench: --versus %q: want A/B with both planners among --planners", v)
		}
		cfg.Versus = append(cfg.Versus, [2]string{a, b})
	}
	return cfg, nil
}

// Bench runs the experiment.
func Bench(ctx context.Context, in BenchInput) (*bench.Report, error) {
	cfg, err := BenchConfig(in)
	if err != nil {
		return nil, err
	}
	return bench.Run(ctx, cfg)
}
