package bench

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/cluster/internal/clustertest"
	"github.com/inlay-dev/inlay/solver/solvertest"
)

func TestSmallBench(t *testing.T) {
	solvertest.RequireCBC(t)
	c, tb := clustertest.Gavel108(t)
	cfg := Config{
		Cluster: c, Table: tb, Policies: []string{"las", "inlay"}, StaticPolicies: []string{"gandiva", "inlay-makespan"},
		Seeds: []uint64{0, 1}, SingleRates: []float64{20}, StaticJobs: 30, Window: [2]int{20, 59}, TailHours: 2, Workers: 2,
	}
	rep, err := Bench(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 4 || len(rep.Bounds) != 2 || len(rep.JCTBounds) != 2 {
		t.Fatalf("%d rows, %d bounds, %d JCT bounds", len(rep.Rows), len(rep.Bounds), len(rep.JCTBounds))
	}
	for _, r := range rep.Rows {
		if len(r.PerSeed) != 2 || r.Failed > 0 {
			t.Errorf("row %+v", r)
		}
		if r.Experiment == Single {
			for _, b := range rep.JCTBounds {
				if r.Mean < b.Hours/2 {
					t.Errorf("%s: JCT %.2f far below the bound %.2f", r.Policy, r.Mean, b.Hours)
				}
			}
		}
	}
	for i, b := range rep.Bounds {
		if !(b.Fluid >= b.Longest*(1-1e-6)) || b.Err != "" {
			t.Errorf("bound %+v: the fluid LP is never below the longest job", b)
		}
		for _, r := range rep.Runs {
			if r.Experiment != Static || r.Seed != b.Seed {
				continue
			}
			// The fluid LP bounds schedules without sharing; the longest
			// job bounds all (Gavel's pair figures never beat alone ones).
			lb := b.Longest
			if r.Policy == "inlay-makespan" {
				lb = b.Fluid
			}
			if !b.SharingValid || r.Result.Makespan < lb*(1-1e-6) {
				t.Errorf("seed %d: %s makespan %.3f below the bound %.3f", i, r.Policy, r.Result.Makespan, lb)
			}
		}
	}
	// Workers do not change results.
	cfg.Workers = 1
	rep1, err := Bench(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rep.Rows {
		if rep.Rows[i].Mean != rep1.Rows[i].Mean {
			t.Errorf("row %d: %g with 2 workers, %g with 1", i, rep.Rows[i].Mean, rep1.Rows[i].Mean)
		}
	}
}
