package infer

import (
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

// TestFoldShapeChain folds Shape→Gather→Unsqueeze→Concat→Reshape, the
// pattern exporters write for x.view(x.size(0), -1).
func TestFoldShapeChain(t *testing.T) {
	b := newModel(13).input("x", f32, 2, 3, 4, 5).
		ints("zero", graph.Shape{}, 0).ints("ax0", nil, 0).ints("minus1", nil, -1)
	b.node("Shape", []string{"x"}, []string{"shp"})
	b.node("Gather", []string{"shp", "zero"}, []string{"n"})
	b.node("Unsqueeze", []string{"n", "ax0"}, []string{"n1"})
	b.node("Concat", []string{"n1", "minus1"}, []string{"target"}, aInt("axis", 0))
	b.node("Reshape", []string{"x", "target"}, []string{"y"}).output("y")
	if err := Run(b.m, Options{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		shape graph.Shape
		vals  []int64
	}{
		{"shp", graph.Shape{4}, []int64{2, 3, 4, 5}},
		{"n", graph.Shape{}, []int64{2}},
		{"n1", graph.Shape{1}, []int64{2}},
		{"target", graph.Shape{2}, []int64{2, -1}},
	}
	for _, tt := range tests {
		tn := b.m.Tensors[tt.name]
		if tn.Kind != graph.Folded || tn.Data == nil {
			t.Errorf("%s: kind %s, want folded", tt.name, tn.Kind)
			continue
		}
		if !tn.Shape.Equal(tt.shape) || !reflect.DeepEqual(int64s(tn.Data), tt.vals) {
			t.Errorf("%s: %s %v, want %s %v", tt.name, tn.Shape, int64s(tn.Data), tt.shape, tt.vals)
		}
	}
	y := b.m.Tensors["y"]
	if y.Kind != graph.Activation || !y.Shape.Equal(graph.Shape{2, 60}) {
		t.Errorf("y: %s %s, want activation 2x60", y.Kind, y.Shape)
	}
	for _, n := range b.m.Nodes[:4] {
		if n.Work != (graph.Work{}) {
			t.Errorf("folded %s has work %+v", n, n.Work)
		}
	}
	if b.m.Nodes[4].Work.BytesOut != 120*4 {
		t.Errorf("Reshape BytesOut %d, want 480", b.m.Nodes[4].Work.BytesOut)
	}
}

// TestFoldValues checks the evaluators on small constant graphs.
func TestFoldValues(t *testing.T) {
	for _, tt := range foldCases() {
		t.Run(tt.name, func(t *testing.T) {
			b := newModel(13)
			tt.build(b)
			b.output("y")
			if err := Run(b.m, Options{}); err != nil {
				t.Fatal(err)
			}
			y := b.m.Tensors["y"]
			if y.Kind != graph.Folded || y.Data == nil {
				t.Fatalf("y is %s, want folded", y.Kind)
			}
			if !y.Shape.Equal(tt.shape) || !y.Data.Dims.Equal(tt.shape) {
				t.Errorf("shape %s (data %s), want %s", y.Shape, y.Data.Dims, tt.shape)
			}
			if tt.ints != nil && !reflect.DeepEqual(int64s(y.Data), tt.ints) {
				t.Errorf("values %v, want %v", int64s(y.Data), tt.ints)
			}
			if tt.flts != nil && !reflect.DeepEqual(float32s(y.Data), tt.flts) {
				t.Errorf("values %v, want %v", float32s(y.Data), tt.flts)
			}
		})
	}
}

type foldCase struct {
	name  string
	build func(b *builder)
	shape graph.Shape
	ints  []int64
	flts  []float32
}

func foldCases() []foldCase {
	return []foldCase{
		{"constantofshape then range", func(b *builder) {
			b.ints("s", nil, 3).ints("z", graph.Shape{}, 0).ints("l", graph.Shape{}, 7).ints("d", graph.Shape{}, 2)
			b.node("Range", []string{"z", "l", "d"}, []string{"y"})
		}, graph.Shape{4}, []int64{0, 2, 4, 6}, nil},
		{"constantofshape default float zeros", func(b *builder) {
			b.ints("s", nil, 2, 2).node("ConstantOfShape", []string{"s"}, []string{"y"})
		}, graph.Shape{2, 2}, nil, []float32{0, 0, 0, 0}},
		{"slice negative step", func(b *builder) {
			b.ints("a", nil, 0, 1, 2, 3, 4, 5).ints("st", nil, -1).ints("en", nil, 0).ints("ax", nil, 0).ints("sp", nil, -2)
			b.node("Slice", []string{"a", "st", "en", "ax", "sp"}, []string{"y"})
		}, graph.Shape{3}, []int64{5, 3, 1}, nil},
		{"transpose", func(b *builder) {
			b.ints("a", graph.Shape{2, 3}, 1, 2, 3, 4, 5, 6).node("Transpose", []string{"a"}, []string{"y"})
		}, graph.Shape{3, 2}, []int64{1, 4, 2, 5, 3, 6}, nil},
		{"where on equal", func(b *builder) {
			b.ints("a", nil, 1, -1, 3).ints("m1", graph.Shape{}, -1).ints("one", graph.Shape{}, 1)
			b.node("Equal", []string{"a", "m1"}, []string{"eq"})
			b.node("Where", []string{"eq", "one", "a"}, []string{"y"})
		}, graph.Shape{3}, []int64{1, 1, 3}, nil},
		{"mul div integer broadcast", func(b *builder) {
			b.ints("a", nil, 7, -7).ints("c", graph.Shape{}, 2)
			b.node("Div", []string{"a", "c"}, []string{"y"})
		}, graph.Shape{2}, []int64{3, -3}, nil},
		{"mod python semantics", func(b *builder) {
			b.ints("a", nil, 7, -7).ints("c", graph.Shape{}, 3)
			b.node("Mod", []string{"a", "c"}, []string{"y"})
		}, graph.Shape{2}, []int64{1, 2}, nil},
		{"cast float to int truncates", func(b *builder) {
			b.floats("a", nil, 1.7, -1.7).node("Cast", []string{"a"}, []string{"y"}, aInt("to", int64(graph.Int64)))
		}, graph.Shape{2}, []int64{1, -1}, nil},
		{"expand", func(b *builder) {
			b.ints("a", graph.Shape{2, 1}, 1, 2).ints("s", nil, 2, 3).node("Expand", []string{"a", "s"}, []string{"y"})
		}, graph.Shape{2, 3}, []int64{1, 1, 1, 2, 2, 2}, nil},
		{"tile", func(b *builder) {
			b.ints("a", nil, 1, 2).ints("r", nil, 2).node("Tile", []string{"a", "r"}, []string{"y"})
		}, graph.Shape{4}, []int64{1, 2, 1, 2}, nil},
		{"concat axis 1", func(b *builder) {
			b.ints("a", graph.Shape{2, 1}, 1, 2).ints("c", graph.Shape{2, 2}, 3, 4, 5, 6).node("Concat", []string{"a", "c"}, []string{"y"}, aInt("axis", 1))
		}, graph.Shape{2, 3}, []int64{1, 3, 4, 2, 5, 6}, nil},
		{"gather axis 1 negative index", func(b *builder) {
			b.ints("a", graph.Shape{2, 3}, 1, 2, 3, 4, 5, 6).ints("i", nil, -1, 0).node("Gather", []string{"a", "i"}, []string{"y"}, aInt("axis", 1))
		}, graph.Shape{2, 2}, []int64{3, 1, 6, 4}, nil},
		{"split second output", func(b *builder) {
			b.ints("a", graph.Shape{2, 3}, 1, 2, 3, 4, 5, 6).ints("sp", nil, 1, 2).node("Split", []string{"a", "sp"}, []string{"x", "y"}, aInt("axis", 1))
		}, graph.Shape{2, 2}, []int64{2, 3, 5, 6}, nil},
		{"reducesum keepdims", func(b *builder) {
			b.ints("a", graph.Shape{2, 3}, 1, 2, 3, 4, 5, 6).ints("ax", nil, 1).node("ReduceSum", []string{"a", "ax"}, []string{"y"})
		}, graph.Shape{2, 1}, []int64{6, 15}, nil},
		{"reduceprod", func(b *builder) {
			b.ints("a", graph.Shape{2, 3}, 1, 2, 3, 4, 5, 6).node("ReduceProd", []string{"a"}, []string{"y"}, aInts("axes", 0), aInt("keepdims", 0))
		}, graph.Shape{3}, []int64{4, 10, 18}, nil},
		{"float sqrt and mul", func(b *builder) {
			b.floats("a", nil, 4, 9).floats("c", nil, 0.5)
			b.node("Sqrt", []string{"a"}, []string{"r"})
			b.node("Mul", []string{"r", "c"}, []string{"y"})
		}, graph.Shape{2}, nil, []float32{1, 1.5}},
		{"clip attributes opset 6", func(b *builder) {
			b.m.Opsets[0].Version = 6
			b.floats("a", nil, -3, 0.5, 9).node("Clip", []string{"a"}, []string{"y"}, aFloat("min", 0), aFloat("max", 1))
		}, graph.Shape{3}, nil, []float32{0, 0.5, 1}},
		{"nonzero", func(b *builder) {
			b.ints("a", graph.Shape{2, 2}, 0, 3, 5, 0).node("NonZero", []string{"a"}, []string{"y"})
		}, graph.Shape{2, 2}, []int64{0, 1, 1, 0}, nil},
		{"pad constant opset 11", func(b *builder) {
			b.m.Opsets[0].Version = 11
			b.ints("a", nil, 1, 2).ints("p", nil, 1, 2).ints("v", graph.Shape{}, 9).node("Pad", []string{"a", "p", "v"}, []string{"y"})
		}, graph.Shape{5}, []int64{9, 1, 2, 9, 9}, nil},
		{"scatternd", func(b *builder) {
			b.ints("a", nil, 1, 2, 3, 4).ints("i", graph.Shape{2, 1}, 3, 0).ints("u", nil, 40, 10).node("ScatterND", []string{"a", "i", "u"}, []string{"y"})
		}, graph.Shape{4}, []int64{10, 2, 3, 40}, nil},
		{"scatterelements axis 1", func(b *builder) {
			b.ints("a", graph.Shape{2, 2}, 1, 2, 3, 4).ints("i", graph.Shape{2, 1}, 1, 0).ints("u", graph.Shape{2, 1}, 7, 8).
				node("ScatterElements", []string{"a", "i", "u"}, []string{"y"}, aInt("axis", 1))
		}, graph.Shape{2, 2}, []int64{1, 7, 8, 4}, nil},
		{"gatherelements", func(b *builder) {
			b.ints("a", graph.Shape{2, 2}, 1, 2, 3, 4).ints("i", graph.Shape{2, 2}, 0, 0, 1, 0).
				node("GatherElements", []string{"a", "i"}, []string{"y"}, aInt("axis", 1))
		}, graph.Shape{2, 2}, []int64{1, 1, 4, 3}, nil},
		{"cumsum exclusive reverse", func(b *builder) {
			b.ints("a", nil, 1, 2, 3).ints("ax", graph.Shape{}, 0).node("CumSum", []string{"a", "ax"}, []string{"y"}, aInt("exclusive", 1), aInt("reverse", 1))
		}, graph.Shape{3}, []int64{5, 3, 0}, nil},
		{"cumsum", func(b *builder) {
			b.ints("a", nil, 1, 2, 3).ints("ax", graph.Shape{}, 0).node("CumSum", []string{"a", "ax"}, []string{"y"})
		}, graph.Shape{3}, []int64{1, 3, 6}, nil},
		{"argmax keepdims 0", func(b *builder) {
			b.ints("a", graph.Shape{2, 3}, 1, 5, 2, 7, 0, 7).node("ArgMax", []string{"a"}, []string{"y"}, aInt("axis", 1), aInt("keepdims", 0))
		}, graph.Shape{2}, []int64{1, 0}, nil},
		{"trilu lower", func(b *builder) {
			b.m.Opsets[0].Version = 14
			b.ints("a", graph.Shape{2, 2}, 1, 2, 3, 4).node("Trilu", []string{"a"}, []string{"y"}, aInt("upper", 0))
		}, graph.Shape{2, 2}, []int64{1, 0, 3, 4}, nil},
		{"matmul", func(b *builder) {
			b.floats("a", graph.Shape{1, 2}, 1, 2).floats("c", graph.Shape{2, 2}, 1, 2, 3, 4).node("MatMul", []string{"a", "c"}, []string{"y"})
		}, graph.Shape{1, 2}, nil, []float32{7, 10}},
	}
}

// TestNoFoldWithoutValues: initializers without Raw data keep their shape
// and are not folded; large constants are not folded either.
func TestNoFoldWithoutValues(t *testing.T) {
	b := newModel(13).weight("w", f32, 4, 4).floats("c", nil, 1)
	b.node("Mul", []string{"w", "c"}, []string{"y"})
	b.ints("big", nil, 1<<11, 1<<10)
	b.node("ConstantOfShape", []string{"big"}, []string{"z"}).output("y", "z")
	if err := Run(b.m, Options{}); err != nil {
		t.Fatal(err)
	}
	if y := b.m.Tensors["y"]; y.Kind != graph.Activation || !y.Shape.Equal(graph.Shape{4, 4}) {
		t.Errorf("y: %s %s, want activation 4x4", y.Kind, y.Shape)
	}
	if z := b.m.Tensors["z"]; z.Kind != graph.Activation || z.Data != nil || !z.Shape.Equal(graph.Shape{2048, 1024}) {
		t.Errorf("z: %s %s, want a 2048x1024 activation without data", z.Kind, z.Shape)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func(b *builder)
		want  string
	}{
		{"unknown operator", func(b *builder) {
			b.input("a", f32, 2).node("FrobnicateV2", []string{"a"}, []string{"y"})
			b.m.Nodes[0].Name = "frob"
		}, `infer: node "frob" (FrobnicateV2): no shape rule for operator FrobnicateV2`},
		{"unknown domain operator", func(b *builder) {
			b.input("a", f32, 2).node("Thing", []string{"a"}, []string{"y"})
			b.m.Nodes[0].Domain = "org.example"
		}, `no shape rule for operator Thing in domain "org.example"`},
		{"add not broadcastable", func(b *builder) {
			b.input("a", f32, 2, 3).input("c", f32, 4).node("Add", []string{"a", "c"}, []string{"y"})
		}, "not broadcastable"},
		{"matmul K mismatch", func(b *builder) {
			b.input("a", f32, 2, 3).input("c", f32, 4, 5).node("MatMul", []string{"a", "c"}, []string{"y"})
		}, "inner dimensions 3 and 4 differ"},
		{"gemm K mismatch", func(b *builder) {
			b.input("a", f32, 2, 3).weight("c", f32, 4, 5).node("Gemm", []string{"a", "c"}, []string{"y"})
		}, "inner dimensions 3 and 4 differ"},
		{"reshape count mismatch", func(b *builder) {
			b.input("a", f32, 2, 3).ints("s", nil, 4, 2).node("Reshape", []string{"a", "s"}, []string{"y"})
		}, "cannot reshape 2x3 (6 elements) to [4 2] (8 elements)"},
		{"reshape shape not constant", func(b *builder) {
			b.input("a", f32, 2, 3).input("s", graph.Int64, 2).node("Reshape", []string{"a", "s"}, []string{"y"})
		}, `input 1 ("s") must be a constant`},
		{"reshape shape without values", func(b *builder) {
			b.input("a", f32, 2, 3).weight("s", graph.Int64, 2).node("Reshape", []string{"a", "s"}, []string{"y"})
		}, `input 1 ("s") must be a constant with known values`},
		{"conv channel mismatch", func(b *builder) {
			b.input("a", f32, 1, 4, 8, 8).weight("w", f32, 8, 3, 3, 3).node("Conv", []string{"a", "w"}, []string{"y"})
		}, "input has 4 channels"},
		{"conv kernel larger than input", func(b *builder) {
			b.input("a", f32, 1, 3, 2, 2).weight("w", f32, 8, 3, 3, 3).node("Conv", []string{"a", "w"}, []string{"y"})
		}, "smaller than the kernel extent"},
		{"tile overflow", func(b *builder) {
			b.input("a", f32, 1<<40, 2).ints("r", nil, 1<<30, 1).node("Tile", []string{"a", "r"}, []string{"y"})
		}, "overflow"},
		{"expand negative", func(b *builder) {
			b.input("a", f32, 3).ints("s", nil, -2, 3).node("Expand", []string{"a", "s"}, []string{"y"})
		}, "negative"},
		{"concat rank mismatch", func(b *builder) {
			b.input("a", f32, 2, 3).input("c", f32, 3).node("Concat", []string{"a", "c"}, []string{"y"}, aInt("axis", 0))
		}, "rank"},
		{"axis out of range", func(b *builder) {
			b.input("a", f32, 2, 3).node("Softmax", []string{"a"}, []string{"y"}, aInt("axis", 5))
		}, "axis 5 is out of range for rank 2"},
		{"squeeze non-one", func(b *builder) {
			b.input("a", f32, 2, 3).ints("ax", nil, 0).node("Squeeze", []string{"a", "ax"}, []string{"y"})
		}, "size is not 1"},
		{"nonzero on activation", func(b *builder) {
			b.input("a", f32, 2, 3).node("NonZero", []string{"a"}, []string{"y"})
		}, "depends on the input's values"},
		{"split sizes do not sum", func(b *builder) {
			b.input("a", f32, 10).ints("sp", nil, 3, 3).node("Split", []string{"a", "sp"}, []string{"x", "y"})
		}, "sum to 6"},
		{"if without nested", func(b *builder) {
			b.input("c", graph.Bool).node("If", []string{"c"}, []string{"y"}, graph.Attr{Name: "then_branch", Kind: graph.AttrGraph})
		}, "Options.Nested"},
		{"missing input", func(b *builder) {
			b.node("Relu", []string{""}, []string{"y"})
		}, "needs at least 1 inputs"},
		{"input with unknown shape", func(b *builder) {
			b.input("a", f32, 2, graph.Unknown).node("Relu", []string{"a"}, []string{"y"})
		}, `graph input "a" has shape 2x?`},
		{"range too long", func(b *builder) {
			b.ints("s", graph.Shape{}, 0).ints("l", graph.Shape{}, 1<<62).ints("d", graph.Shape{}, 1).node("Range", []string{"s", "l", "d"}, []string{"y"})
		}, "too long"},
		{"cycle", func(b *builder) {
			b.input("a", f32, 2).node("Add", []string{"a", "z"}, []string{"y"}).node("Relu", []string{"y"}, []string{"z"})
		}, "cycle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newModel(13)
			tt.build(b)
			b.output("y")
			err := Run(b.m, Options{})
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tt.want)
			}
		})
	}
}

// TestNested checks that If nodes go through Options.Nested and take its
// shapes and work.
func TestNested(t *testing.T) {
	b := newModel(13).input("c", graph.Bool).input("x", f32, 3, 4)
	b.node("If", []string{"c"}, []string{"y"}, graph.Attr{Name: "then_branch", Kind: graph.AttrGraph}, graph.Attr{Name: "else_branch", Kind: graph.AttrGraph})
	b.m.Nodes[0].Implicit = []string{"x"}
	b.output("y")
	var sawX bool
	nested := func(n *graph.Node, scope Scope) (NestedResult, error) {
		sawX = scope["x"] != nil && scope["x"].Shape.Equal(graph.Shape{3, 4})
		return NestedResult{DTypes: []graph.DType{f32}, Shapes: []graph.Shape{{3, 4}}, Work: graph.Work{FLOPs: 12}}, nil
	}
	if err := Run(b.m, Options{Nested: nested}); err != nil {
		t.Fatal(err)
	}
	if !sawX {
		t.Error("nested inference did not see x in scope")
	}
	if y := b.m.Tensors["y"]; !y.Shape.Equal(graph.Shape{3, 4}) || y.DType != f32 {
		t.Errorf("y: %s %s", y.DType, y.Shape)
	}
	if w := b.m.Nodes[0].Work; w.FLOPs != 12 || w.DType != graph.Bool && w.DType != f32 && w.DType != graph.Undefined {
		t.Errorf("work %+v", w)
	}
	failing := func(n *graph.Node, scope Scope) (NestedResult, error) {
		return NestedResult{}, errors.New("branch broke")
	}
	err := Run(b.m, Options{Nested: failing})
	if err == nil || !strings.Contains(err.Error(), `infer: node "If_y" (If): branch broke`) {
		t.Errorf("error %v", err)
	}
}

func TestSupported(t *testing.T) {
	s := Supported()
	if !sort.StringsAreSorted(s) {
		t.Error("Supported() is not sorted")
	}
	have := map[string]bool{}
	for _, op := range s {
		have[op] = true
	}
	// Operators of the real models and the zoo networks, and the breadth the
	// project asked for (If, Loop and Scan go through Options.Nested).
	for _, op := range strings.Fields(`Conv BatchNormalization Relu Clip HardSigmoid HardSwish Sigmoid Mul Add Sub
		Div Pow Sqrt Erf Gemm MatMul Softmax LayerNormalization Transpose Reshape Flatten Concat Split Slice Gather
		Shape Unsqueeze Squeeze Resize Upsample ConvTranspose MaxPool AveragePool GlobalAveragePool ReduceMean Pad
		Cast ConstantOfShape Range Expand Equal Where Tile LSTM Identity Tanh LeakyRelu Exp Log Neg Abs ArgMax TopK
		Max Min Mean Sum GreaterOrEqual Not Einsum GatherElements GatherND ScatterND ScatterElements OneHot NonZero
		Compress DepthToSpace SpaceToDepth Trilu CumSum GRU RNN Dropout InstanceNormalization GroupNormalization Mod
		BitShift QuantizeLinear DequantizeLinear DynamicQuantizeLinear ConvInteger MatMulInteger QLinearConv
		QLinearMatMul com.microsoft:QLinearAdd com.microsoft:QLinearMul DFT STFT GridSample RoiAlign NonMaxSuppression`) {
		if !have[op] {
			t.Errorf("no rule for %s", op)
		}
	}
	t.Logf("%d operators supported", len(s))
}

func TestCumStep(t *testing.T) {
	var f float64
	if a, b := cumStep(&f, 1.5, false), cumStep(&f, 2, false); a != 1.5 || b != 3.5 {
		t.Errorf("inclusive float: %v, %v; want 1.5, 3.5", a, b)
	}
	var i int64
	if a, b, c := cumStep(&i, 4, true), cumStep(&i, 5, true), cumStep(&i, 6, true); a != 0 || b != 4 || c != 9 || i != 15 {
		t.Errorf("exclusive int: %v, %v, %v (sum %v); want 0, 4, 9 (15)", a, b, c, i)
	}
}
