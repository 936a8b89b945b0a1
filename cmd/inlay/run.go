package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/profile"
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

// runLong is the command's help.
const runLong = `run executes a plan on this machine's processors (the host platform: one
processor per core, each worker pinned to its core) with ONNX Runtime, one
session per planned subgraph, driven by the same dispatcher as the
simulator. Requests arrive at the workload's rates (times --scale) for
--duration; then the requests in flight drain. Every request ends completed,
completed late, or dropped with a reason (overloaded: beyond --backlog in
flight; deadline: with --drop-late; error: ONNX Runtime failed in a
subgraph; shutdown: still in flight at the end or on Ctrl-C). The report
puts the measured latencies beside the simulator's prediction for the same
plan and rate, with the cost model of inlay plan (the profile store's
measurements when --profiles has them).

--record adds each subgraph's in-situ times (from the runtime handing a
run to its worker to taking its report: the ONNX Runtime call as it runs
among the other work, plus the runtime's own delays) to the profile store
as in-situ measurements of this machine, merged with those of earlier
recorded runs; plan, simulate and later runs predict with their mean
(over the fastest 90%: the slowest runs are stalls that shape the p99)
instead of the profiler's median, which times each subgraph alone, run
after run. It also records the run's median arrival lag (the timer's
wake-up: from a request's scheduled arrival to the runtime taking it),
which later runs add to the simulator's predicted latencies. Record with
the plan and rate you will run.

--speed-check (on by default) times a small reference kernel on each core
every 500ms during the run (0.7% of a core) and reports how many of those
checks found the core in a slow spell: on a virtual machine a core can run
at half its speed for seconds at a time, and a run that falls in such
spells measures slower than the prediction, which is for the core's normal
speed (the profiler waits such spells out). Beside them it gives each
core's normal reference time in the run and the references' median, and,
when the --profiles store has it, the normal speed the profile took its
figures at and the run's median against it: a run slow throughout has no
slow checks, but its references are slower than the profile's.

--probe (on by default, with a --profiles store of this machine) times
the plan's subgraphs just before the run, each on its processor, pinned
and warm as the profile's warm runs were, three rounds over the plan
(about 2 s on examples/host_ocr_voice.yaml), and sets each beside its
profiled warm figure; a processor's ratio is the median over its
subgraphs. The prediction is then made a second time with every
figure on a processor times its ratio ("at speed now", beside the
profile's prediction): where the host runs slower or faster now than
when it was profiled (a virtual machine in slow spells, a phone that has
heated up), that is the prediction for the host as it is; a state that
changes during the run it cannot foresee.

--subgraphs sets each subgraph beside its prediction: the median of its
spans in the run and in the simulation of the same plan and rate, their
ratio, and the run's spans split into those that ran alone (the other
processors busy for under 20% of the span) and those that ran beside
other work. Beside above alone is contention between the plan's own
subgraphs; alone above the prediction is the processor running slower
than profiled (a slow spell, or a figure taken in another state). It
then splits each group's requests, predicted and measured: from arrival
to the first subgraph's start (the timer's lag, waiting behind other
work), the time in its subgraphs, and the time between them (hand-offs,
a worker's wake-up, waiting for a processor), so a miss that is not in
the subgraphs shows where it is.`

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run WORKLOAD --plan PLAN",
		Short: "Run a plan for real on ONNX Runtime and compare with the simulator",
		Long:  runLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			return runPlan(ctx, cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.plan, "plan", "", "plan file (.yaml, .yml or .json); required")
	fl.StringVar(&f.platform, "platform", "", "platform preset or file (default: the workload's, else "+hw.DefaultPlatform+")")
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
	_ = cmd.MarkFlagRequired("plan")
	return cmd
}

func runPlan(ctx context.Context, cmd *cobra.Command, workloadPath string, f runFlags) error {
	if err := checkOutputs(output{"--trace", f.trace, traceFormat}); err != nil {
		return err
	}
	w, pl, p, err := loadOn(workloadPath, f.platform, f.plan)
	if err != nil {
		return err
	}
	errOut := cmd.ErrOrStderr()
	in := app.RunInput{Workload: w, Platform: pl, Plan: p, Profiles: profilesPath(cmd), ProfilesNamed: cmd.Flags().Changed("profiles"),
		Library: f.ortLib, Duration: f.duration, Drain: f.drain, Scale: f.scale, Seed: f.seed, Backlog: f.backlog, Spin: f.spin,
		DropLate: f.dropLate, NoPin: f.noPin, Spans: f.trace != "", Subgraphs: f.subgraphs,
		Probe: f.probe, SpeedCheck: f.speedCheck, Record: f.record,
		Stage: func(st app.RunStage) {
			switch {
			case f.json:
			case st == app.StageProbing:
				fmt.Fprintf(errOut, "probing the plan's subgraphs at the host's speed now (%d rounds)…\n", profile.ProbeRounds)
			case st == app.StageRunning:
				fmt.Fprintf(errOut, "running %s on %s for %v (Ctrl-C stops)…\n", f.plan, pl.Name, f.duration)
			}
		}}
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

// profilesPath is the --profiles store's path ("" when the command has
// no such flag).
func profilesPath(cmd *cobra.Command) string {
	fl := cmd.Flags().Lookup("profiles")
	if fl == nil {
		return ""
	}
	return fl.Value.String()
}
