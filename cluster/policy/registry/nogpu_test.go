package registry

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// TestNoGPUs: a cluster whose nodes are all gone or NotReady (the
// Kubernetes scheduler's view while its API server comes back) has types
// but no GPUs. Every policy answers it without a panic and gives nothing.
// The heterogeneity-aware LP policies once indexed an empty EqualShare row.
func TestNoGPUs(t *testing.T) {
	c, _ := hw.Preset("gavel-108")
	tb, _ := throughput.Gavel()
	jobs, err := job.Generate(job.GenConfig{Jobs: 8, Rate: 5.6, Seed: 1, MultiGPU: true}, tb)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := sched.ClusterView(c, tb)
	if err != nil {
		t.Fatal(err)
	}
	for g := range pc.Count {
		pc.Count[g] = 0
	}
	s := &policy.State{Now: jobs[len(jobs)-1].Arrival, C: pc, Table: tb}
	for i, j := range jobs {
		row, _ := tb.Resolve(j.Type, j.GPUs)
		s.Jobs = append(s.Jobs, policy.Job{ID: i, Row: row, GPUs: j.GPUs, Weight: 1, Arrival: j.Arrival, Steps: j.Steps, Remaining: j.Steps, Last: -1})
	}
	for _, n := range Names() {
		p, err := New(n, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		a, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Errorf("%s on a cluster without GPUs: %v", n, err)
			continue
		}
		for _, e := range a.Entries {
			for g, x := range e.X {
				if x > 1e-9 {
					t.Errorf("%s gives job %d %g of %s, which has no GPUs", n, e.A, x, pc.GPUs[g])
				}
			}
		}
	}
}
