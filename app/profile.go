package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// ErrNoHandOff says a device cannot probe the runtime's hand-off (an
// agent without the endpoint); the profile loop goes on without it, as it
// does on runtime.ErrNoProbePair.
var ErrNoHandOff = errors.New("the device does not probe hand-offs")

// HandOffProber measures the runtime's hand-off, pinned or not
// (runtime.ProbeHandOff on this machine, or through an agent).
type HandOffProber func(ctx context.Context, unpinned bool) (runtime.HandOffProbe, error)

// ProfileInput asks for the device-in-the-loop profile of a workload.
type ProfileInput struct {
	Workload *workload.Workload
	Platform *hw.Platform
	// Device measures; Store keeps what it measured, at the path Profiles
	// (the planners' cost model reads it there between rounds).
	Device   profile.Device
	Store    *profile.Store
	Profiles string
	// HandOff, when not nil, is measured first and stored.
	HandOff HandOffProber
	// Warmup, Reps, Cold, Idle and Cycles are the runs per measurement
	// (profile.Profiler); Chunks the runs of consecutive layers measured
	// per model for the calibration.
	Warmup, Reps, Cold, Idle, Cycles, Chunks int
	// Planners are the planners whose plans' subgraphs are measured, each
	// with Budget; Rounds the device-in-the-loop rounds at most.
	Planners []string
	Budget   time.Duration
	Rounds   int
	// Force measures again what the store holds (first round only);
	// Corun adds each plan subgraph's co-run profile.
	Force, Corun bool
	Seed         int64
	// Calibration is how the store is fitted after each round.
	Calibration CalibrateOptions
	// Observer hears the loop's progress (nil: nobody).
	Observer ProfileObserver
}

// ProfileObserver hears the profile loop as it goes. Every method is
// called from the loop's goroutine.
type ProfileObserver interface {
	// HandOff: the hand-off probes are done (or were skipped).
	HandOff(HandOffResult)
	// Started: the device answered; nothing is measured yet.
	Started(profile.DeviceInfo)
	// RoundStarted: a round is about to measure its jobs.
	RoundStarted(RoundStart)
	// Measured: job done of total in the round.
	Measured(round, done, total int, j profile.Job)
	// RoundDone: a round's summary.
	RoundDone(Round)
	// PlannerFailed: a planner made no usable plan; its subgraphs are not
	// measured.
	PlannerFailed(planner string, err error)
}

// HandOffResult is the hand-off probes' outcome: both pinnings, or why
// none was measured.
type HandOffResult struct {
	Probes []HandOffProbe
	// Skipped says why no hand-off was measured ("" when measured).
	Skipped string
}

// HandOffProbe is one pinning's hand-off probe.
type HandOffProbe struct {
	Unpinned bool
	runtime.HandOffProbe
}

// RoundStart is a round about to measure: its jobs and, in the first
// round, their count by kind and the processors measured.
type RoundStart struct {
	Round, Jobs int
	Kinds       []profile.KindCount
	Classes     []string
}

// Round is one round of the loop.
type Round struct {
	Round int
	profile.Summary
}

// ProfileResult is the profile loop's outcome.
type ProfileResult struct {
	Device  profile.DeviceInfo
	HandOff HandOffResult
	// Kinds counts the first round's jobs by kind; Classes names the
	// processors measured and those each stands for ("cpu0 for cpu0, cpu1").
	Kinds   []profile.KindCount
	Jobs    int
	Classes []string
	Rounds  []Round
	// Settled is the round in which the plans' subgraphs were all measured
	// (0: they had not settled, or only one round ran).
	Settled int
	// StillChanging: the last round allowed still measured new subgraphs.
	StillChanging bool
	// Coruns counts the co-run profiles stored now.
	Coruns int
	// Speed is the local device's speed guard (nil through an agent).
	Speed *profile.SpeedStats
	// Calibration is the last fit of the store.
	Calibration *CalibrationResult
}

// Profile is the device-in-the-loop use case: the planners' plans made
// with the analytic model (or what the store held) are measured first,
// with every layer and the chunks; then, round after round, the store is
// calibrated, the planners plan again with the measurements and the
// subgraphs of their new plans that the store lacks are measured, until a
// round finds none (or Rounds). So the plan inlay plan makes from the
// store is one whose subgraphs were measured, not one the calibrated model
// guessed at.
func Profile(ctx context.Context, in ProfileInput) (*ProfileResult, error) {
	if err := in.Check(); err != nil {
		return nil, err
	}
	if in.Observer == nil {
		in.Observer = noObserver{}
	}
	info, err := in.Device.Info(ctx)
	if err != nil {
		return nil, err
	}
	r := &ProfileResult{Device: info, Classes: twinClasses(in.Platform)}
	in.Observer.Started(info)
	if in.HandOff != nil {
		if r.HandOff, err = probeHandOffs(ctx, in.Store, info.Name, in.HandOff); err != nil {
			return r, err
		}
		in.Observer.HandOff(r.HandOff)
	}
	device, calibrated, err := profileRounds(ctx, in, r)
	if err != nil {
		return r, err
	}
	if sp, ok := in.Device.(interface{ Speed() profile.SpeedStats }); ok {
		s := sp.Speed()
		r.Speed = &s
		// inlay run sets its own reference times beside these.
		if len(s.Cores) > 0 {
			if err := in.Store.PutSpeeds(device, s.Cores); err != nil {
				return r, err
			}
		}
	}
	if !calibrated {
		r.Calibration, err = Calibrate(in.Store, device, in.Platform, in.Workload, in.Calibration)
	}
	return r, err
}

// profileRounds runs the loop's rounds; it returns the device's store
// name and whether r.Calibration is the fit of the store as it is now.
func profileRounds(ctx context.Context, in ProfileInput, r *ProfileResult) (string, bool, error) {
	device, calibrated := "", false
	for round := 1; round <= in.Rounds; round++ {
		plans, err := profilePlans(ctx, in)
		if err != nil {
			return device, false, err
		}
		jobs, err := profile.Jobs(in.Workload, in.Platform, profile.JobOptions{Plans: plans, Chunks: in.Chunks, Seed: in.Seed})
		if err != nil {
			return device, false, err
		}
		if round == 1 {
			r.Kinds, r.Jobs = profile.CountKinds(jobs), len(jobs)
		} else {
			// A later round measures the new plans' subgraphs the store
			// lacks, and times a plan whose cycle it lacks (a plan made of
			// stored subgraphs may still be a new plan).
			jobs = slices.DeleteFunc(jobs, func(j profile.Job) bool { return j.Kind != profile.KindPlan })
		}
		cycles, err := profile.PlanCycles(in.Workload, in.Platform, plans)
		if err != nil {
			return device, false, err
		}
		start := RoundStart{Round: round, Jobs: len(jobs)}
		if round == 1 {
			start.Kinds, start.Classes = r.Kinds, r.Classes
		}
		in.Observer.RoundStarted(start)
		sum, err := measureRound(ctx, in, jobs, cycles, round)
		r.Coruns += sum.Coruns
		device = sum.Device
		if err != nil {
			return device, false, err
		}
		r.Rounds = append(r.Rounds, Round{Round: round, Summary: sum})
		in.Observer.RoundDone(r.Rounds[len(r.Rounds)-1])
		if sum.Measured+sum.Failed > 0 {
			calibrated = false
		}
		if round > 1 && sum.Measured+sum.Failed == 0 {
			r.Settled = round
			break
		}
		if round < in.Rounds {
			if r.Calibration, err = Calibrate(in.Store, device, in.Platform, in.Workload, in.Calibration); err != nil {
				return device, false, err
			}
			calibrated = true
		} else if round > 1 {
			r.StillChanging = true
		}
	}
	return device, calibrated, nil
}

// measureRound measures jobs, the round-th round. Only the first round
// may measure again what the store holds (Force).
func measureRound(ctx context.Context, in ProfileInput, jobs []profile.Job, cycles []profile.Cycle, round int) (profile.Summary, error) {
	prof := &profile.Profiler{Device: in.Device, Store: in.Store, Warmup: in.Warmup, Reps: in.Reps, Cold: in.Cold, Idle: in.Idle,
		Force: in.Force && round == 1, Corun: in.Corun, Cycles: cycles, CycleRuns: in.Cycles,
		Progress: func(done, total int, j profile.Job) { in.Observer.Measured(round, done, total, j) }}
	return prof.Run(ctx, in.Platform, jobs)
}

// twinClasses names the processors measured and those each stands for:
// processors identical but for their cores are measured once.
func twinClasses(pl *hw.Platform) []string {
	twins := profile.Twins(pl)
	var classes []string
	for i, t := range twins {
		if t != i {
			continue
		}
		var members []string
		for j, u := range twins {
			if u == i {
				members = append(members, pl.Processors[j].Name)
			}
		}
		classes = append(classes, fmt.Sprintf("%s for %s", pl.Processors[i].Name, strings.Join(members, ", ")))
	}
	return classes
}

// probeHandOffs measures the runtime's hand-off with probe, pinned and
// unpinned, and stores both for the device. A device with fewer than two
// processors ONNX Runtime runs on has no hand-off between processors to
// measure (runtime.ErrNoProbePair), nor does an agent without the
// endpoint (ErrNoHandOff): the result says so and the loop goes on.
func probeHandOffs(ctx context.Context, st *profile.Store, device string, probe HandOffProber) (HandOffResult, error) {
	var r HandOffResult
	for _, unpinned := range []bool{false, true} {
		pr, err := probe(ctx, unpinned)
		if errors.Is(err, runtime.ErrNoProbePair) || errors.Is(err, ErrNoHandOff) {
			return HandOffResult{Skipped: err.Error()}, nil
		}
		if err != nil {
			return HandOffResult{}, fmt.Errorf("profile: %w", err)
		}
		sd := pr.Starts
		if err := st.PutHandOff(device, profile.HandOff{Pinned: !unpinned, Same: pr.Same, Cross: pr.Cross, Samples: pr.Samples,
			SleepStart: sd.Sleep, SleepRequests: sd.SleepRequests, PollStart: sd.Poll, PollRequests: sd.PollRequests,
			CrossAfter: pr.CrossAfter}); err != nil {
			return HandOffResult{}, err
		}
		r.Probes = append(r.Probes, HandOffProbe{Unpinned: unpinned, HandOffProbe: pr})
	}
	return r, nil
}

// profilePlans runs the chosen planners with the store's cost model as it
// is now and returns their plans; a planner that fails is reported to the
// observer and left out.
func profilePlans(ctx context.Context, in ProfileInput) ([]*plan.Plan, error) {
	var names []string
	for _, n := range in.Planners {
		if n = strings.TrimSpace(n); n != "" && n != "none" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	w, pl := in.Workload, in.Platform
	est, _, err := profile.CostModel(in.Profiles, true, pl, w)
	if err != nil {
		return nil, err
	}
	var plans []*plan.Plan
	for _, name := range names {
		planner, err := search.New(name)
		if err != nil {
			return nil, err
		}
		eval := sim.NewEvaluator(w, pl, est, sim.Options{Seed: in.Seed})
		req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: in.Seed, Budget: in.Budget, Workers: 1}
		p, err := planner.Plan(ctx, req, eval)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil {
			err = p.Validate(w, pl)
		}
		if err != nil {
			in.Observer.PlannerFailed(name, err)
			continue
		}
		plans = append(plans, p)
	}
	return plans, nil
}

type noObserver struct{}

func (noObserver) HandOff(HandOffResult)               {}
func (noObserver) RoundStarted(RoundStart)             {}
func (noObserver) Started(profile.DeviceInfo)          {}
func (noObserver) Measured(int, int, int, profile.Job) {}
func (noObserver) RoundDone(Round)                     {}
func (noObserver) PlannerFailed(string, error)         {}

// CalibrateOptions are the calibration's: cross-validation folds, the
// seed of the held-back subgraphs, and the figure fitted ("min", "median"
// or "cold").
type CalibrateOptions struct {
	Folds int
	Seed  int64
	FitOn string
}

// CalibrationResult is a fit of the store's measurements, stored.
type CalibrationResult struct {
	Device string
	// Samples is 0 when the store held nothing of the workload's models
	// to fit (Fit is then nil).
	Samples int
	Fit     *profile.Calibration
	Options CalibrateOptions
}

// Calibrate fits each processor's efficiency factors in the analytic model
// to the measurements of the workload's models on the device, and stores
// them for plan, simulate, bench and run.
func Calibrate(st *profile.Store, device string, pl *hw.Platform, w *workload.Workload, opt CalibrateOptions) (*CalibrationResult, error) {
	samples, err := profile.Samples(st, device, pl, w)
	if err != nil {
		return nil, err
	}
	r := &CalibrationResult{Device: device, Options: opt, Samples: len(samples)}
	if len(samples) == 0 {
		return r, nil
	}
	var useMin bool
	switch opt.FitOn {
	case "min":
		useMin = true
	case "median":
	case "cold":
		samples = profile.ColdSamples(samples)
		if len(samples) == 0 {
			return nil, fmt.Errorf("--fit-on cold: no measurement of this workload's models on %s has cold runs (inlay profile --cold)", device)
		}
	default:
		return nil, fmt.Errorf("--fit-on %q: want min, median or cold", opt.FitOn)
	}
	cal, err := profile.Calibrate(pl, nil, samples, profile.CalibrateOptions{Folds: opt.Folds, Seed: opt.Seed, UseMin: useMin})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, c := range cal.Classes {
		for _, m := range c.Members {
			if err := st.PutCalibration(profile.CalibrationRow{Device: device, Processor: m, Efficiency: c.After,
				MAPEBefore: c.MAPEBefore, MAPEAfter: c.MAPEAfter, Samples: c.Fit + c.Held, FittedAt: now, Cold: c.Cold}); err != nil {
				return nil, err
			}
		}
	}
	r.Fit = cal
	return r, nil
}
