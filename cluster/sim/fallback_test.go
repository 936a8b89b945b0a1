package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/internal/clustertest"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy/gavel"
	"github.com/inlay-dev/inlay/solver"
)

// A Gavel policy whose LP fails (CBC killed after its time limit, as on a
// loaded machine) must not stop the simulation: each failed solve gives the
// policy's fallback allocation, the run finishes every job, and the result
// counts the fallbacks. Every other solve fails; the others run CBC when
// it is installed and fail too when it is not, so the test needs no CBC.
func TestLPFailureFallsBackAndTheRunFinishes(t *testing.T) {
	c, tb := clustertest.Gavel108(t)
	jobs := clustertest.Trace(t, tb, job.GenConfig{Jobs: 60, Rate: 30, Seed: 3, MultiGPU: true})
	_, cbcErr := solver.Command()
	calls, failed := 0, 0
	solve := func(ctx context.Context, m *solver.Model, o solver.Options) (*solver.Result, error) {
		calls++
		if calls%2 == 1 || cbcErr != nil {
			failed++
			return &solver.Result{Status: solver.NoSolution, Reason: "time limit", Killed: true}, nil
		}
		return solver.Solve(ctx, m, o)
	}
	for _, ss := range []bool{false, true} {
		calls, failed = 0, 0
		p := &gavel.MaxMin{Variant: gavel.Variant{Cfg: gavel.Config{Solve: solve}, SpaceSharing: ss}}
		r, err := Run(context.Background(), Config{}, jobs, c, tb, p)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if r.Jobs != len(jobs) || r.Unfinished != 0 {
			t.Fatalf("%s: %d of %d jobs finished, %d unfinished", p.Name(), r.Jobs, len(jobs), r.Unfinished)
		}
		if failed == 0 || r.Fallbacks != failed || r.Recomputes != calls {
			t.Errorf("%s: %d fallbacks counted, %d recomputes; the solver failed %d of %d calls", p.Name(), r.Fallbacks, r.Recomputes, failed, calls)
		}
		if !strings.Contains(r.FirstFallback, "time limit") {
			t.Errorf("%s: first fallback %q does not say why", p.Name(), r.FirstFallback)
		}
	}
}
