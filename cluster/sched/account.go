package sched

import "math"

// The accounting of a round, shared by everything that drives the
// mechanism: the simulator (virtual rounds), the Kubernetes scheduler (the
// round that ended, in real time) and the replayer (a run stopped or
// finished). One function turns time on GPUs into steps, so a gap between
// them is scheduling latency, never two accountings that drifted apart.

// finishTolerance is the share of a job's steps below which what remains
// counts as done (float rounding of rate × time).
const finishTolerance = 1e-9

// Stretch is one job's part of a placement: it holds its GPUs from Start
// for Length seconds, loses Preempt seconds of them (restoring a
// checkpoint after a move), and runs the rest at Rate steps/s with
// Remaining of its Total steps to go.
type Stretch struct {
	Start, Length, Preempt float64
	Rate                   float64
	Remaining, Total       float64
	// Reserve is the share of Total that the accounting leaves undone: a
	// scheduler that learns of a completion from the workload (a Job's
	// status) never finishes a job by its own estimate. 0 lets the
	// accounting finish the job.
	Reserve float64
	// Capped ends the stretch at Start+Length even when restoring takes
	// longer (event-driven rounds end at the next event); uncapped, a
	// round lasts until its last job stops.
	Capped bool
}

// Progress is what a stretch achieved.
type Progress struct {
	// Steps made (clamped to what remains; the last sliver below the
	// finishing tolerance is taken whole).
	Steps float64
	// End is when the job stopped running: Start + Preempt + Steps/Rate,
	// at most Start+Length when Capped.
	End float64
	// Finished is true when no steps remain (never with a Reserve).
	Finished bool
}

// Ran is the time the job held its GPUs in the stretch.
func (p Progress) Ran(s Stretch) float64 { return p.End - s.Start }

// Account turns a stretch into progress.
func Account(s Stretch) Progress {
	avail := math.Max(0, s.Length-s.Preempt)
	var p Progress
	if s.Reserve > 0 {
		p.Steps = math.Max(0, math.Min(s.Rate*avail, s.Remaining-s.Reserve*s.Total))
	} else {
		p.Steps = math.Min(s.Rate*avail, s.Remaining)
		if s.Remaining-p.Steps < finishTolerance*s.Total {
			p.Steps = s.Remaining
		}
		p.Finished = s.Remaining-p.Steps <= finishTolerance*s.Total
	}
	p.End = s.Start + s.Preempt
	if s.Rate > 0 {
		p.End = s.Start + s.Preempt + p.Steps/s.Rate
	}
	if s.Capped {
		p.End = math.Min(p.End, s.Start+s.Length)
	}
	return p
}

// TimeToFinish is the time a job with remaining steps takes at rate, after
// preempt seconds of restoring (+Inf at rate 0): an event-driven round
// lasts until the first placed job finishes.
func TimeToFinish(remaining, rate, preempt float64) float64 {
	if rate <= 0 {
		return math.Inf(1)
	}
	return remaining/rate + preempt
}

// Finished reports whether a job with remaining of total steps is done
// (within the accounting's tolerance).
func Finished(remaining, total float64) bool { return remaining <= finishTolerance*total }

// ActiveTime integrates the number of active jobs over time: the input of
// finish-time fairness, whose isolated share divides the cluster by the
// mean number of jobs active over a job's life.
type ActiveTime struct {
	sum, at float64
}

// Start sets the integral's origin (nothing accumulated).
func (a *ActiveTime) Start(t float64) { a.sum, a.at = 0, t }

// At is the integral up to t, n jobs active since the last Advance.
func (a *ActiveTime) At(t float64, n int) float64 { return a.sum + float64(n)*(t-a.at) }

// Advance accumulates n active jobs up to t.
func (a *ActiveTime) Advance(t float64, n int) {
	a.sum += float64(n) * (t - a.at)
	a.at = t
}

// IsolatedTime is the denominator of finish-time fairness ρ: the time a
// job of steps on gpus GPUs takes alone on a 1/n share of the cluster, n
// the mean number of active jobs over its life (at least 1). On a share of
// N/n GPUs spread over the types in proportion to their counts, the job
// runs min(1, N/(n·gpus)) of the time at the count-weighted mean of its
// alone rates (alone[i] steps/s on counts[i] GPUs). 0 when the cluster has
// no GPUs or the job no rate.
func IsolatedTime(steps float64, gpus int, meanActive float64, counts []int, alone []float64) float64 {
	total := 0
	for _, c := range counts {
		total += c
	}
	if total == 0 || gpus <= 0 {
		return 0
	}
	n := math.Max(meanActive, 1)
	share := math.Min(1, float64(total)/(n*float64(gpus)))
	rate := 0.0
	for i, c := range counts {
		rate += float64(c) / float64(total) * alone[i]
	}
	if rate <= 0 {
		return 0
	}
	return steps / (share * rate)
}
