package heft

import (
	"context"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/internal/fixture"
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
	got, err := Planner{}.Plan(context.Background(), &plan.Request{Workload: w, Platform: pl, Cost: est}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Validate(w, pl); err != nil {
		t.Fatal(err)
	}
	want := "0-1:npu/qnn-htp/int8 3:cpu/xnnpack/float32 2,4:npu/qnn-htp/int8"
	if s := fixture.Format(&got.Models[0]); s != want {
		t.Errorf("got %s, want %s", s, want)
	}
	// Transfers of 100 ns: 3 goes to the CPU at 101-111; the join then
	// finishes at 121 on the CPU but only at 212 on the NPU (input from
	// the CPU arrives at 211), so it follows the Gemm.
	est.Link = 100
	got, err = Planner{}.Plan(context.Background(), &plan.Request{Workload: w, Platform: pl, Cost: est}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Validate(w, pl); err != nil {
		t.Fatal(err)
	}
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
	got, err := Planner{}.Plan(context.Background(), &plan.Request{Workload: w, Platform: pl, Cost: est}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Validate(w, pl); err != nil {
		t.Fatal(err)
	}
	if p := got.Model("first").Priority; p != 0 {
		t.Errorf("first has priority %d, want 0", p)
	}
	if p := got.Model("second").Priority; p != 1 {
		t.Errorf("second has priority %d, want 1", p)
	}
}
