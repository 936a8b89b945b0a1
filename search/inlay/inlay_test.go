package inlay

import (
	"context"
	"math/rand"
	"testing"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/search/bestmap"
	"github.com/inlay-dev/inlay/search/heft"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
)

func scenario(t testing.TB, seed int64) (*workload.Workload, *hw.Platform, cost.Estimator) {
	t.Helper()
	pl := hwtest.Preset(t, "phone")
	w, err := workload.Scenario(rand.New(rand.NewSource(seed)), workload.ScenarioOptions{Networks: zoo.Names()}, zoo.Layers)
	if err != nil {
		t.Fatal(err)
	}
	return w, pl, cost.NewAnalytic(pl)
}

// TestDeterministic plans one random scenario twice with the same seed and
// evaluation budget and expects the same plan, valid on the platform.
func TestDeterministic(t *testing.T) {
	w, pl, est := scenario(t, 3)
	var keys []string
	for run := 0; run < 2; run++ {
		req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 7, Evals: 30, Workers: 2}
		p, err := New(Options{}).Plan(context.Background(), req, sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1}))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(w, pl); err != nil {
			t.Fatal(err)
		}
		b, _ := p.Encode(plan.Format("json"))
		keys = append(keys, string(b))
	}
	if keys[0] != keys[1] {
		t.Fatal("same seed and evaluation budget gave different plans")
	}
}

// TestPresets plans a small random scenario on every platform preset with a
// few evaluations and checks the plan is valid there and sustains a rate.
func TestPresets(t *testing.T) {
	for _, name := range hw.Presets() {
		t.Run(name, func(t *testing.T) {
			pl := hwtest.Preset(t, name)
			w, err := workload.Scenario(rand.New(rand.NewSource(5)), workload.ScenarioOptions{Networks: zoo.Names(), MaxModels: 4}, zoo.Layers)
			if err != nil {
				t.Fatal(err)
			}
			est := cost.NewAnalytic(pl)
			ev := sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1})
			req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Evals: 6, Workers: 2}
			p, err := New(Options{}).Plan(context.Background(), req, ev)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Validate(w, pl); err != nil {
				t.Fatal(err)
			}
			s, err := ev.Evaluate(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			// Where some plan sustains a rate, so must this one.
			b, err := ratebound.Upper(w, pl, est)
			if err != nil {
				t.Fatal(err)
			}
			if b.Scale > 0 && s.Scale <= 0 {
				t.Fatalf("plan sustains no rate (%s); bound %.3g", s.Reason, b.Scale)
			}
		})
	}
}

// TestBeatsSeeds plans a fixed nine-network scenario with HEFT as an extra
// seed and expects at least the best of HEFT and Best Mapping's scale (the
// seeds are scored first), and more than Best Mapping by a wide margin
// (price-directed balancing splits models over every processor).
func TestBeatsSeeds(t *testing.T) {
	w, pl, est := scenario(t, 1)
	ev := sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1})
	req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Evals: 16, Workers: 2}
	scale := func(p plan.Planner) float64 {
		t.Helper()
		pp, err := p.Plan(context.Background(), req, ev)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ev.Evaluate(context.Background(), pp)
		if err != nil {
			t.Fatal(err)
		}
		return s.Scale
	}
	hs, bs := scale(heft.Planner{}), scale(bestmap.Planner{})
	got := scale(New(Options{Seeds: []plan.Planner{heft.Planner{}}}))
	t.Logf("inlay %.3f, heft %.3f, bestmap %.3f", got, hs, bs)
	if got < hs || got < bs {
		t.Fatalf("inlay %.3f is worse than a seed (heft %.3f, bestmap %.3f)", got, hs, bs)
	}
	if got < 1.5*bs {
		t.Fatalf("inlay %.3f is not 1.5× Best Mapping (%.3f)", got, bs)
	}
}
