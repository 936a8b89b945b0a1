package runtime

import (
	"time"

	"github.com/inlay-dev/inlay/timeline"
)

// Drop reasons (DropCount.Reason).
const (
	ReasonOverloaded = "overloaded"
	ReasonDeadline   = "deadline"
	ReasonError      = "error"
	ReasonShutdown   = "shutdown"
)

// DropCount is how many of a group's requests were dropped for one reason,
// with the first such request's detailed message.
type DropCount struct {
	Reason  string
	Count   int
	Example string
}

// GroupResult is one group's outcome over the whole run.
type GroupResult struct {
	Name string
	// OfferedHz is the scaled nominal rate; Deadline the group's deadline.
	OfferedHz float64
	Deadline  time.Duration
	// Requests arrived; Completed of them finished (Late of those after
	// their deadline); Dropped were abandoned, by reason in Drops.
	// Requests = Completed + Dropped.
	Requests, Completed, Late, Dropped int
	Drops                              []DropCount
	// Latency of the completed requests, from scheduled arrival to the end
	// of the last job: median and 99th percentile (nearest rank), mean, max.
	P50, P99, Mean, Max time.Duration
	// MissRate is (Late+Dropped)/Requests.
	MissRate float64
	// RateHz is the completed requests per second of the arrival window.
	RateHz float64
	// PredictedP50 and PredictedP99 are the simulator's figures for the
	// same program at the same scale, plus Config.ArrivalLag.
	PredictedP50, PredictedP99 time.Duration
	// PredictedUncontendedP50 is the simulator's p50 without the
	// contention model (plus Config.ArrivalLag); 0 when the program has
	// none.
	PredictedUncontendedP50 time.Duration
}

// ProcResult is one processor's use: Busy is the summed run time of its
// jobs, Utilisation Busy over Concurrency × Elapsed, Runs the jobs it ran.
type ProcResult struct {
	Name        string
	Runs        int
	Busy        time.Duration
	Utilisation float64
}

// SubgraphResult is what one planned subgraph did in a run: how long its
// runs took as the runtime saw them. Runs that failed, or that belonged to
// a request already dropped, are left out.
type SubgraphResult struct {
	// Model is the workload model; Index the subgraph's position in the
	// model's plan; Label its trace label; Processor where it ran.
	Model     string
	Index     int
	Label     string
	Processor string
	// Run holds the durations of its ONNX Runtime calls as its worker timed
	// them. Service holds, per run, the time from the task being handed
	// over (by the event loop or a worker) to its report being taken: Run
	// plus the runtime's hand-off and report delays, the time the dispatcher saw the
	// processor busy, which is what the simulator charges for a job. Both
	// in the order the runs ended.
	Run, Service []time.Duration
}

// Result is what a run measured.
type Result struct {
	Scale float64
	// Duration is the arrival window; Elapsed the time from the start to
	// the last request accounted for.
	Duration, Elapsed time.Duration
	Groups            []GroupResult
	Procs             []ProcResult
	// Subgraphs are the planned subgraphs in plan order (models as the
	// plan lists them, then subgraph order) with their in-situ timings.
	Subgraphs []SubgraphResult
	// Spans are what really ran (Config.Spans), times since the start;
	// Lanes the processor names, then the links that carried a transfer.
	Spans []timeline.Span
	Lanes []string
	// PredictedSpans are the simulated spans of the prediction for the
	// same plan and rate (Config.PredictSpans; nil without it).
	PredictedSpans []timeline.Span
	// ZeroCopy counts tensors handed from one subgraph to another as the
	// same buffer; Copied those copied by a transfer between domains.
	ZeroCopy, Copied int64
	// HandOff and Report are the mean delays of the runtime's own steps:
	// from a task being handed over (by the event loop or a worker) to its
	// worker starting it, and from the task's end to its report being
	// taken (under the run's lock; the simulator counts neither; on a busy
	// machine the hand-off is mostly the OS waking a thread).
	HandOff, Report time.Duration
	// ArrivalLag and ArrivalLagP50 are the mean and the median delay from
	// a request's scheduled arrival to its being taken, by the event loop
	// (the wake-up of its sleep) or by a worker that freed a processor;
	// latency counts from the scheduled time, and the simulator does not
	// count it either.
	ArrivalLag, ArrivalLagP50 time.Duration
	// Interrupted is true when the context ended the run early.
	Interrupted bool
	// Warnings are problems that did not stop the run (warm-up failures).
	Warnings []string
	// PredictedMisses is the simulator's deadline-miss summary ("" when
	// none).
	PredictedMisses string
}
