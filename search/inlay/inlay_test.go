package inlay

import (
	"context"
	"math/rand"
	"testing"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
)

func scenario(t testing.TB, seed int64) (*workload.Workload, *hw.Platform, cost.Estimator) {
	t.Helper()
	pl, err := hw.Preset("phone")
	if err != nil {
		t.Fatal(err)
	}
	build := func(name string) (*graph.Model, *graph.LayerGraph, error) {
		m, err := zoo.Build(name)
		if err != nil {
			return nil, nil, err
		}
		lg, err := graph.BuildLayers(m)
		return m, lg, err
	}
	w, err := workload.Scenario(rand.New(rand.NewSource(seed)), workload.ScenarioOptions{Networks: zoo.Names()}, build)
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
