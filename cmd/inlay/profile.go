package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/agent"
	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
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
			return writeCalibration(cmd.OutOrStdout(), r, true)
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
	dev, pl, handOff, err := profileDevice(ctx, w, f)
	if err != nil {
		return err
	}
	st, err := openStore(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	pp := &profilePrinter{out: out, errOut: cmd.ErrOrStderr(), header: func(info profile.DeviceInfo) string {
		return fmt.Sprintf("profiling %s on %s (device %s, ONNX Runtime %s) into %s", path, pl.Name, info.Name, info.ORTVersion, st.Path())
	}, cycles: f.cycles, rounds: f.rounds}
	in := app.ProfileInput{Workload: w, Platform: pl, Device: dev, Store: st, Profiles: st.Path(),
		Warmup: f.warmup, Reps: f.reps, Cold: f.cold, Idle: f.idle, Cycles: f.cycles, Chunks: f.chunks,
		Planners: f.planners, Budget: f.budget, Rounds: f.rounds, Force: f.force, Corun: f.corun, Seed: f.seed,
		Calibration: app.CalibrateOptions{Folds: f.folds, Seed: f.seed, FitOn: f.fitOn}, Observer: pp}
	if f.handOff {
		in.HandOff = handOff
	}
	r, err := app.Profile(ctx, in)
	pp.done()
	if err != nil {
		return err
	}
	if f.corun {
		if err := reportCoruns(out, st, r.Device.Name, r.Coruns); err != nil {
			return err
		}
	}
	if r.Speed != nil {
		reportSpeed(out, *r.Speed)
	}
	fmt.Fprintln(out)
	return writeCalibration(out, r.Calibration, false)
}

// profileDevice is the device profile measures on: the agent's (with
// --agent) or this machine's, its platform, and its hand-off probe.
func profileDevice(ctx context.Context, w *workload.Workload, f *profileFlags) (profile.Device, *hw.Platform, app.HandOffProber, error) {
	if f.reps < 1 || f.warmup < 0 || f.chunks < 0 || f.cold < 0 || f.idle < 0 || f.cycles < 0 {
		return nil, nil, nil, fmt.Errorf("profile: --reps must be at least 1, --warmup, --cold, --idle, --cycles and --chunks not negative")
	}
	if f.rounds < 1 {
		return nil, nil, nil, fmt.Errorf("profile: --rounds %d: want at least 1", f.rounds)
	}
	var pl *hw.Platform
	var err error
	if f.platform != "" {
		if pl, err = hw.Resolve(f.platform); err != nil {
			return nil, nil, nil, err
		}
	}
	if f.agentURL != "" {
		c := agent.NewClient(f.agentURL, f.token)
		info, err := c.Info(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		if pl == nil {
			pl = info.Platform
		}
		if pl == nil {
			return nil, nil, nil, fmt.Errorf("profile: the agent at %s names no platform; give --platform", f.agentURL)
		}
		return c, pl, agentHandOff(c), nil
	}
	if pl == nil {
		if pl, err = hw.Choose("", w.Platform); err != nil {
			return nil, nil, nil, err
		}
	}
	for _, pr := range pl.Processors {
		if len(pr.Cores) == 0 {
			return nil, nil, nil, fmt.Errorf("profile: platform %s: processor %s is not a set of this machine's cores; measure on --platform host, or on the device with --agent URL", pl.Name, pr.Name)
		}
	}
	dev, err := profile.NewLocal(f.ortLib, pl)
	if err != nil {
		return nil, nil, nil, err
	}
	return dev, pl, func(ctx context.Context, unpinned bool) (runtime.HandOffProbe, error) {
		return runtime.ProbeHandOff(ctx, runtime.ProbeConfig{Platform: pl, Library: f.ortLib, NoPin: unpinned})
	}, nil
}

// agentHandOff probes the hand-off on the agent's device; an agent
// without the endpoint has none (app.ErrNoHandOff).
func agentHandOff(c *agent.Client) app.HandOffProber {
	return func(ctx context.Context, unpinned bool) (runtime.HandOffProbe, error) {
		pr, err := c.HandOff(ctx, agent.HandOffOptions{NoPin: unpinned})
		var se *agent.StatusError
		if errors.As(err, &se) && se.Code == agent.CodeNotFound {
			err = fmt.Errorf("%w: %w", app.ErrNoHandOff, err)
		}
		return pr, err
	}
}

// profilePrinter prints the profile loop as it goes: a progress bar (or a
// line every 5 s when stderr is not a terminal) and each round's summary.
type profilePrinter struct {
	out, errOut    io.Writer
	header         func(profile.DeviceInfo) string
	cycles, rounds int
	bar            *progressbar.ProgressBar
	what           string
	lastLine       time.Time
}

func (p *profilePrinter) Started(info profile.DeviceInfo) { fmt.Fprintln(p.out, p.header(info)) }

func (p *profilePrinter) HandOff(r app.HandOffResult) { fmt.Fprintln(p.out, handOffLine(r)) }

func (p *profilePrinter) RoundStarted(rs app.RoundStart) {
	if rs.Round == 1 {
		var kinds []string
		for _, k := range rs.Kinds {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.Count, k.Kind))
		}
		fmt.Fprintf(p.out, "%d subgraphs to measure (%s), on %s\n", rs.Jobs, strings.Join(kinds, ", "), strings.Join(rs.Classes, "; "))
	}
	p.what = "profile"
	if rs.Round > 1 {
		p.what = fmt.Sprintf("profile round %d", rs.Round)
	}
	p.bar, p.lastLine = newBar(rs.Jobs, p.what), time.Now()
}

func (p *profilePrinter) Measured(_, done, total int, j profile.Job) {
	if p.bar != nil {
		barDescribe(p.bar, fmt.Sprintf("%s: %s layers %s", p.what, j.Model, j.Set.Key()))
		barAdd(p.bar, 1)
		return
	}
	if time.Since(p.lastLine) >= 5*time.Second || done == total {
		p.lastLine = time.Now()
		fmt.Fprintf(p.errOut, "%s: %d/%d (%s layers %s)\n", p.what, done, total, j.Model, j.Set.Key())
	}
}

func (p *profilePrinter) done() {
	barDone(p.bar)
	p.bar = nil
}

func (p *profilePrinter) RoundDone(r app.Round) {
	p.done()
	out, sum := p.out, r.Summary
	if r.Round == 1 {
		fmt.Fprintf(out, "measured %d, already stored %d, failed %d in %s\n", sum.Measured, sum.Skipped, sum.Failed, sum.Elapsed.Round(time.Millisecond))
	} else if sum.Measured+sum.Failed > 0 {
		fmt.Fprintf(out, "round %d: the planners planned again with the measurements: %d new subgraph(s) of their plans measured, %d already stored, failed %d in %s\n",
			r.Round, sum.Measured, sum.Skipped, sum.Failed, sum.Elapsed.Round(time.Millisecond))
	}
	for _, msg := range sum.Failures {
		fmt.Fprintf(out, "  failed: %s\n", msg)
	}
	if sum.Cycled > 0 {
		fmt.Fprintf(out, "cycle figures: %d subgraphs timed in their plan's cycle (%d steps, %d timed rounds each)\n", sum.Cycled, sum.CycleSteps, p.cycles)
	}
	if sum.CycleNote != "" {
		fmt.Fprintf(out, "cycle figures: %s\n", sum.CycleNote)
	}
	if sum.Failed > len(sum.Failures) {
		fmt.Fprintf(out, "  … and %d more (stored with their errors; --force retries them)\n", sum.Failed-len(sum.Failures))
	}
	switch {
	case r.Round > 1 && sum.Measured+sum.Failed == 0:
		fmt.Fprintf(out, "the planners' plans with the measurements: every subgraph measured (after %d rounds)\n", r.Round)
	case r.Round > 1 && r.Round == p.rounds:
		fmt.Fprintf(out, "the planners' plans still changed in round %d (--rounds %d): a plan made from the store may have subgraphs the calibrated model estimates\n", r.Round, p.rounds)
	}
}

func (p *profilePrinter) PlannerFailed(name string, err error) {
	fmt.Fprintf(p.errOut, "profile: planner %s: %v (its subgraphs are not measured)\n", name, err)
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

// handOffLine says what the hand-off probes measured.
func handOffLine(r app.HandOffResult) string {
	if r.Skipped != "" {
		return fmt.Sprintf("hand-off: not measured (%s)", r.Skipped)
	}
	var line []string
	for _, pr := range r.Probes {
		mode := "pinned"
		if pr.Unpinned {
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
		if d, ok := pr.Starts.For(true); ok {
			starts = append(starts, fmt.Sprintf("%v with the loop sleeping", d.Round(time.Microsecond)))
		}
		if d, ok := pr.Starts.For(false); ok {
			starts = append(starts, fmt.Sprintf("%v polling", d.Round(time.Microsecond)))
		}
		if len(starts) > 0 {
			l += ", arrival to first subgraph " + strings.Join(starts, ", ")
		}
		line = append(line, l)
	}
	return "hand-off between dependent subgraphs (median of each kind, runtime.ProbeHandOff): " + strings.Join(line, "; ")
}

// writeCalibration prints a calibration's table; detail adds each class's
// fitted factors.
func writeCalibration(out io.Writer, r *app.CalibrationResult, detail bool) error {
	if r.Fit == nil {
		fmt.Fprintf(out, "calibration: no measurements of this workload's models on %s to fit\n", r.Device)
		return nil
	}
	t := textfmt.Table{Header: []string{"PROCESSOR", "STANDS FOR", "FITTED ON", "HELD BACK", "KEPT OUT", "MAPE BEFORE", "MAPE AFTER",
		"VS MEDIANS BEFORE", "VS MEDIANS AFTER", "FIT MAPE AFTER"}}
	for _, c := range r.Fit.Classes {
		t.Add(c.Processor, strings.Join(c.Members, ","), fmt.Sprint(c.Fit), fmt.Sprint(c.Held), fmt.Sprint(c.Excluded),
			pct(c.MAPEBefore), pct(c.MAPEAfter), pct(c.MedianMAPEBefore), pct(c.MedianMAPEAfter), pct(c.FitMAPEAfter))
	}
	fit := fitTarget[r.Options.FitOn]
	fmt.Fprintf(out, "calibration on %s, fitted to each measurement's %s: mean absolute percentage error of the analytic\n"+
		"model on the subgraphs held back from the fit (%d-fold cross-validation; against the %s, and against the medians);\n"+
		"kept out: samples left out of a fold's fit because they share a layer with one of its held-back subgraphs\n", r.Device, fit, r.Options.Folds, fit)
	if _, err := t.WriteTo(out); err != nil {
		return err
	}
	for _, c := range r.Fit.Classes {
		if c.Cold.Samples > 0 {
			fmt.Fprintf(out, "%s: cold-cache correction of the figures for unmeasured subgraphs, from %d measurement(s) with cold runs: held-back error against the cold runs %s without, %s with it\n",
				c.Processor, c.Cold.Samples, pct(c.ColdMAPEBefore), pct(c.ColdMAPEAfter))
		}
	}
	if detail {
		return writeFittedFactors(out, r.Fit)
	}
	return nil
}

// writeFittedFactors prints each class's fitted factors.
func writeFittedFactors(out io.Writer, cal *profile.Calibration) error {
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
	return nil
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// fitTarget names each --fit-on figure in the calibration's report.
var fitTarget = map[string]string{"min": "min", "median": "median", "cold": "cold runs' median"}

// reportCoruns prints the co-run profiles the store holds for the device:
// each subgraph's fitted sensitivity, its slowdowns, and, beside its real
// neighbours, the measured slowdown against the stream fit's prediction.
func reportCoruns(out io.Writer, st *profile.Store, device string, stored int) error {
	cs, err := st.Coruns(device)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "co-run profiles: %d stored now, %d for the device\n", stored, len(cs))
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
