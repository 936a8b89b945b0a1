// Package app holds inlay's use cases as library functions: evaluate a
// plan (plan → validate → simulate → bound → explain), the
// device-in-the-loop profile loop, a run session on this machine, and the
// bench's configuration. Each takes typed inputs and returns typed
// results; none prints. The CLI (cmd/inlay), the web API (serve) and the
// agent parse their input, call these and render what comes back.
//
// The result types here (Outcome, Group, Processor, RunResult) are the one
// schema of a plan's outcome and of a run: inlay plan --json, simulate
// --json, run --json, agent run --json and the web API's answers are
// these types, described once in serve/openapi.yaml.
package app
