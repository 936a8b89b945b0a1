package main

import (
	"fmt"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/report/progress"
	"github.com/inlay-dev/inlay/report/view"
	"github.com/spf13/cobra"
)

type benchFlags struct {
	scenarios int
	planners  string
	budget    time.Duration
	evals     int
	workers   int
	seed      int64
	platform  string
	workloads []string
	json      bool
	repeats   int
	versus    []string
	minModels int
	maxModels int
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Reproduce Puzzle's experiment: every planner on random multi-model scenarios",
		Long:  help("bench"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.scenarios, "scenarios", 20, "number of random scenarios")
	fl.StringVar(&f.planners, "planners", "single:npu,bestmap,heft,puzzle,inlay", "comma-separated planners (semicolon-separated when one has options with commas, e.g. \"bestmap;puzzle:pop=24,cut=0.01\")")
	fl.DurationVar(&f.budget, "budget", 0, "wall-clock budget per search planner and scenario (default 5s unless --evals is given)")
	fl.IntVar(&f.evals, "evals", 0, "evaluation budget per search planner and scenario (0: none)")
	fl.IntVar(&f.workers, "workers", 0, "evaluations run at once (0: all cores)")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the scenarios, the planners and the simulation")
	fl.StringVar(&f.platform, "platform", "phone", "platform preset or file")
	fl.StringArrayVar(&f.workloads, "workload", nil, "bench this workload file instead of random scenarios (repeatable)")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	fl.IntVar(&f.minModels, "min-models", 0, "least number of models in a random scenario (0: 3)")
	fl.IntVar(&f.maxModels, "max-models", 0, "most models in a random scenario (0: all nine networks)")
	fl.IntVar(&f.repeats, "repeats", 1, "run every planner this many times per scenario (planner seeds seed, seed+1, ...): min, median and max")
	fl.StringArrayVar(&f.versus, "versus", nil, "report A/B, the ratio of two planners' median scales by number of models (repeatable; default inlay/puzzle when both run)")
	addProfilesFlag(cmd)
	return cmd
}

func runBench(cmd *cobra.Command, f *benchFlags) error {
	ctx, stop := interruptible(cmd)
	defer stop()
	pl, err := hw.Resolve(f.platform)
	if err != nil {
		return err
	}
	in := app.BenchInput{Platform: pl, Planners: app.SplitPlanners(f.planners), Scenarios: f.scenarios, MinModels: f.minModels, MaxModels: f.maxModels,
		Seed: f.seed, Budget: f.budget, Evals: f.evals, Workers: f.workers, Repeats: f.repeats, Versus: f.versus}
	if _, err := app.BenchConfig(in); err != nil {
		return err // before the cost model and the workloads load
	}
	est, done, err := costModel(cmd, pl, nil)
	if err != nil {
		return err
	}
	defer done()
	in.Cost = est
	if in.Workloads, err = app.LoadWorkloads(f.workloads); err != nil {
		return err
	}
	n := f.scenarios
	if len(in.Workloads) > 0 {
		n = len(in.Workloads)
	}
	cfg, err := app.BenchConfig(in)
	if err != nil {
		return err
	}
	bar := progress.New(n*len(cfg.Planners), "bench")
	in.Progress = func(s, p int, name string) {
		if s > 0 || p > 0 {
			progress.Add(bar, 1)
		}
		progress.Describe(bar, fmt.Sprintf("bench: scenario %d/%d, %s", s+1, n, name))
	}
	rep, err := app.Bench(ctx, in)
	progress.Done(bar)
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	return view.Bench(cmd.OutOrStdout(), rep)
}
