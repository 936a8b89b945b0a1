package registry

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/cluster/internal/clustertest"
)

// TestNoGPUs: a cluster whose nodes are all gone or NotReady (the
// Kubernetes scheduler's view while its API server comes back) has types
// but no GPUs. Every policy answers it without a panic and gives nothing.
// The heterogeneity-aware LP policies once indexed an empty EqualShare row.
func TestNoGPUs(t *testing.T) {
	s := clustertest.State(t, 8, true)
	pc := s.C
	for g := range pc.Count {
		pc.Count[g] = 0
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
