package sim

import (
	"math"
	"math/rand"
	"testing"
)

// TestBoundProperty: over random instances and random plans, no plan's
// simulated max sustainable scale exceeds the upper bound, and an randInstance
// the bound calls infeasible has no feasible plan.
func TestBoundProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	instances, plansPer := 60, 4
	if testing.Short() {
		instances = 15
	}
	var ratios []float64
	zeros := 0
	for i := 0; i < instances; i++ {
		in := randomInstance(rng)
		b, err := UpperBound(in.w, in.pl, in.est)
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		if b.PeakFallback {
			t.Fatalf("instance %d: the test estimator's LayerLowerBound was not used", i)
		}
		for k := 0; k < plansPer; k++ {
			p := in.randomPlan(rng)
			prog, err := Compile(in.w, in.pl, in.est, p)
			if err != nil {
				t.Fatalf("instance %d plan %d: %v", i, k, err)
			}
			lim, _ := LoadLimit(prog.Program)
			s, res, err := MaxSustainableScale(prog, Options{Seed: int64(k), NoSpans: true})
			if err != nil {
				t.Fatalf("instance %d plan %d: %v", i, k, err)
			}
			if s > b.Scale*(1+1e-9) || (b.Scale > 0 && lim > b.Scale*(1+1e-9)) {
				t.Fatalf("instance %d plan %d: simulated scale %v (load limit %v) exceeds the bound %v (%s)",
					i, k, s, lim, b.Scale, b.Why)
			}
			if b.Scale == 0 && s != 0 {
				t.Fatalf("instance %d plan %d: bound says infeasible (%s) but the plan sustains %v", i, k, b.Why, s)
			}
			for gi, g := range res.Groups {
				if g.Completed > 0 && g.P50 < b.CriticalPaths[gi] {
					t.Fatalf("instance %d plan %d: group %s latency %v below its critical-path bound %v",
						i, k, g.Name, g.P50, b.CriticalPaths[gi])
				}
			}
			if b.Scale > 0 && !math.IsInf(b.Scale, 1) {
				ratios = append(ratios, s/b.Scale)
			} else {
				zeros++
			}
		}
	}
	best := 0.0
	for _, r := range ratios {
		best = math.Max(best, r)
	}
	t.Logf("%d plans: %d against infeasible bounds; best simulated/bound ratio %.3f", len(ratios)+zeros, zeros, best)
}
