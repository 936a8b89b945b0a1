package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/workload"
)

// RunInput asks for a run session: a plan run for real on this machine's
// processors with ONNX Runtime, set beside the simulator's prediction.
type RunInput struct {
	Workload *workload.Workload
	Platform *hw.Platform
	Plan     *plan.Plan
	// Profiles is the profile store's path ("" for none); ProfilesNamed
	// says the user named it (a missing store is then an error).
	Profiles      string
	ProfilesNamed bool
	// Library is the ONNX Runtime shared library.
	Library string
	// Duration is how long requests arrive, at the workload's rates times
	// Scale; Drain how long the requests in flight may still run (0:
	// runtime's default).
	Duration, Drain time.Duration
	Scale           float64
	Seed            int64
	Backlog         int
	Spin            time.Duration
	DropLate, NoPin bool
	// Spans records what ran (a trace); Subgraphs compares each subgraph
	// and each group's requests with the prediction.
	Spans, Subgraphs bool
	// Probe times the plan's subgraphs before the run and predicts at
	// that speed too; SpeedCheck times a reference kernel on each core
	// during the run; Record stores the in-situ times in the store.
	Probe, SpeedCheck, Record bool
	// Stage, when not nil, hears when the session probes and runs.
	Stage func(RunStage)
}

// RunStage is a step of a run session a front end may report.
type RunStage int

const (
	// StageProbing: the plan's subgraphs are being timed (profile.ProbeRounds rounds).
	StageProbing RunStage = iota
	// StageRunning: requests arrive.
	StageRunning
)

// RunSession is a run session's outcome: the schema's result and the
// runtime's own, for front ends that tabulate or trace it.
type RunSession struct {
	Result  *RunResult
	Runtime *runtime.Result
	// LagFrom says where the arrival lag added to the predictions came
	// from ("" when none).
	LagFrom string
	// Recorded is the subgraphs whose in-situ times Record stored.
	Recorded int
	probe    *speedProbe
}

// RunResult is a run of a plan on a device: inlay run --json, inlay
// agent run --json.
type RunResult struct {
	Workload string `json:"workload"`
	Platform string `json:"platform"`
	Planner  string `json:"planner"`
	// Agent is the agent's URL when the run was on its device.
	Agent       string  `json:"agent,omitempty"`
	Scale       float64 `json:"scale"`
	DurationS   float64 `json:"duration_s"`
	ElapsedS    float64 `json:"elapsed_s"`
	Interrupted bool    `json:"interrupted"`
	ZeroCopy    int64   `json:"zero_copy_handoffs"`
	Copied      int64   `json:"copied_tensors"`
	// HandOffMs and ReportMs are the runtime's own delays per task (mean);
	// ArrivalLagMs and ArrivalLagP50Ms a request's from its scheduled
	// arrival to the runtime taking it.
	HandOffMs       float64 `json:"hand_off_ms"`
	ReportMs        float64 `json:"report_ms"`
	ArrivalLagMs    float64 `json:"arrival_lag_ms"`
	ArrivalLagP50Ms float64 `json:"arrival_lag_p50_ms"`
	// PredictedArrivalLagMs is what the predicted latencies add before a
	// request's first subgraph (profile.Recorded.StartDelay).
	PredictedArrivalLagMs float64 `json:"predicted_arrival_lag_ms"`
	// CostModel says which cost model predicted, and what it answered from.
	CostModel       string      `json:"cost_model,omitempty"`
	PredictedMisses string      `json:"predicted_misses,omitempty"`
	Warnings        []string    `json:"warnings"`
	Groups          []Group     `json:"groups"`
	Processors      []Processor `json:"processors"`
	// Speed is the speed check's counts per core.
	Speed []CoreSpeed `json:"speed,omitempty"`
	// Probe is the speed probe of the plan's subgraphs before the run.
	Probe *Probe `json:"probe,omitempty"`
	// Subgraphs and Requests compare each subgraph and each group's
	// requests with the prediction (report.CompareSpans, CompareRequests).
	Subgraphs []SubgraphSplit `json:"subgraphs,omitempty"`
	Requests  []RequestSplit  `json:"requests,omitempty"`
}

// CoreSpeed is one core's speed checks during a run: checks timed, slow
// of them, the core's normal reference time in the run and the
// references' median (profile.CoreSpeed), the profile's normal reference
// time and the median's ratio to it (0 when the store has none).
type CoreSpeed struct {
	Core       int     `json:"core"`
	Checks     int     `json:"checks"`
	Slow       int     `json:"slow"`
	NormalUs   float64 `json:"normal_us"`
	MedianUs   float64 `json:"median_us"`
	ProfiledUs float64 `json:"profiled_us,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"`
}

// Probe is the speed probe of the plan's subgraphs before a run.
type Probe struct {
	ElapsedS float64 `json:"elapsed_s"`
	// Processors are the ratios the prediction at speed now applies.
	Processors []ProbedProcessor `json:"processors"`
	Warning    string            `json:"warning,omitempty"`
	Subgraphs  []ProbedSubgraph  `json:"subgraphs"`
}

// ProbedProcessor is a processor's median ratio of now to profiled.
type ProbedProcessor struct {
	Processor string  `json:"processor"`
	Ratio     float64 `json:"ratio"`
}

// ProbedSubgraph is one subgraph's time now beside its profiled figure.
type ProbedSubgraph struct {
	Subgraph   string  `json:"subgraph"`
	Processor  string  `json:"processor"`
	ProfiledMs float64 `json:"profiled_ms"`
	NowMs      float64 `json:"now_ms"`
	Ratio      float64 `json:"ratio"`
}

// SubgraphSplit is one subgraph of a group on a processor: its predicted
// and measured median span and their counts, and the run's medians alone
// and beside other processors' work (report.SpanStats).
type SubgraphSplit struct {
	Group         string  `json:"group"`
	Subgraph      string  `json:"subgraph"`
	Processor     string  `json:"processor"`
	PredictedMs   float64 `json:"predicted_ms"`
	PredictedRuns int     `json:"predicted_runs"`
	MeasuredMs    float64 `json:"measured_ms"`
	Runs          int     `json:"runs"`
	Ratio         float64 `json:"ratio,omitempty"`
	AloneMs       float64 `json:"alone_ms"`
	AloneRuns     int     `json:"alone_runs"`
	BesideMs      float64 `json:"beside_ms"`
	BesideRuns    int     `json:"beside_runs"`
}

// RequestSplit is where one group's requests spent their time, as
// predicted and as run (report.RequestStats).
type RequestSplit struct {
	Group     string       `json:"group"`
	Predicted RequestParts `json:"predicted"`
	Measured  RequestParts `json:"measured"`
}

// RequestParts is report.RequestParts in milliseconds: the median and
// mean latency, and the mean's parts.
type RequestParts struct {
	P50Ms     float64 `json:"p50_ms"`
	MeanMs    float64 `json:"mean_ms"`
	BeforeMs  float64 `json:"before_ms"`
	WorkingMs float64 `json:"working_ms"`
	BetweenMs float64 `json:"between_ms"`
	Requests  int     `json:"requests"`
}

// Run is the run-session use case: it checks the input, opens the cost
// model of the store, probes the host's speed (Probe), runs the plan with
// ONNX Runtime under the speed check, predicts at the probe's speed,
// records the in-situ times (Record) and returns the result.
func Run(ctx context.Context, in RunInput) (*RunSession, error) {
	if !(in.Scale > 0) {
		return nil, fmt.Errorf("--scale %v must be positive", in.Scale)
	}
	if in.Duration <= 0 {
		return nil, fmt.Errorf("--duration %v must be positive", in.Duration)
	}
	if in.Record {
		if err := openable(in.Profiles); err != nil {
			return nil, err
		}
	}
	est, note, err := profile.CostModel(in.Profiles, in.ProfilesNamed, in.Platform, in.Workload)
	if err != nil {
		return nil, err
	}
	pe, _ := est.(*profile.Estimator)
	if pe != nil {
		pe.UseUnpinned(in.NoPin) // predict with the hand-off of the run's pinning
	}
	s := &RunSession{}
	if in.Probe && pe != nil && pe.Device() == profile.LocalDeviceName() {
		in.stage(StageProbing)
		if s.probe, err = probeNow(ctx, in, pe); err != nil {
			return nil, err
		}
	}
	// The arrival lag runs recorded, and the speed the profile took its
	// figures at, for the speed report.
	rec, err := profile.ReadRecorded(in.Profiles, profile.LocalDeviceName())
	if err != nil {
		return nil, err
	}
	cfg := runtime.Config{
		Workload: in.Workload, Platform: in.Platform, Plan: in.Plan, Cost: est, Library: in.Library,
		Duration: in.Duration, Scale: in.Scale, Seed: in.Seed, Backlog: in.Backlog, DrainTimeout: in.Drain,
		Spans: in.Spans || in.Subgraphs, PredictSpans: in.Subgraphs, NoPin: in.NoPin, Spin: in.Spin,
	}
	// The prediction adds what a request waits for its first subgraph
	// (the simulator starts it on arrival), for the way this run's event
	// loop will wait for its arrivals.
	lag, lagFrom := rec.StartDelay(!in.NoPin, cfg.LoopSleeps())
	cfg.ArrivalLag, s.LagFrom = lag, lagFrom
	if in.DropLate {
		cfg.Policy = dispatch.DropLate
	}
	in.stage(StageRunning)
	res, speed, err := runChecked(ctx, cfg, in.SpeedCheck, rec.Speeds)
	if err != nil {
		return nil, err
	}
	s.Runtime = res
	if s.probe != nil {
		s.probe.predict(cfg, pe, res)
	}
	if in.Record {
		if s.Recorded, err = recordInSitu(in, res); err != nil {
			return nil, err
		}
	}
	s.Result = RunResultOf(in.Workload.Path, in.Platform, in.Plan.Planner, res)
	s.Result.PredictedArrivalLagMs, s.Result.CostModel, s.Result.Speed = Ms(lag), note(), speed
	s.fill(in)
	return s, nil
}

func (in RunInput) stage(st RunStage) {
	if in.Stage != nil {
		in.Stage(st)
	}
}

// openable creates the store at path when it does not exist yet.
func openable(path string) error {
	if path == "" {
		return errors.New("--record needs a profile store (--profiles)")
	}
	st, err := profile.Open(path)
	if err != nil {
		return err
	}
	return st.Close()
}

// runChecked runs cfg with the speed check on the platform's cores when
// check, pairing what it saw with the profile's speeds.
func runChecked(ctx context.Context, cfg runtime.Config, check bool, profiled []profile.CoreSpeed) (*runtime.Result, []CoreSpeed, error) {
	var sampler *profile.SpeedSampler
	if cores := PlatformCores(cfg.Platform); check && len(cores) > 0 {
		sampler = profile.StartSpeedSampler(ctx, cores, profile.DefaultSpeedPeriod)
	}
	res, err := runtime.Run(ctx, cfg)
	var speed []CoreSpeed
	if sampler != nil {
		speed = CoreSpeeds(sampler.Stop(), profiled)
	}
	return res, speed, err
}

// fill adds the probe and the per-subgraph comparison to the result.
func (s *RunSession) fill(in RunInput) {
	res, j := s.Runtime, s.Result
	if s.probe != nil {
		j.Probe = s.probe.schema(in.Platform)
		for gi := range j.Groups {
			j.Groups[gi].PredictedNowP50Ms = Ms(s.probe.p50(gi))
		}
	}
	if !in.Subgraphs {
		return
	}
	for _, r := range report.CompareSpans(res.Spans, res.PredictedSpans) {
		j.Subgraphs = append(j.Subgraphs, SubgraphSplit{Group: r.Group, Subgraph: r.Label, Processor: r.Processor,
			PredictedMs: Ms(r.Predicted), PredictedRuns: r.PredictedRuns, MeasuredMs: Ms(r.Measured), Runs: r.Runs, Ratio: r.Ratio(),
			AloneMs: Ms(r.Alone), AloneRuns: r.AloneRuns, BesideMs: Ms(r.Beside), BesideRuns: r.BesideRuns})
	}
	for _, r := range report.CompareRequests(res.Spans, res.PredictedSpans) {
		j.Requests = append(j.Requests, RequestSplit{Group: r.Group, Predicted: requestParts(r.Predicted), Measured: requestParts(r.Measured)})
	}
}

func requestParts(p report.RequestParts) RequestParts {
	return RequestParts{P50Ms: Ms(p.P50), MeanMs: Ms(p.Mean), BeforeMs: Ms(p.Before), WorkingMs: Ms(p.Working), BetweenMs: Ms(p.Between), Requests: p.Requests}
}

// RunResultOf is the schema's result of a run of a plan by planner on pl
// (pl may be nil: the processors' kinds are then left out).
func RunResultOf(workloadPath string, pl *hw.Platform, planner string, res *runtime.Result) *RunResult {
	j := &RunResult{Workload: workloadPath, Planner: planner, Scale: res.Scale,
		DurationS: res.Duration.Seconds(), ElapsedS: res.Elapsed.Seconds(), Interrupted: res.Interrupted,
		ZeroCopy: res.ZeroCopy, Copied: res.Copied, HandOffMs: Ms(res.HandOff), ReportMs: Ms(res.Report),
		ArrivalLagMs: Ms(res.ArrivalLag), ArrivalLagP50Ms: Ms(res.ArrivalLagP50), PredictedMisses: res.PredictedMisses,
		Warnings: append([]string{}, res.Warnings...), Groups: RunGroups(res), Processors: []Processor{}}
	if pl != nil {
		j.Platform = pl.Name
	}
	for i, pr := range res.Procs {
		j.Processors = append(j.Processors, Processor{Name: pr.Name, Kind: kindOf(pl, i), Runs: pr.Runs, BusyMs: Ms(pr.Busy), Utilisation: pr.Utilisation})
	}
	return j
}

// PlatformCores lists the distinct cores of pl's processors, ascending
// (none for a platform that names no cores of this machine).
func PlatformCores(pl *hw.Platform) []int {
	var cores []int
	for _, pr := range pl.Processors {
		cores = append(cores, pr.Cores...)
	}
	slices.Sort(cores)
	return slices.Compact(cores)
}

// CoreSpeeds pairs the run's speed checks with the profile's, by core.
func CoreSpeeds(run, profiled []profile.CoreSpeed) []CoreSpeed {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	out := make([]CoreSpeed, len(run))
	for i, c := range run {
		out[i] = CoreSpeed{Core: c.Core, Checks: c.Checks, Slow: c.Slow, NormalUs: us(c.Normal), MedianUs: us(c.Median)}
		for _, pc := range profiled {
			if pc.Core == c.Core {
				out[i].ProfiledUs = us(pc.Normal)
			}
		}
		if out[i].ProfiledUs > 0 && out[i].MedianUs > 0 {
			out[i].Ratio = out[i].MedianUs / out[i].ProfiledUs
		}
	}
	return out
}

// recordInSitu stores each subgraph's in-situ timing (the runtime's
// service times) and the run's arrival lag in the store
// (profile.RecordInSitu), as this machine's.
func recordInSitu(in RunInput, res *runtime.Result) (int, error) {
	st, err := profile.Open(in.Profiles)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	rt, err := ort.Open(in.Library)
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
	return profile.RecordInSitu(st, profile.LocalDeviceName(), rt.Version(), in.Platform, in.Workload, in.Plan, obs, res.ArrivalLagP50, requests)
}

// speedProbe is the speed probe of the plan's subgraphs taken before the
// run (profile.ProbePlan) and the prediction at that speed, per group in
// the run's order (set by predict after the run).
type speedProbe struct {
	sp   profile.SpeedProbe
	now  []time.Duration
	warn string
}

// probeNow times the plan's subgraphs on this machine now against the
// store's figures (nil when the store has none of them).
func probeNow(ctx context.Context, in RunInput, pe *profile.Estimator) (*speedProbe, error) {
	st, err := profile.Open(in.Profiles)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	dev, err := profile.NewLocal(in.Library, in.Platform)
	if err != nil {
		return nil, err
	}
	sp, err := profile.ProbePlan(ctx, dev, st, pe.Device(), in.Workload, in.Platform, in.Plan)
	if err != nil {
		return nil, err
	}
	if len(sp.Subgraphs) == 0 {
		return nil, nil
	}
	return &speedProbe{sp: sp}, nil
}

// predict sets the prediction at the probe's speed for the run c made
// (res): c under the estimator scaled by the probe. A failure is kept as
// a warning; the run's own prediction stands.
func (r *speedProbe) predict(c runtime.Config, pe *profile.Estimator, res *runtime.Result) {
	c.Cost = pe.AtSpeed(r.sp)
	c.PredictSpans = false
	at := &runtime.Result{Groups: slices.Clone(res.Groups)}
	if err := runtime.Predict(c, at); err != nil {
		r.warn = fmt.Sprintf("prediction at the speed now: %v", err)
		return
	}
	r.now = make([]time.Duration, len(at.Groups))
	for i, g := range at.Groups {
		r.now[i] = g.PredictedP50
	}
}

// p50 is group gi's p50 predicted at the speed now (0 when predict failed).
func (r *speedProbe) p50(gi int) time.Duration {
	if gi < len(r.now) {
		return r.now[gi]
	}
	return 0
}

func (r *speedProbe) schema(pl *hw.Platform) *Probe {
	j := &Probe{ElapsedS: r.sp.Elapsed.Seconds(), Warning: r.warn, Processors: []ProbedProcessor{}, Subgraphs: []ProbedSubgraph{}}
	ratios := r.sp.ProcRatios()
	for _, p := range slices.Sorted(maps.Keys(ratios)) {
		j.Processors = append(j.Processors, ProbedProcessor{Processor: pl.Processors[p].Name, Ratio: ratios[p]})
	}
	for _, s := range r.sp.Subgraphs {
		j.Subgraphs = append(j.Subgraphs, ProbedSubgraph{Subgraph: s.Label, Processor: s.Processor,
			ProfiledMs: Ms(s.Profiled), NowMs: Ms(s.Now), Ratio: s.Ratio()})
	}
	return j
}
