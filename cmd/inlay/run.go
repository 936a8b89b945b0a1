package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/report/view"
)

type runFlags struct {
	plan, platform, trace, ortLib string
	duration, drain, spin         time.Duration
	scale                         float64
	seed                          int64
	backlog                       int
	dropLate, json, noPin, record bool
	speedCheck, subgraphs, probe  bool
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run WORKLOAD --plan PLAN",
		Short: "Run a plan for real on ONNX Runtime and compare with the simulator",
		Long:  help("run"),
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := interruptible(cmd)
			defer stop()
			return runPlan(ctx, cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	addPlanFlag(cmd, &f.plan)
	addPlatformFlag(cmd, &f.platform)
	fl.DurationVar(&f.duration, "duration", 20*time.Second, "how long requests arrive")
	fl.Float64Var(&f.scale, "scale", 1, "rate scale: multiplies every group's rate")
	fl.StringVar(&f.trace, "trace", "", "write what really ran as a Chrome trace (.json; opens in Perfetto)")
	fl.BoolVar(&f.json, "json", false, "print one JSON object instead of tables")
	fl.StringVar(&f.ortLib, "ort-lib", assets.ORTLibrary(), "ONNX Runtime shared library")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the Poisson arrivals and the random inputs")
	fl.IntVar(&f.backlog, "backlog", 0, "requests of one group in flight beyond which arrivals are dropped as overloaded\n(0: twice the requests that arrive within a deadline, at least 4; -1: no bound)")
	fl.BoolVar(&f.dropLate, "drop-late", false, "drop a request when one of its subgraphs would start after its deadline")
	fl.BoolVar(&f.noPin, "no-pin", false, "leave the workers of the host's processors unpinned (for a machine shared with other work)")
	fl.DurationVar(&f.spin, "spin", 0, "how long an idle worker polls its queue before it sleeps (e.g. 200us: faster hand-offs, at the cost of CPU time)")
	fl.BoolVar(&f.record, "record", false, "store the subgraphs' in-situ times in the profile store (--profiles)")
	fl.DurationVar(&f.drain, "drain", 0, "how long requests in flight at the end may still run (0: 4× the longest deadline, at least 1s)")
	fl.BoolVar(&f.probe, "probe", true, "before the run, time the plan's subgraphs at the host's speed now and predict at that speed too (needs the --profiles store's figures of this machine)")
	fl.BoolVar(&f.subgraphs, "subgraphs", false, "also compare each subgraph's predicted and measured median, the run's split by whether the other processors were busy beside it, and each group's requests split into before, in and between its subgraphs (subgraphs, requests in --json)")
	fl.BoolVar(&f.speedCheck, "speed-check", true, "time a reference kernel on each core every 500ms during the run and report the share found in a slow spell")
	addProfilesFlag(cmd)
	return cmd
}

func runPlan(ctx context.Context, cmd *cobra.Command, workloadPath string, f runFlags) error {
	if err := checkOutputs(output{"--trace", f.trace, app.TraceFormat}); err != nil {
		return err
	}
	w, pl, p, err := app.LoadOn(workloadPath, f.platform, f.plan)
	if err != nil {
		return err
	}
	errOut := cmd.ErrOrStderr()
	prof, named := profilesFlag(cmd)
	in := app.RunInput{Workload: w, Platform: pl, Plan: p, Profiles: prof, ProfilesNamed: named,
		Library: f.ortLib, Duration: f.duration, Drain: f.drain, Scale: f.scale, Seed: f.seed, Backlog: f.backlog, Spin: f.spin,
		DropLate: f.dropLate, NoPin: f.noPin, Spans: f.trace != "", Subgraphs: f.subgraphs,
		Probe: f.probe, SpeedCheck: f.speedCheck, Record: f.record,
		Stage: view.RunStages(errOut, f.plan, pl.Name, f.duration)}
	if f.json {
		in.Stage = nil
	}
	s, err := app.Run(ctx, in)
	if err != nil {
		return err
	}
	res := s.Runtime
	if f.record {
		fmt.Fprintf(errOut, "recorded the in-situ times of %d subgraph(s) in %s\n", s.Recorded, in.Profiles)
	}
	if f.trace != "" {
		if err := view.TraceFile(f.trace, res.Lanes, res.Spans); err != nil {
			return err
		}
	}
	s.Result.Workload = workloadPath
	if f.json {
		return printJSON(cmd.OutOrStdout(), s.Result)
	}
	return view.Run(cmd.OutOrStdout(), workloadPath, pl, s, f.subgraphs)
}
