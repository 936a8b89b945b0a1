package adapt_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/policy/inlayadapt"
	"github.com/inlay-dev/inlay/solver/solvertest"
)

// planned is a rigid one-GPU job of steps steps (batch 1) arriving at
// arrival, running speed[t] steps a second on type t.
func planned(id int, arrival, steps float64, speed []float64) adapt.Job {
	runs := make([]bool, len(speed))
	for t, s := range speed {
		runs[t] = s > 0
	}
	m := goodput.NewPlanned("m", 1, steps, runs, 0, func(a goodput.Alloc) float64 {
		r := 0.0
		for _, p := range a {
			r += speed[p.Type] * float64(p.GPUs)
		}
		return r
	})
	return adapt.Job{ID: id, Model: m, Arrival: arrival, GPUs: 1, Batch: 1, Kind: adapt.Rigid}
}

func lpBound(t *testing.T, c *adapt.Cluster, js []adapt.Job, round float64, mixed bool, step float64) float64 {
	t.Helper()
	b, err := adapt.LPBound(context.Background(), c, js, round, mixed, adapt.LPOptions{Step: step})
	if err != nil {
		t.Fatal(err)
	}
	return b * 3600
}

// TestLPBoundOneGPU: jobs on one GPU. The best average JCT is shortest
// remaining processing time first's (optimal on one machine with
// preemption), computed here by an event simulation; the LP bound is at
// most that and at least the isolated bound, and strictly above it where
// the jobs contend.
func TestLPBoundOneGPU(t *testing.T) {
	solvertest.RequireCBC(t)
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "g", PerNode: 1, Nodes: 1}}}
	cases := []struct {
		arrival, steps []float64
	}{
		{[]float64{0, 0}, []float64{100, 100}},
		{[]float64{0, 10, 20}, []float64{300, 50, 120}},
		{[]float64{0, 500}, []float64{100, 100}}, // no contention
	}
	for ci, tc := range cases {
		var js []adapt.Job
		for i := range tc.arrival {
			js = append(js, planned(i, tc.arrival[i], tc.steps[i], []float64{1}))
		}
		opt := srpt(tc.arrival, tc.steps)
		old := adapt.LowerBound(c, js, 1, false) * 3600
		lp := lpBound(t, c, js, 1, false, 10)
		if lp > opt*(1+1e-9) || lp < old*(1-1e-5) {
			t.Errorf("case %d: LP bound %.2f s outside [isolated %.2f, optimum %.2f]", ci, lp, old, opt)
		}
		contended := ci < 2
		if contended && !(lp > old*1.1) {
			t.Errorf("case %d: LP bound %.2f s not above the isolated %.2f s", ci, lp, old)
		}
		t.Logf("case %d: isolated %.1f LP %.1f optimum %.1f s", ci, old, lp, opt)
		if _, err := adapt.LPBound(context.Background(), c, js, 1, false, adapt.LPOptions{Step: 10, MaxVars: 1}); !errors.Is(err, adapt.ErrLPTooLarge) {
			t.Errorf("case %d: MaxVars 1: got %v, want ErrLPTooLarge", ci, err)
		}
	}
}

// srpt is the average JCT of shortest remaining time first on one
// machine of unit speed.
func srpt(arrival, work []float64) float64 {
	left := append([]float64(nil), work...)
	done := make([]float64, len(work))
	now, n := 0.0, 0
	for n < len(work) {
		k := -1
		for i := range left {
			if arrival[i] <= now && left[i] > 0 && (k < 0 || left[i] < left[k]) {
				k = i
			}
		}
		next := math.Inf(1)
		for i := range arrival {
			if arrival[i] > now && left[i] > 0 {
				next = math.Min(next, arrival[i])
			}
		}
		if k < 0 {
			now = next
			continue
		}
		run := math.Min(left[k], next-now)
		now += run
		left[k] -= run
		if left[k] <= 0 {
			done[k], n = now-arrival[k], n+1
		}
	}
	sum := 0.0
	for _, d := range done {
		sum += d
	}
	return sum / float64(len(work))
}

// TestLPBoundTwoTypes: two 100-step jobs at time 0, a fast GPU (2 steps a
// second) and a slow one (1). The best schedule runs one on the fast GPU
// (done at 50 s) and the other on the slow one until then and on the
// fast one after (done at 75 s): 62.5 s on average.
func TestLPBoundTwoTypes(t *testing.T) {
	solvertest.RequireCBC(t)
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "slow", PerNode: 1, Nodes: 1}, {Name: "fast", PerNode: 1, Nodes: 1}}}
	js := []adapt.Job{planned(0, 0, 100, []float64{1, 2}), planned(1, 0, 100, []float64{1, 2})}
	old := adapt.LowerBound(c, js, 1, false) * 3600
	lp := lpBound(t, c, js, 1, false, 5)
	if lp > 62.5*(1+1e-9) || lp < old*(1-1e-5) || !(lp > old) {
		t.Errorf("LP bound %.2f s: want in (%.2f, 62.5]", lp, old)
	}
}

// TestLPBoundPhilly: on Philly jobs the LP bound is at least the isolated
// bound and at most what inlay's policy achieves, mixed gangs off and on.
func TestLPBoundPhilly(t *testing.T) {
	solvertest.RequireCBC(t)
	cl, js := setup(t, 40, nil)
	for _, mixed := range []bool{false, true} {
		res, err := adapt.Simulate(context.Background(), adapt.Config{Cluster: cl, Round: 60, Mixed: mixed}, js, inlayadapt.New())
		if err != nil {
			t.Fatal(err)
		}
		old := adapt.LowerBound(cl, js, 60, mixed)
		lp, err := adapt.LPBound(context.Background(), cl, js, 60, mixed, adapt.LPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if lp < old*(1-1e-5) || lp > res.AvgJCT {
			t.Errorf("mixed=%v: LP bound %.3f h outside [isolated %.3f, inlay %.3f]", mixed, lp, old, res.AvgJCT)
		}
		t.Logf("mixed=%v: isolated %.3f LP %.3f inlay %.3f h", mixed, old, lp, res.AvgJCT)
	}
}
