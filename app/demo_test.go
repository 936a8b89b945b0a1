package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The demo plans its stand-in scenario with every demo planner, saves each
// plan, picks the best and says why a plan sustains no rate at all.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	d, err := NewDemo(dir, "phone", true)
	if err != nil {
		t.Fatal(err)
	}
	if d.Real || len(d.Workload.Groups) != 2 {
		t.Fatalf("stand-in scenario: real %v, %d groups", d.Real, len(d.Workload.Groups))
	}
	var failed []string
	if err := d.Plan(context.Background(), DemoOptions{Budget: 50 * time.Millisecond, Seed: 1,
		Failed: func(name string, err error) { failed = append(failed, name+": "+err.Error()) }}); err != nil {
		t.Fatal(err)
	}
	if len(failed) > 0 || len(d.Rows) != len(DemoPlanners) {
		t.Fatalf("%d rows; failed: %v", len(d.Rows), failed)
	}
	if !d.Bound.Proven() || d.Bound.Scale <= 0 {
		t.Errorf("bound %+v", d.Bound)
	}
	for i, r := range d.Rows {
		if r.Name != DemoPlanners[i] || r.Subgraphs == 0 {
			t.Errorf("row %d: %+v", i, r)
		}
		if r.Scale > d.Rows[d.Best].Scale {
			t.Errorf("row %s sustains %g, more than the best %s's %g", r.Name, r.Scale, d.Rows[d.Best].Name, d.Rows[d.Best].Scale)
		}
		if (r.Scale <= 0) != (r.WhyZero != "") {
			t.Errorf("%s: scale %g, why zero %q", r.Name, r.Scale, r.WhyZero)
		}
		if _, err := os.Stat(filepath.Join(dir, "plan-"+strings.ReplaceAll(r.Name, ":", "-")+".yaml")); err != nil {
			t.Error(err)
		}
	}
	// Everything on the CPU misses the camera's deadline even alone.
	if cpu := d.Rows[1]; cpu.Scale != 0 || !strings.Contains(cpu.WhyZero, "camera takes") {
		t.Errorf("single:cpu: scale %g, why zero %q", cpu.Scale, cpu.WhyZero)
	}
	sust, res, err := d.Schedule(1)
	if err != nil || res == nil || sust.Scale != d.Rows[d.Best].Scale {
		t.Errorf("best plan's schedule: %+v, %v; want its scale %g", sust, err, d.Rows[d.Best].Scale)
	}
}

// PlanDAG schedules a task graph with a named planner and rejects one that
// does not schedule task graphs.
func TestPlanDAG(t *testing.T) {
	r, err := PlanDAG(context.Background(), "../examples/topcuoglu-dag.json", "heft", 0)
	if err != nil || r.Makespan != 80 {
		t.Fatalf("heft: %+v, %v; want makespan 80 (Topcuoglu et al.)", r, err)
	}
	if _, err := PlanDAG(context.Background(), "../examples/topcuoglu-dag.json", "bestmap", 0); err == nil || !strings.Contains(err.Error(), "heft, inlay, milp") {
		t.Errorf("bestmap: %v", err)
	}
}
