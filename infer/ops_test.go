package infer

import (
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

const f32 = graph.Float32

// opCase is one node writing "y" (and maybe more outputs), with the
// expected shape, dtype and MACs of "y".
type opCase struct {
	name  string
	opset int64
	build func(b *builder)
	want  graph.Shape
	dt    graph.DType // Undefined means float32
	macs  int64       // -1: not checked
}

// model is the case's one-node model (at opset 17 unless the case names
// one), its output named y.
func (tc opCase) model() *builder {
	opset := tc.opset
	if opset == 0 {
		opset = 17
	}
	b := newModel(opset)
	tc.build(b)
	b.output("y")
	return b
}

func runCases(t *testing.T, cases []opCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.model()
			if err := Run(b.m, Options{}); err != nil {
				t.Fatal(err)
			}
			y := b.m.Tensors["y"]
			if !y.Shape.Equal(tc.want) {
				t.Errorf("shape %s, want %s", y.Shape, tc.want)
			}
			dt := tc.dt
			if dt == graph.Undefined {
				dt = f32
			}
			if y.DType != dt {
				t.Errorf("dtype %s, want %s", y.DType, dt)
			}
			if tc.macs >= 0 {
				n := b.m.Nodes[len(b.m.Nodes)-1]
				if n.Work.MACs != tc.macs {
					t.Errorf("MACs %d, want %d", n.Work.MACs, tc.macs)
				}
			}
		})
	}
}

func TestConvAndPooling(t *testing.T) { runCases(t, convCases()) }

func convCases() []opCase {
	return []opCase{
		{"conv 3x3 s2 p1", 0, func(b *builder) {
			b.input("x", f32, 1, 3, 224, 224).weight("w", f32, 32, 3, 3, 3).
				node("Conv", []string{"x", "w"}, []string{"y"}, aInts("kernel_shape", 3, 3), aInts("strides", 2, 2), aInts("pads", 1, 1, 1, 1))
		}, graph.Shape{1, 32, 112, 112}, 0, 10838016},
		{"depthwise conv with bias", 0, func(b *builder) {
			b.input("x", f32, 1, 32, 56, 56).weight("w", f32, 32, 1, 3, 3).weight("bias", f32, 32).
				node("Conv", []string{"x", "w", "bias"}, []string{"y"}, aInt("group", 32), aInts("pads", 1, 1, 1, 1))
		}, graph.Shape{1, 32, 56, 56}, 0, 32 * 56 * 56 * 9},
		{"conv SAME_UPPER", 0, func(b *builder) {
			b.input("x", f32, 1, 8, 15, 15).weight("w", f32, 16, 8, 3, 3).
				node("Conv", []string{"x", "w"}, []string{"y"}, aStr("auto_pad", "SAME_UPPER"), aInts("strides", 2, 2))
		}, graph.Shape{1, 16, 8, 8}, 0, 16 * 64 * 8 * 9},
		{"conv 1d dilated", 0, func(b *builder) {
			b.input("x", f32, 2, 4, 100).weight("w", f32, 6, 4, 5).
				node("Conv", []string{"x", "w"}, []string{"y"}, aInts("dilations", 2))
		}, graph.Shape{2, 6, 92}, 0, 2 * 6 * 92 * 4 * 5},
		{"conv transpose s2 p1", 0, func(b *builder) {
			b.input("x", f32, 1, 16, 10, 10).weight("w", f32, 16, 8, 4, 4).
				node("ConvTranspose", []string{"x", "w"}, []string{"y"}, aInts("strides", 2, 2), aInts("pads", 1, 1, 1, 1))
		}, graph.Shape{1, 8, 20, 20}, 0, 16 * 100 * 8 * 16},
		{"conv transpose grouped output_padding", 0, func(b *builder) {
			b.input("x", f32, 1, 4, 5, 5).weight("w", f32, 4, 3, 3, 3).
				node("ConvTranspose", []string{"x", "w"}, []string{"y"}, aInt("group", 2), aInts("strides", 2, 2), aInts("output_padding", 1, 1))
		}, graph.Shape{1, 6, 12, 12}, 0, 4 * 25 * 3 * 9},
		{"conv transpose output_shape", 0, func(b *builder) {
			b.input("x", f32, 1, 4, 5, 5).weight("w", f32, 4, 3, 3, 3).
				node("ConvTranspose", []string{"x", "w"}, []string{"y"}, aInts("strides", 2, 2), aInts("output_shape", 10, 10))
		}, graph.Shape{1, 3, 10, 10}, 0, -1},
		{"maxpool 3x3 s2", 0, func(b *builder) {
			b.input("x", f32, 1, 64, 112, 112).
				node("MaxPool", []string{"x"}, []string{"y"}, aInts("kernel_shape", 3, 3), aInts("strides", 2, 2), aInts("pads", 1, 1, 1, 1))
		}, graph.Shape{1, 64, 56, 56}, 0, 0},
		{"maxpool ceil mode", 0, func(b *builder) {
			b.input("x", f32, 1, 1, 6, 6).
				node("MaxPool", []string{"x"}, []string{"y"}, aInts("kernel_shape", 3, 3), aInts("strides", 2, 2), aInt("ceil_mode", 1))
		}, graph.Shape{1, 1, 3, 3}, 0, 0},
		{"avgpool ceil mode last window starts in padding", 0, func(b *builder) {
			b.input("x", f32, 1, 1, 5, 5).
				node("AveragePool", []string{"x"}, []string{"y"}, aInts("kernel_shape", 2, 2), aInts("strides", 2, 2), aInts("pads", 1, 1, 1, 1), aInt("ceil_mode", 1))
		}, graph.Shape{1, 1, 3, 3}, 0, 0},
		{"global average pool", 0, func(b *builder) {
			b.input("x", f32, 2, 7, 9, 9).node("GlobalAveragePool", []string{"x"}, []string{"y"})
		}, graph.Shape{2, 7, 1, 1}, 0, 0},
		{"batchnorm", 0, func(b *builder) {
			b.input("x", f32, 2, 7, 9, 9).weight("s", f32, 7).weight("bb", f32, 7).weight("mu", f32, 7).weight("v", f32, 7).
				node("BatchNormalization", []string{"x", "s", "bb", "mu", "v"}, []string{"y"})
		}, graph.Shape{2, 7, 9, 9}, 0, 0},
		{"layernorm", 0, func(b *builder) {
			b.input("x", f32, 2, 5, 64).weight("s", f32, 64).weight("bb", f32, 64).
				node("LayerNormalization", []string{"x", "s", "bb"}, []string{"y", "mean"}, aInt("axis", -1))
		}, graph.Shape{2, 5, 64}, 0, 0},
		{"roialign", 0, func(b *builder) {
			b.input("x", f32, 1, 256, 50, 50).input("rois", f32, 10, 4).weight("bi", graph.Int64, 10).
				node("RoiAlign", []string{"x", "rois", "bi"}, []string{"y"}, aInt("output_height", 7), aInt("output_width", 7))
		}, graph.Shape{10, 256, 7, 7}, 0, 0},
		{"gridsample", 0, func(b *builder) {
			b.input("x", f32, 2, 3, 32, 32).input("g", f32, 2, 10, 12, 2).node("GridSample", []string{"x", "g"}, []string{"y"})
		}, graph.Shape{2, 3, 10, 12}, 0, 0},
	}
}

func TestMatrixOps(t *testing.T) { runCases(t, matrixCases()) }

func matrixCases() []opCase {
	return []opCase{
		{"matmul batched broadcast", 0, func(b *builder) {
			b.input("a", f32, 2, 3, 4).weight("w", f32, 4, 5).node("MatMul", []string{"a", "w"}, []string{"y"})
		}, graph.Shape{2, 3, 5}, 0, 120},
		{"matmul vector left", 0, func(b *builder) {
			b.input("a", f32, 4).input("w", f32, 3, 4, 5).node("MatMul", []string{"a", "w"}, []string{"y"})
		}, graph.Shape{3, 5}, 0, 60},
		{"matmul vector right", 0, func(b *builder) {
			b.input("a", f32, 7, 4).input("w", f32, 4).node("MatMul", []string{"a", "w"}, []string{"y"})
		}, graph.Shape{7}, 0, 28},
		{"matmul batch broadcast both", 0, func(b *builder) {
			b.input("a", f32, 2, 1, 3, 4).input("w", f32, 5, 4, 6).node("MatMul", []string{"a", "w"}, []string{"y"})
		}, graph.Shape{2, 5, 3, 6}, 0, 2 * 5 * 3 * 6 * 4},
		{"gemm transB with bias", 0, func(b *builder) {
			b.input("a", f32, 8, 512).weight("w", f32, 1000, 512).weight("c", f32, 1000).
				node("Gemm", []string{"a", "w", "c"}, []string{"y"}, aInt("transB", 1))
		}, graph.Shape{8, 1000}, 0, 8 * 1000 * 512},
		{"einsum batched matmul", 0, func(b *builder) {
			b.input("a", f32, 2, 3, 4).input("w", f32, 2, 4, 5).
				node("Einsum", []string{"a", "w"}, []string{"y"}, aStr("equation", "bij,bjk->bik"))
		}, graph.Shape{2, 3, 5}, 0, 120},
		{"einsum implicit ellipsis", 0, func(b *builder) {
			b.input("a", f32, 6, 3, 4).input("w", f32, 4, 5).
				node("Einsum", []string{"a", "w"}, []string{"y"}, aStr("equation", "...ij,jk"))
		}, graph.Shape{6, 3, 5}, 0, 6 * 3 * 4 * 5},
		{"matmulinteger", 0, func(b *builder) {
			b.input("a", graph.Uint8, 3, 4).input("w", graph.Int8, 4, 2).node("MatMulInteger", []string{"a", "w"}, []string{"y"})
		}, graph.Shape{3, 2}, graph.Int32, 24},
		{"lstm forward", 0, func(b *builder) {
			b.input("x", f32, 5, 1, 10).weight("w", f32, 1, 80, 10).weight("r", f32, 1, 80, 20).
				node("LSTM", []string{"x", "w", "r"}, []string{"y", "yh", "yc"}, aInt("hidden_size", 20))
		}, graph.Shape{5, 1, 1, 20}, 0, 5 * 80 * 30},
		{"gru bidirectional batch-first", 14, func(b *builder) {
			b.input("x", f32, 3, 7, 10).weight("w", f32, 2, 48, 10).weight("r", f32, 2, 48, 16).
				node("GRU", []string{"x", "w", "r"}, []string{"y"}, aInt("hidden_size", 16), aStr("direction", "bidirectional"), aInt("layout", 1))
		}, graph.Shape{3, 7, 2, 16}, 0, 2 * 7 * 3 * 48 * 26},
		{"rnn", 0, func(b *builder) {
			b.input("x", f32, 4, 2, 3).weight("w", f32, 1, 5, 3).weight("r", f32, 1, 5, 5).
				node("RNN", []string{"x", "w", "r"}, []string{"", "y"}, aInt("hidden_size", 5))
		}, graph.Shape{1, 2, 5}, 0, 4 * 2 * 5 * 8},
		{"attention 4-D with past and GQA", 23, func(b *builder) {
			b.input("q", f32, 2, 8, 10, 64).input("k", f32, 2, 2, 12, 64).input("v", f32, 2, 2, 12, 32).
				input("pk", f32, 2, 2, 5, 64).input("pv", f32, 2, 2, 5, 32).
				node("Attention", []string{"q", "k", "v", "", "pk", "pv"}, []string{"y", "pko", "pvo"})
		}, graph.Shape{2, 8, 10, 32}, 0, 2 * 8 * 10 * 17 * 96},
		{"attention 3-D", 23, func(b *builder) {
			b.input("q", f32, 2, 10, 512).input("k", f32, 2, 12, 512).input("v", f32, 2, 12, 512).
				node("Attention", []string{"q", "k", "v"}, []string{"y"}, aInt("q_num_heads", 8), aInt("kv_num_heads", 8))
		}, graph.Shape{2, 10, 512}, 0, 2 * 8 * 10 * 12 * 128},
		{"ms attention", 0, func(b *builder) {
			b.m.Opsets = append(b.m.Opsets, graph.OpsetImport{Domain: "com.microsoft", Version: 1})
			b.input("x", f32, 1, 16, 768).weight("w", f32, 768, 2304).weight("bias", f32, 2304).
				node("Attention", []string{"x", "w", "bias"}, []string{"y"}, aInt("num_heads", 12))
			b.m.Nodes[0].Domain = "com.microsoft"
		}, graph.Shape{1, 16, 768}, 0, 16*768*2304 + 16*16*1536},
		{"qlinearconv", 0, func(b *builder) {
			b.input("x", graph.Uint8, 1, 3, 8, 8).weight("xs", f32).weight("xz", graph.Uint8).weight("w", graph.Int8, 4, 3, 3, 3).
				weight("ws", f32).weight("wz", graph.Int8).weight("ys", f32).weight("yz", graph.Uint8).
				node("QLinearConv", []string{"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, []string{"y"})
		}, graph.Shape{1, 4, 6, 6}, graph.Uint8, 4 * 36 * 27},
		{"qlinearmatmul", 0, func(b *builder) {
			b.input("a", graph.Int8, 3, 4).weight("as", f32).weight("az", graph.Int8).weight("w", graph.Int8, 4, 2).
				weight("ws", f32).weight("wz", graph.Int8).weight("ys", f32).weight("yz", graph.Int8).
				node("QLinearMatMul", []string{"a", "as", "az", "w", "ws", "wz", "ys", "yz"}, []string{"y"})
		}, graph.Shape{3, 2}, graph.Int8, 24},
	}
}

func TestElementwiseAndShapes(t *testing.T) { runCases(t, elementwiseCases()) }

func elementwiseCases() []opCase {
	return []opCase{
		{"add broadcast", 0, func(b *builder) {
			b.input("a", f32, 2, 1, 4).input("c", f32, 3, 1).node("Add", []string{"a", "c"}, []string{"y"})
		}, graph.Shape{2, 3, 4}, 0, 0},
		{"equal gives bool", 0, func(b *builder) {
			b.input("a", graph.Int64, 5).input("c", graph.Int64).node("Equal", []string{"a", "c"}, []string{"y"})
		}, graph.Shape{5}, graph.Bool, 0},
		{"where three-way broadcast", 0, func(b *builder) {
			b.input("c", graph.Bool, 4, 1).input("a", f32, 1, 3).input("d", f32).node("Where", []string{"c", "a", "d"}, []string{"y"})
		}, graph.Shape{4, 3}, 0, 0},
		{"max variadic", 0, func(b *builder) {
			b.input("a", f32, 3, 1).input("c", f32, 4).input("d", f32, 1).node("Max", []string{"a", "c", "d"}, []string{"y"})
		}, graph.Shape{3, 4}, 0, 0},
		{"clip opset 11 inputs", 11, func(b *builder) {
			b.input("a", f32, 3, 4).floats("lo", graph.Shape{}, 0).node("Clip", []string{"a", "lo", ""}, []string{"y"})
		}, graph.Shape{3, 4}, 0, 0},
		{"cast", 0, func(b *builder) {
			b.input("a", f32, 3, 4).node("Cast", []string{"a"}, []string{"y"}, aInt("to", int64(graph.Float16)))
		}, graph.Shape{3, 4}, graph.Float16, 0},
		{"transpose", 0, func(b *builder) {
			b.input("a", f32, 1, 2, 3, 4).node("Transpose", []string{"a"}, []string{"y"}, aInts("perm", 0, 2, 3, 1))
		}, graph.Shape{1, 3, 4, 2}, 0, 0},
		{"flatten negative axis", 0, func(b *builder) {
			b.input("a", f32, 2, 3, 4, 5).node("Flatten", []string{"a"}, []string{"y"}, aInt("axis", -2))
		}, graph.Shape{6, 20}, 0, 0},
		{"reshape with 0 and -1", 0, func(b *builder) {
			b.input("a", f32, 2, 3, 4).ints("s", nil, 0, -1).node("Reshape", []string{"a", "s"}, []string{"y"})
		}, graph.Shape{2, 12}, 0, 0},
		{"reshape attribute opset 4", 4, func(b *builder) {
			b.input("a", f32, 2, 3, 4).node("Reshape", []string{"a"}, []string{"y"}, aInts("shape", 4, -1))
		}, graph.Shape{4, 6}, 0, 0},
		{"squeeze attribute opset 11", 11, func(b *builder) {
			b.input("a", f32, 1, 3, 1, 4).node("Squeeze", []string{"a"}, []string{"y"}, aInts("axes", 0, -2))
		}, graph.Shape{3, 4}, 0, 0},
		{"squeeze input opset 13", 13, func(b *builder) {
			b.input("a", f32, 1, 3, 1, 4).ints("ax", nil, 2).node("Squeeze", []string{"a", "ax"}, []string{"y"})
		}, graph.Shape{1, 3, 4}, 0, 0},
		{"squeeze all ones", 13, func(b *builder) {
			b.input("a", f32, 1, 3, 1, 4).node("Squeeze", []string{"a"}, []string{"y"})
		}, graph.Shape{3, 4}, 0, 0},
		{"unsqueeze attribute opset 11", 11, func(b *builder) {
			b.input("a", f32, 3, 4).node("Unsqueeze", []string{"a"}, []string{"y"}, aInts("axes", 0, -1))
		}, graph.Shape{1, 3, 4, 1}, 0, 0},
		{"unsqueeze input opset 13", 13, func(b *builder) {
			b.input("a", f32, 3, 4).ints("ax", nil, 1).node("Unsqueeze", []string{"a", "ax"}, []string{"y"})
		}, graph.Shape{3, 1, 4}, 0, 0},
		{"concat", 0, func(b *builder) {
			b.input("a", f32, 2, 3).input("c", f32, 2, 5).node("Concat", []string{"a", "c"}, []string{"y"}, aInt("axis", -1))
		}, graph.Shape{2, 8}, 0, 0},
		{"split attribute opset 11", 11, func(b *builder) {
			b.input("a", f32, 2, 10).node("Split", []string{"a"}, []string{"x1", "y"}, aInt("axis", 1), aInts("split", 3, 7))
		}, graph.Shape{2, 7}, 0, 0},
		{"split input opset 13", 13, func(b *builder) {
			b.input("a", f32, 2, 10).ints("sp", nil, 6, 4).node("Split", []string{"a", "sp"}, []string{"x1", "y"}, aInt("axis", 1))
		}, graph.Shape{2, 4}, 0, 0},
		{"split equal", 13, func(b *builder) {
			b.input("a", f32, 9, 2).node("Split", []string{"a"}, []string{"x1", "x2", "y"})
		}, graph.Shape{3, 2}, 0, 0},
		{"split num_outputs uneven", 18, func(b *builder) {
			b.input("a", f32, 10).node("Split", []string{"a"}, []string{"x1", "x2", "y"}, aInt("num_outputs", 3))
		}, graph.Shape{2}, 0, 0},
		{"slice attributes opset 9", 9, func(b *builder) {
			b.input("a", f32, 5, 10).node("Slice", []string{"a"}, []string{"y"}, aInts("starts", 1, 2), aInts("ends", 1000, -1), aInts("axes", 0, 1))
		}, graph.Shape{4, 7}, 0, 0},
		{"slice inputs negative step", 13, func(b *builder) {
			b.input("a", f32, 5, 10).ints("st", nil, -1).ints("en", nil, -1<<63).ints("ax", nil, 1).ints("sp", nil, -3).
				node("Slice", []string{"a", "st", "en", "ax", "sp"}, []string{"y"})
		}, graph.Shape{5, 4}, 0, 0},
		{"gather", 0, func(b *builder) {
			b.input("a", f32, 5, 6, 7).input("i", graph.Int64, 2, 3).node("Gather", []string{"a", "i"}, []string{"y"}, aInt("axis", 1))
		}, graph.Shape{5, 2, 3, 7}, 0, 0},
		{"gather scalar index", 0, func(b *builder) {
			b.input("a", f32, 5, 6).ints("i", graph.Shape{}, 2).node("Gather", []string{"a", "i"}, []string{"y"})
		}, graph.Shape{6}, 0, 0},
		{"gathernd batch dims", 0, func(b *builder) {
			b.input("a", f32, 2, 3, 4, 5).weight("i", graph.Int64, 2, 7, 2).node("GatherND", []string{"a", "i"}, []string{"y"}, aInt("batch_dims", 1))
		}, graph.Shape{2, 7, 5}, 0, 0},
		{"gatherelements", 0, func(b *builder) {
			b.input("a", f32, 3, 4).input("i", graph.Int64, 3, 2).node("GatherElements", []string{"a", "i"}, []string{"y"}, aInt("axis", 1))
		}, graph.Shape{3, 2}, 0, 0},
		{"scatternd", 0, func(b *builder) {
			b.input("a", f32, 4, 4).input("i", graph.Int64, 2, 1).input("u", f32, 2, 4).node("ScatterND", []string{"a", "i", "u"}, []string{"y"})
		}, graph.Shape{4, 4}, 0, 0},
		{"expand", 0, func(b *builder) {
			b.input("a", f32, 3, 1).ints("s", nil, 2, 1, 6).node("Expand", []string{"a", "s"}, []string{"y"})
		}, graph.Shape{2, 3, 6}, 0, 0},
		{"tile", 0, func(b *builder) {
			b.input("a", f32, 3, 2).ints("r", nil, 2, 3).node("Tile", []string{"a", "r"}, []string{"y"})
		}, graph.Shape{6, 6}, 0, 0},
		{"pad attribute opset 10", 10, func(b *builder) {
			b.input("a", f32, 1, 3, 4, 4).node("Pad", []string{"a"}, []string{"y"}, aInts("pads", 0, 0, 1, 2, 0, 0, 3, 4))
		}, graph.Shape{1, 3, 8, 10}, 0, 0},
		{"pad input with axes opset 18", 18, func(b *builder) {
			b.input("a", f32, 1, 3, 4, 4).ints("p", nil, 1, -1).ints("ax", nil, -1).node("Pad", []string{"a", "p", "", "ax"}, []string{"y"})
		}, graph.Shape{1, 3, 4, 4}, 0, 0},
		{"resize scales", 13, func(b *builder) {
			b.input("a", f32, 1, 3, 20, 30).floats("sc", nil, 1, 1, 2, 0.5).node("Resize", []string{"a", "", "sc"}, []string{"y"})
		}, graph.Shape{1, 3, 40, 15}, 0, 0},
		{"resize sizes", 13, func(b *builder) {
			b.input("a", f32, 1, 3, 20, 30).ints("sz", nil, 1, 3, 7, 9).node("Resize", []string{"a", "", "", "sz"}, []string{"y"})
		}, graph.Shape{1, 3, 7, 9}, 0, 0},
		{"resize opset 10 scales", 10, func(b *builder) {
			b.input("a", f32, 1, 3, 20, 30).floats("sc", nil, 1, 1, 2, 2).node("Resize", []string{"a", "sc"}, []string{"y"})
		}, graph.Shape{1, 3, 40, 60}, 0, 0},
		{"resize not_larger with axes", 18, func(b *builder) {
			b.input("a", f32, 1, 3, 20, 40).ints("sz", nil, 10, 10).node("Resize", []string{"a", "", "", "sz"}, []string{"y"},
				aInts("axes", 2, 3), aStr("keep_aspect_ratio_policy", "not_larger"))
		}, graph.Shape{1, 3, 5, 10}, 0, 0},
		{"upsample attribute opset 7", 7, func(b *builder) {
			b.input("a", f32, 1, 2, 3, 3).node("Upsample", []string{"a"}, []string{"y"}, aFloats("scales", 1, 1, 2, 3))
		}, graph.Shape{1, 2, 6, 9}, 0, 0},
		{"reducemean axes attribute keepdims", 13, func(b *builder) {
			b.input("a", f32, 2, 3, 4).node("ReduceMean", []string{"a"}, []string{"y"}, aInts("axes", -1))
		}, graph.Shape{2, 3, 1}, 0, 0},
		{"reducemean axes input opset 18", 18, func(b *builder) {
			b.input("a", f32, 2, 3, 4).ints("ax", nil, 0, 2).node("ReduceMean", []string{"a", "ax"}, []string{"y"}, aInt("keepdims", 0))
		}, graph.Shape{3}, 0, 0},
		{"reducesum all", 13, func(b *builder) {
			b.input("a", f32, 2, 3, 4).node("ReduceSum", []string{"a"}, []string{"y"}, aInt("keepdims", 0))
		}, graph.Shape{}, 0, 0},
		{"argmax", 0, func(b *builder) {
			b.input("a", f32, 2, 3, 4).node("ArgMax", []string{"a"}, []string{"y"}, aInt("axis", 1), aInt("keepdims", 0))
		}, graph.Shape{2, 4}, graph.Int64, 0},
		{"topk", 0, func(b *builder) {
			b.input("a", f32, 2, 30).ints("k", nil, 5).node("TopK", []string{"a", "k"}, []string{"v", "y"})
		}, graph.Shape{2, 5}, graph.Int64, 0},
		{"onehot", 0, func(b *builder) {
			b.input("i", graph.Int64, 2, 3).ints("d", graph.Shape{}, 10).floats("v", nil, 0, 1).node("OneHot", []string{"i", "d", "v"}, []string{"y"}, aInt("axis", 1))
		}, graph.Shape{2, 10, 3}, 0, 0},
		{"depth to space", 0, func(b *builder) {
			b.input("a", f32, 1, 8, 3, 4).node("DepthToSpace", []string{"a"}, []string{"y"}, aInt("blocksize", 2))
		}, graph.Shape{1, 2, 6, 8}, 0, 0},
		{"space to depth", 0, func(b *builder) {
			b.input("a", f32, 1, 2, 6, 8).node("SpaceToDepth", []string{"a"}, []string{"y"}, aInt("blocksize", 2))
		}, graph.Shape{1, 8, 3, 4}, 0, 0},
		{"nms upper bound", 0, func(b *builder) {
			b.input("bx", f32, 2, 100, 4).input("sc", f32, 2, 3, 100).ints("mo", nil, 10).
				node("NonMaxSuppression", []string{"bx", "sc", "mo"}, []string{"y"})
		}, graph.Shape{60, 3}, graph.Int64, 0},
		{"dft opset 17 onesided", 17, func(b *builder) {
			b.input("a", f32, 2, 16, 1).node("DFT", []string{"a"}, []string{"y"}, aInt("onesided", 1))
		}, graph.Shape{2, 9, 2}, 0, 0},
		{"stft", 17, func(b *builder) {
			b.input("a", f32, 1, 1000, 1).ints("step", graph.Shape{}, 160).weight("win", f32, 400).
				node("STFT", []string{"a", "step", "win"}, []string{"y"})
		}, graph.Shape{1, 4, 201, 2}, 0, 0},
		{"quantizelinear", 0, func(b *builder) {
			b.input("a", f32, 3, 4).weight("s", f32).weight("z", graph.Int8).node("QuantizeLinear", []string{"a", "s", "z"}, []string{"y"})
		}, graph.Shape{3, 4}, graph.Int8, 0},
		{"dequantizelinear", 0, func(b *builder) {
			b.input("a", graph.Uint8, 3, 4).weight("s", f32).node("DequantizeLinear", []string{"a", "s"}, []string{"y"})
		}, graph.Shape{3, 4}, f32, 0},
		{"ms qlinearadd", 0, func(b *builder) {
			b.m.Opsets = append(b.m.Opsets, graph.OpsetImport{Domain: "com.microsoft", Version: 1})
			b.input("a", graph.Uint8, 3, 4).weight("as", f32).weight("az", graph.Uint8).input("c", graph.Uint8, 4).
				weight("cs", f32).weight("cz", graph.Uint8).weight("ys", f32).weight("yz", graph.Uint8).
				node("QLinearAdd", []string{"a", "as", "az", "c", "cs", "cz", "ys", "yz"}, []string{"y"})
			b.m.Nodes[0].Domain = "com.microsoft"
		}, graph.Shape{3, 4}, graph.Uint8, 0},
		{"shape with start and end", 15, func(b *builder) {
			b.input("a", f32, 2, 3, 4, 5).node("Shape", []string{"a"}, []string{"y"}, aInt("start", 1), aInt("end", -1))
		}, graph.Shape{2}, graph.Int64, 0},
	}
}

func TestConstantNode(t *testing.T) {
	b := newModel(13).input("a", f32, 2, 6)
	b.m.Nodes = append(b.m.Nodes, &graph.Node{Name: "c", Op: "Constant", Outputs: []string{"s"}, Attrs: graph.Attrs{aInts("value_ints", 3, 4)}})
	b.node("Reshape", []string{"a", "s"}, []string{"y"}).output("y")
	if err := Run(b.m, Options{}); err != nil {
		t.Fatal(err)
	}
	if s := b.m.Tensors["s"]; s.Kind != graph.Initializer || !s.Shape.Equal(graph.Shape{2}) {
		t.Errorf("constant tensor: kind %s shape %s", s.Kind, s.Shape)
	}
	if y := b.m.Tensors["y"]; !y.Shape.Equal(graph.Shape{3, 4}) {
		t.Errorf("y shape %s, want 3x4", y.Shape)
	}
	if w := b.m.Nodes[0].Work; w != (graph.Work{}) {
		t.Errorf("Constant node work %+v, want zero", w)
	}
}

func TestWork(t *testing.T) {
	b := newModel(13).input("x", f32, 1, 3, 8, 8).weight("w", f32, 4, 3, 3, 3).weight("bias", f32, 4)
	b.node("Conv", []string{"x", "w", "bias"}, []string{"c"}, aInts("pads", 1, 1, 1, 1))
	b.node("Relu", []string{"c"}, []string{"y"}).output("y")
	if err := Run(b.m, Options{}); err != nil {
		t.Fatal(err)
	}
	macs := int64(4 * 64 * 27)
	want := graph.Work{MACs: macs, FLOPs: 2*macs + 4*64, ActBytesIn: 3 * 64 * 4, WeightBytes: (108 + 4) * 4,
		BytesOut: 4 * 64 * 4, Params: 112, DType: f32}
	if got := b.m.Nodes[0].Work; got != want {
		t.Errorf("Conv work %+v, want %+v", got, want)
	}
	want = graph.Work{FLOPs: 256, ActBytesIn: 1024, BytesOut: 1024, DType: f32}
	if got := b.m.Nodes[1].Work; got != want {
		t.Errorf("Relu work %+v, want %+v", got, want)
	}
}
