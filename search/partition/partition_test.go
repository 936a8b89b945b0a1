package partition

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

// layerGraph builds a layer graph with n layers and the given edges (only
// the fields partitioning reads).
func layerGraph(n int, edges [][2]int) *graph.LayerGraph {
	lg := &graph.LayerGraph{Preds: make([][]int, n), Succs: make([][]int, n)}
	for i := 0; i < n; i++ {
		lg.Layers = append(lg.Layers, &graph.Layer{ID: i})
	}
	for _, e := range edges {
		lg.Succs[e[0]] = append(lg.Succs[e[0]], e[1])
		lg.Preds[e[1]] = append(lg.Preds[e[1]], e[0])
		lg.Edges = append(lg.Edges, graph.LayerEdge{From: e[0], To: e[1]})
	}
	return lg
}

func format(blocks []Block) string {
	var parts []string
	for _, b := range blocks {
		parts = append(parts, fmt.Sprintf("%d:%s", b.Key, b.Layers.Key()))
	}
	return strings.Join(parts, " ")
}

func TestMaximal(t *testing.T) {
	chain := func(n int) [][2]int {
		var e [][2]int
		for i := 0; i+1 < n; i++ {
			e = append(e, [2]int{i, i + 1})
		}
		return e
	}
	tests := []struct {
		name  string
		n     int
		edges [][2]int
		key   []int
		want  string
	}{
		{"one key", 4, chain(4), []int{0, 0, 0, 0}, "0:0-3"},
		{"fallback in a chain splits it", 5, chain(5), []int{0, 0, 1, 0, 0}, "0:0-1 1:2 0:3-4"},
		// 0 -> {1, 2} -> 3 with 1 on key 1: 0, 2 and 3 cannot merge (path 0 -> 1 -> 3),
		// but 0 and 2 can.
		{"diamond", 4, [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}}, []int{0, 1, 0, 0}, "0:0,2 1:1 0:3"},
		// Two independent branches interleaved by ID: a -> b, c -> d with b on key 1.
		{"independent branches merge", 4, [][2]int{{0, 1}, {2, 3}}, []int{0, 1, 0, 0}, "0:0,2-3 1:1"},
		// Side branch on key 1 off a key-0 chain whose end does not depend on it.
		{"side branch", 5, [][2]int{{0, 1}, {1, 2}, {0, 3}, {3, 4}}, []int{0, 0, 0, 1, 1}, "0:0-2 1:3-4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lg := layerGraph(tc.n, tc.edges)
			got := Maximal(lg, tc.key)
			if format(got) != tc.want {
				t.Errorf("got %s, want %s", format(got), tc.want)
			}
			check(t, lg, got, tc.key)
		})
	}
}

// check verifies the partition: every layer once, blocks convex, keys
// uniform, blocks in a topological order.
func check(t *testing.T, lg *graph.LayerGraph, blocks []Block, key []int) {
	t.Helper()
	own := make([]int, len(lg.Layers))
	for i := range own {
		own[i] = -1
	}
	for b, bl := range blocks {
		if !lg.IsConvex(bl.Layers) {
			t.Errorf("block %d (%s) not convex", b, bl.Layers.Key())
		}
		for _, l := range bl.Layers {
			if own[l] >= 0 {
				t.Errorf("layer %d in blocks %d and %d", l, own[l], b)
			}
			own[l] = b
			if key[l] != bl.Key {
				t.Errorf("layer %d key %d in block of key %d", l, key[l], bl.Key)
			}
		}
	}
	for l, o := range own {
		if o < 0 {
			t.Errorf("layer %d in no block", l)
		}
	}
	for _, e := range lg.Edges {
		if own[e.From] > own[e.To] {
			t.Errorf("edge %d -> %d goes from block %d back to %d", e.From, e.To, own[e.From], own[e.To])
		}
	}
}

// TestMaximalRandom checks the invariants on seeded random DAGs.
func TestMaximalRandom(t *testing.T) {
	for seed := int64(0); seed < 200; seed++ {
		n := 2 + int(seed%23)
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		next := func() int { return rng.IntN(1 << 30) }
		var edges [][2]int
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				if next()%4 == 0 {
					edges = append(edges, [2]int{a, b})
				}
			}
		}
		key := make([]int, n)
		for i := range key {
			key[i] = next() % 3
		}
		lg := layerGraph(n, edges)
		check(t, lg, Maximal(lg, key), key)
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		check(t, lg, Runs(order, key), key)
	}
}
