package main

import (
	"path/filepath"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/clischema"
	"github.com/inlay-dev/inlay/internal/openapi"
	"github.com/inlay-dev/inlay/internal/testfile"
	"github.com/inlay-dev/inlay/serve"
)

// jsonSchemas is the schema of serve/openapi.yaml each command's --json
// prints, by the command's path under inlay, and the tests that check
// the output against it.
var jsonSchemas = map[string]struct {
	schemas []string
	tests   string
}{
	"agent run":        {[]string{"RunResult"}, "TestAgentCommandServes"},
	"bench":            {[]string{"BenchReport"}, "TestJSONMatchesOpenAPI"},
	"cluster bench":    {[]string{"ClusterBench", "SiaBench"}, "TestJSONMatchesOpenAPI, TestClusterBenchTrace"},
	"cluster simulate": {[]string{"ClusterOutcome"}, "TestClusterGenerateSimulateJSON"},
	"inspect":          {[]string{"ModelSummary"}, "TestJSONMatchesOpenAPI, TestInspectSymbolic"},
	"plan":             {[]string{"Outcome", "DAGResult"}, "TestJSONMatchesOpenAPI, TestPlanExplainAndProof"},
	"run":              {[]string{"RunResult"}, "TestRunCommand"},
	"simulate":         {[]string{"Outcome"}, "TestJSONMatchesOpenAPI"},
	"train bench":      {[]string{"TrainBench"}, "TestJSONMatchesOpenAPI"},
	"train calibrate":  {[]string{"TrainCalibration"}, "TestTrainCalibrateJSON"},
	"train memory":     {[]string{"TrainMemory"}, "TestJSONMatchesOpenAPI"},
	"train models":     {[]string{"TrainModels"}, "TestJSONMatchesOpenAPI"},
	"train plan":       {[]string{"TrainPlanFile"}, "TestTrainPlanJSONRoundTrip"},
	"train simulate":   {[]string{"TrainResult"}, "TestTrainSimulateCLI"},
}

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

// TestEveryJSONCommandHasASchema: every command with a --json flag is in
// jsonSchemas, and its schemas are in serve/openapi.yaml, so a new
// command's output cannot go undescribed.
func TestEveryJSONCommandHasASchema(t *testing.T) {
	doc, err := openapi.Load(serve.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string][]string{}
	for path, js := range jsonSchemas {
		schemas[path] = js.schemas
	}
	clischema.Check(t, newRootCmd(), doc, schemas)
}

// TestJSONMatchesOpenAPI checks the --json output of the commands whose
// own tests do not (jsonSchemas says which test checks which) against
// serve/openapi.yaml: plan and simulate (at the max sustainable scale and
// at a given one), plan --dag, bench, inspect, cluster bench and the
// train commands.
func TestJSONMatchesOpenAPI(t *testing.T) {
	dir := t.TempDir()
	wl := testfile.Write(t, dir, "w.yaml", planTestWorkload)
	planFile := filepath.Join(dir, "plan.yaml")
	out, err := runInlayStdout(t, "plan", wl, "--planner", "heft", "--json", "-o", planFile)
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	mustMatchOpenAPI(t, "Outcome", out)
	for _, tc := range []struct {
		schema string
		args   []string
	}{
		{"Outcome", []string{"simulate", wl, "--plan", planFile, "--json"}},
		{"Outcome", []string{"simulate", wl, "--plan", planFile, "--json", "--scale", "0.5"}},
		{"DAGResult", []string{"plan", "--dag", "../../examples/topcuoglu-dag.json", "--planner", "heft", "--json"}},
		{"BenchReport", []string{"bench", "--scenarios", "2", "--evals", "40", "--workers", "1", "--planners", "single:npu,bestmap,heft,inlay", "--json"}},
		{"ModelSummary", []string{"inspect", "mobilenet_v2", "--json"}},
		{"ClusterBench", []string{"cluster", "bench", "--experiments", "single", "--policies", "fifo", "--seeds", "0", "--window", "0:29", "--tail-hours", "5", "--json"}},
		{"TrainModels", []string{"train", "models", "--json"}},
		{"TrainMemory", []string{"train", "memory", "--model", "opt-350m", "--gpus", "8xA100-40", "--tp", "2", "--pp", "2", "--dp", "2", "--json"}},
		{"TrainBench", []string{"train", "bench", "--only", "opt-350m 32xA100-40,32xV100-16", "--planners", "inlay", "--baseline-budget", "100ms", "--json"}},
	} {
		out, err := runInlayStdout(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, out)
		}
		mustMatchOpenAPI(t, tc.schema, out)
	}
}

// TestTrainCalibrateJSON checks train calibrate --json against its schema
// on Megatron-LM's published table.
func TestTrainCalibrateJSON(t *testing.T) {
	table := assets.RequireTraining(t, "megatron_sc21_table1.csv")
	out, err := runInlayStdout(t, "train", "calibrate", "--published", table, "--evals", "200", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	mustMatchOpenAPI(t, "TrainCalibration", out)
}
