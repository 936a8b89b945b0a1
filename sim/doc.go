// Package sim predicts what a plan sustains: it compiles a plan into the
// dispatcher's program (Compile), runs that program in virtual time around
// the same dispatch state machine the runtime uses (Run), searches the
// largest sustainable rate scale (MaxSustainableScale), and serves planners
// as their plan.Evaluator (NewEvaluator). Package ratebound bounds that
// scale from above for any plan.
//
// Simulation. A discrete-event simulator, deterministic for a program and
// options: events are ordered by (time, sequence number) in integer
// nanoseconds (time.Duration), so equal-time events come out in the order
// they were scheduled and no float error accumulates; scheduling an event
// in the past panics (a bug, not an input error). All events of one instant
// (arrivals and completions) are fed to the dispatcher before it is asked
// for launches, so a completion and an arrival at the same time compete on
// equal terms. A launched job occupies its processor (or shared link) for
// the job's compiled duration — processors are non-preemptive servers with
// their Concurrency, shared links carry one transfer at a time in FIFO
// order (see package dispatch for the queueing policy). Arrivals: periodic
// groups release request k at round(k·Period/Scale), all groups at time 0
// first (the critical instant); Poisson groups draw exponential gaps with
// mean Period/Scale from their own *rand.Rand seeded from Options.Seed.
//
// Horizon (Options): requests arrive for as long as the slowest group needs
// to issue Warmup+Requests = 20+200 requests at its scaled rate; then the
// run drains, carrying every arrived request to completion, so no latency
// is censored. The first 20 requests of each group are excluded from the
// statistics (the run starts empty; its first requests see short queues).
// 200 measured requests make the 99 % criterion meaningful (at most 2
// misses); overload that a finite run would hide is caught by the load
// limit (LoadLimit), not by a longer run. When groups' rates differ a lot
// and plans have hundreds of subgraphs, the slowest group's 220 requests
// would mean millions of job executions per run: the default horizon is
// then shortened so a run executes about Options.MaxJobs (250 000) jobs,
// keeping at least 50 measured requests of the slowest group (a stricter
// test: no miss allowed). A max-rate search of the nine-zoo-model scenario
// on the phone takes about 10 ms of CPU with whole-model subgraphs and a
// few hundred ms with HEFT's ~700 per-layer subgraphs
// (BenchmarkMaxSustainableScale).
//
// Metrics per group: requests, completed, late, dropped, p50/p99 (nearest
// rank)/mean/max latency from arrival to the group's last job done, miss
// rate, achieved rate; per processor and link: busy time and utilisation;
// spans (timeline.Span) for Gantt charts and traces.
//
// The package reads no clock, does no I/O and starts no goroutines; an
// Evaluator may be called from many goroutines at once.
package sim
