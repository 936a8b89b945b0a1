package inlay

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

func TestJCTChoosesShortAndMatchesTypes(t *testing.T) {
	tb, err := throughput.Gavel()
	if err != nil {
		t.Fatal(err)
	}
	row := func(typ string) throughput.ID {
		id, err := tb.Resolve(typ, 1)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	// One K80 and one V100 (columns k80, p100, v100); three jobs.
	c := &policy.Cluster{GPUs: tb.GPUs(), Count: []int{1, 0, 1}, Price: make([]float64, 3), CPUs: make([]float64, 3), Memory: make([]float64, 3), PerServer: []int{1, 0, 1}}
	s := &policy.State{C: c, Table: tb, Jobs: []policy.Job{
		// A3C loses little on a K80; ResNet-50 a lot.
		{ID: 0, Row: row("A3C"), GPUs: 1, Weight: 1, Steps: 1e4, Remaining: 1e4, Last: -1},
		{ID: 1, Row: row("ResNet-50 (batch size 64)"), GPUs: 1, Weight: 1, Steps: 1e4, Remaining: 1e4, Last: -1},
		// Far longer: waits.
		{ID: 2, Row: row("ResNet-18 (batch size 32)"), GPUs: 1, Weight: 1, Steps: 1e9, Remaining: 1e9, Last: -1},
	}}
	p := &JCT{NoSharing: true}
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
