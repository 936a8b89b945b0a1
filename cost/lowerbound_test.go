package cost

import (
	"errors"
	"math/rand"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/zoo"
)

// TestLayerLowerBound checks the bound's contract on the zoo networks and
// every preset: for random contiguous (hence convex) layer ranges on every
// config, the subgraph's time is at least the sum of its layers' bounds,
// and each bound is at most the layer's time alone.
func TestLayerLowerBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the zoo")
	}
	lgs := zooLayers(t)
	rng := rand.New(rand.NewSource(1))
	for _, preset := range []string{"phone", "jetson-orin", "desktop"} {
		pl := hwtest.Preset(t, preset)
		a := NewAnalytic(pl)
		for _, name := range zoo.Names() { // sorted: the random draws are reproducible
			lg := lgs[name]
			for trial := 0; trial < 20; trial++ {
				from := rng.Intn(len(lg.Layers))
				to := from + 1 + rng.Intn(min(len(lg.Layers)-from, 60))
				set := graph.Range(from, to)
				for p := range pl.Processors {
					for _, c := range pl.Configs(p) {
						whole, err := a.Subgraph(lg, set, c)
						if errors.Is(err, ErrUnsupported) {
							continue
						}
						if err != nil {
							t.Fatal(err)
						}
						var sum time.Duration
						for _, l := range set {
							lb, err := a.LayerLowerBound(lg, l, c)
							if err != nil {
								t.Fatalf("%s %s layer %d on %v: %v", preset, name, l, c, err)
							}
							alone := mustSubgraph(t, a, lg, graph.LayerSet{l}, c)
							if lb > alone {
								t.Fatalf("%s %s layer %d on %v: bound %v above its time alone %v", preset, name, l, c, lb, alone)
							}
							sum += lb
						}
						if sum > whole {
							t.Fatalf("%s %s layers %s on %v: bounds sum to %v, above the subgraph's %v", preset, name, set.Key(), c, sum, whole)
						}
						if d := a.DispatchLowerBound(p); sum+d > whole {
							t.Fatalf("%s %s layers %s on %v: bounds sum to %v, plus dispatch %v above the subgraph's %v", preset, name, set.Key(), c, sum, d, whole)
						}
					}
				}
			}
		}
	}
}
