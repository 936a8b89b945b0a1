package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/agent"
	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/sim"
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
		Long: `profile measures, on this machine (--platform host, ONNX Runtime's CPU build,
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
default: on the eighth session's host it fixed the held-out camera group
and cost host_ocr_voice three of its twelve runs; docs/contention.md, "The cycle
figure"; --cycles 9 times nine rounds). What the store already holds for
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
first, the calibrated model for the rest.`,
		Args: cobra.ExactArgs(1),
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
it fits every device with a preset at once (Galaxy S23: phone, Galaxy S24:
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
			return calibrateAndReport(cmd.OutOrStdout(), st, device, pl, w, &f, true)
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
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.reps < 1 || f.warmup < 0 || f.chunks < 0 || f.cold < 0 || f.idle < 0 || f.cycles < 0 {
		return fmt.Errorf("profile: --reps must be at least 1, --warmup, --cold, --idle, --cycles and --chunks not negative")
	}
	if f.rounds < 1 {
		return fmt.Errorf("profile: --rounds %d: want at least 1", f.rounds)
	}
	w, err := workload.Load(path)
	if err != nil {
		return err
	}
	var dev profile.Device
	var pl *hw.Platform
	if f.platform != "" {
		if pl, err = hw.Resolve(f.platform); err != nil {
			return err
		}
	}
	if f.agentURL != "" {
		c := agent.NewClient(f.agentURL, f.token)
		info, err := c.Info(ctx)
		if err != nil {
			return err
		}
		if pl == nil {
			pl = info.Platform
		}
		if pl == nil {
			return fmt.Errorf("profile: the agent at %s names no platform; give --platform", f.agentURL)
		}
		dev = c
	} else {
		if pl == nil {
			if pl, err = hw.Choose("", w.Platform); err != nil {
				return err
			}
		}
		for _, pr := range pl.Processors {
			if len(pr.Cores) == 0 {
				return fmt.Errorf("profile: platform %s: processor %s is not a set of this machine's cores; measure on --platform host, or on the device with --agent URL", pl.Name, pr.Name)
			}
		}
		if dev, err = profile.NewLocal(f.ortLib, pl); err != nil {
			return err
		}
	}
	info, err := dev.Info(ctx)
	if err != nil {
		return err
	}
	st, err := openStore(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(out, "profiling %s on %s (device %s, ONNX Runtime %s) into %s\n", path, pl.Name, info.Name, info.ORTVersion, st.Path())
	if f.handOff {
		probe := func(ctx context.Context, unpinned bool) (runtime.HandOffProbe, error) {
			return runtime.ProbeHandOff(ctx, runtime.ProbeConfig{Platform: pl, Library: f.ortLib, NoPin: unpinned})
		}
		if c, ok := dev.(*agent.Client); ok {
			probe = func(ctx context.Context, unpinned bool) (runtime.HandOffProbe, error) {
				return c.HandOff(ctx, agent.HandOffOptions{NoPin: unpinned})
			}
		}
		if err := probeHandOffs(ctx, out, st, info.Name, probe); err != nil {
			return err
		}
	}

	twins := profile.Twins(pl)
	var classes []string
	for i, t := range twins {
		if t == i {
			var members []string
			for j, u := range twins {
				if u == i {
					members = append(members, pl.Processors[j].Name)
				}
			}
			classes = append(classes, fmt.Sprintf("%s for %s", pl.Processors[i].Name, strings.Join(members, ", ")))
		}
	}
	// Device in the loop: the planners' plans made with the analytic model
	// are measured first, with every layer and the chunks; then, round
	// after round, the store is calibrated, the planners plan again with
	// the measurements and the subgraphs of their new plans that the store
	// lacks are measured, until a round finds none (or --rounds). So the
	// plan inlay plan makes from the store is one whose subgraphs were
	// measured, not one the calibrated model guessed at.
	// sum keeps what the reports after the rounds need: the co-run
	// profiles stored and the device. cal is the last calibration's report
	// while calibrated says no round measured anything after it, so that
	// the same fit is not made twice.
	var sum profile.Summary
	var cal bytes.Buffer
	calibrated := false
	for round := 1; round <= f.rounds; round++ {
		plans, err := profilePlans(ctx, cmd, errOut, w, pl, f)
		if err != nil {
			return err
		}
		jobs, err := profile.Jobs(w, pl, profile.JobOptions{Plans: plans, Chunks: f.chunks, Seed: f.seed})
		if err != nil {
			return err
		}
		if round == 1 {
			var kinds []string
			for _, k := range profile.CountKinds(jobs) {
				kinds = append(kinds, fmt.Sprintf("%d %s", k.Count, k.Kind))
			}
			fmt.Fprintf(out, "%d subgraphs to measure (%s), on %s\n", len(jobs), strings.Join(kinds, ", "), strings.Join(classes, "; "))
		} else {
			// A later round measures the new plans' subgraphs the store
			// lacks, and times a plan whose cycle it lacks (a plan made of
			// stored subgraphs may still be a new plan).
			jobs = slices.DeleteFunc(jobs, func(j profile.Job) bool { return j.Kind != profile.KindPlan })
		}
		cycles, err := profile.PlanCycles(w, pl, plans)
		if err != nil {
			return err
		}
		rs, err := profileRound(ctx, out, errOut, dev, st, pl, jobs, cycles, f, round)
		sum.Coruns += rs.Coruns
		sum.Device = rs.Device
		if err != nil {
			return err
		}
		if rs.Measured+rs.Failed > 0 {
			calibrated = false
		}
		if round > 1 && rs.Measured+rs.Failed == 0 {
			fmt.Fprintf(out, "the planners' plans with the measurements: every subgraph measured (after %d rounds)\n", round)
			break
		}
		if round < f.rounds {
			cal.Reset()
			if err := calibrateAndReport(&cal, st, rs.Device, pl, w, f, false); err != nil {
				return err
			}
			calibrated = true
		} else if round > 1 {
			fmt.Fprintf(out, "the planners' plans still changed in round %d (--rounds %d): a plan made from the store may have subgraphs the calibrated model estimates\n", round, f.rounds)
		}
	}
	if f.corun {
		if err := reportCoruns(out, st, sum); err != nil {
			return err
		}
	}
	if sp, ok := dev.(interface{ Speed() profile.SpeedStats }); ok {
		s := sp.Speed()
		reportSpeed(out, s)
		// inlay run sets its own reference times beside these.
		if len(s.Cores) > 0 {
			if err := st.PutSpeeds(sum.Device, s.Cores); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(out)
	if calibrated {
		_, err := out.Write(cal.Bytes())
		return err
	}
	return calibrateAndReport(out, st, sum.Device, pl, w, f, false)
}

// reportSpeed says what the speed guard did (profile.SlowRatio).
func reportSpeed(out io.Writer, s profile.SpeedStats) {
	if s.Phases == 0 {
		return
	}
	fmt.Fprintf(out, "speed guard: %d phases measured; %d waited for a core at normal speed (%s in all), %d timed again after a slow spell, %d accepted in one\n",
		s.Phases, s.Waits, s.Waited.Round(100*time.Millisecond), s.Retimed, s.Slow)
	if len(s.Cores) == 0 {
		return
	}
	parts := make([]string, len(s.Cores))
	for i, c := range s.Cores {
		parts[i] = fmt.Sprintf("core %d %s (median %s, %d of %d slow)", c.Core, fmtUS(c.Normal), fmtUS(c.Median), c.Slow, c.Checks)
	}
	fmt.Fprintf(out, "normal speed the figures were taken at (reference time; stored, and inlay run sets its own beside it): %s\n", strings.Join(parts, ", "))
}

// profileRound measures jobs, the round-th round of runProfile, with a
// progress bar, and prints what it measured. Only the first round may
// measure again what the store holds (--force); the later ones measure the
// new plans' subgraphs the store lacks.
func profileRound(ctx context.Context, out, errOut io.Writer, dev profile.Device, st *profile.Store, pl *hw.Platform, jobs []profile.Job, cycles []profile.Cycle, f *profileFlags, round int) (profile.Summary, error) {
	what := "profile"
	if round > 1 {
		what = fmt.Sprintf("profile round %d", round)
	}
	bar := newBar(len(jobs), what)
	lastLine := time.Now()
	prof := &profile.Profiler{Device: dev, Store: st, Warmup: f.warmup, Reps: f.reps, Cold: f.cold, Idle: f.idle, Force: f.force && round == 1, Corun: f.corun,
		Cycles: cycles, CycleRuns: f.cycles,
		Progress: func(done, total int, j profile.Job) {
			if bar != nil {
				barDescribe(bar, fmt.Sprintf("%s: %s layers %s", what, j.Model, j.Set.Key()))
				barAdd(bar, 1)
				return
			}
			if time.Since(lastLine) >= 5*time.Second || done == total {
				lastLine = time.Now()
				fmt.Fprintf(errOut, "%s: %d/%d (%s layers %s)\n", what, done, total, j.Model, j.Set.Key())
			}
		}}
	sum, err := prof.Run(ctx, pl, jobs)
	barDone(bar)
	if round == 1 {
		fmt.Fprintf(out, "measured %d, already stored %d, failed %d in %s\n", sum.Measured, sum.Skipped, sum.Failed, sum.Elapsed.Round(time.Millisecond))
	} else if sum.Measured+sum.Failed > 0 {
		fmt.Fprintf(out, "round %d: the planners planned again with the measurements: %d new subgraph(s) of their plans measured, %d already stored, failed %d in %s\n",
			round, sum.Measured, sum.Skipped, sum.Failed, sum.Elapsed.Round(time.Millisecond))
	}
	for _, msg := range sum.Failures {
		fmt.Fprintf(out, "  failed: %s\n", msg)
	}
	if sum.Cycled > 0 {
		fmt.Fprintf(out, "cycle figures: %d subgraphs timed in their plan's cycle (%d steps, %d timed rounds each)\n", sum.Cycled, sum.CycleSteps, f.cycles)
	}
	if sum.CycleNote != "" {
		fmt.Fprintf(out, "cycle figures: %s\n", sum.CycleNote)
	}
	if sum.Failed > len(sum.Failures) {
		fmt.Fprintf(out, "  … and %d more (stored with their errors; --force retries them)\n", sum.Failed-len(sum.Failures))
	}
	return sum, err
}

// probeHandOffs measures the runtime's hand-off with probe, pinned and
// unpinned (runtime.ProbeHandOff on this machine, or through the agent on
// its device), stores both for the device and prints them. A platform with
// fewer than two processors ONNX Runtime runs on has no hand-off between
// processors to measure (runtime.ErrNoProbePair), nor does an agent
// without the endpoint: it says so and goes on.
func probeHandOffs(ctx context.Context, out io.Writer, st *profile.Store, device string, probe func(ctx context.Context, unpinned bool) (runtime.HandOffProbe, error)) error {
	var line []string
	for _, unpinned := range []bool{false, true} {
		pr, err := probe(ctx, unpinned)
		if err != nil {
			var se *agent.StatusError
			if errors.Is(err, runtime.ErrNoProbePair) || (errors.As(err, &se) && se.Code == agent.CodeNotFound) {
				fmt.Fprintf(out, "hand-off: not measured (%v)\n", err)
				return nil
			}
			return fmt.Errorf("profile: %w", err)
		}
		sd := pr.Starts
		if err := st.PutHandOff(device, profile.HandOff{Pinned: !unpinned, Same: pr.Same, Cross: pr.Cross, Samples: pr.Samples,
			SleepStart: sd.Sleep, SleepRequests: sd.SleepRequests, PollStart: sd.Poll, PollRequests: sd.PollRequests,
			CrossAfter: pr.CrossAfter}); err != nil {
			return err
		}
		mode := "pinned"
		if unpinned {
			mode = "unpinned"
		}
		l := fmt.Sprintf("%s: same processor %v, %s to %s %v", mode, pr.Same.Round(time.Microsecond), pr.Procs[0], pr.Procs[1], pr.Cross.Round(time.Microsecond))
		if len(pr.CrossAfter) > 0 {
			var pts []string
			for _, p := range pr.CrossAfter {
				pts = append(pts, fmt.Sprintf("%v after %v", p.Gap.Round(time.Microsecond), p.After.Round(10*time.Microsecond)))
			}
			l += " (" + strings.Join(pts, ", ") + ")"
		}
		var starts []string
		if d, ok := sd.For(true); ok {
			starts = append(starts, fmt.Sprintf("%v with the loop sleeping", d.Round(time.Microsecond)))
		}
		if d, ok := sd.For(false); ok {
			starts = append(starts, fmt.Sprintf("%v polling", d.Round(time.Microsecond)))
		}
		if len(starts) > 0 {
			l += ", arrival to first subgraph " + strings.Join(starts, ", ")
		}
		line = append(line, l)
	}
	fmt.Fprintf(out, "hand-off between dependent subgraphs (median of each kind, runtime.ProbeHandOff): %s\n", strings.Join(line, "; "))
	return nil
}

// profilePlans runs the chosen planners with the current cost model and
// returns their plans; a planner that fails is reported and left out.
func profilePlans(ctx context.Context, cmd *cobra.Command, errOut io.Writer, w *workload.Workload, pl *hw.Platform, f *profileFlags) ([]*plan.Plan, error) {
	var names []string
	for _, n := range f.planners {
		if n = strings.TrimSpace(n); n != "" && n != "none" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	est, _, err := costModel(cmd, pl, w)
	if err != nil {
		return nil, err
	}
	var plans []*plan.Plan
	for _, name := range names {
		planner, err := search.New(name)
		if err != nil {
			return nil, err
		}
		eval := sim.NewEvaluator(w, pl, est, sim.Options{Seed: f.seed})
		req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: f.seed, Budget: f.budget, Workers: 1}
		p, err := planner.Plan(ctx, req, eval)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil {
			err = p.Validate(w, pl)
		}
		if err != nil {
			fmt.Fprintf(errOut, "profile: planner %s: %v (its subgraphs are not measured)\n", name, err)
			continue
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// calibrateAndReport fits the factors, stores them and prints the table;
// detail adds each class's fitted factors.
func calibrateAndReport(out io.Writer, st *profile.Store, device string, pl *hw.Platform, w *workload.Workload, f *profileFlags, detail bool) error {
	samples, err := profile.Samples(st, device, pl, w)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		fmt.Fprintf(out, "calibration: no measurements of this workload's models on %s to fit\n", device)
		return nil
	}
	var useMin bool
	switch f.fitOn {
	case "min":
		useMin = true
	case "median":
	case "cold":
		samples = profile.ColdSamples(samples)
		if len(samples) == 0 {
			return fmt.Errorf("--fit-on cold: no measurement of this workload's models on %s has cold runs (inlay profile --cold)", device)
		}
	default:
		return fmt.Errorf("--fit-on %q: want min, median or cold", f.fitOn)
	}
	cal, err := profile.Calibrate(pl, nil, samples, profile.CalibrateOptions{Folds: f.folds, Seed: f.seed, UseMin: useMin})
	if err != nil {
		return err
	}
	now := time.Now()
	t := textfmt.Table{Header: []string{"PROCESSOR", "STANDS FOR", "FITTED ON", "HELD BACK", "KEPT OUT", "MAPE BEFORE", "MAPE AFTER",
		"VS MEDIANS BEFORE", "VS MEDIANS AFTER", "FIT MAPE AFTER"}}
	for _, c := range cal.Classes {
		for _, m := range c.Members {
			if err := st.PutCalibration(profile.CalibrationRow{Device: device, Processor: m, Efficiency: c.After,
				MAPEBefore: c.MAPEBefore, MAPEAfter: c.MAPEAfter, Samples: c.Fit + c.Held, FittedAt: now, Cold: c.Cold}); err != nil {
				return err
			}
		}
		t.Add(c.Processor, strings.Join(c.Members, ","), fmt.Sprint(c.Fit), fmt.Sprint(c.Held), fmt.Sprint(c.Excluded),
			pct(c.MAPEBefore), pct(c.MAPEAfter), pct(c.MedianMAPEBefore), pct(c.MedianMAPEAfter), pct(c.FitMAPEAfter))
	}
	fmt.Fprintf(out, "calibration on %s, fitted to each measurement's %s: mean absolute percentage error of the analytic\n"+
		"model on the subgraphs held back from the fit (%d-fold cross-validation; against the %s, and against the medians);\n"+
		"kept out: samples left out of a fold's fit because they share a layer with one of its held-back subgraphs\n", device, fitTarget[f.fitOn], f.folds, fitTarget[f.fitOn])
	if _, err := t.WriteTo(out); err != nil {
		return err
	}
	for _, c := range cal.Classes {
		if c.Cold.Samples > 0 {
			fmt.Fprintf(out, "%s: cold-cache correction of the figures for unmeasured subgraphs, from %d measurement(s) with cold runs: held-back error against the cold runs %s without, %s with it\n",
				c.Processor, c.Cold.Samples, pct(c.ColdMAPEBefore), pct(c.ColdMAPEAfter))
		}
	}
	if detail {
		for _, c := range cal.Classes {
			e := c.After
			fmt.Fprintf(out, "\n%s (%d evaluations): peak ×%.3g, bandwidth ×%.3g, memory efficiency %.3g, half_flops %.3g,\n"+
				"  dispatch %s, layer %s, cache %s at ×%.3g bandwidth, copies in and out %.3g GB/s\n", c.Processor, c.Evals,
				e.PeakScale, e.BandwidthScale, e.Memory, e.HalfFLOPs, e.DispatchOverhead, e.LayerOverhead,
				textfmt.Bytes(e.CacheBytes), e.CacheBandwidthScale, e.BoundaryGBs)
			ct := textfmt.Table{Header: []string{"CLASS", "BEFORE", "AFTER"}}
			for _, oc := range cost.OpClasses {
				if _, ok := e.Compute[oc]; ok {
					ct.Add(string(oc), fmt.Sprintf("%.3g", c.Before.Of(oc)), fmt.Sprintf("%.3g", e.Of(oc)))
				}
			}
			if _, err := ct.WriteTo(out); err != nil {
				return err
			}
		}
	}
	return nil
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// fitTarget names each --fit-on figure in the calibration's report.
var fitTarget = map[string]string{"min": "min", "median": "median", "cold": "cold runs' median"}

// reportCoruns prints the co-run profiles the store holds for the device:
// each subgraph's fitted sensitivity, its slowdowns, and, beside its real
// neighbours, the measured slowdown against the stream fit's prediction.
func reportCoruns(out io.Writer, st *profile.Store, sum profile.Summary) error {
	cs, err := st.Coruns(sum.Device)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "co-run profiles: %d stored now, %d for the device\n", sum.Coruns, len(cs))
	if len(cs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "subgraph\ton\talone\tstream 25/50/100 %\tk\tbeside the plan\tpredicted\t")
	var errs []float64
	for _, c := range cs {
		var pts []string
		for _, p := range c.Points {
			if p.GBs > 0 {
				pts = append(pts, fmt.Sprintf("%.2f", p.Slowdown))
			}
		}
		real, pred := "-", "-"
		if c.Real > 0 {
			real, pred = fmt.Sprintf("%.2fx", c.Real), fmt.Sprintf("%.2fx", c.Predicted)
			errs = append(errs, math.Abs(c.Predicted-c.Real)/c.Real)
		}
		fmt.Fprintf(tw, "%s [%s]\t%s\t%v\t%s\t%.3f\t%s\t%s\t\n", c.ModelName, c.Layers, c.Processor, c.Alone.Round(time.Microsecond), strings.Join(pts, " "), c.K, real, pred)
	}
	tw.Flush()
	if len(errs) > 0 {
		sort.Float64s(errs)
		fmt.Fprintf(out, "beside the plan's subgraphs, the stream fit predicts the slowdown within %.1f %% (median of %d), before they join the fit\n", 100*errs[len(errs)/2], len(errs))
	}
	return nil
}
