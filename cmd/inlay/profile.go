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

// profileLong is the command's help.
const profileLong = `profile measures, on this machine (--platform host, ONNX Runtime's CPU build,
pinned to each processor's cores) or on a device running inlay agent
(--agent URL --token T), what the planners need: every single layer of every
model on every processor configuration, a few runs of consecutive layers per
model (--chunks; for the calibration) and the subgraphs of the plans the
chosen planners make. Each is exported as a standalone ONNX model and timed
(--warmup untimed runs, then --reps timed ones back to back: median, p90,
min, max and standard deviation are stored; then --cold timed runs, each
after the measuring core has written a buffer twice its largest cache: their
median is the figure plan, simulate, bench and run use, because in a plan a
subgraph mostly runs after other work on its processor, with its weights
out of the caches); then, for the plans' subgraphs, --idle timed runs, each
after the eviction and a sleep of 20 ms: a processor that has idled runs
the first work after waking slower (on the 2-core host up to 0.7 ms), and
the median of what the subgraphs take there above their cold figures is
charged, per processor, before a model's first subgraph, which starts on
its request's arrival on a processor that has idled (--cold 0: no idle
runs). Then each plan is timed in its cycle (--cycles rounds; a round is
a time in which every group's requests arrive a whole number of times at
about their rates, each request running its group's subgraphs one at a
time, in the plan's order, on the processors the plan put them on, idle
in between): a subgraph's median there, after what the workload runs
before it and the idle time, is its figure for that plan in place of the
cold one, because what the rest of the plan and the idle time leave in
the caches is what it finds in a steady run (off by
default: on one test host it fixed the held-out camera group and cost
host_ocr_voice three of its twelve runs; docs/results/contention-log.md, "The
cycle figure"; --cycles 9 times nine rounds). What the store already holds for
the device is skipped unless --force (or it lacks the cold or idle runs
asked for). Processors identical but for their cores (the host
platform's one processor per core) are measured once, on the first of them,
and those figures stand for all.

Device in the loop: the planners first plan with the analytic model (or
what the store held), and their plans' subgraphs are measured with the
layers and chunks; then the store is calibrated, the planners plan again
with the measurements, and the subgraphs of the new plans that the store
lacks are measured, round after round (--rounds, default 6) until a round
finds none. A planner's plan changes as it learns what subgraphs really
cost, so without the rounds the plan that inlay plan makes from the store
would have subgraphs nobody measured. A round costs the planners' time
(--budget each) and a few timings; profile says after how many rounds the
plans settled, or that they had not.

With --corun (the default) each plan subgraph is also timed, --reps runs
each, beside a streaming kernel (a 32 MiB copy loop) at 25, 50 and 100 %
duty on every processor that shares a cache or memory channel with its own
(hw.Platform contention), and beside the plan's subgraphs on those
processors; the slowdowns fit the subgraph's contention sensitivity (package
cost), stored in the corun table. It adds four timings per plan subgraph
and none per layer or chunk.

Then it calibrates: it fits each processor's efficiency factors in the
analytic model to the measurements, stores them, and prints the mean absolute
percentage error on subgraphs held back from the fit, before and after.
plan, simulate, bench and run read the store (--profiles): measured figures
first, the calibrated model for the rest.`

func newProfileCmd() *cobra.Command {
	var f profileFlags
	cmd := &cobra.Command{
		Use:   "profile WORKLOAD",
		Short: "Measure the workload's layers and subgraphs on the device into the profile store, and calibrate",
		Long:  profileLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
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
		Long: `calibrate fits each processor's efficiency factors in the analytic model (compute
efficiency per operator class, memory efficiency, saturation size, dispatch
and layer overheads) to the measurements inlay profile stored for the
workload's models on the platform's device, stores them for plan, simulate,
bench and run, and prints the mean absolute percentage error of the model on
subgraphs held back from the fit, before and after. It measures nothing.

With --published FILE it fits instead one processor's parameters to a CSV of
published whole-model latencies (shared/measurements/README.md gives the
columns): per data type the sustained throughput and memory bandwidth, the
efficiency per operator class, the saturation size, the per-layer and
dispatch overheads and, for integer types, the rate of requantising passes,
with the same fitting code, pulled toward the nominal figures (--prior). It
prints the
leave-one-model-out error per model and per precision, reports rows whose
runtime fell back to the CPU apart (they are not fitted), and writes the
platform with the fitted figures (-o).

Given shared/measurements/aihub-published.csv (its header names aihub_dir),
it fits every device with a preset at once (Galaxy S23: galaxy-s23, Galaxy S24:
galaxy-s24, Galaxy S25: galaxy-s25, Snapdragon X Elite CRD:
snapdragon-x-elite; --platform limits it to one), each to its qnn_dlc rows
(the runtime the presets predict), prints each network's prediction beside
its published spread over the runtimes, and writes PRESET-calibrated.yaml
per device (into the directory -o names).`,
		Args: cobra.RangeArgs(0, 1),
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
			w, pl, _, err := loadOn(args[0], f.platform, "")
			if err != nil {
				return err
			}
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			device, err := profile.DeviceFor(st, pl)
			if err != nil {
				return err
			}
			if device == "" {
				return fmt.Errorf("calibrate: %s holds no measurements for platform %s (run inlay profile first)", st.Path(), pl.Name)
			}
			r, err := app.Calibrate(st, device, pl, w, app.CalibrateOptions{Folds: f.folds, Seed: f.seed, FitOn: f.fitOn})
			if err != nil {
				return err
			}
			return view.Calibration(cmd.OutOrStdout(), r, true)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.platform, "platform", "", "platform preset or file (default: the workload's, else "+hw.DefaultPlatform+")")
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

// openStore opens (creating) the store named by --profiles.
func openStore(cmd *cobra.Command) (*profile.Store, error) {
	path, _ := cmd.Flags().GetString("profiles")
	return profile.Open(path)
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
	st, err := openStore(cmd)
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
