package profile

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/plan"
)

// TestCorunEndToEnd profiles a two-subgraph plan of a small real model on
// two host cores with co-run: each subgraph is timed beside the streaming
// kernel at every intensity and beside the other, the profile is stored,
// and the measured estimator answers Load with its fitted sensitivity.
func TestCorunEndToEnd(t *testing.T) {
	w := melWorkload(t)
	pl, err := hw.Host([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	lg := w.Models[0].Layers
	n := len(lg.Layers)
	p := &plan.Plan{Planner: "test", Models: []plan.ModelPlan{{Model: "mel", Subgraphs: []plan.Subgraph{
		{Layers: graph.Range(0, n/2), Processor: "cpu0", Backend: "ort-cpu", DType: "float32"},
		{Layers: graph.Range(n/2, n), Processor: "cpu1", Backend: "ort-cpu", DType: "float32"},
	}}}}
	jobs, err := Jobs(w, pl, JobOptions{Plans: []*plan.Plan{p}})
	if err != nil {
		t.Fatal(err)
	}
	var planJobs []Job
	for _, j := range jobs {
		if j.Kind == KindPlan {
			planJobs = append(planJobs, j)
		}
	}
	if len(planJobs) != 2 {
		t.Fatalf("%d plan jobs, want 2", len(planJobs))
	}
	// The second half is measured on cpu0 (its twin); its neighbour, the
	// first half planned on cpu0, then runs on cpu1.
	if b := planJobs[1].Beside["cpu1"]; len(b) != 1 || b[0].Set.Key() != graph.Range(0, n/2).Key() {
		t.Fatalf("second subgraph's neighbours: %+v", planJobs[1].Beside)
	}
	conds, err := corunConditions(pl, planJobs[0], "cpu0")
	if err != nil || len(conds) != len(CorunDuties)+1 {
		t.Fatalf("%d conditions (%v), want %d streams and the real neighbour", len(conds), err, len(CorunDuties))
	}
	dev, err := NewLocal(assets.ORTLibrary(), pl)
	if err != nil {
		t.Fatal(err)
	}
	st := tempStore(t)
	prof := &Profiler{Device: dev, Store: st, Warmup: 1, Reps: 3, Corun: true}
	sum, err := prof.Run(context.Background(), pl, planJobs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Coruns != 2 {
		t.Fatalf("stored %d co-run profiles, want 2 (%+v)", sum.Coruns, sum)
	}
	cs, err := st.Coruns(sum.Device)
	if err != nil || len(cs) != 2 {
		t.Fatalf("co-runs %v, %v", cs, err)
	}
	for _, c := range cs {
		streams := 0
		for _, pt := range c.Points {
			if pt.GBs > 0 {
				streams++
			}
		}
		if streams != len(CorunDuties) || c.Real <= 0 || c.Alone <= 0 || c.K < 0 || c.K > hw.MaxContentionSensitivity {
			t.Errorf("co-run profile %+v", c)
		}
		t.Logf("%s [%s]: alone %v, points %+v, k %.3f, beside %s %.2fx (predicted %.2fx)", c.ModelName, c.Layers, c.Alone, c.Points, c.K, c.Neighbours, c.Real, c.Predicted)
	}
	// Asked again, nothing is measured: the store has both profiles.
	again, err := prof.Run(context.Background(), pl, planJobs)
	if err != nil || again.Skipped != 2 {
		t.Errorf("second run: %+v, %v", again, err)
	}
}
