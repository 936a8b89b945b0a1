// Package dispatch is inlay's scheduling core: the one deterministic state
// machine that decides which ready job runs next on which processor or link.
// Both the simulator (package sim, virtual time) and the runtime (real time,
// ONNX Runtime workers) drive it, so predicted and measured schedules come
// from the same decisions.
//
// Like etcd raft's RawNode, a Dispatcher reads no clock, never sleeps, does no
// I/O and starts no goroutines. Its inputs are arrivals (a group's request
// arrives at time now: Arrive) and completions (a launched task finished at
// time now: Complete); its output is a Ready batch of effects (tasks to launch
// now, requests finished, requests dropped) that the caller carries out. The
// caller owns time: every call passes now, and now never goes backwards.
//
// The Program is plain data: processors (servers with a concurrency), links
// (copy channels; shared ones carry one transfer at a time), groups of models
// released together, and the jobs of each group — compute jobs (one per
// planned subgraph, on a processor) and transfer jobs (one per copied
// subgraph-to-subgraph edge, on a link) — with their dependencies. A request
// instantiates every job of its group once; the request is finished when all
// of them are.
//
// Decisions (the policy every wrapper inherits):
//   - A compute job becomes ready when all its dependencies have completed; it
//     then waits in its processor's queue ordered by (model priority: lower
//     first; request arrival time; request ID; job ID). Processors are
//     non-preemptive: a running job is never interrupted, so a high-priority
//     job that becomes ready while a low-priority one runs waits for it.
//   - A processor runs up to its Concurrency jobs at once.
//   - A transfer on a shared link waits in that link's FIFO queue (order of
//     becoming ready; ties by request ID, job ID); a transfer on an
//     unshared link starts as soon as it is ready.
//   - Ready launches greedily in processor order, then link order: whenever
//     a server has a free slot and a queued job, the head of its queue runs.
//
// Deadline policy (Config.Policy): CompleteLate (default) runs every request
// to completion and reports it late when it finished after arrival+deadline;
// the caller counts it as a miss. DropLate drops a request when one of its
// jobs reaches the head of a queue after the request's deadline has passed:
// its queued jobs are discarded, jobs already running finish but release no
// successors, and Ready reports the drop with its reason.
package dispatch
