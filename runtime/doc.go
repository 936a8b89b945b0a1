// Package runtime runs a plan for real: it is the real-time wrapper around
// the same dispatch state machine the simulator (package sim) drives in
// virtual time, with ONNX Runtime doing the work. The runtime never decides
// an order itself: every launch comes out of dispatch.Dispatcher.Ready, so
// the gap between sim's prediction and what Run measures comes from the
// cost estimates alone.
//
// Run, in order:
//
//  1. Checks (each a one-line error before anything starts): every
//     subgraph's processor exists on the platform; the plan validates
//     against the workload and platform; models whose plan records a
//     content hash (plan.ModelPlan.Hash) still have it; every subgraph uses
//     the ort-cpu backend (the only one this machine has).
//  2. Compiles the plan with sim.Compile (the estimator only prices jobs for
//     the prediction; the dispatcher ignores durations), creates one ONNX
//     Runtime session per planned subgraph (onnx.ExportSubgraph), with one
//     intra-op thread per core of a pinned processor (host: one) and ONNX
//     Runtime's default otherwise, and warms every model up by running its
//     subgraphs in plan order Config.Warmup times. A warm-up error is not
//     fatal: it is reported in Result.Warnings, and requests that reach the
//     failing subgraph are dropped.
//  3. Starts one worker goroutine per processor slot (Concurrency workers
//     per processor). On a processor with Cores (the host platform), each
//     worker locks its OS thread and pins it to those cores
//     (sched_setaffinity on Linux), so a plan that pipelines models across
//     cores runs across cores for real (Config.NoPin leaves them to the OS,
//     which may suit a machine busy with other work; see its
//     documentation). For the run, GOMAXPROCS is raised to the number of
//     workers plus two (and restored after): a worker inside ONNX Runtime
//     (a cgo call) holds its scheduler slot until sysmon takes it back,
//     which can take milliseconds, and nobody else must wait for one.
//  4. The dispatcher and the run's state sit behind one mutex, driven by
//     two kinds of goroutine (dispatch itself has no locks and does no
//     I/O). The event loop issues arrivals, sleeping (in the kernel, see
//     below) until the times that follow each group's arrival process
//     (periodic: request k at k·Period/Scale from the start; Poisson: exponential gaps with mean Period/Scale from a
//     *rand.Rand seeded from Config.Seed and the group's index, as sim
//     does), ends the run, and handles Ctrl-C. A worker takes its own
//     report when its task ends, on its own thread: it completes the task
//     in the dispatcher, issues any arrival that is due, asks the
//     dispatcher for launches and hands them out, its own processor's next
//     task included, which (on a processor of concurrency 1) it then finds
//     in its queue without sleeping; with more slots a sibling worker
//     already waiting may take it instead. So a request's chain of
//     subgraphs on one core runs with no thread switch between them (the
//     hand-off from an event loop to a worker and the report back cost
//     tens of microseconds per task, which for the voice pipeline's
//     sub-millisecond subgraphs was 20 % of a request), and the event loop
//     wakes only for arrivals, errors, Ctrl-C and the end of the run.
//
// Tensors. A request's tensors live in the run's state: a subgraph's outputs
// are stored by name and handed to the subgraphs that read them as the same
// *graph.Data — no copy — when producer and consumer share a memory domain
// (every processor of the host platform does); Result.ZeroCopy counts those
// hand-offs. Across domains a transfer job of the program copies the
// tensors into buffers from a pool that reuses them across requests
// (Result.Copied counts those). Model inputs come from a pool of Config.Pool
// random tensors per input (ort.RandomData with a seeded rng), reused
// across requests; inputs whose values matter get known values
// (DefaultValues: Silero VAD's sample rate "sr" = 16000). Package ort
// copies inputs into ONNX Runtime tensors and outputs back out on every run
// (a limit of the onnxruntime_go binding), so those copies happen in plain
// ort calls too and are not overhead of the runtime.
//
// Accounting. Every request that arrives ends in exactly one state:
// completed on time, completed late (finished after its arrival plus the
// group's deadline), or dropped with a reason:
//
//   - "overloaded": it arrived while Backlog requests of its group were
//     still in flight (the queue bound; it never reaches the dispatcher);
//   - "deadline": under dispatch.DropLate, one of its jobs reached the head
//     of a queue after the deadline;
//   - "error": a subgraph failed in ONNX Runtime (the reason names the
//     subgraph and the error); its other jobs are skipped and the rest of
//     the run goes on;
//   - "shutdown": it was still in flight when the run stopped.
//
// So per group Requests = Completed + Dropped and Late ≤ Completed.
// Latency runs from the request's scheduled arrival time to the end of its
// last job as the worker saw it. All requests count (no warm-up exclusion:
// the sessions are warm before the clock starts).
//
// Shutdown. Arrivals stop at Config.Duration; requests in flight then drain
// (run to completion and are counted normally) for up to DrainTimeout; what
// is left is dropped as "shutdown". When ctx is cancelled (Ctrl-C in the
// CLI), the run stops within one step of the event loop's sleep (20 ms at
// most): nothing more is launched, every request in
// flight is dropped as "shutdown", the jobs already running on ONNX
// Runtime finish (they cannot be interrupted), and Run returns the figures
// so far with Result.Interrupted set.
//
// What the runtime adds to a request is what the simulator leaves out:
// per request, the hand-off of its first task from the event loop (or
// the worker that took its arrival) to a worker (a thread wake-up), and per task, the dispatcher's bookkeeping
// (Result.HandOff, Result.Report: averages over the tasks, microseconds
// when the work stays on one core). Between dependent subgraphs the
// simulator charges the hand-off that ProbeHandOff measures (the median
// gap from one subgraph's end to the next one's start, on one processor
// and across two, through Run itself; inlay profile stores it, see
// cost.HandOffEstimator), and before a subgraph that starts its model on
// its request's arrival, on a processor that has mostly idled since the
// last one, what waking the processor costs its first run
// (profile.Timing.Idle above Timing.Cold). BenchmarkOverhead measures the
// runtime against plain ort calls, back to back and one request at a time.
// Result.Subgraphs records, per planned subgraph, every run's time as its
// worker saw it and as the dispatcher did (hand-off to report: what the
// simulator charges a job); inlay run --record stores them in the profile
// store as in-situ measurements (profile.InSitu), so that the next
// prediction counts what this one left out. Per request, the event loop
// takes an arrival late by its sleep's wake-up (Result.ArrivalLag). It
// sleeps in the kernel on a thread with a nanosecond of timer slack,
// which wakes ~0.1–0.2 ms late on the test machine (a Go timer wakes up to
// a millisecond late: Go's poller waits in whole milliseconds), and polls
// the clock for the last Config.ArrivalSpin before an arrival instead
// when the arrival would start at once (a processor of its first jobs is
// free) and the loop has a core of its own; it then also has those
// processors' idle workers poll their queues until just after the
// arrival, so that its first task starts without a thread wake-up (the
// mean hand-off of a voice request's tasks fell from 12 to 4 µs pinned). An arrival whose processors are busy waits in any
// case; the worker that frees one takes it. Config.Spin lets idle workers
// poll their queue for a while instead of sleeping, which saves the thread
// wake-up of a hand-off when the worker's core is otherwise free.
//
// Prediction. Run also simulates the same compiled program at the same
// scale (sim.Run with the same seed and policy) and reports each group's
// predicted p50 and p99 next to the measured ones, plus Config.ArrivalLag
// (the arrival lag earlier recorded runs saw, or the delay from arrival to
// the first subgraph's start that ProbeHandOff measured with the event
// loop waiting as this run's will: it sleeps to each arrival when pinned
// workers hold every core, and polls otherwise).
package runtime
