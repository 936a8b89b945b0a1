package onnx

import (
	"math/rand"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// mutationSeeds are small valid models: the hand-built ones and pieces of
// a few layers of each fetched real model.
func mutationSeeds(t *testing.T) [][]byte {
	t.Helper()
	return seedModels(t, 3, 2, func(int) int { return 2 }, 256<<10)
}

// seedModels are the hand-built models (nested Ifs depth deep) and, of
// each fetched real model, its pieces of width layers every step(layers)
// layers that are under limit bytes.
func seedModels(tb testing.TB, depth, width int, step func(layers int) int, limit int) [][]byte {
	tb.Helper()
	seeds := [][]byte{
		convModel().bytes(tb), relu().bytes(tb), ifModel(nil).bytes(tb), ifModel(boolTensor("c", true)).bytes(tb),
		nestedIfs(depth).bytes(tb), loopModel().bytes(tb), scanModel().bytes(tb), chain().bytes(tb),
	}
	for _, rm := range assets.RealModels() {
		data, err := os.ReadFile(assets.ModelPath(rm.File))
		if err != nil {
			continue
		}
		m, err := Decode(data, rm.File, fuzzOptions(data))
		if err != nil {
			tb.Fatal(err)
		}
		lg, err := graph.BuildLayers(m)
		if err != nil {
			tb.Fatal(err)
		}
		n := len(lg.Layers)
		for i := 0; i < n; i += step(n) {
			piece, err := ExportSubgraph(lg, graph.Range(i, min(i+width, n)))
			if err != nil {
				tb.Fatal(err)
			}
			if len(piece) < limit {
				seeds = append(seeds, piece)
			}
		}
	}
	return seeds
}

// mutator makes structural changes to a decoded ModelProto, the kind byte
// fuzzing rarely reaches: other operators, rewired inputs, odd attribute
// values, changed dims and types.
type mutator struct {
	rng *rand.Rand
	ops []string
}

var oddInts = []int64{-1 << 40, -5, -2, -1, 0, 1, 2, 3, 7, 1 << 20, 1 << 40, 1<<63 - 1}

func (mu *mutator) int() int64 {
	if mu.rng.Intn(2) == 0 {
		return oddInts[mu.rng.Intn(len(oddInts))]
	}
	return int64(mu.rng.Intn(9) - 2)
}

func (mu *mutator) mutate(mp *onnxpb.ModelProto) {
	g := mp.GetGraph()
	var names []string
	for _, in := range g.GetInput() {
		names = append(names, in.GetName())
	}
	for _, tp := range g.GetInitializer() {
		names = append(names, tp.GetName())
	}
	for _, n := range g.GetNode() {
		names = append(names, n.GetOutput()...)
	}
	names = append(names, "")
	r := mu.rng
	switch k := r.Intn(10); {
	case k == 0 && len(g.Node) > 0: // another operator
		g.Node[r.Intn(len(g.Node))].OpType = proto.String(mu.ops[r.Intn(len(mu.ops))])
	case k == 1 && len(g.Node) > 0: // rewire an input
		n := g.Node[r.Intn(len(g.Node))]
		if len(n.Input) > 0 {
			n.Input[r.Intn(len(n.Input))] = names[r.Intn(len(names))]
		}
	case k == 2 && len(g.Node) > 0: // add or drop an input
		n := g.Node[r.Intn(len(g.Node))]
		if len(n.Input) > 0 && r.Intn(2) == 0 {
			n.Input = n.Input[:len(n.Input)-1]
		} else {
			n.Input = append(n.Input, names[r.Intn(len(names))])
		}
	case k == 3 || k == 4: // an attribute value
		var attrs []*onnxpb.AttributeProto
		for _, n := range g.Node {
			attrs = append(attrs, n.Attribute...)
		}
		if len(attrs) == 0 {
			return
		}
		a := attrs[r.Intn(len(attrs))]
		switch a.GetType() {
		case onnxpb.AttributeProto_INT:
			a.I = proto.Int64(mu.int())
		case onnxpb.AttributeProto_INTS:
			if len(a.Ints) > 0 && r.Intn(3) > 0 {
				a.Ints[r.Intn(len(a.Ints))] = mu.int()
			} else {
				a.Ints = append(a.Ints, mu.int())
			}
		case onnxpb.AttributeProto_FLOAT:
			a.F = proto.Float32(float32(mu.int()))
		case onnxpb.AttributeProto_STRING:
			a.S = []byte([]string{"", "nearest", "linear", "cubic", "SAME_UPPER", "VALID", "constant", "reflect", "DCR"}[r.Intn(9)])
		}
	case k == 5 && len(g.Initializer) > 0: // an initializer's dims
		tp := g.Initializer[r.Intn(len(g.Initializer))]
		if len(tp.Dims) > 0 && r.Intn(2) == 0 {
			tp.Dims[r.Intn(len(tp.Dims))] = mu.int()
		} else {
			tp.Dims = append(tp.Dims, 1)
		}
	case k == 6 && len(g.Initializer) > 0: // an int64 initializer's values
		tp := g.Initializer[r.Intn(len(g.Initializer))]
		if tp.GetDataType() == int32(graph.Int64) && len(tp.RawData) >= 8 {
			i := 8 * r.Intn(len(tp.RawData)/8)
			v := uint64(mu.int())
			for b := 0; b < 8; b++ {
				tp.RawData[i+b] = byte(v >> (8 * b))
			}
		}
	case k == 7 && len(g.Input) > 0: // an input's dims
		sh := g.Input[r.Intn(len(g.Input))].GetType().GetTensorType().GetShape()
		if sh != nil && len(sh.Dim) > 0 {
			d := int64(r.Intn(70))
			if r.Intn(4) == 0 {
				d = mu.int()
			}
			sh.Dim[r.Intn(len(sh.Dim))].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}
		}
	case k == 8 && len(g.Node) > 1: // drop a node
		i := r.Intn(len(g.Node))
		g.Node = append(g.Node[:i], g.Node[i+1:]...)
	case k == 9: // an initializer's or input's element type
		dt := int32([]graph.DType{graph.Float32, graph.Int64, graph.Int32, graph.Bool, graph.Float16, graph.Uint8}[r.Intn(6)])
		if len(g.Initializer) > 0 && r.Intn(2) == 0 {
			g.Initializer[r.Intn(len(g.Initializer))].DataType = proto.Int32(dt)
		} else if len(g.Input) > 0 {
			if tt := g.Input[r.Intn(len(g.Input))].GetType().GetTensorType(); tt != nil {
				tt.ElemType = proto.Int32(dt)
			}
		}
	}
}

// TestStructuredMutations applies seeded structural mutations to small
// valid models: Decode must turn each into a model or a one-line error,
// never a panic (not even one its recover catches).
func TestStructuredMutations(t *testing.T) {
	seeds := mutationSeeds(t)
	opSet := map[string]bool{}
	for _, s := range seeds {
		mp := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(s, mp); err != nil {
			t.Fatal(err)
		}
		for _, n := range mp.GetGraph().GetNode() {
			opSet[n.GetOpType()] = true
		}
	}
	for _, op := range []string{"Reshape", "Slice", "Gather", "Concat", "Expand", "Tile", "Resize", "Pad", "Squeeze",
		"Unsqueeze", "Transpose", "ConstantOfShape", "Range", "Split", "TopK", "ReduceSum", "Einsum", "Where", "OneHot"} {
		opSet[op] = true
	}
	mu := &mutator{rng: rand.New(rand.NewSource(7))}
	for op := range opSet {
		mu.ops = append(mu.ops, op)
	}
	sort.Strings(mu.ops)
	rounds := 4000
	if testing.Short() {
		rounds = 500
	}
	loaded := 0
	for i := 0; i < rounds; i++ {
		seed := seeds[mu.rng.Intn(len(seeds))]
		mp := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(seed, mp); err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= mu.rng.Intn(3); k++ {
			mu.mutate(mp)
		}
		data, err := proto.Marshal(mp)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(data, "mut.onnx", fuzzOptions(data))
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, "mut.onnx: ") || strings.Contains(msg, "internal error") {
				t.Errorf("round %d: %s", i, msg)
			}
			continue
		}
		if m.Hash != ContentHash(data) {
			t.Fatal("model without hash")
		}
		loaded++
	}
	t.Logf("%d of %d mutated models loaded", loaded, rounds)
	// Both paths must be exercised: mutations that every model survives, or
	// none does, test only one of them.
	if loaded == 0 || loaded == rounds {
		t.Errorf("%d of %d mutated models loaded; want some to load and some to fail", loaded, rounds)
	}
}
