package agnostic

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/cluster/internal/clustertest"
	"github.com/inlay-dev/inlay/cluster/policy"
)

// Gavel's FIFO puts every job on the type last in name order while that
// type stays listed, more jobs than it has GPUs included, and nothing on
// the K80s, first by name.
func TestGavelFIFOPutsJobsOnTheLastTypeByName(t *testing.T) {
	tb := clustertest.GavelTable(t)
	id, err := tb.Resolve("ResNet-18 (batch size 32)", 4)
	if err != nil {
		t.Fatal(err)
	}
	c := &policy.Cluster{GPUs: tb.GPUs(), Count: []int{36, 36, 36}, Price: make([]float64, 3), CPUs: make([]float64, 3), Memory: make([]float64, 3), PerServer: []int{1, 1, 1}}
	s := &policy.State{C: c, Table: tb}
	// Five-GPU jobs (the row is the 4-GPU one; the count is what matters):
	// the V100 count goes 31, 26, ..., 1, -4, ... and never reaches
	// exactly zero, so the V100s stay listed, last by name, and take
	// every job, 300 GPUs' worth on 36.
	for i := 0; i < 60; i++ {
		s.Jobs = append(s.Jobs, policy.Job{ID: i, Row: id, GPUs: 5, Weight: 1, Steps: 1e5, Remaining: 1e5, Last: -1})
	}
	a, err := NewGavelFIFO(0).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	v100 := tb.GPUIndex("v100")
	per := make([]int, 3)
	for _, e := range a.Entries {
		for g, x := range e.X {
			if x == 1 {
				per[g]++
			}
		}
	}
	if per[v100] != len(s.Jobs) {
		t.Errorf("jobs per type (k80, p100, v100) %v: want all %d on the V100s", per, len(s.Jobs))
	}
}
