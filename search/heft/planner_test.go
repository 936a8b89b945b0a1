package heft

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/internal/fixture"
	"github.com/inlay-dev/inlay/workload"
)

func TestPlannerToy(t *testing.T) {
	w, err := fixture.Workload(3, false, "a")
	if err != nil {
		t.Fatal(err)
	}
	pl := fixture.Platform()
	// Layers 0-2 chain (Conv), 3 the side Gemm off layer 0, 4 the join.
	// NPU 1 ns a layer, CPU and GPU 10; free transfers. HEFT: 0 @0 npu,
	// 1 @1 npu, 3 @1 cpu (tie with gpu, lower ID), 2 @2 npu, 4 @11 npu.
	// In start order 0,1,3,2,4 the runs are {0,1} npu, {3} cpu, {2,4} npu.
	est := &fixture.Estimator{Platform: pl, PerLayer: []time.Duration{10, 10, 1}}
	got := planValid(t, w, pl, est)
	want := "0-1:npu/qnn-htp/int8 3:cpu/xnnpack/float32 2,4:npu/qnn-htp/int8"
	if s := fixture.Format(&got.Models[0]); s != want {
		t.Errorf("got %s, want %s", s, want)
	}
	// What HEFT weighed, as it placed each subgraph's first layer: layer
	// 0 finishes at 1 ns on the NPU, 10 elsewhere; the Gemm (3), ready at
	// 1, at 11 on the CPU and the GPU (the tie to the lower ID), and the
	// NPU cannot run it; layer 2, ready at 2, at 3 on the NPU, 12 on the
	// GPU and 21 on the CPU (busy with the Gemm until 11).
	type cand struct {
		chosen   bool
		filter   string
		finishNS float64
	}
	wantDec := map[string]map[string]cand{
		"0-1": {"npu": {true, "", 1}, "cpu": {false, "", 10}, "gpu": {false, "", 10}},
		"3":   {"npu": {false, plan.FilterSupport, 0}, "cpu": {true, "", 11}, "gpu": {false, "", 11}},
		"2,4": {"npu": {true, "", 3}, "cpu": {false, "", 21}, "gpu": {false, "", 12}},
	}
	if len(got.Decisions) != len(wantDec) {
		t.Fatalf("%d decisions, want %d", len(got.Decisions), len(wantDec))
	}
	for _, d := range got.Decisions {
		for _, c := range d.Candidates {
			w, ok := wantDec[d.Layers][c.Processor]
			if !ok {
				t.Errorf("decision [%s]: unexpected candidate %s", d.Layers, c.Processor)
				continue
			}
			finish := c.Score(plan.ScoreFinish) * 1e6 // ms to ns
			if c.Chosen != w.chosen || c.Filter != w.filter || w.filter == "" && math.Abs(finish-w.finishNS) > 1e-9 {
				t.Errorf("decision [%s] %s: chosen %v, filter %q, finish %v ns; want %v, %q, %v ns", d.Layers, c.Processor, c.Chosen, c.Filter, finish, w.chosen, w.filter, w.finishNS)
			}
		}
	}
	// Transfers of 100 ns: 3 goes to the CPU at 101-111; the join then
	// finishes at 121 on the CPU but only at 212 on the NPU (input from
	// the CPU arrives at 211), so it follows the Gemm.
	est.Link = 100
	got = planValid(t, w, pl, est)
	want = "0-2:npu/qnn-htp/int8 3-4:cpu/xnnpack/float32"
	if s := fixture.Format(&got.Models[0]); s != want {
		t.Errorf("with costly links: got %s, want %s", s, want)
	}
}

// TestPlannerAfter: a model that waits for another ranks below it, so the
// waited-for model gets the higher priority even when listed second.
func TestPlannerAfter(t *testing.T) {
	w, err := fixture.Workload(2, true, "first", "second")
	if err != nil {
		t.Fatal(err)
	}
	// List "second" first in the workload: priorities must still follow the DAG.
	w.Models[0], w.Models[1] = w.Models[1], w.Models[0]
	pl := fixture.Platform()
	est := &fixture.Estimator{Platform: pl, PerLayer: []time.Duration{10, 10, 1}}
	got := planValid(t, w, pl, est)
	if p := got.Model("first").Priority; p != 0 {
		t.Errorf("first has priority %d, want 0", p)
	}
	if p := got.Model("second").Priority; p != 1 {
		t.Errorf("second has priority %d, want 1", p)
	}
}

// planValid is HEFT's plan of w on pl, checked valid there.
func planValid(t *testing.T, w *workload.Workload, pl *hw.Platform, est cost.Estimator) *plan.Plan {
	t.Helper()
	got, err := Planner{}.Plan(context.Background(), &plan.Request{Workload: w, Platform: pl, Cost: est}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Validate(w, pl); err != nil {
		t.Fatal(err)
	}
	return got
}
