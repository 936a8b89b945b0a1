package main

import (
	"path/filepath"
	"testing"

	"github.com/inlay-dev/inlay/internal/openapi"
	"github.com/inlay-dev/inlay/internal/testfile"
	"github.com/inlay-dev/inlay/serve"
)

// mustMatchOpenAPI checks a command's --json output against the schema
// serve/openapi.yaml gives the resource, the one description the CLI, the
// web API and the agent share.
func mustMatchOpenAPI(t *testing.T, schema, out string) {
	t.Helper()
	doc, err := openapi.Load(serve.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(schema, []byte(out)); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
}

// TestJSONMatchesOpenAPI checks plan --json and simulate --json (at the
// max sustainable scale and at a given one) against the Outcome schema.
// run --json and agent run --json are checked against RunResult in their
// own tests (TestRunCommand, TestAgentCommandServes), plan --json with a
// proof and an explanation in TestPlanExplainAndProof.
func TestJSONMatchesOpenAPI(t *testing.T) {
	dir := t.TempDir()
	wl := testfile.Write(t, dir, "w.yaml", planTestWorkload)
	planFile := filepath.Join(dir, "plan.yaml")
	out, err := runInlayStdout(t, "plan", wl, "--planner", "heft", "--json", "-o", planFile)
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	mustMatchOpenAPI(t, "Outcome", out)
	for _, args := range [][]string{
		{"simulate", wl, "--plan", planFile, "--json"},
		{"simulate", wl, "--plan", planFile, "--json", "--scale", "0.5"},
	} {
		out, err := runInlayStdout(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		mustMatchOpenAPI(t, "Outcome", out)
	}
}
