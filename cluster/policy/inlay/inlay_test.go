package inlay

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/cluster/internal/clustertest"
	"github.com/inlay-dev/inlay/cluster/policy"
)

func TestJCTChoosesShortAndMatchesTypes(t *testing.T) {
	tb, row := clustertest.GavelRows(t)
	// One K80 and one V100 (columns k80, p100, v100); three jobs.
	c := &policy.Cluster{GPUs: tb.GPUs(), Count: []int{1, 0, 1}, Price: make([]float64, 3), CPUs: make([]float64, 3), Memory: make([]float64, 3), PerServer: []int{1, 0, 1}}
	s := &policy.State{C: c, Table: tb, Jobs: []policy.Job{
		// A3C loses little on a K80; ResNet-50 a lot.
		{ID: 0, Row: row("A3C"), GPUs: 1, Weight: 1, Steps: 1e4, Remaining: 1e4, Last: -1},
		{ID: 1, Row: row("ResNet-50 (batch size 64)"), GPUs: 1, Weight: 1, Steps: 1e4, Remaining: 1e4, Last: -1},
		// Far longer: waits.
		{ID: 2, Row: row("ResNet-18 (batch size 32)"), GPUs: 1, Weight: 1, Steps: 1e9, Remaining: 1e9, Last: -1},
	}}
	p := &JCT{NoSharing: true, NoAgeing: true}
	a, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	on := map[int]int{}
	for _, e := range a.Entries {
		for g, x := range e.X {
			if x > 0 {
				on[e.A] = g
			}
		}
	}
	k80, v100 := tb.GPUIndex("k80"), tb.GPUIndex("v100")
	if on[0] != k80 || on[1] != v100 {
		t.Errorf("placement %v, want A3C on k80 and ResNet-50 on v100", on)
	}
	if _, ok := on[2]; ok {
		t.Errorf("the long job runs: %v", on)
	}
}

// Shortest-remaining-first lets a long job wait while shorter ones keep
// coming; with ageing it runs once its finish under fair sharing comes
// ahead of the newcomer's.
func TestAgeingRunsTheLongJobThatWaited(t *testing.T) {
	tb, row := clustertest.GavelRows(t)
	id := row("A3C")
	v100 := tb.GPUIndex("v100")
	count := make([]int, len(tb.GPUs()))
	count[v100] = 1
	c := &policy.Cluster{GPUs: tb.GPUs(), Count: count, Price: make([]float64, 3), CPUs: make([]float64, 3), Memory: make([]float64, 3), PerServer: count}
	rate := tb.Alone(id, v100)
	hour := 3600 * rate // steps of an hour on the V100
	runs := func(p *JCT) []int {
		// The long job (10 h) and a stream of 2-hour jobs, one arriving
		// as the one before ends; the policy is asked every hour for 30 h.
		// Sharing the V100 with one short job at a time, the long job
		// would be done at 20 h; a short job arriving at h would be done
		// at h+4, so from about 16 h on the long job goes first.
		long := policy.Job{ID: 0, Row: id, GPUs: 1, Weight: 1, Steps: 10 * hour, Remaining: 10 * hour, Last: -1}
		var picked []int
		short := policy.Job{ID: 1, Row: id, GPUs: 1, Weight: 1, Steps: 2 * hour, Remaining: 2 * hour, Last: -1}
		for h := 0; h < 30; h++ {
			s := &policy.State{Now: float64(h) * 3600, C: c, Table: tb, Jobs: []policy.Job{long, short}}
			a, err := p.Allocate(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			on := -1
			for _, e := range a.Entries {
				if e.X[v100] > 0 {
					on = e.A
				}
			}
			picked = append(picked, on)
			switch on {
			case long.ID:
				long.Remaining -= hour
			case short.ID:
				short.Remaining -= hour
				if short.Remaining <= 0 {
					next := short.ID + 1
					short = policy.Job{ID: next, Row: id, GPUs: 1, Weight: 1, Steps: 2 * hour, Remaining: 2 * hour, Arrival: float64(h+1) * 3600, Last: -1}
				}
			}
		}
		return picked
	}
	for _, p := range []*JCT{{NoSharing: true, NoAgeing: true}, {NoSharing: true}} {
		ranLong := false
		for _, id := range runs(p) {
			ranLong = ranLong || id == 0
		}
		if ranLong == p.NoAgeing {
			t.Errorf("%s: picks %v: the long job runs %v, want %v", p.Name(), runs(&JCT{NoSharing: p.NoSharing, NoAgeing: p.NoAgeing}), ranLong, !p.NoAgeing)
		}
	}
}
