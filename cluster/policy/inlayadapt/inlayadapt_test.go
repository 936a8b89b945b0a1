package inlayadapt

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
)

// rigid is an 8-GPU rigid job running speed[t] samples a second per GPU
// of type t.
func rigid(id int, speed []float64) adapt.Job {
	m := goodput.NewPlanned("m", 8, 1000, []bool{true, true}, 30, func(a goodput.Alloc) float64 {
		r := 0.0
		for _, p := range a {
			r += speed[p.Type] * float64(p.GPUs)
		}
		return r
	})
	return adapt.Job{ID: id, Model: m, GPUs: 8, Batch: 8, Kind: adapt.Rigid}
}

// TestUpgradeIdleFastGPUs: job a runs 20× faster on the fast type, job b
// 100×, so by comparative advantage the greedy puts a on the slow type;
// the fast type has room for both, and with Upgrade a moves there.
func TestUpgradeIdleFastGPUs(t *testing.T) {
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "slow", PerNode: 8, Nodes: 1}, {Name: "fast", PerNode: 8, Nodes: 2}}}
	js := []adapt.Job{rigid(0, []float64{1, 20}), rigid(1, []float64{1, 100})}
	for _, up := range []bool{false, true} {
		s := &adapt.State{Cluster: c, Round: 60}
		for i := range js {
			s.Jobs = append(s.Jobs, adapt.View{Job: &js[i], LastType: -1, Know: goodput.Knowledge{Agnostic: -1}})
		}
		p := New()
		p.Upgrade = up
		ds, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		want := 0 // the slow type, without Upgrade
		if up {
			want = 1
		}
		if a := ds[0].Alloc; len(a) != 1 || a[0].Type != want || a[0].GPUs != 8 {
			t.Errorf("upgrade=%v: job a on %v, want 8 GPUs of type %d", up, a, want)
		}
		if a := ds[1].Alloc; len(a) != 1 || a[0].Type != 1 {
			t.Errorf("upgrade=%v: job b on %v, want the fast type", up, a)
		}
	}
}
