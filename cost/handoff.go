package cost

import (
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
