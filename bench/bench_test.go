package bench

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/hw/hwtest"
)

// TestRunSmall benches every planner on two small scenarios with a small
// evaluation budget and checks the report's structure and invariants: no
// planner beats the upper bound, and the summary covers every planner.
func TestRunSmall(t *testing.T) {
	pl := hwtest.Preset(t, "phone")
	planners := []string{"single:npu", "bestmap", "heft", "puzzle", "inlay"}
	rep, err := Run(context.Background(), Config{Platform: pl, Planners: planners, Scenarios: 2, Seed: 1, Evals: 24, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2", len(rep.Scenarios))
	}
	for _, sr := range rep.Scenarios {
		if len(sr.Results) != len(planners) {
			t.Fatalf("scenario %d: %d results", sr.Index, len(sr.Results))
		}
		for _, r := range sr.Results {
			t.Logf("scenario %d %-10s scale %.3f bound %.3f evals %d %.2fs %s", sr.Index, r.Planner, r.Scale, sr.UpperBound, r.Evals, r.SearchSeconds, r.Error)
			if r.Error != "" {
				t.Errorf("scenario %d %s: %s", sr.Index, r.Planner, r.Error)
			}
			if r.Scale > sr.UpperBound*(1+1e-9) || r.PoissonScale > sr.UpperBound*(1+1e-9) {
				t.Errorf("scenario %d %s: scale %.4f (Poisson %.4f) beats the bound %.4f", sr.Index, r.Planner, r.Scale, r.PoissonScale, sr.UpperBound)
			}
			if r.Scale > 0 && r.PoissonScale <= 0 {
				t.Errorf("scenario %d %s: no Poisson-judged scale", sr.Index, r.Planner)
			}
		}
		if !sr.BoundProven {
			t.Errorf("scenario %d: the analytic model's bound is not proven", sr.Index)
		}
	}
	if rep.PoissonSeed == rep.Seed {
		t.Error("the Poisson judge uses the planners' seed")
	}
	for _, name := range planners {
		if _, ok := rep.Summary[name]; !ok {
			t.Errorf("summary lacks %s", name)
		}
	}
}
