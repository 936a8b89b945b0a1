package search

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/internal/fixture"
	"github.com/inlay-dev/inlay/sim"
)

// Memory capacities bind the heuristic planners: two fixture models of six
// layers (1 MiB of float32 weights each, so 3 MiB in float16) are fastest
// on the gpu, whose memory_mib (3 MiB) holds one model in float16 but not both.
// Without the capacity every planner below keeps more than that on the gpu
// (so the capacity binds); with it, each plan keeps within it and passes
// plan validation.
func TestPlannersKeepMemoryCapacity(t *testing.T) {
	const mib = 1 << 20
	const capacity = 3 * mib
	for _, name := range []string{"bestmap", "inlay", "puzzle"} {
		t.Run(name, func(t *testing.T) {
			for _, limited := range []bool{false, true} {
				w, err := fixture.Workload(4, false, "a", "b")
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range w.Models {
					for l := range m.Layers.Layers {
						m.Layers.Layers[l].Work.WeightBytes, m.Layers.Layers[l].Work.DType = mib, graph.Float32
					}
				}
				pl := fixture.Platform()
				if limited {
					pl.Processors[1].MemoryBytes = capacity
				}
				est := &fixture.Estimator{Platform: pl, PerLayer: []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond},
					Overhead: 100 * time.Microsecond, Link: 200 * time.Microsecond}
				p, err := New(name)
				if err != nil {
					t.Fatal(err)
				}
				req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Evals: 300, Workers: 1}
				out, err := p.Plan(context.Background(), req, sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1}))
				if err != nil {
					t.Fatal(err)
				}
				use, err := out.WeightBytes(w, pl)
				if err != nil {
					t.Fatal(err)
				}
				err = out.Validate(w, pl)
				switch {
				case !limited && use[1] <= capacity:
					t.Fatalf("without a capacity the plan keeps %.1f MiB on the gpu: the test's capacity would not bind", float64(use[1])/mib)
				case limited && err != nil:
					t.Errorf("plan over the capacity: %v", err)
				case limited && use[1] > capacity:
					t.Errorf("%.1f MiB on the gpu, over its %d MiB", float64(use[1])/mib, capacity/mib)
				}
			}
		})
	}
}

// A plan over a capacity that the platform states names it in its score's
// reason (the driver scores it 0 without simulating it).
func TestPlannerOverCapacityReason(t *testing.T) {
	w, err := fixture.Workload(2, false, "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range w.Models {
		for l := range m.Layers.Layers {
			m.Layers.Layers[l].Work.WeightBytes, m.Layers.Layers[l].Work.DType = 1<<20, graph.Float32
		}
	}
	pl := fixture.Platform()
	for _, p := range pl.Processors {
		p.MemoryBytes = 200 << 10 // no processor holds a layer, even in int8
	}
	est := &fixture.Estimator{Platform: pl, PerLayer: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}}
	var last plan.Progress
	req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Evals: 20, Workers: 1, Progress: func(pr plan.Progress) { last = pr }}
	p, err := New("inlay")
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Plan(context.Background(), req, sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Validate(w, pl); err == nil {
		t.Fatal("a plan within capacities that hold no model")
	}
	if last.Best.Scale != 0 || !strings.Contains(last.Best.Reason, "memory capacity of processor") {
		t.Errorf("best score %+v, want 0 with the memory capacity named", last.Best)
	}
}
