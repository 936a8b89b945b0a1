// Package agent serves a profile.Device (and, optionally, an Executor of
// plans) over HTTP, so that a remote device (a phone, a Jetson, a GPU
// server) measures subgraphs for a planner running on the host and runs its
// plans, and provides the Client that talks to it.
//
// # Protocol (version 1)
//
// Every request carries "Authorization: Bearer TOKEN"; a missing or wrong
// token is refused with 401 before anything else is read (the comparison is
// constant-time). Every answer is JSON. An error answer is
//
//	{"error": "one line", "code": "bad_request"}
//
// with the codes and statuses: unauthorized (401), not_found (404),
// method_not_allowed (405), unsupported_media_type (415), bad_request (400:
// body not JSON, unknown fields, model not ONNX), too_large (413: body over
// the upload limit), invalid (422: unknown processor, backend or data type,
// bad shapes, inputs that do not match the model, warm-up or repetitions
// out of range), measure_failed (422: the device could not run the model,
// e.g. ONNX Runtime rejected it), no_probe_pair (422: a hand-off probe on a
// device without two processors that run ort-cpu; the client's error wraps
// runtime.ErrNoProbePair), busy (503: too many measurements queued),
// internal (500: a panic inside the agent, recovered; the agent keeps
// serving).
//
// GET /v1/info answers Info: the device's name, its ONNX Runtime version,
// the agent's version and protocol version (a Client refuses an agent of
// another protocol), the upload limit, each processor with its kind,
// backends, data types and cores, the whole platform as YAML in the
// schema hw.Load reads, and (from 1.1.0) "measure_fields", the optional
// fields of a measure request it takes ("cold", "corun", "idle"; from
// 1.2.0 "cycle" too, when the device times cycles and POST /v1/cycle
// answers, and from 1.3.0 "arrivals", when a cycle takes an "order"): inlay profile stops before its first measurement when the agent lists
// them and lacks one it would ask for (profile.FieldTaker). Measurements
// run under Local's speed guard (profile.SlowRatio).
//
// POST /v1/measure takes a MeasureBody as application/json: the standalone
// ONNX model base64-encoded (standard encoding with padding, as
// encoding/json writes []byte) in "model", the inputs with their names,
// data types ("float32") and shapes, the processor (a name, or a kind
// meaning its fastest processor), backend and data type (empty: the
// processor's default), and the warm-up and timed repetition counts, and
// optionally "cold" (runs after evicting the caches), "idle" (runs after
// evicting them and idling; an agent older than this field answers 400
// for it: profile such a device with --idle 0) and "corun" (co-run
// conditions). It answers a TimingBody: median, p90, min, max and standard
// deviation in nanoseconds and the number of timed runs, with cold_ns and
// cold_reps, idle_ns and idle_reps, and the co-run timings when asked for.
//
// POST /v1/run (only when the agent has an Executor) takes a RunBody: a
// workload file's text, the ONNX files it names keyed by the relative path
// written in it (base64; "cache:" models are the device's own), a plan
// file's text and the duration, rate scale and seed. The agent writes them
// into a temporary folder, loads the workload, runs the plan with package
// runtime on its own processors and answers the runtime.Result as JSON
// (durations in nanoseconds), with the simulator's predictions made on the
// agent. A run holds the device like a measurement does: they never
// overlap. Errors as above: invalid (422) for a workload, file or plan that
// does not load, measure_failed (422) for a run that fails.
//
// POST /v1/handoff (only when the agent has a HandOffProber; inlay agent
// always has one) takes a HandOffBody: no_pin (measure with the runtime's
// workers unpinned, as inlay run --no-pin runs), duration_ms (each of the
// probe's runs; 0 or absent: runtime.DefaultProbeDuration, at most the
// run limit) and procs (the two processors to hand off between; absent:
// the device's first two that run ort-cpu). The agent runs
// runtime.ProbeHandOff on its own processors, the hand-off probe inlay
// profile runs on this machine, and answers a HandOffAnswerBody: the
// median hand-off on one processor (same_ns) and between the two
// (cross_ns), the samples and the processors, whether the workers were
// pinned, and (from 1.4.0) the probe runs' median delays from a
// request's arrival to its first subgraph's start, with the event loop
// sleeping to its arrivals and polling for them (sleep_start_ns,
// poll_start_ns, over sleep_requests and poll_requests;
// runtime.StartDelays), which a run's prediction adds, and (from 1.5.0)
// the hand-off between the two by how long the subgraph before it ran
// (cross_after: after_ns, gap_ns, samples per point, ascending in
// after_ns; runtime.HandOffProbe.CrossAfter), which the simulator prices
// each hand-off between processors with. inlay profile --agent stores both pinnings for the device,
// as it does locally. A probe holds the device like a measurement does.
// Errors: invalid (422) for a duration out of range or processors that are
// not two distinct ort-cpu processors of the device, no_probe_pair (422)
// for a device without two, measure_failed (422) for a probe that fails.
//
// POST /v1/cycle (from 1.2.0, when the device is a profile.CycleMeasurer,
// as Local is; else 404) takes a CycleBody: a plan's subgraphs as steps,
// each a standalone model with its inputs and the processor (backend, data
// type) the plan put it on, the warm-up and timed round counts ("warmup",
// "cycles") and "period_ns" (a round starts every period, the rest idle;
// 0 or absent: back to back; at most 10 s). The device runs every step
// once per round, in order, each on its processor; from 1.3.0 "order"
// lists a round's runs instead ({"step": i, "at_ns": t}: step i, not
// before t after the round began; t does not decrease and is less than
// the period; every step at least once), as profile.PlanCycles lays out
// the workload's groups arriving at their rates. It answers a
// CycleTimingBody: each step's median over its timed runs in
// nanoseconds, in step order (profile's cycle figure).
// Every step is checked as a measure request is; errors name the step
// ("steps[1]: unknown processor ..."): bad_request (400), invalid (422),
// measure_failed (422) for a cycle that fails. inlay profile notes an
// agent without the endpoint and keeps the cold figures. A cycle holds the
// device like a measurement does.
//
// # Serving
//
// Measurements, runs and hand-off probes take the device one at a time, in
// arrival order, so that they never disturb each other; requests beyond the
// queue limit are refused with 503, and a request whose client goes away
// leaves the queue.
// Serve adds read timeouts (headers and body), an idle timeout and a
// graceful shutdown: when its context ends it stops accepting, lets running
// measurements finish for a grace period, then cancels them.
//
// Errors start with "agent: ".
package agent
