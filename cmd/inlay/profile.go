package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/report/view"
	"github.com/inlay-dev/inlay/workload"
)

type profileFlags struct {
	platform, agentURL, token, ortLib                string
	handOff                                          bool
	reps, warmup, chunks, cold, idle, rounds, cycles int
	planners                                         []string
	budget                                           time.Duration
	force, corun                                     bool
	seed                                             int64
	folds                                            int
	fitOn                                            string
}

func newProfileCmd() *cobra.Command {
	var f profileFlags
	cmd := &cobra.Command{
		Use:   "profile WORKLOAD",
		Short: "Measure the workload's layers and subgraphs on the device into the profile store, and calibrate",
		Long:  help("profile"),
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := interruptible(cmd)
			defer stop()
			return runProfile(ctx, cmd, args[0], &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.platform, "platform", "", "platform preset or file (default: the agent's with --agent, else the workload's, else "+hw.DefaultPlatform+")")
	fl.StringVar(&f.agentURL, "agent", "", "measure on the device of the inlay agent at this URL")
	fl.StringVar(&f.token, "token", "", "the agent's token")
	fl.StringVar(&f.ortLib, "ort-lib", assets.ORTLibrary(), "ONNX Runtime shared library (measuring on this machine)")
	fl.IntVar(&f.reps, "reps", 10, "timed runs per measurement")
	fl.IntVar(&f.warmup, "warmup", 3, "untimed runs before them")
	fl.IntVar(&f.cold, "cold", 5, "timed runs after them, each after evicting the caches (the figure plans use; 0: none)")
	fl.IntVar(&f.idle, "idle", 5, fmt.Sprintf("timed runs of each plan subgraph after those, each after evicting the caches and idling %v: the median over a processor of what they take above their cold figures is charged before a model's first subgraph there, on its request's arrival (0, or --cold 0: none)", profile.IdleGap))
	fl.IntVar(&f.chunks, "chunks", 16, "runs of consecutive layers measured per model for the calibration (the whole model among them)")
	fl.StringSliceVar(&f.planners, "planner", []string{"bestmap", "heft", "inlay"}, "planners whose plans' subgraphs are measured (repeatable; \"none\" for none)")
	fl.DurationVar(&f.budget, "budget", 3*time.Second, "time budget of each search planner")
	fl.IntVar(&f.rounds, "rounds", 6, "device-in-the-loop rounds: after each, the store is calibrated, the planners plan again with the measurements, and the subgraphs of their new plans that the store lacks are measured; it stops early at a round with none (1: plan once, with the store as it was)")
	fl.BoolVar(&f.force, "force", false, "measure again what the store already holds")
	fl.IntVar(&f.cycles, "cycles", 0, "timed rounds of each plan's cycle (each group's requests at their rates, a request's subgraphs one at a time, in plan order, on their processors): each subgraph's median there replaces its cold figure (0, the default: none; 9 is a good count)")
	fl.BoolVar(&f.corun, "corun", true, "co-run profile of each plan subgraph: timed beside a streaming kernel at 25/50/100 % duty on every processor sharing its cache or memory channel, and beside the plan's subgraphs there; fits the contention model (--corun=false: none)")
	fl.BoolVar(&f.handOff, "handoff", true, "measure the runtime's hand-off between dependent subgraphs (pinned and unpinned, about 10 s) first, on this machine or, with --agent, on the agent's device; plans and predictions charge it at every cut (--handoff=false: keep what the store has)")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the planners, the chunks and the held-back subgraphs")
	fl.IntVar(&f.folds, "folds", 5, "cross-validation folds of the calibration: each multi-layer subgraph is held back from one fit, with every sample sharing its layers")
	fl.StringVar(&f.fitOn, "fit-on", "min", "figure the calibration fits: min (each measurement's fastest run, steady on a busy machine), median, or cold (the cold runs' median)")
	addProfilesFlag(cmd)
	return cmd
}

func newCalibrateCmd() *cobra.Command {
	var f profileFlags
	var pf publishedFlags
	cmd := &cobra.Command{
		Use:   "calibrate WORKLOAD | calibrate --published FILE",
		Short: "Fit the analytic model to the profile store's measurements (or to published latencies) and report its error",
		Long:  help("calibrate"),
		Args:  cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pf.file != "" {
				if len(args) > 0 {
					return fmt.Errorf("calibrate: give a workload or --published, not both")
				}
				pf.platform = f.platform
				return runCalibratePublished(cmd.OutOrStdout(), &pf)
			}
			if len(args) != 1 {
				return fmt.Errorf("calibrate: give a workload (or --published FILE)")
			}
			store, _ := profilesFlag(cmd)
			r, err := app.CalibrateWorkload(store, args[0], f.platform, app.CalibrateOptions{Folds: f.folds, Seed: f.seed, FitOn: f.fitOn})
			if err != nil {
				return err
			}
			return view.Calibration(cmd.OutOrStdout(), r, true)
		},
	}
	fl := cmd.Flags()
	addPlatformFlag(cmd, &f.platform)
	fl.Int64Var(&f.seed, "seed", 1, "seed of the held-back subgraphs")
	fl.IntVar(&f.folds, "folds", 5, "cross-validation folds: each multi-layer subgraph is held back from one fit, with every sample sharing its layers")
	fl.StringVar(&f.fitOn, "fit-on", "min", "figure the fit aims at: min (each measurement's fastest run, steady on a busy machine), median, or cold (the cold runs' median)")
	fl.StringVar(&pf.file, "published", "", "fit to this CSV of published whole-model latencies instead of the profile store")
	fl.StringVarP(&pf.output, "output", "o", "", "with --published: the calibrated platform file to write (default PLATFORM-calibrated.yaml; for an AI Hub file, the directory of the PRESET-calibrated.yaml files)")
	fl.IntVar(&pf.evals, "evals", 1500, "with --published: objective evaluations per fit")
	fl.Float64Var(&pf.prior, "prior", profile.DefaultPublishedPrior, "with --published: weight of the pull of each fitted factor toward its nominal figure, per (ln ratio)² (0: none)")
	addProfilesFlag(cmd)
	return cmd
}

func runProfile(ctx context.Context, cmd *cobra.Command, path string, f *profileFlags) error {
	out := cmd.OutOrStdout()
	w, err := workload.Load(path)
	if err != nil {
		return err
	}
	in := app.ProfileInput{Warmup: f.warmup, Reps: f.reps, Cold: f.cold, Idle: f.idle, Cycles: f.cycles, Chunks: f.chunks,
		Planners: f.planners, Budget: f.budget, Rounds: f.rounds, Force: f.force, Corun: f.corun, Seed: f.seed,
		Calibration: app.CalibrateOptions{Folds: f.folds, Seed: f.seed, FitOn: f.fitOn}}
	if err := in.Check(); err != nil {
		return err
	}
	dev, pl, handOff, err := app.ProfileDevice(ctx, w, app.DeviceInput{Platform: f.platform, AgentURL: f.agentURL, Token: f.token, Library: f.ortLib})
	if err != nil {
		return err
	}
	store, _ := profilesFlag(cmd)
	st, err := profile.Open(store)
	if err != nil {
		return err
	}
	defer st.Close()
	pp := &view.ProfilePrinter{Out: out, ErrOut: cmd.ErrOrStderr(), Workload: path, Platform: pl.Name, Store: st.Path(), Cycles: f.cycles, Rounds: f.rounds}
	in.Workload, in.Platform, in.Device, in.Store, in.Profiles, in.Observer = w, pl, dev, st, st.Path(), pp
	if f.handOff {
		in.HandOff = handOff
	}
	r, err := app.Profile(ctx, in)
	pp.Done()
	if err != nil {
		return err
	}
	if f.corun {
		cs, err := st.Coruns(r.Device.Name)
		if err != nil {
			return err
		}
		if err := view.Coruns(out, cs, r.Coruns); err != nil {
			return err
		}
	}
	if r.Speed != nil {
		view.Speed(out, *r.Speed)
	}
	fmt.Fprintln(out)
	return view.Calibration(out, r.Calibration, false)
}
