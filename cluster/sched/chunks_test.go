package sched

import (
	"slices"
	"testing"
)

// TestPlaceChunks: a job whose GPUs come in chunks that must share a
// server (a Kubernetes pod's GPUs) gets whole chunks or nothing.
func TestPlaceChunks(t *testing.T) {
	srv := []server{{node: 10, gpus: 4}, {node: 11, gpus: 4}, {node: 12, gpus: 4}}
	for _, c := range []struct {
		name      string
		free      []int
		n, k      int
		pl        Placement
		want      []int
		freeAfter []int
	}{
		{"one server holds it all (the fullest that fits)", []int{4, 2, 3}, 2, 2, Consolidated, []int{11, 11}, []int{4, 0, 3}},
		{"chunks from the most free servers", []int{3, 3, 1}, 4, 2, Consolidated, []int{10, 10, 11, 11}, []int{1, 1, 1}},
		{"as many chunks as a server holds", []int{4, 2, 1}, 6, 2, Consolidated, []int{10, 10, 10, 10, 11, 11}, []int{0, 0, 1}},
		{"scattered: nothing, nothing taken", []int{1, 1, 3}, 4, 2, Consolidated, nil, []int{1, 1, 3}},
		{"scattered after a partial take: all given back", []int{2, 1, 1}, 4, 2, Spread, nil, []int{2, 1, 1}},
		{"spread: one chunk a server", []int{4, 4, 2}, 6, 2, Spread, []int{10, 10, 11, 11, 12, 12}, []int{2, 2, 0}},
	} {
		free := slices.Clone(c.free)
		got := placeChunks(srv, free, c.n, c.k, c.pl)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: servers %v, want %v", c.name, got, c.want)
		}
		if !slices.Equal(free, c.freeAfter) {
			t.Errorf("%s: free after %v, want %v", c.name, free, c.freeAfter)
		}
		per := map[int]int{}
		for _, s := range got {
			per[s]++
		}
		for s, g := range per {
			if g%c.k != 0 {
				t.Errorf("%s: %d GPUs on node %d, not whole chunks of %d", c.name, g, s, c.k)
			}
		}
	}
}
