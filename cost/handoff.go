package cost

import (
	"fmt"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

// HandOffEstimator is an Estimator that also knows the runtime's hand-off
// before a subgraph: from the end of the job it depends on, on processor
// from, to the subgraph starting on its own processor (the report back to
// the dispatcher, its decision, and the wake-up of the worker that runs
// it: a thread hand-off when from is another processor). A profile taken
// one subgraph at a time does not see it; a fragmented plan pays it at
// every cut. The simulator adds it to the subgraph's service time when its
// estimator is one (the processor cannot start other work on a worker
// being woken, and the dispatcher's bookkeeping is serial), once per job:
// the largest over the job's dependencies, or, for a job that depends on
// nothing (a model's source, waiting for no other model), the one from
// processor -1: what waking its processor costs on the request's arrival
// (package profile measures it with idle runs). That charge is static: it
// does not look at whether the processor really idled (a short period, a
// processor busy with another group's work, or the runtime's arrival spin
// can spare it), so there it over-predicts. A figure that already includes
// it (an in-situ measurement from a real run) answers 0.
type HandOffEstimator interface {
	Estimator
	// HandOff is the delay before set starts on on after a job it
	// depends on ended on processor from (from == on.Proc: the same
	// processor; from == -1: set depends on nothing and starts its model
	// on its request's arrival, after its processor has mostly idled).
	HandOff(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config, from int) time.Duration
}

// CrossHandOffEstimator is a HandOffEstimator that also knows how the
// hand-off between two processors grows with how long the job before it
// ran: the worker that takes the next job has idled about that long, and
// an idle core wakes more slowly the longer it has been halted (a virtual
// machine's vCPU most of all). The simulator prices a hand-off from
// another processor with CrossAfter, in place of HandOff's flat figure,
// where HandOff charges one (not where an in-situ figure already holds
// it). The job's run is a static stand-in for the worker's idle time: a
// worker busy with other work in between wakes faster than it says.
type CrossHandOffEstimator interface {
	HandOffEstimator
	// CrossAfter is the hand-off between processors after a job that
	// ran for ran; ok is false when there is no curve to answer from.
	CrossAfter(ran time.Duration) (d time.Duration, ok bool)
}

// HandOffPoint is one point of a HandOffCurve: over Samples hand-offs
// between processors after jobs that ran for about After (their median),
// the median hand-off was Gap.
type HandOffPoint struct {
	After, Gap time.Duration
	Samples    int
}

// HandOffCurve is a hand-off between processors by how long the job
// before it ran, its points in ascending After.
type HandOffCurve []HandOffPoint

// At is the curve's hand-off after a job that ran for ran: linear between
// the two points around it, the nearest point's Gap before the first and
// after the last; ok is false for an empty curve.
func (c HandOffCurve) At(ran time.Duration) (time.Duration, bool) {
	if len(c) == 0 {
		return 0, false
	}
	if ran <= c[0].After {
		return c[0].Gap, true
	}
	for i := 1; i < len(c); i++ {
		a, b := c[i-1], c[i]
		if ran <= b.After {
			return a.Gap + time.Duration(int64(b.Gap-a.Gap)*int64(ran-a.After)/int64(b.After-a.After)), true
		}
	}
	return c[len(c)-1].Gap, true
}

// Validate says what is wrong with c, if anything: every point needs a
// positive After, ascending strictly, a non-negative Gap and a positive
// Samples.
func (c HandOffCurve) Validate() error {
	for i, p := range c {
		switch {
		case p.After <= 0 || p.Gap < 0 || p.Samples <= 0:
			return fmt.Errorf("hand-off curve point %d: want a positive span, a non-negative hand-off and positive samples (got after %v, hand-off %v, %d samples)", i, p.After, p.Gap, p.Samples)
		case i > 0 && p.After <= c[i-1].After:
			return fmt.Errorf("hand-off curve point %d: span %v not above the one before (%v)", i, p.After, c[i-1].After)
		}
	}
	return nil
}
