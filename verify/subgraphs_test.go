package verify

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"github.com/inlay-dev/inlay/ort"
)

// setsPerModel is how many random convex layer sets each model checks (when
// it has that many).
const setsPerModel = 24

// TestSubgraphsMatchFullModel exports random convex layer sets of every real
// model with onnx.ExportSubgraph, runs each alone on ONNX Runtime fed with
// the full model's intermediate values, and checks that it reproduces the
// full model's values of its outputs.
func TestSubgraphsMatchFullModel(t *testing.T) { checkSubgraphs(t, realSources()) }

// TestZooSubgraphsMatchFullModel does the same for the zoo networks.
func TestZooSubgraphsMatchFullModel(t *testing.T) {
	checkSubgraphs(t, zooSourcesUnlessShort(t))
}

func checkSubgraphs(t *testing.T, sources []source) {
	rt := openRuntime(t)
	var totalSets, totalNodes, totalBad, totalOuts, totalInts int
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			fr, p := loaded(t, src)
			lg := p.layers
			sets := randomConvexSets(lg, rand.New(rand.NewSource(seedOf(src.name))), setsPerModel)
			var bad []string
			nodes, smallest, largest, outs, ints := 0, len(lg.Layers), 0, 0, 0
			for _, set := range sets {
				nodes += len(lg.Nodes(set))
				smallest, largest = min(smallest, len(set)), max(largest, len(set))
				msg, o, i := checkSubgraph(rt, lg, set, fr)
				outs, ints = outs+o, ints+i
				if msg != "" {
					bad = append(bad, fmt.Sprintf("layers %s (%d layers, %d nodes, first %s %q): %s", set.Key(), len(set), len(lg.Nodes(set)), lg.Layers[set[0]].Op, lg.Layers[set[0]].Name, msg))
				}
			}
			t.Logf("%-34s %3d subgraphs (%5d nodes, %d to %d of %d layers) checked, %d outputs compared (%d integer, exactly), %d failed", src.name, len(sets), nodes, smallest, largest, len(lg.Layers), outs, ints, len(bad))
			totalSets += len(sets)
			totalOuts += outs
			totalInts += ints
			totalNodes += nodes
			totalBad += len(bad)
			if len(sets) < setsPerModel {
				t.Logf("%s: only %d distinct runnable convex layer sets were found (it has %d layers)", src.name, len(sets), len(lg.Layers))
			}
			// Each layer alone and the whole model are convex: at least that
			// many distinct sets exist, up to setsPerModel.
			if want := min(setsPerModel, len(lg.Layers)+1); len(sets) < want {
				t.Errorf("only %d subgraphs checked, want at least %d", len(sets), want)
			}
			if len(bad) > 0 {
				t.Errorf("%d of %d subgraphs do not reproduce the full model:\n  %s", len(bad), len(sets), strings.Join(firstN(bad, maxListed), "\n  "))
			}
		})
	}
	t.Logf("total: %d subgraphs (%d nodes) checked, %d outputs compared (%d integer, exactly), %d failed", totalSets, totalNodes, totalOuts, totalInts, totalBad)
}

// checkSubgraph exports and runs one layer set; "" means it reproduced the
// full model's values of all its outputs. It counts the outputs compared
// and, of those, the integer ones (compared exactly).
func checkSubgraph(rt *ort.Runtime, lg *graph.LayerGraph, set graph.LayerSet, fr *fullRun) (msg string, compared, ints int) {
	ins, outs := lg.Boundary(set)
	data, err := onnx.ExportSubgraph(lg, set)
	if err != nil {
		return fmt.Sprintf("export: %v", err), 0, 0
	}
	if msg := checkDeclared(data, ins, outs, fr); msg != "" {
		return msg, 0, 0
	}
	feeds := make([]*graph.Data, len(ins))
	for i, name := range ins {
		if feeds[i] = fr.values[name]; feeds[i] == nil {
			return fmt.Sprintf("input %q has no value in the full run", name), 0, 0
		}
	}
	sess, err := rt.NewSession(data, ins, outs, fr.source.options)
	if err != nil {
		return err.Error(), 0, 0
	}
	defer sess.Close()
	got, err := sess.Run(feeds)
	if err != nil {
		return err.Error(), 0, 0
	}
	var bad []string
	for i, name := range outs {
		want := fr.values[name]
		if want == nil {
			bad = append(bad, fmt.Sprintf("output %q has no value in the full run", name))
			continue
		}
		compared++
		if _, isFloat := floatsOf(want); !isFloat {
			ints++
		}
		if msg := compareData(got[i], want); msg != "" {
			bad = append(bad, fmt.Sprintf("output %q: %s", name, msg))
		}
	}
	return strings.Join(bad, "; "), compared, ints
}

// checkDeclared checks the exported model's interface: its graph inputs and
// outputs are the boundary's, in order, declared with the dtypes and static
// shapes of the full run's values, and its default opset is the source's.
func checkDeclared(data []byte, ins, outs []string, fr *fullRun) string {
	mp := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		return fmt.Sprintf("exported model does not decode: %v", err)
	}
	if got, want := defaultOpset(mp), defaultOpset(fr.proto); got != want {
		return fmt.Sprintf("exported default opset %d, source has %d", got, want)
	}
	var bad []string
	check := func(kind string, vis []*onnxpb.ValueInfoProto, names []string) {
		if len(vis) != len(names) {
			bad = append(bad, fmt.Sprintf("%d graph %ss, boundary has %d", len(vis), kind, len(names)))
			return
		}
		for i, vi := range vis {
			if vi.GetName() != names[i] {
				bad = append(bad, fmt.Sprintf("graph %s %d is %q, boundary has %q", kind, i, vi.GetName(), names[i]))
				continue
			}
			want := fr.values[names[i]]
			if want == nil {
				continue // reported when run
			}
			tt := vi.GetType().GetTensorType()
			dims := graph.Shape{}
			for _, d := range tt.GetShape().GetDim() {
				if _, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); ok {
					dims = append(dims, d.GetDimValue())
				} else {
					dims = append(dims, graph.Unknown)
				}
			}
			if graph.DType(tt.GetElemType()) != want.DType || tt.GetShape() == nil || !dims.Equal(want.Dims) {
				bad = append(bad, fmt.Sprintf("graph %s %q declared %s %s, its value is %s %s", kind, vi.GetName(), graph.DType(tt.GetElemType()), dims, want.DType, want.Dims))
			}
		}
	}
	check("input", mp.GetGraph().GetInput(), ins)
	check("output", mp.GetGraph().GetOutput(), outs)
	return strings.Join(bad, "; ")
}

// randomConvexSets draws up to count distinct convex layer sets: each grows
// from a random layer by adding random neighbouring layers (predecessors or
// successors) as long as the set stays convex, up to a target size drawn
// log-uniformly from 1 to the whole model, so that single layers, short
// chains and large spans all occur. The whole model is taken at most once;
// sets without boundary inputs or outputs (which cannot run alone) are left
// out.
func randomConvexSets(lg *graph.LayerGraph, rng *rand.Rand, count int) []graph.LayerSet {
	n := len(lg.Layers)
	if n == 0 {
		return nil
	}
	seen := map[string]bool{}
	var sets []graph.LayerSet
	whole := false
	for attempt := 0; len(sets) < count && attempt < 50*count; attempt++ {
		var target int
		switch attempt % 4 {
		case 0:
			target = 1
		default:
			target = int(math.Round(math.Exp(rng.Float64() * math.Log(float64(n)))))
		}
		set := growConvex(lg, rng, rng.Intn(n), target)
		key := set.Key()
		if seen[key] {
			continue
		}
		seen[key] = true
		if len(set) == n {
			if whole {
				continue
			}
			whole = true
		}
		if ins, outs := lg.Boundary(set); len(ins) == 0 || len(outs) == 0 {
			continue
		}
		sets = append(sets, set)
	}
	return sets
}

// growConvex grows a convex set from start towards target layers.
func growConvex(lg *graph.LayerGraph, rng *rand.Rand, start, target int) graph.LayerSet {
	set := graph.LayerSet{start}
	in := map[int]bool{start: true}
	for len(set) < target {
		var frontier []int
		added := map[int]bool{}
		for _, id := range set {
			for _, nb := range append(append([]int{}, lg.Preds[id]...), lg.Succs[id]...) {
				if !in[nb] && !added[nb] {
					added[nb] = true
					frontier = append(frontier, nb)
				}
			}
		}
		rng.Shuffle(len(frontier), func(i, j int) { frontier[i], frontier[j] = frontier[j], frontier[i] })
		grown := false
		for _, nb := range frontier {
			cand := graph.NewLayerSet(append(append([]int{}, set...), nb)...)
			if lg.IsConvex(cand) {
				set, in[nb], grown = cand, true, true
				break
			}
		}
		if !grown {
			break
		}
	}
	return set
}
