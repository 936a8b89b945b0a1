package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/report/view"
)

type simulateFlags struct {
	plan, platform, gantt, trace string
	scale                        float64
	seed                         int64
	json                         bool
	window                       time.Duration
	cmd                          *cobra.Command // for costModel (--profiles)
}

func newSimulateCmd() *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate WORKLOAD --plan PLAN",
		Short: "Simulate a plan: latency, deadline misses, utilisation, max sustainable rate",
		Long: "simulate runs a plan in virtual time with the same dispatcher the runtime uses.\n" +
			"Without --scale it searches the max sustainable rate scale (the largest common\n" +
			"factor on every group's rate at which 99% of each group's requests meet their\n" +
			"deadline), prints it with a proven upper bound, and reports the run at that scale.\n" +
			"An infeasible plan (deadlines missed even at a tiny rate) is reported as such,\n" +
			"with the reason; the exit status is non-zero only for errors.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.cmd = cmd
			return simulate(cmd.OutOrStdout(), args[0], f, cmd.Flags().Changed("scale"))
		},
	}
	fl := cmd.Flags()
	addPlanFlag(cmd, &f.plan)
	addPlatformFlag(cmd, &f.platform)
	fl.Float64Var(&f.scale, "scale", 0, "simulate at this rate scale instead of searching the max sustainable one")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the Poisson arrivals")
	fl.BoolVar(&f.json, "json", false, "print one JSON object instead of tables")
	fl.StringVar(&f.gantt, "gantt", "", "write a Gantt chart (.svg or .png)")
	fl.StringVar(&f.trace, "trace", "", "write a Chrome trace-event JSON file (opens in Perfetto)")
	fl.DurationVar(&f.window, "window", 0, "time window from the start drawn in the Gantt chart and written to the trace\n(default: three periods of the slowest group for the chart, ten times that for the trace)")
	addProfilesFlag(cmd)
	return cmd
}

func simulate(out io.Writer, workloadPath string, f simulateFlags, scaleSet bool) error {
	if scaleSet && !(f.scale > 0) {
		return fmt.Errorf("--scale %v must be positive", f.scale)
	}
	if err := checkOutputs(output{"--gantt", f.gantt, app.GanttFormat}, output{"--trace", f.trace, app.TraceFormat}); err != nil {
		return err
	}
	pr, p, done, err := loadProblem(f.cmd, workloadPath, f.platform, f.plan)
	if err != nil {
		return err
	}
	defer done()
	w, pl := pr.Workload, pr.Platform
	in := app.EvaluateInput{Problem: pr, Plan: p, Seed: f.seed}
	if scaleSet {
		in.Scale = f.scale
	}
	ev, err := app.Evaluate(context.Background(), in)
	if err != nil {
		return err
	}
	ev.Outcome.Workload = workloadPath
	if err := view.SimulationFiles(f.gantt, f.trace, f.window, w, pl, p, ev.Run); err != nil {
		return err
	}
	if f.json {
		return printJSON(out, ev.Outcome)
	}
	return view.Simulate(out, workloadPath, pl, ev, scaleSet, f.scale)
}
