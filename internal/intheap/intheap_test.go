package intheap

import (
	"math/rand"
	"sort"
	"testing"
)

func TestHeapSorts(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 50; trial++ {
		var h Heap
		in := make([]int, rng.Intn(40))
		for i := range in {
			in[i] = rng.Intn(20)
			h.Push(in[i])
		}
		sort.Ints(in)
		for i, want := range in {
			if got := h.Pop(); got != want {
				t.Fatalf("pop %d = %d, want %d", i, got, want)
			}
		}
		if h.Len() != 0 {
			t.Fatalf("heap not empty: %d", h.Len())
		}
	}
}
