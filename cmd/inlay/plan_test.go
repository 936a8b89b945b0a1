package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/testfile"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/solver/solvertest"
)

const planTestWorkload = `platform: phone
models:
  - {name: face, zoo: mobilenet_v2}
  - {name: det, zoo: efficientnet_b0}
groups:
  - {name: camera, models: [face, det], after: {det: [face]}, period_ms: 100}
`

func TestPlanCommand(t *testing.T) {
	dir := t.TempDir()
	wl := testfile.Write(t, dir, "w.yaml", planTestWorkload)
	for _, planner := range []string{"single:npu", "bestmap", "heft"} {
		t.Run(planner, func(t *testing.T) {
			planFile := filepath.Join(dir, strings.ReplaceAll(planner, ":", "_")+".yaml")
			out, err := runInlayStdout(t, "plan", wl, "--planner", planner, "-o", planFile, "--json")
			if err != nil {
				t.Fatal(err)
			}
			var j struct {
				Planner         string   `json:"planner"`
				MaxRateScale    float64  `json:"max_rate_scale"`
				UpperBoundScale *float64 `json:"upper_bound_scale"`
				SearchSeconds   *float64 `json:"search_seconds"`
				Feasible        bool     `json:"feasible"`
				Groups          []struct {
					Name   string  `json:"name"`
					RateHz float64 `json:"rate_hz"`
					P99Ms  float64 `json:"p99_ms"`
				} `json:"groups"`
			}
			if err := json.Unmarshal([]byte(out), &j); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if j.Planner != planner || j.SearchSeconds == nil || j.UpperBoundScale == nil || len(j.Groups) != 1 || j.Groups[0].Name != "camera" {
				t.Fatalf("unexpected JSON:\n%s", out)
			}
			if !j.Feasible || j.MaxRateScale < 1 || j.MaxRateScale > *j.UpperBoundScale*(1+1e-9) {
				t.Errorf("scale %v, bound %v, feasible %v", j.MaxRateScale, *j.UpperBoundScale, j.Feasible)
			}
			if g := j.Groups[0]; g.RateHz < 10*j.MaxRateScale*0.99 || g.P99Ms <= 0 || g.P99Ms > 100 {
				t.Errorf("group %+v at scale %v", g, j.MaxRateScale)
			}
			p, err := plan.Load(planFile)
			if err != nil {
				t.Fatal(err)
			}
			if p.Planner != planner || len(p.Models) != 2 {
				t.Errorf("saved plan %+v", p)
			}
		})
	}
}

func TestPlanText(t *testing.T) {
	dir := t.TempDir()
	wl := testfile.Write(t, dir, "w.yaml", planTestWorkload)
	gantt, trace := filepath.Join(dir, "g.svg"), filepath.Join(dir, "t.json")
	out, err := runInlayStdout(t, "plan", wl, "--planner", "bestmap", "--platform", "desktop", "--gantt", gantt, "--trace", trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"platform  desktop", "planner   bestmap", "camera", "planned in"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{gantt, trace} {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

// TestPlanInfeasible: a deadline no processor can meet is a result, not an
// error.
func TestPlanInfeasible(t *testing.T) {
	dir := t.TempDir()
	wl := testfile.Write(t, dir, "w.yaml", `platform: phone
models: [{name: big, zoo: resnet50}]
groups: [{name: g, models: [big], rate_hz: 10, deadline_ms: 0.01}]
`)
	out, err := runInlayStdout(t, "plan", wl, "--planner", "heft")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "infeasible") {
		t.Errorf("no infeasible verdict:\n%s", out)
	}
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	wl := testfile.Write(t, dir, "w.yaml", planTestWorkload)
	noPlat := testfile.Write(t, dir, "np.yaml", strings.Replace(planTestWorkload, "platform: phone\n", "", 1))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"plan", wl, "--planner", "magic"}, `unknown planner "magic"`},
		{[]string{"plan", wl, "--planner", "single:tpu"}, `no processor or processor kind "tpu"`},
		{[]string{"plan", wl, "--platform", "mars"}, "mars"},
		{[]string{"plan", filepath.Join(dir, "none.yaml")}, "no such file"},
		{[]string{"plan"}, "want one workload file"},
		{[]string{"plan", wl, "--dag", "x.json"}, "not both"},
		{[]string{"plan", wl, "-o", filepath.Join(dir, "p.txt")}, "unknown extension"},
	}
	for _, tc := range tests {
		_, err := runInlayStdout(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
	// A workload that names no platform is planned on the default one.
	out, err := runInlayStdout(t, "plan", noPlat, "--planner", "bestmap", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"platform": "`+hw.DefaultPlatform+`"`) {
		t.Errorf("no platform: not planned on %s:\n%.300s", hw.DefaultPlatform, out)
	}
}

func TestPlanDAG(t *testing.T) {
	dir := t.TempDir()
	path := "../../examples/topcuoglu-dag.json" // Topcuoglu et al. 2002
	out, err := runInlayStdout(t, "plan", "--dag", path, "--planner", "heft", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Makespan float64 `json:"makespan"`
		Tasks    []struct {
			Name, Processor string
			Start, Finish   float64
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Makespan != 80 || len(r.Tasks) != 10 || r.Tasks[0].Processor != "P3" || r.Tasks[9].Finish != 80 {
		t.Errorf("got %+v", r)
	}
	text, err := runInlayStdout(t, "plan", "--dag", path, "--planner", "heft")
	if err != nil || !strings.Contains(text, "makespan 80") {
		t.Errorf("text output %q, %v", text, err)
	}
	// The default planner (inlay) never does worse than HEFT; on this graph
	// its local search finds 73, the optimum (search/milp proves it).
	out, err = runInlayStdout(t, "plan", "--dag", path, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Makespan > 80 || len(r.Tasks) != 10 {
		t.Errorf("default planner: got %+v", r)
	}
	bad := testfile.Write(t, dir, "bad.json", `{"processors": ["A"], "tasks": [{"name": "a", "cost": [1, 2]}]}`)
	if _, err := runInlayStdout(t, "plan", "--dag", bad); err == nil || !strings.Contains(err.Error(), `bad.json: task "a": cost has 2 entries, want 1`) {
		t.Errorf("bad DAG: %v", err)
	}
	if _, err := runInlayStdout(t, "plan", "--dag", path, "--planner", "bestmap"); err == nil {
		t.Error("bestmap accepted for a task graph")
	}
}

// TestOutputsCheckedFirst checks that a bad output path fails before the
// search: with an hour's budget, a check after it would time the test out.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	wl := testfile.Write(t, dir, "w.yaml", planTestWorkload)
	missing := filepath.Join(dir, "no-such-folder")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", filepath.Join(dir, "p.txt")}, "unknown extension"},
		{[]string{"--gantt", filepath.Join(dir, "g.gif")}, "want a .svg or .png"},
		{[]string{"--trace", filepath.Join(dir, "t.txt")}, "want a .json"},
		{[]string{"-o", filepath.Join(missing, "p.yaml")}, "does not exist"},
		{[]string{"--gantt", filepath.Join(missing, "g.svg")}, "does not exist"},
		{[]string{"--trace", dir + "/"}, "want a .json"},
		{[]string{"-o", planWriteDir(t, dir, "d.yaml")}, "is a folder"},
	} {
		args := append([]string{"plan", wl, "--planner", "inlay", "--budget", "1h"}, tc.args...)
		_, err := runInlayStdout(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
	if _, err := runInlayStdout(t, "plan", "--dag", "../../examples/topcuoglu-dag.json", "-o", filepath.Join(dir, "p.yaml")); err == nil {
		t.Error("--dag with -o: no error")
	}
}

func planWriteDir(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanExplainAndProof(t *testing.T) {
	solvertest.RequireCBC(t)
	dir := t.TempDir()
	wl := testfile.Write(t, dir, "w.yaml", planTestWorkload)
	html := filepath.Join(dir, "report.html")
	out, err := runInlayStdout(t, "plan", wl, "--planner", "milp", "--budget", "4s", "--explain", "--json", "--html", html)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		MaxRateScale float64 `json:"max_rate_scale"`
		Proof        *struct {
			Status     string   `json:"status"`
			ScaleBound *float64 `json:"scale_bound"`
			ProvenGap  *float64 `json:"proven_gap"`
		} `json:"proof"`
		Explain *struct {
			Models []struct {
				Subgraphs []struct {
					Candidates []struct {
						Processor string                  `json:"processor"`
						Chosen    bool                    `json:"chosen"`
						Scores    []struct{ Name string } `json:"scores"`
					} `json:"candidates"`
				} `json:"subgraphs"`
			} `json:"models"`
		} `json:"explain"`
	}
	mustMatchOpenAPI(t, "Outcome", out)
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if j.Proof == nil || j.Proof.ScaleBound == nil || *j.Proof.ScaleBound < j.MaxRateScale*(1-1e-9) {
		t.Fatalf("proof %+v: want a bound at least the plan's scale %g", j.Proof, j.MaxRateScale)
	}
	if j.Explain == nil || len(j.Explain.Models) != 2 || len(j.Explain.Models[0].Subgraphs) == 0 {
		t.Fatalf("explain %+v", j.Explain)
	}
	chosen := 0
	for _, c := range j.Explain.Models[0].Subgraphs[0].Candidates {
		if c.Chosen {
			chosen++
			// The start plan's recorded figure, or the what-if's five.
			if len(c.Scores) != 1 && len(c.Scores) != 5 {
				t.Errorf("chosen candidate %s has scores %+v", c.Processor, c.Scores)
			}
		}
	}
	if chosen != 1 {
		t.Errorf("%d chosen candidates", chosen)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "max load") && !strings.Contains(string(page), "best scale") || !strings.Contains(string(page), "<svg") || !strings.Contains(string(page), "milp bound") {
		t.Errorf("HTML report lacks the explanation, chart or MILP bound (%v)", err)
	}
	text, err := runInlayStdout(t, "plan", wl, "--planner", "milp", "--budget", "4s", "--explain")
	if err != nil || !strings.Contains(text, "of optimal (proven)") || !strings.Contains(text, "milp bound") || !strings.Contains(text, "excluded by") {
		t.Errorf("text output lacks the proof or the explanation (%v):\n%s", err, text)
	}
}
