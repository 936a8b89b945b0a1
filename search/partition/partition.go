// Package partition turns a per-layer assignment (each layer of a model
// mapped to a key: a processor configuration, say) into subgraphs: convex
// layer sets of one key each, listed in a topological order, as plans
// require.
//
// Two facts carry the package. A run of consecutive positions of any
// topological order is convex (a path leaving the run and coming back would
// need a layer placed between two of its members). And contracting convex
// sets whose contracted graph stays acyclic keeps them convex and orderable.
package partition

import (
	"github.com/inlay-dev/inlay/graph"
)

// Block is a subgraph in the making: a convex layer set with one key.
type Block struct {
	Layers graph.LayerSet
	Key    int
}

// Runs cuts a topological order of the layers into maximal runs of equal
// key. order must list every layer once, predecessors first; key is
// indexed by layer ID. The blocks come out in a topological order.
func Runs(order []int, key []int) []Block {
	var out []Block
	var cur []int
	for i, l := range order {
		if i > 0 && key[l] != key[order[i-1]] {
			out = append(out, Block{Layers: graph.NewLayerSet(cur...), Key: key[order[i-1]]})
			cur = nil
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		out = append(out, Block{Layers: graph.NewLayerSet(cur...), Key: key[order[len(order)-1]]})
	}
	return out
}

// AffineOrder is a topological order of the layer graph that stays on one
// key as long as it can: among the ready layers it takes the lowest-ID one
// with the key of the layer taken last, else the lowest-ID one.
// O(n² ) in the worst case, O(n + e) when keys rarely change.
func AffineOrder(lg *graph.LayerGraph, key []int) []int {
	n := len(lg.Layers)
	indeg := make([]int, n)
	for l := 0; l < n; l++ {
		indeg[l] = len(lg.Preds[l])
	}
	ready := make([]bool, n)
	for l := 0; l < n; l++ {
		ready[l] = indeg[l] == 0
	}
	order := make([]int, 0, n)
	last := -1
	for len(order) < n {
		pick := -1
		for l := 0; l < n; l++ {
			if !ready[l] {
				continue
			}
			if pick < 0 {
				pick = l
			}
			if last >= 0 && key[l] == key[last] {
				pick = l
				break
			}
		}
		if pick < 0 {
			break // a cycle; layer graphs have none
		}
		ready[pick] = false
		order = append(order, pick)
		last = pick
		for _, s := range lg.Succs[pick] {
			indeg[s]--
			if indeg[s] == 0 {
				ready[s] = true
			}
		}
	}
	return order
}

// maxMergeBlocks bounds the quadratic merge pass; beyond it Maximal returns
// the runs of the affine order as they are.
const maxMergeBlocks = 400

// Maximal partitions the layers into few convex blocks of equal key: the
// runs of AffineOrder, then merged pairwise (same key, earlier block first)
// wherever the contracted graph stays acyclic. The blocks come out in a
// topological order (ties: the lowest layer ID first).
func Maximal(lg *graph.LayerGraph, key []int) []Block {
	blocks := Runs(AffineOrder(lg, key), key)
	if len(blocks) > maxMergeBlocks {
		return blocks
	}
	for {
		merged := false
		for j := 1; j < len(blocks) && !merged; j++ {
			for i := j - 1; i >= 0; i-- {
				if blocks[i].Key != blocks[j].Key {
					continue
				}
				if reachesThroughOthers(lg, blocks, i, j) {
					continue
				}
				blocks[i].Layers = graph.NewLayerSet(append(append([]int{}, blocks[i].Layers...), blocks[j].Layers...)...)
				blocks = append(blocks[:j], blocks[j+1:]...)
				blocks = TopoSort(lg, blocks)
				merged = true
				break
			}
		}
		if !merged {
			return blocks
		}
	}
}

// owners maps each layer to its block's index.
func owners(lg *graph.LayerGraph, blocks []Block) []int {
	own := make([]int, len(lg.Layers))
	for b, bl := range blocks {
		for _, l := range bl.Layers {
			own[l] = b
		}
	}
	return own
}

// reachesThroughOthers reports whether a path of the contracted graph leads
// from block i to block j through at least one other block.
func reachesThroughOthers(lg *graph.LayerGraph, blocks []Block, i, j int) bool {
	own := owners(lg, blocks)
	succ := func(b int) []int {
		var out []int
		seen := map[int]bool{}
		for _, l := range blocks[b].Layers {
			for _, s := range lg.Succs[l] {
				if o := own[s]; o != b && !seen[o] {
					seen[o] = true
					out = append(out, o)
				}
			}
		}
		return out
	}
	seen := make([]bool, len(blocks))
	var stack []int
	for _, s := range succ(i) {
		if s != j && !seen[s] {
			seen[s] = true
			stack = append(stack, s)
		}
	}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, s := range succ(b) {
			if s == j {
				return true
			}
			if !seen[s] {
				seen[s] = true
				stack = append(stack, s)
			}
		}
	}
	return false
}

// TopoSort orders blocks topologically by their layer edges, ties going to
// the block with the lowest first layer. Blocks must have an acyclic
// contracted graph (convex blocks from Runs or Maximal do).
func TopoSort(lg *graph.LayerGraph, blocks []Block) []Block {
	own := owners(lg, blocks)
	indeg := make([]int, len(blocks))
	succs := make([]map[int]bool, len(blocks))
	for b := range blocks {
		succs[b] = map[int]bool{}
	}
	for _, e := range lg.Edges {
		a, b := own[e.From], own[e.To]
		if a != b && !succs[a][b] {
			succs[a][b] = true
			indeg[b]++
		}
	}
	done := make([]bool, len(blocks))
	out := make([]Block, 0, len(blocks))
	for len(out) < len(blocks) {
		pick := -1
		for b := range blocks {
			if !done[b] && indeg[b] == 0 && (pick < 0 || blocks[b].Layers[0] < blocks[pick].Layers[0]) {
				pick = b
			}
		}
		if pick < 0 {
			// Not acyclic: keep the remaining blocks in their order; Validate
			// will name the problem.
			for b := range blocks {
				if !done[b] {
					out = append(out, blocks[b])
				}
			}
			return out
		}
		done[pick] = true
		out = append(out, blocks[pick])
		for s := range succs[pick] {
			indeg[s]--
		}
	}
	return out
}
