package main

import (
	"testing"

	"github.com/inlay-dev/inlay/internal/clischema"
	"github.com/inlay-dev/inlay/internal/openapi"
	"github.com/inlay-dev/inlay/serve"
)

// jsonSchemas is the schema of serve/openapi.yaml each command's --json
// prints, by the command's path under inlay-scheduler. The tests that
// check the output against it: cluster/kube/perf's
// TestResultMatchesOpenAPI (bench) and cluster/sim's
// TestOutcomeMatchesOpenAPI (replay, sim.Outcome with its speedup).
var jsonSchemas = map[string][]string{
	"bench":  {"SchedulerBench"},
	"replay": {"ClusterOutcome"},
}

// TestEveryJSONCommandHasASchema: every inlay-scheduler command with a
// --json flag is in jsonSchemas, and its schemas are in
// serve/openapi.yaml.
func TestEveryJSONCommandHasASchema(t *testing.T) {
	doc, err := openapi.Load(serve.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	clischema.Check(t, newRootCmd(), doc, jsonSchemas)
}
