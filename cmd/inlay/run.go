package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/workload"
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
		Long: `run executes a plan on this machine's processors (the host platform: one
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
the subgraphs shows where it is.`,
		Args: cobra.ExactArgs(1),
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

// runSpeedJSON is one core's speed check: checks timed, slow of them,
// the core's normal reference time in the run and the references' median
// (profile.CoreSpeed), the profile's normal reference time and the
// median's ratio to it (runSpeed; 0 when the store has none).
type runSpeedJSON struct {
	Core       int     `json:"core"`
	Checks     int     `json:"checks"`
	Slow       int     `json:"slow"`
	NormalUS   float64 `json:"normal_us"`
	MedianUS   float64 `json:"median_us"`
	ProfiledUS float64 `json:"profiled_us,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"`
}

// runJSON is the --json output.
type runJSON struct {
	Workload        string  `json:"workload"`
	Platform        string  `json:"platform"`
	Planner         string  `json:"planner"`
	Scale           float64 `json:"scale"`
	DurationS       float64 `json:"duration_s"`
	ElapsedS        float64 `json:"elapsed_s"`
	Interrupted     bool    `json:"interrupted"`
	ZeroCopy        int64   `json:"zero_copy_handoffs"`
	Copied          int64   `json:"copied_tensors"`
	HandOffMS       float64 `json:"hand_off_ms"`
	ReportMS        float64 `json:"report_ms"`
	ArrivalLagMS    float64 `json:"arrival_lag_ms"`
	ArrivalLagP50MS float64 `json:"arrival_lag_p50_ms"`
	// PredictedArrivalLagMS is what the predicted latencies add before a
	// request's first subgraph: the arrival lag recorded runs saw, else the
	// delay to the first subgraph the profile's hand-off probe measured
	// for the run's pinning and its event loop's way of waiting
	// (profile.Recorded.StartDelay).
	PredictedArrivalLagMS float64        `json:"predicted_arrival_lag_ms"`
	CostModel             string         `json:"cost_model,omitempty"`
	PredictedMisses       string         `json:"predicted_misses,omitempty"`
	Warnings              []string       `json:"warnings,omitempty"`
	Groups                []runGroupJSON `json:"groups"`
	Procs                 []runProcJSON  `json:"processors"`
	// Speed is the speed check's counts per core (--speed-check).
	Speed []runSpeedJSON `json:"speed,omitempty"`
	// Probe is --probe's speed probe of the plan's subgraphs.
	Probe *runProbeJSON `json:"probe,omitempty"`
	// Subgraphs is --subgraphs' comparison (report.CompareSpans).
	Subgraphs []runSubgraphJSON `json:"subgraphs,omitempty"`
	// Requests is --subgraphs' split of each group's requests
	// (report.CompareRequests).
	Requests []runRequestsJSON `json:"requests,omitempty"`
}

// runRequestsJSON is where one group's requests spent their time, as
// predicted and as run (report.RequestStats).
type runRequestsJSON struct {
	Group     string          `json:"group"`
	Predicted runRequestParts `json:"predicted"`
	Measured  runRequestParts `json:"measured"`
}

// runRequestParts is report.RequestParts in milliseconds: the median and
// mean latency, and the mean's parts.
type runRequestParts struct {
	P50MS     float64 `json:"p50_ms"`
	MeanMS    float64 `json:"mean_ms"`
	BeforeMS  float64 `json:"before_ms"`
	WorkingMS float64 `json:"working_ms"`
	BetweenMS float64 `json:"between_ms"`
	Requests  int     `json:"requests"`
}

func requestPartsJSON(p report.RequestParts) runRequestParts {
	return runRequestParts{P50MS: msOf(p.P50), MeanMS: msOf(p.Mean), BeforeMS: msOf(p.Before), WorkingMS: msOf(p.Working), BetweenMS: msOf(p.Between), Requests: p.Requests}
}

// runSubgraphJSON is one subgraph of a group on a processor: its
// predicted and measured median span and their counts, and the run's
// medians alone and beside other processors' work (report.SpanStats).
type runSubgraphJSON struct {
	Group         string  `json:"group"`
	Subgraph      string  `json:"subgraph"`
	Processor     string  `json:"processor"`
	PredictedMS   float64 `json:"predicted_ms"`
	PredictedRuns int     `json:"predicted_runs"`
	MeasuredMS    float64 `json:"measured_ms"`
	Runs          int     `json:"runs"`
	Ratio         float64 `json:"ratio,omitempty"`
	AloneMS       float64 `json:"alone_ms"`
	AloneRuns     int     `json:"alone_runs"`
	BesideMS      float64 `json:"beside_ms"`
	BesideRuns    int     `json:"beside_runs"`
}

type runGroupJSON struct {
	Name           string        `json:"name"`
	OfferedHz      float64       `json:"offered_hz"`
	RateHz         float64       `json:"rate_hz"`
	DeadlineMS     float64       `json:"deadline_ms"`
	Requests       int           `json:"requests"`
	Completed      int           `json:"completed"`
	Late           int           `json:"late"`
	Dropped        int           `json:"dropped"`
	Drops          []runDropJSON `json:"drops"`
	P50MS          float64       `json:"p50_ms"`
	P99MS          float64       `json:"p99_ms"`
	MeanMS         float64       `json:"mean_ms"`
	MaxMS          float64       `json:"max_ms"`
	MissRate       float64       `json:"miss_rate"`
	PredictedP50MS float64       `json:"predicted_p50_ms"`
	// PredictedUncontendedP50MS is the prediction without the contention
	// model (0: none).
	PredictedUncontendedP50MS float64 `json:"predicted_uncontended_p50_ms,omitempty"`
	PredictedP99MS            float64 `json:"predicted_p99_ms"`
	// PredictedNowP50MS is the prediction at the host's speed now (--probe;
	// 0: none).
	PredictedNowP50MS float64 `json:"predicted_now_p50_ms,omitempty"`
}

type runDropJSON struct {
	Reason  string `json:"reason"`
	Count   int    `json:"count"`
	Example string `json:"example"`
}

type runProcJSON struct {
	Name        string  `json:"name"`
	Runs        int     `json:"runs"`
	BusyMS      float64 `json:"busy_ms"`
	Utilisation float64 `json:"utilisation"`
}

func runPlan(ctx context.Context, cmd *cobra.Command, workloadPath string, f runFlags) error {
	if !(f.scale > 0) {
		return fmt.Errorf("--scale %v must be positive", f.scale)
	}
	if f.duration <= 0 {
		return fmt.Errorf("--duration %v must be positive", f.duration)
	}
	if err := checkOutputs(output{"--trace", f.trace, traceFormat}); err != nil {
		return err
	}
	w, pl, p, err := loadOn(workloadPath, f.platform, f.plan)
	if err != nil {
		return err
	}
	if f.record {
		// The store --record writes to may not exist yet.
		path := profilesPath(cmd)
		if path == "" {
			return fmt.Errorf("--record needs a profile store (--profiles)")
		}
		st, err := profile.Open(path)
		if err != nil {
			return err
		}
		st.Close()
	}
	est, note, err := costModel(cmd, pl, w)
	if err != nil {
		return err
	}
	pe, _ := est.(*profile.Estimator)
	if pe != nil {
		pe.UseUnpinned(f.noPin) // predict with the hand-off of the run's pinning
	}
	var probe *runProbe
	if f.probe && pe != nil && pe.Device() == profile.LocalDeviceName() {
		if probe, err = probeNow(ctx, cmd, f, pe, w, pl, p); err != nil {
			return err
		}
	}
	// The arrival lag runs recorded, and the speed the profile took its
	// figures at, for the speed report.
	rec, err := profile.ReadRecorded(profilesPath(cmd), profile.LocalDeviceName())
	if err != nil {
		return err
	}
	cfg := runtime.Config{
		Workload: w, Platform: pl, Plan: p, Cost: est, Library: f.ortLib,
		Duration: f.duration, Scale: f.scale, Seed: f.seed, Backlog: f.backlog, DrainTimeout: f.drain,
		Spans: f.trace != "" || f.subgraphs, PredictSpans: f.subgraphs, NoPin: f.noPin, Spin: f.spin,
	}
	// The prediction adds what a request waits for its first subgraph
	// (the simulator starts it on arrival), for the way this run's event
	// loop will wait for its arrivals.
	lag, lagFrom := rec.StartDelay(!f.noPin, cfg.LoopSleeps())
	cfg.ArrivalLag = lag
	if f.dropLate {
		cfg.Policy = dispatch.DropLate
	}
	if !f.json {
		fmt.Fprintf(cmd.ErrOrStderr(), "running %s on %s for %v (Ctrl-C stops)…\n", f.plan, pl.Name, f.duration)
	}
	var sampler *profile.SpeedSampler
	if cores := platformCores(pl); f.speedCheck && len(cores) > 0 {
		sampler = profile.StartSpeedSampler(ctx, cores, profile.DefaultSpeedPeriod)
	}
	res, err := runtime.Run(ctx, cfg)
	var speed []runSpeed
	if sampler != nil {
		speed = runSpeeds(sampler.Stop(), rec.Speeds)
	}
	if err != nil {
		return err
	}
	if probe != nil {
		probe.predict(cfg, pe, res)
	}
	if f.record {
		n, err := recordInSitu(cmd, pl, w, p, res, f.ortLib)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "recorded the in-situ times of %d subgraph(s) in %s\n", n, profilesPath(cmd))
	}
	if f.trace != "" {
		if err := writeFile(f.trace, func(fw io.Writer) error {
			return report.ChromeTrace(fw, report.Rows(res.Lanes, res.Spans), res.Spans)
		}); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if f.json {
		return runJSONOut(out, workloadPath, pl, p, res, lag, note(), speed, probe, f.subgraphs)
	}
	if res.Interrupted {
		fmt.Fprintf(out, "interrupted after %v\n", res.Elapsed.Round(time.Millisecond))
	}
	for _, wn := range res.Warnings {
		fmt.Fprintf(out, "warning: %s\n", wn)
	}
	if n := note(); n != "" {
		fmt.Fprintln(out, n)
	}
	s := report.Summary{
		Workload: workloadPath, Platform: pl.Name, Planner: p.Planner, Source: "measured",
		Scale: res.Scale, Horizon: res.Duration,
	}
	for _, g := range res.Groups {
		s.Groups = append(s.Groups, report.GroupRow{
			Name: g.Name, RateHz: g.OfferedHz, Deadline: g.Deadline, Requests: g.Requests,
			Completed: g.Completed, Late: g.Late, Dropped: g.Dropped, P50: g.P50, P99: g.P99, MissRate: g.MissRate,
		})
	}
	for i, pr := range res.Procs {
		s.Procs = append(s.Procs, report.ProcRow{Name: pr.Name, Kind: pl.Processors[i].Kind, Utilisation: pr.Utilisation, Busy: pr.Busy})
	}
	if err := report.Text(out, s); err != nil {
		return err
	}
	if lagFrom != "" {
		fmt.Fprintf(out, "\nmeasured against the simulator's prediction for the same plan and rate (plus %s):\n", lagFrom)
	} else {
		fmt.Fprintln(out, "\nmeasured against the simulator's prediction for the same plan and rate:")
	}
	if probe != nil {
		fmt.Fprintln(out, probe.line(pl))
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	nowHead := ""
	if probe != nil {
		nowHead = "\tat speed now"
	}
	fmt.Fprintln(tw, "group\tp50\tpredicted p50\tuncontended"+nowHead+"\tp99\tpredicted p99\tdropped (reasons)")
	for gi, g := range res.Groups {
		reasons := ""
		for i, d := range g.Drops {
			if i > 0 {
				reasons += ", "
			}
			reasons += fmt.Sprintf("%s %d", d.Reason, d.Count)
		}
		now := ""
		if probe != nil {
			now = "\t" + fmtMS(probe.p50(gi))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%s\t%s\t%d %s\n", g.Name, fmtMS(g.P50), fmtMS(g.PredictedP50), fmtMS(g.PredictedUncontendedP50), now, fmtMS(g.P99), fmtMS(g.PredictedP99), g.Dropped, reasons)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range res.Groups {
		for _, d := range g.Drops {
			fmt.Fprintf(out, "%s: first %s drop: %s\n", g.Name, d.Reason, d.Example)
		}
	}
	fmt.Fprintf(out, "tensors handed between subgraphs without a copy: %d, copied: %d\n", res.ZeroCopy, res.Copied)
	fmt.Fprintf(out, "runtime's own delays per task (mean): hand-off to a worker %v, report back %v; per request: arrival lag %v (median %v)\n",
		res.HandOff.Round(time.Microsecond), res.Report.Round(time.Microsecond), res.ArrivalLag.Round(time.Microsecond), res.ArrivalLagP50.Round(time.Microsecond))
	if line := speedLine(speed); line != "" {
		fmt.Fprintln(out, line)
	}
	if f.subgraphs {
		fmt.Fprintf(out, "\nper subgraph, median span (alone: other processors busy for under %.0f%% of it; beside: the rest):\n", 100*report.BesideShare)
		if err := report.WriteSpanStats(out, report.CompareSpans(res.Spans, res.PredictedSpans)); err != nil {
			return err
		}
		fmt.Fprintln(out, "\nper group, where a request's time goes (predicted → measured; the mean latency's parts, means over the requests: before the first, from its arrival to its first subgraph; in subgraphs; between them, its work done and the next not started):")
		if err := report.WriteRequestStats(out, report.CompareRequests(res.Spans, res.PredictedSpans)); err != nil {
			return err
		}
	}
	return nil
}

// platformCores lists the distinct cores of pl's processors, ascending
// (none for a platform that names no cores of this machine).
func platformCores(pl *hw.Platform) []int {
	var cores []int
	for _, pr := range pl.Processors {
		cores = append(cores, pr.Cores...)
	}
	slices.Sort(cores)
	return slices.Compact(cores)
}

// runSpeed is what the speed check saw on a core, and the normal
// reference time the profile took its figures at there (0: unknown).
type runSpeed struct {
	profile.CoreSpeed
	Profiled time.Duration
}

// runSpeeds pairs the run's speed checks with the profile's, by core.
func runSpeeds(run, profiled []profile.CoreSpeed) []runSpeed {
	out := make([]runSpeed, len(run))
	for i, c := range run {
		out[i].CoreSpeed = c
		for _, pc := range profiled {
			if pc.Core == c.Core {
				out[i].Profiled = pc.Normal
			}
		}
	}
	return out
}

// ratio is the run's median reference over the profile's normal one (0
// when either is unknown).
func (r runSpeed) ratio() float64 {
	if r.Profiled <= 0 || r.Median <= 0 {
		return 0
	}
	return float64(r.Median) / float64(r.Profiled)
}

// speedLine says what the speed check saw during the run ("" when it did
// not run).
func speedLine(speed []runSpeed) string {
	if len(speed) == 0 {
		return ""
	}
	parts := make([]string, len(speed))
	slow := 0
	for i, c := range speed {
		parts[i] = fmt.Sprintf("core %d slow in %d of %d checks (reference %s, median %s", c.Core, c.Slow, c.Checks, fmtUS(c.Normal), fmtUS(c.Median))
		if r := c.ratio(); r > 0 {
			parts[i] += fmt.Sprintf("; the profile's %s, %.2f× it", fmtUS(c.Profiled), r)
		}
		parts[i] += ")"
		slow += c.Slow
	}
	line := "host speed during the run: " + strings.Join(parts, ", ")
	if slow > 0 {
		line += "; a core in a slow spell runs at up to half its speed, and the prediction is for its normal speed"
	}
	return line + "; a run slow throughout shows in its reference time, not its slow checks"
}

// usOf is d in microseconds.
func usOf(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// fmtUS formats d in microseconds, one decimal.
func fmtUS(d time.Duration) string { return fmt.Sprintf("%.1fµs", usOf(d)) }

func fmtMS(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fms", msOf(d))
}

func runJSONOut(out io.Writer, workloadPath string, pl *hw.Platform, p *plan.Plan, res *runtime.Result, lag time.Duration, note string, speed []runSpeed, probe *runProbe, subgraphs bool) error {
	j := runJSON{
		Workload: workloadPath, Platform: pl.Name, Planner: p.Planner, Scale: res.Scale,
		DurationS: res.Duration.Seconds(), ElapsedS: res.Elapsed.Seconds(), Interrupted: res.Interrupted,
		ZeroCopy: res.ZeroCopy, Copied: res.Copied, HandOffMS: msOf(res.HandOff), ReportMS: msOf(res.Report), ArrivalLagMS: msOf(res.ArrivalLag), ArrivalLagP50MS: msOf(res.ArrivalLagP50), PredictedArrivalLagMS: msOf(lag), CostModel: note, PredictedMisses: res.PredictedMisses,
		Warnings: res.Warnings, Groups: []runGroupJSON{}, Procs: []runProcJSON{},
	}
	for gi, g := range res.Groups {
		gj := runGroupJSON{
			Name: g.Name, OfferedHz: g.OfferedHz, RateHz: g.RateHz, DeadlineMS: msOf(g.Deadline),
			Requests: g.Requests, Completed: g.Completed, Late: g.Late, Dropped: g.Dropped, Drops: []runDropJSON{},
			P50MS: msOf(g.P50), P99MS: msOf(g.P99), MeanMS: msOf(g.Mean), MaxMS: msOf(g.Max), MissRate: g.MissRate,
			PredictedP50MS: msOf(g.PredictedP50), PredictedP99MS: msOf(g.PredictedP99), PredictedUncontendedP50MS: msOf(g.PredictedUncontendedP50),
		}
		for _, d := range g.Drops {
			gj.Drops = append(gj.Drops, runDropJSON{Reason: d.Reason, Count: d.Count, Example: d.Example})
		}
		if probe != nil {
			gj.PredictedNowP50MS = msOf(probe.p50(gi))
		}
		j.Groups = append(j.Groups, gj)
	}
	for _, pr := range res.Procs {
		j.Procs = append(j.Procs, runProcJSON{Name: pr.Name, Runs: pr.Runs, BusyMS: msOf(pr.Busy), Utilisation: pr.Utilisation})
	}
	if probe != nil {
		j.Probe = probe.json(pl)
	}
	for _, c := range speed {
		j.Speed = append(j.Speed, runSpeedJSON{Core: c.Core, Checks: c.Checks, Slow: c.Slow, NormalUS: usOf(c.Normal), MedianUS: usOf(c.Median), ProfiledUS: usOf(c.Profiled), Ratio: c.ratio()})
	}
	if subgraphs {
		for _, r := range report.CompareSpans(res.Spans, res.PredictedSpans) {
			j.Subgraphs = append(j.Subgraphs, runSubgraphJSON{Group: r.Group, Subgraph: r.Label, Processor: r.Processor,
				PredictedMS: msOf(r.Predicted), PredictedRuns: r.PredictedRuns, MeasuredMS: msOf(r.Measured), Runs: r.Runs, Ratio: r.Ratio(),
				AloneMS: msOf(r.Alone), AloneRuns: r.AloneRuns, BesideMS: msOf(r.Beside), BesideRuns: r.BesideRuns})
		}
		for _, r := range report.CompareRequests(res.Spans, res.PredictedSpans) {
			j.Requests = append(j.Requests, runRequestsJSON{Group: r.Group, Predicted: requestPartsJSON(r.Predicted), Measured: requestPartsJSON(r.Measured)})
		}
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// recordInSitu stores each subgraph's in-situ timing (the runtime's
// service times) and the run's arrival lag in the --profiles store
// (profile.RecordInSitu), as this machine's.
func recordInSitu(cmd *cobra.Command, pl *hw.Platform, w *workload.Workload, p *plan.Plan, res *runtime.Result, ortLib string) (int, error) {
	st, err := profile.Open(profilesPath(cmd))
	if err != nil {
		return 0, err
	}
	defer st.Close()
	rt, err := ort.Open(ortLib)
	if err != nil {
		return 0, err
	}
	obs := make([]profile.Observed, len(res.Subgraphs))
	for i, sr := range res.Subgraphs {
		obs[i] = profile.Observed{Model: sr.Model, Index: sr.Index, Label: sr.Label, Service: sr.Service}
	}
	requests := 0
	for _, g := range res.Groups {
		requests += g.Requests
	}
	return profile.RecordInSitu(st, profile.LocalDeviceName(), rt.Version(), pl, w, p, obs, res.ArrivalLagP50, requests)
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
