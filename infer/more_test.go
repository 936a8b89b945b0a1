package infer

import (
	"maps"
	"slices"
	"sort"
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

func TestMoreOps(t *testing.T) { runCases(t, moreCases()) }

// elementwiseFamily gives one case per element-wise unary and binary
// operator, with input types each operator accepts.
func elementwiseFamily() []opCase {
	var cases []opCase
	unary := unaryOps()
	names := slices.Sorted(maps.Keys(unary))
	for _, op := range names {
		dt, out := f32, f32
		switch op {
		case "Not":
			dt, out = graph.Bool, graph.Bool
		case "BitwiseNot":
			dt, out = graph.Int32, graph.Int32
		case "IsNaN", "IsInf":
			out = graph.Bool
		}
		opset := int64(20)
		if op == "Swish" {
			opset = 24
		}
		cases = append(cases, opCase{"unary " + op, opset, func(b *builder) {
			b.input("a", dt, 2, 3).node(op, []string{"a"}, []string{"y"})
		}, graph.Shape{2, 3}, out, 0})
	}
	binary := binaryOps()
	names = names[:0]
	for op := range binary {
		names = append(names, op)
	}
	sort.Strings(names)
	for _, op := range names {
		dt := f32
		switch op {
		case "And", "Or", "Xor":
			dt = graph.Bool
		case "BitShift":
			dt = graph.Uint8
		case "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Mod":
			dt = graph.Int32
		}
		out := dt
		if binary[op].cmp {
			out = graph.Bool
		}
		var attrs []graph.Attr
		if op == "BitShift" {
			attrs = append(attrs, aStr("direction", "LEFT"))
		}
		cases = append(cases, opCase{"binary " + op, 20, func(b *builder) {
			b.input("a", dt, 4, 1, 3).input("c", dt, 2, 1).node(op, []string{"a", "c"}, []string{"y"}, attrs...)
		}, graph.Shape{4, 2, 3}, out, 0})
	}
	return cases
}

func moreCases() []opCase {
	cases := elementwiseFamily()
	return append(cases, []opCase{
		{"upsample opset 9 input", 9, func(b *builder) {
			b.input("a", f32, 1, 2, 3, 3).floats("sc", nil, 1, 1, 2, 2).node("Upsample", []string{"a", "sc"}, []string{"y"})
		}, graph.Shape{1, 2, 6, 6}, 0, 0},
		{"resize linear fractional scale", 13, func(b *builder) {
			b.input("a", f32, 1, 1, 7, 9).floats("sc", nil, 1, 1, 1.5, 0.7).node("Resize", []string{"a", "", "sc"}, []string{"y"}, aStr("mode", "linear"))
		}, graph.Shape{1, 1, 10, 6}, 0, 0},
		{"lppool", 18, func(b *builder) {
			b.input("a", f32, 1, 2, 9, 9).node("LpPool", []string{"a"}, []string{"y"}, aInts("kernel_shape", 3, 3), aInts("strides", 3, 3))
		}, graph.Shape{1, 2, 3, 3}, 0, 0},
		{"maxpool dilated with indices", 18, func(b *builder) {
			b.input("a", f32, 1, 2, 10, 10).node("MaxPool", []string{"a"}, []string{"v", "y"}, aInts("kernel_shape", 3, 3), aInts("dilations", 2, 2))
		}, graph.Shape{1, 2, 6, 6}, graph.Int64, 0},
		{"globalmaxpool 1d", 0, func(b *builder) {
			b.input("a", f32, 2, 5, 9).node("GlobalMaxPool", []string{"a"}, []string{"y"})
		}, graph.Shape{2, 5, 1}, 0, 0},
		{"instancenorm", 0, func(b *builder) {
			b.input("a", f32, 2, 5, 9).weight("s", f32, 5).weight("bb", f32, 5).node("InstanceNormalization", []string{"a", "s", "bb"}, []string{"y"})
		}, graph.Shape{2, 5, 9}, 0, 0},
		{"groupnorm", 21, func(b *builder) {
			b.input("a", f32, 2, 6, 4, 4).weight("s", f32, 6).weight("bb", f32, 6).node("GroupNormalization", []string{"a", "s", "bb"}, []string{"y"}, aInt("num_groups", 3))
		}, graph.Shape{2, 6, 4, 4}, 0, 0},
		{"lrn", 0, func(b *builder) {
			b.input("a", f32, 2, 6, 4, 4).node("LRN", []string{"a"}, []string{"y"}, aInt("size", 3))
		}, graph.Shape{2, 6, 4, 4}, 0, 0},
		{"meanvariancenormalization", 0, func(b *builder) {
			b.input("a", f32, 2, 6, 4, 4).node("MeanVarianceNormalization", []string{"a"}, []string{"y"})
		}, graph.Shape{2, 6, 4, 4}, 0, 0},
		{"lpnormalization", 0, func(b *builder) {
			b.input("a", f32, 2, 6).node("LpNormalization", []string{"a"}, []string{"y"})
		}, graph.Shape{2, 6}, 0, 0},
		{"logsoftmax opset 11 axis", 11, func(b *builder) {
			b.input("a", f32, 2, 3, 4).node("LogSoftmax", []string{"a"}, []string{"y"})
		}, graph.Shape{2, 3, 4}, 0, 0},
		{"hardmax", 13, func(b *builder) {
			b.input("a", f32, 2, 3, 4).node("Hardmax", []string{"a"}, []string{"y"})
		}, graph.Shape{2, 3, 4}, 0, 0},
		{"batchnorm training outputs", 15, func(b *builder) {
			b.input("a", f32, 2, 3, 4).weight("s", f32, 3).weight("bb", f32, 3).weight("mu", f32, 3).weight("v", f32, 3).
				node("BatchNormalization", []string{"a", "s", "bb", "mu", "v"}, []string{"o", "y", "rv"}, aInt("training_mode", 1))
		}, graph.Shape{3}, 0, 0},
		{"dropout with mask", 13, func(b *builder) {
			b.input("a", f32, 2, 3).node("Dropout", []string{"a"}, []string{"o", "y"})
		}, graph.Shape{2, 3}, graph.Bool, 0},
		{"cumsum activation", 14, func(b *builder) {
			b.input("a", f32, 2, 3).ints("ax", graph.Shape{}, 1).node("CumSum", []string{"a", "ax"}, []string{"y"})
		}, graph.Shape{2, 3}, 0, 0},
		{"trilu activation", 14, func(b *builder) {
			b.input("a", f32, 3, 4).ints("k", graph.Shape{}, 1).node("Trilu", []string{"a", "k"}, []string{"y"})
		}, graph.Shape{3, 4}, 0, 0},
		{"eyelike", 0, func(b *builder) {
			b.input("a", f32, 3, 4).node("EyeLike", []string{"a"}, []string{"y"}, aInt("dtype", int64(graph.Int32)))
		}, graph.Shape{3, 4}, graph.Int32, 0},
		{"compress constant condition", 0, func(b *builder) {
			b.input("a", f32, 3, 4).ints("cnd", nil, 1, 0, 1).node("Cast", []string{"cnd"}, []string{"cb"}, aInt("to", int64(graph.Bool))).
				node("Compress", []string{"a", "cb"}, []string{"y"}, aInt("axis", 0))
		}, graph.Shape{2, 4}, 0, 0},
		{"unique constant", 0, func(b *builder) {
			b.input("a", f32, 1).floats("c", nil, 3, 1, 3, 2).node("Unique", []string{"c"}, []string{"y", "i", "inv", "cnt"}).
				node("Identity", []string{"a"}, []string{"z"})
			b.m.Nodes[0], b.m.Nodes[1] = b.m.Nodes[1], b.m.Nodes[0]
		}, graph.Shape{3}, 0, -1},
		{"reversesequence", 0, func(b *builder) {
			b.input("a", f32, 4, 2, 3).ints("l", nil, 4, 2).node("ReverseSequence", []string{"a", "l"}, []string{"y"})
		}, graph.Shape{4, 2, 3}, 0, 0},
		{"einsum trace diag", 0, func(b *builder) {
			b.input("a", f32, 5, 5).node("Einsum", []string{"a"}, []string{"y"}, aStr("equation", "ii->i"))
		}, graph.Shape{5}, 0, -1},
		{"einsum outer", 0, func(b *builder) {
			b.input("a", f32, 3).input("c", f32, 4).node("Einsum", []string{"a", "c"}, []string{"y"}, aStr("equation", "i,j->ij"))
		}, graph.Shape{3, 4}, 0, 12},
		{"einsum transpose implicit", 0, func(b *builder) {
			b.input("a", f32, 3, 4).node("Einsum", []string{"a"}, []string{"y"}, aStr("equation", "ji"))
		}, graph.Shape{4, 3}, 0, -1},
		{"dft opset 20 axis input", 20, func(b *builder) {
			b.input("a", f32, 2, 8, 6, 2).ints("ax", graph.Shape{}, 1).node("DFT", []string{"a", "", "ax"}, []string{"y"})
		}, graph.Shape{2, 8, 6, 2}, 0, 0},
		{"dft opset 17 length", 17, func(b *builder) {
			b.input("a", f32, 2, 8, 1).ints("n", graph.Shape{}, 10).node("DFT", []string{"a", "n"}, []string{"y"})
		}, graph.Shape{2, 10, 2}, 0, 0},
		{"maxroipool", 0, func(b *builder) {
			b.input("a", f32, 1, 3, 16, 16).weight("r", f32, 4, 5).node("MaxRoiPool", []string{"a", "r"}, []string{"y"}, aInts("pooled_shape", 2, 3))
		}, graph.Shape{4, 3, 2, 3}, 0, 0},
		{"maxunpool", 11, func(b *builder) {
			b.input("a", f32, 1, 3, 4, 4).weight("i", graph.Int64, 1, 3, 4, 4).node("MaxUnpool", []string{"a", "i"}, []string{"y"}, aInts("kernel_shape", 2, 2), aInts("strides", 2, 2))
		}, graph.Shape{1, 3, 8, 8}, 0, 0},
		{"col2im", 18, func(b *builder) {
			b.input("a", f32, 1, 12, 4).ints("img", nil, 5, 5).ints("blk", nil, 2, 2).node("Col2Im", []string{"a", "img", "blk"}, []string{"y"}, aInts("strides", 2, 2))
		}, graph.Shape{1, 3, 5, 5}, 0, 0},
		{"centercroppad", 18, func(b *builder) {
			b.input("a", f32, 5, 7, 3).ints("s", nil, 6, 4).node("CenterCropPad", []string{"a", "s"}, []string{"y"}, aInts("axes", 0, 1))
		}, graph.Shape{6, 4, 3}, 0, 0},
		{"affinegrid", 20, func(b *builder) {
			b.input("th", f32, 2, 2, 3).ints("s", nil, 2, 3, 5, 7).node("AffineGrid", []string{"th", "s"}, []string{"y"})
		}, graph.Shape{2, 5, 7, 2}, 0, 0},
		{"hannwindow", 17, func(b *builder) {
			b.input("a", f32, 1).ints("n", graph.Shape{}, 16).node("HannWindow", []string{"n"}, []string{"y"}).node("Identity", []string{"a"}, []string{"z"})
		}, graph.Shape{16}, 0, 0},
		{"melweightmatrix", 17, func(b *builder) {
			b.input("a", f32, 1).ints("nb", graph.Shape{}, 8).ints("dl", graph.Shape{}, 64).ints("sr", graph.Shape{}, 16000).
				floats("lo", graph.Shape{}, 0).floats("hi", graph.Shape{}, 8000).
				node("MelWeightMatrix", []string{"nb", "dl", "sr", "lo", "hi"}, []string{"y"}).node("Identity", []string{"a"}, []string{"z"})
		}, graph.Shape{33, 8}, 0, 0},
		{"det batched", 0, func(b *builder) {
			b.input("a", f32, 4, 3, 3).node("Det", []string{"a"}, []string{"y"})
		}, graph.Shape{4}, 0, 0},
		{"dynamicquantizelinear", 0, func(b *builder) {
			b.input("a", f32, 4, 3).node("DynamicQuantizeLinear", []string{"a"}, []string{"q", "y", "zp"})
		}, graph.Shape{}, f32, 0},
		{"convinteger", 0, func(b *builder) {
			b.input("a", graph.Uint8, 1, 2, 5, 5).weight("w", graph.Uint8, 4, 2, 3, 3).node("ConvInteger", []string{"a", "w"}, []string{"y"})
		}, graph.Shape{1, 4, 3, 3}, graph.Int32, 4 * 9 * 18},
		{"randomnormallike", 0, func(b *builder) {
			b.input("a", f32, 4, 3).node("RandomNormalLike", []string{"a"}, []string{"y"})
		}, graph.Shape{4, 3}, 0, 0},
		{"randomuniform", 0, func(b *builder) {
			b.input("a", f32, 1).node("RandomUniform", nil, []string{"y"}, aInts("shape", 2, 5)).node("Identity", []string{"a"}, []string{"z"})
		}, graph.Shape{2, 5}, 0, 0},
		{"multinomial", 0, func(b *builder) {
			b.input("a", f32, 4, 3).node("Multinomial", []string{"a"}, []string{"y"}, aInt("sample_size", 6))
		}, graph.Shape{4, 6}, graph.Int32, 0},
		{"range float", 0, func(b *builder) {
			b.input("a", f32, 1).floats("s", graph.Shape{}, 0.5).floats("l", graph.Shape{}, 3).floats("d", graph.Shape{}, 0.75).
				node("Range", []string{"s", "l", "d"}, []string{"y"}).node("Identity", []string{"a"}, []string{"z"})
		}, graph.Shape{4}, 0, 0},
		{"softmaxcrossentropyloss none", 13, func(b *builder) {
			b.input("a", f32, 4, 5, 2).weight("lab", graph.Int64, 4, 2).node("SoftmaxCrossEntropyLoss", []string{"a", "lab"}, []string{"y"}, aStr("reduction", "none"))
		}, graph.Shape{4, 2}, 0, 0},
		{"size", 0, func(b *builder) {
			b.input("a", f32, 4, 5, 2).node("Size", []string{"a"}, []string{"y"})
		}, graph.Shape{}, graph.Int64, 0},
		{"topk opset 1 attribute", 1, func(b *builder) {
			b.input("a", f32, 3, 9).node("TopK", []string{"a"}, []string{"y", "i"}, aInt("k", 4))
		}, graph.Shape{3, 4}, 0, 0},
		{"castlike", 15, func(b *builder) {
			b.input("a", f32, 3).input("c", graph.Int32, 1).node("CastLike", []string{"a", "c"}, []string{"y"})
		}, graph.Shape{3}, graph.Int32, 0},
		{"gather int32 indices", 0, func(b *builder) {
			b.input("a", f32, 5, 4).weight("i", graph.Int32, 2, 2).node("Gather", []string{"a", "i"}, []string{"y"})
		}, graph.Shape{2, 2, 4}, 0, 0},
		{"split opset 2 attribute", 2, func(b *builder) {
			b.input("a", f32, 6, 2).node("Split", []string{"a"}, []string{"y", "y2"}, aInts("split", 2, 4))
		}, graph.Shape{2, 2}, 0, 0},
		{"ms qlinearmul", 0, func(b *builder) {
			b.input("a", graph.Int8, 3, 4).weight("as", f32).weight("az", graph.Int8).input("c", graph.Int8, 3, 1).
				weight("cs", f32).weight("cz", graph.Int8).weight("ys", f32).weight("yz", graph.Int8).
				node("QLinearMul", []string{"a", "as", "az", "c", "cs", "cz", "ys", "yz"}, []string{"y"})
			b.m.Nodes[0].Domain = "com.microsoft"
			b.m.Opsets = append(b.m.Opsets, graph.OpsetImport{Domain: "com.microsoft", Version: 1})
		}, graph.Shape{3, 4}, graph.Int8, 0},
		{"ms skiplayernorm", 0, func(b *builder) {
			b.input("a", f32, 2, 3, 8).input("s", f32, 2, 3, 8).weight("g", f32, 8).weight("bb", f32, 8).
				node("SkipLayerNormalization", []string{"a", "s", "g", "bb"}, []string{"y"})
			b.m.Nodes[0].Domain = "com.microsoft"
			b.m.Opsets = append(b.m.Opsets, graph.OpsetImport{Domain: "com.microsoft", Version: 1})
		}, graph.Shape{2, 3, 8}, 0, 0},
		{"ms fastgelu", 0, func(b *builder) {
			b.input("a", f32, 2, 3, 8).node("FastGelu", []string{"a"}, []string{"y"})
			b.m.Nodes[0].Domain = "com.microsoft"
			b.m.Opsets = append(b.m.Opsets, graph.OpsetImport{Domain: "com.microsoft", Version: 1})
		}, graph.Shape{2, 3, 8}, 0, 0},
		{"ms fusedmatmul transB", 0, func(b *builder) {
			b.input("a", f32, 2, 3, 4).input("c", f32, 5, 4).node("FusedMatMul", []string{"a", "c"}, []string{"y"}, aInt("transB", 1))
			msDomain(b)
		}, graph.Shape{2, 3, 5}, 0, 2 * 3 * 5 * 4},
		{"ms matmulnbits", 0, func(b *builder) {
			b.input("a", f32, 3, 64).weight("bq", graph.Uint8, 8, 2, 16).weight("sc", f32, 16).
				node("MatMulNBits", []string{"a", "bq", "sc"}, []string{"y"}, aInt("K", 64), aInt("N", 8), aInt("bits", 4), aInt("block_size", 32))
			msDomain(b)
		}, graph.Shape{3, 8}, 0, 3 * 8 * 64},
		{"ms qgemm", 0, func(b *builder) {
			b.input("a", graph.Uint8, 3, 4).weight("as", f32).weight("az", graph.Uint8).weight("w", graph.Int8, 5, 4).
				weight("ws", f32).weight("wz", graph.Int8).
				node("QGemm", []string{"a", "as", "az", "w", "ws", "wz"}, []string{"y"}, aInt("transB", 1))
			msDomain(b)
		}, graph.Shape{3, 5}, f32, 60},
		{"ms qlinearsigmoid", 0, func(b *builder) {
			b.input("a", graph.Uint8, 3, 4).weight("as", f32).weight("az", graph.Uint8).weight("ys", f32).weight("yz", graph.Uint8).
				node("QLinearSigmoid", []string{"a", "as", "az", "ys", "yz"}, []string{"y"})
			msDomain(b)
		}, graph.Shape{3, 4}, graph.Uint8, 0},
		{"ms qlinearglobalaveragepool", 0, func(b *builder) {
			b.input("a", graph.Uint8, 1, 3, 4, 4).weight("as", f32).weight("az", graph.Uint8).weight("ys", f32).weight("yz", graph.Uint8).
				node("QLinearGlobalAveragePool", []string{"a", "as", "az", "ys", "yz"}, []string{"y"})
			msDomain(b)
		}, graph.Shape{1, 3, 1, 1}, graph.Uint8, 0},
		{"ms qlinearconcat", 0, func(b *builder) {
			b.input("a", graph.Uint8, 2, 3).input("c", graph.Uint8, 2, 4).weight("ys", f32).weight("yz", graph.Uint8).
				weight("as", f32).weight("az", graph.Uint8).weight("cs", f32).weight("cz", graph.Uint8).
				node("QLinearConcat", []string{"ys", "yz", "a", "as", "az", "c", "cs", "cz"}, []string{"y"}, aInt("axis", 1))
			msDomain(b)
		}, graph.Shape{2, 7}, graph.Uint8, 0},
		{"rmsnormalization", 23, func(b *builder) {
			b.input("a", f32, 2, 3, 8).weight("s", f32, 8).node("RMSNormalization", []string{"a", "s"}, []string{"y"})
		}, graph.Shape{2, 3, 8}, 0, 0},
	}...)
}

// msDomain moves the last node to com.microsoft and imports that domain.
func msDomain(b *builder) {
	b.m.Nodes[len(b.m.Nodes)-1].Domain = "com.microsoft"
	b.m.Opsets = append(b.m.Opsets, graph.OpsetImport{Domain: "com.microsoft", Version: 1})
}
