package verify

import (
	"math/rand"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/zoo"
)

// TestRandomConvexSets checks the set generator on zoo layer graphs: every
// set is convex, sorted and distinct, runnable alone, the whole model comes
// at most once, and single layers as well as large spans occur.
func TestRandomConvexSets(t *testing.T) {
	for _, name := range []string{"resnet50", "inception_v3"} {
		t.Run(name, func(t *testing.T) {
			_, lg, err := zoo.Layers(name)
			if err != nil {
				t.Fatal(err)
			}
			sets := randomConvexSets(lg, rand.New(rand.NewSource(1)), setsPerModel)
			if len(sets) != setsPerModel {
				t.Errorf("%d sets, want %d", len(sets), setsPerModel)
			}
			seen := map[string]bool{}
			wholes, singles, large := 0, 0, 0
			for _, s := range sets {
				if !lg.IsConvex(s) {
					t.Errorf("set %s is not convex", s.Key())
				}
				if s.Key() != graph.NewLayerSet(s...).Key() || len(s) != len(graph.NewLayerSet(s...)) {
					t.Errorf("set %v is not sorted and unique", []int(s))
				}
				if seen[s.Key()] {
					t.Errorf("set %s drawn twice", s.Key())
				}
				seen[s.Key()] = true
				if ins, outs := lg.Boundary(s); len(ins) == 0 || len(outs) == 0 {
					t.Errorf("set %s has %d inputs and %d outputs", s.Key(), len(ins), len(outs))
				}
				switch {
				case len(s) == len(lg.Layers):
					wholes++
				case len(s) == 1:
					singles++
				case len(s) >= len(lg.Layers)/2:
					large++
				}
			}
			if wholes > 1 || singles == 0 || large == 0 {
				t.Errorf("%d whole-model sets (want ≤ 1), %d single layers, %d sets of at least half the model (want some of each)", wholes, singles, large)
			}
			again := randomConvexSets(lg, rand.New(rand.NewSource(1)), setsPerModel)
			for i := range sets {
				if i >= len(again) || sets[i].Key() != again[i].Key() {
					t.Fatalf("same seed, different sets at %d", i)
				}
			}
		})
	}
}
