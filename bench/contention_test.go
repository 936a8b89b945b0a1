package bench

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/workload"
)

// TestContentionAwarePlanning benches examples/phone-zoo.yaml on the phone
// (every engine on one LPDDR channel, the CPU clusters on one L3) with the
// inlay planner scoring plans with the contended simulator and, as
// inlay+blind, without it. Judged with the contention model, the aware
// plan of every repeat must be no worse than the blind plan of the same
// seed on the planners' own periodic arrivals, and better in the median:
// equal medians would mean the blind entry is not blind (or the contention
// model is not in the judge). The unseen Poisson judge is logged.
func TestContentionAwarePlanning(t *testing.T) {
	pl := hwtest.Preset(t, "phone")
	w, err := workload.Load("../examples/phone-zoo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Platform: pl, Planners: []string{"inlay", "inlay" + BlindSuffix},
		Workloads: []*workload.Workload{w}, Seed: 1, Evals: 20, Workers: 1, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	aware, blind := rep.Scenarios[0].Results[0], rep.Scenarios[0].Results[1]
	for _, r := range []PlannerResult{aware, blind} {
		if r.Error != "" {
			t.Fatalf("%s: %s", r.Planner, r.Error)
		}
		t.Logf("%-11s scale %.3f (repeats %v), Poisson judge %.3f, %d evaluations", r.Planner, r.Scale, r.Repeats, r.PoissonScale, r.Evals)
	}
	for i := range aware.Repeats {
		if aware.Repeats[i] < blind.Repeats[i] {
			t.Errorf("repeat %d: the contention-aware plan sustains %.4f, the blind one %.4f", i, aware.Repeats[i], blind.Repeats[i])
		}
	}
	if aware.Scale <= blind.Scale {
		t.Errorf("median scale: aware %.4f, blind %.4f: contention-aware scoring gained nothing", aware.Scale, blind.Scale)
	}
	// The Poisson judge is reported, not required: it is the check for a
	// planner that overfits its periodic evaluator, and on the refitted
	// phone preset (0b85982) the aware plan at 20 evaluations does drop
	// below the blind one there (6.45 against 7.30), while it wins on the
	// periodic judge it was searched for; docs/results/contention.md gives both.
	t.Logf("Poisson judge: aware %.3f, blind %.3f (%.2fx)", aware.PoissonScale, blind.PoissonScale, aware.PoissonScale/blind.PoissonScale)
	// Reported, so it must be a figure: a positive scale within the bound.
	for _, r := range []PlannerResult{aware, blind} {
		if !(r.PoissonScale > 0) || r.PoissonScale > rep.Scenarios[0].UpperBound*(1+1e-9) {
			t.Errorf("%s: Poisson judge %.4f, want a positive scale within the bound %.4f", r.Planner, r.PoissonScale, rep.Scenarios[0].UpperBound)
		}
	}
}
