package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/report/trainreport"
	"github.com/inlay-dev/inlay/train/planner"
)

// trainPlanFlags are train plan's flags.
type trainPlanFlags struct {
	in            app.TrainPlanInput
	json, explain bool
	out           string
}

func newTrainPlanCmd() *cobra.Command {
	f := &trainPlanFlags{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Find the fastest (or cheapest) training plan across unlike GPUs",
		Long: "inlay train plan searches data, tensor and pipeline parallelism, uneven stages,\n" +
			"per-stage GPU type and TP, unlike replicas with their own batch shares,\n" +
			"micro-batch, recomputation and ZeRO; every plan fits the memory model. The\n" +
			"plan is printed beside a proven throughput bound. --json output reads back\n" +
			"with inlay train simulate --plan FILE.json.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainPlan(cmd, f) },
	}
	fl := cmd.Flags()
	in := &f.in
	registerTarget(cmd, &in.Spec)
	fl.StringVar(&in.Objective, "objective", "throughput", "throughput (tokens/s), cost (dollars per token; needs --prices) or time (hours to --tokens)")
	fl.StringVar(&in.Planner, "planner", "inlay", "planner: "+strings.Join(planner.Names(), ", "))
	fl.DurationVar(&in.Budget, "budget", 0, "search time budget (default: 1s for inlay, 5s with three GPU types or more; 120s for the baselines)")
	fl.IntVar(&in.GlobalBatch, "global-batch", 0, "sequences per iteration (default: about 2M tokens)")
	fl.IntVar(&in.MaxGPUs, "max-gpus", 0, "use at most this many GPUs (0: no cap)")
	fl.Float64Var(&in.MaxDollarsPerHour, "max-dollars-per-hour", 0, "spend at most this many dollars an hour (needs --prices)")
	fl.StringVar(&in.Prices, "prices", "", "dollars per GPU-hour by type: TYPE=PRICE[,TYPE=PRICE…]")
	fl.Float64Var(&in.TokenBudget, "tokens", 0, "token budget for --objective time")
	fl.BoolVar(&f.json, "json", false, "print the plan file as JSON (simulate --plan reads it)")
	fl.BoolVar(&f.explain, "explain", false, "print why each stage is as it is and what binds")
	exportFlags(cmd, &in.Export, &f.out)
	return cmd
}

func runTrainPlan(cmd *cobra.Command, f *trainPlanFlags) error {
	if f.in.Export != "" && f.out == "" && f.json {
		return errExportJSON
	}
	res, err := app.TrainPlan(f.in)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if f.in.Export != "" {
		if done, err := writeExport(w, f.out, res.Export); done || err != nil {
			return err
		}
	}
	if f.json {
		if !f.explain {
			res.File.Explain = nil
		}
		return trainreport.JSON(w, res.File)
	}
	return trainreport.WritePlan(w, res.File, res.Result, f.explain)
}

func newTrainBenchCmd() *cobra.Command {
	var asJSON bool
	var budget time.Duration
	var planners, only string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the planning scenarios with every planner side by side",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows := app.TrainBench(planners, only, budget)
			if asJSON {
				return trainreport.JSON(cmd.OutOrStdout(), rows)
			}
			return trainreport.WriteBench(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the rows as JSON")
	cmd.Flags().DurationVar(&budget, "baseline-budget", 30*time.Second, "search time budget of each baseline planner")
	cmd.Flags().StringVar(&planners, "planners", "inlay,megatron,metis,amp", "planners to run, comma-separated")
	cmd.Flags().StringVar(&only, "only", "", "run only the scenarios whose name contains this")
	return cmd
}
