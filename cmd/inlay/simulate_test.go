package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/testfile"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/workload"
)

// simulateTestWorkload is planTestWorkload with a group whose deadline no
// plan meets.
const simulateTestWorkload = planTestWorkload + "  - {name: tight, models: [face], period_ms: 50, deadline_ms: 0.01}\n"

// simulateSetup writes a workload and its bestmap plan into dir.
func simulateSetup(t *testing.T, dir, text string) (wl, planFile string) {
	t.Helper()
	wl = testfile.Write(t, dir, "w.yaml", text)
	w, err := workload.Load(wl)
	if err != nil {
		t.Fatal(err)
	}
	pl := hwtest.Preset(t, "phone")
	pn, err := search.New("bestmap")
	if err != nil {
		t.Fatal(err)
	}
	p, err := pn.Plan(context.Background(), &plan.Request{Workload: w, Platform: pl, Cost: cost.NewAnalytic(pl), Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	planFile = filepath.Join(dir, "plan.yaml")
	if err := p.Save(planFile); err != nil {
		t.Fatal(err)
	}
	return wl, planFile
}

type simulateOut struct {
	Scale           float64  `json:"scale"`
	MaxRateScale    *float64 `json:"max_rate_scale"`
	Feasible        bool     `json:"feasible"`
	Limit           string   `json:"limit"`
	UpperBoundScale *float64 `json:"upper_bound_scale"`
	Groups          []struct {
		Name     string  `json:"name"`
		RateHz   float64 `json:"rate_hz"`
		P99MS    float64 `json:"p99_ms"`
		MissRate float64 `json:"miss_rate"`
		Requests int     `json:"requests"`
	} `json:"groups"`
	Processors []struct {
		Name        string  `json:"name"`
		Utilisation float64 `json:"utilisation"`
	} `json:"processors"`
}

func TestSimulateCommand(t *testing.T) {
	dir := t.TempDir()
	feasible := strings.Replace(simulateTestWorkload, "deadline_ms: 0.01", "deadline_ms: 50", 1)
	wl, planFile := simulateSetup(t, dir, feasible)
	gantt, trace := filepath.Join(dir, "g.svg"), filepath.Join(dir, "t.json")

	out, err := runInlay(t, "simulate", wl, "--plan", planFile, "--json", "--gantt", gantt, "--trace", trace)
	if err != nil {
		t.Fatal(err)
	}
	var j simulateOut
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if j.MaxRateScale == nil || *j.MaxRateScale <= 0 || !j.Feasible || j.UpperBoundScale == nil || *j.MaxRateScale > *j.UpperBoundScale {
		t.Fatalf("scale %v, bound %v, feasible %v: want 0 < scale ≤ bound", j.MaxRateScale, j.UpperBoundScale, j.Feasible)
	}
	if len(j.Groups) != 2 || j.Groups[0].Name != "camera" || j.Groups[0].Requests == 0 || len(j.Processors) != 5 {
		t.Fatalf("groups %+v processors %+v", j.Groups, j.Processors)
	}
	svg, err := os.ReadFile(gantt)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil || !bytes.Contains(svg, []byte("face")) {
		t.Errorf("gantt is not an SVG naming the models: %v", err)
	}
	var tr struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
	}
	if data, err := os.ReadFile(trace); err != nil || json.Unmarshal(data, &tr) != nil || len(tr.TraceEvents) == 0 {
		t.Errorf("trace: %v, %d events", err, len(tr.TraceEvents))
	}

	// A fixed scale, as text.
	out, err = runInlay(t, "simulate", wl, "--plan", planFile, "--scale", "0.5")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"camera", "tight", "npu", "scale"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateInfeasible(t *testing.T) {
	dir := t.TempDir()
	wl, planFile := simulateSetup(t, dir, simulateTestWorkload)
	out, err := runInlay(t, "simulate", wl, "--plan", planFile)
	if err != nil {
		t.Fatalf("an infeasible plan is a result, not an error: %v", err)
	}
	if !strings.Contains(out, "infeasible") || !strings.Contains(out, `group "tight"`) {
		t.Errorf("output does not explain the infeasibility:\n%s", out)
	}
	out, err = runInlay(t, "simulate", wl, "--plan", planFile, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var j simulateOut
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if j.MaxRateScale == nil || *j.MaxRateScale != 0 || j.Feasible || j.UpperBoundScale == nil || *j.UpperBoundScale != 0 {
		t.Errorf("infeasible json: %+v", j)
	}
}

func TestSimulateErrors(t *testing.T) {
	dir := t.TempDir()
	wl, planFile := simulateSetup(t, dir, simulateTestWorkload)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{wl}, `"plan" not set`},
		{[]string{wl, "--plan", filepath.Join(dir, "none.yaml")}, "none.yaml"},
		{[]string{wl, "--plan", planFile, "--scale", "-1"}, "--scale -1 must be positive"},
		{[]string{wl, "--plan", planFile, "--gantt", filepath.Join(dir, "g.gif")}, "want a .svg or .png"},
		{[]string{wl, "--plan", planFile, "--platform", "toaster"}, "toaster"},
	} {
		if _, err := runInlay(t, append([]string{"simulate"}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("simulate %v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
