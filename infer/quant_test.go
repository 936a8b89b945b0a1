package infer

import (
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

func TestQuantOps(t *testing.T) { runCases(t, quantCases()) }

// zeros is an initializer of the given type holding zeros (a zero point
// whose value must be valid, e.g. for float8 types).
func (b *builder) zeros(name string, dt graph.DType, s ...int64) *builder {
	sh := graph.Shape(append([]int64{}, s...))
	n, _ := sh.Elements()
	size := n * int64(dt.Size())
	if dt == graph.Int4 || dt == graph.Uint4 {
		size = (n + 1) / 2
	}
	b.m.Tensors[name] = &graph.Tensor{Name: name, DType: dt, Shape: sh, Kind: graph.Initializer, Producer: -1,
		Data: &graph.Data{DType: dt, Dims: sh, Raw: make([]byte, size)}}
	return b
}

// ms adds a com.microsoft node and imports the domain.
func (b *builder) ms(op string, ins, outs []string, attrs ...graph.Attr) *builder {
	has := false
	for _, o := range b.m.Opsets {
		has = has || o.Domain == "com.microsoft"
	}
	if !has {
		b.m.Opsets = append(b.m.Opsets, graph.OpsetImport{Domain: "com.microsoft", Version: 1})
	}
	b.node(op, ins, outs, attrs...)
	b.m.Nodes[len(b.m.Nodes)-1].Domain = "com.microsoft"
	return b
}

// quantCases cover both quantized formats: QDQ (per tensor, per axis and
// blocked, every quantized type) and the operator-oriented ONNX and
// com.microsoft operators that ONNX Runtime's quantizer writes. Each is
// also run on ONNX Runtime by TestCasesAgainstORT.
func quantCases() []opCase {
	u8, i8 := graph.Uint8, graph.Int8
	s := func(b *builder, name string, n ...int64) *builder { // a positive scale
		shape := graph.Shape(n)
		cnt, _ := shape.Elements()
		v := make([]float32, cnt)
		for i := range v {
			v[i] = 0.05 + 0.01*float32(i)
		}
		if n == nil {
			shape = graph.Shape{}
		}
		return b.floats(name, shape, v...)
	}
	cases := []opCase{
		{"quantizelinear per tensor uint8 default", 13, func(b *builder) {
			s(b.input("x", f32, 2, 3, 4), "s").node("QuantizeLinear", []string{"x", "s"}, []string{"y"})
		}, graph.Shape{2, 3, 4}, u8, 0},
		{"quantizelinear per axis int8", 13, func(b *builder) {
			s(b.input("x", f32, 2, 3, 4), "s", 3).weight("z", i8, 3).node("QuantizeLinear", []string{"x", "s", "z"}, []string{"y"}, aInt("axis", 1))
		}, graph.Shape{2, 3, 4}, i8, 0},
		{"quantizelinear blocked int8", 21, func(b *builder) {
			s(b.input("x", f32, 2, 6), "s", 2, 2).weight("z", i8, 2, 2).node("QuantizeLinear", []string{"x", "s", "z"}, []string{"y"}, aInt("axis", 1), aInt("block_size", 4))
		}, graph.Shape{2, 6}, i8, 0},
		{"quantizelinear float8e4m3fn", 19, func(b *builder) {
			s(b.input("x", f32, 2, 3), "s").zeros("z", graph.Float8E4M3FN).node("QuantizeLinear", []string{"x", "s", "z"}, []string{"y"})
		}, graph.Shape{2, 3}, graph.Float8E4M3FN, 0},
		{"quantizelinear float8e5m2 output_dtype", 21, func(b *builder) {
			s(b.input("x", f32, 2, 3), "s").node("QuantizeLinear", []string{"x", "s"}, []string{"y"}, aInt("output_dtype", int64(graph.Float8E5M2)))
		}, graph.Shape{2, 3}, graph.Float8E5M2, 0},
		{"dequantizelinear per tensor uint8", 13, func(b *builder) {
			s(b.input("x", u8, 2, 3), "s").weight("z", u8).node("DequantizeLinear", []string{"x", "s", "z"}, []string{"y"})
		}, graph.Shape{2, 3}, f32, 0},
		{"dequantizelinear per axis int8", 13, func(b *builder) {
			s(b.input("x", i8, 4, 3, 2), "s", 4).weight("z", i8, 4).node("DequantizeLinear", []string{"x", "s", "z"}, []string{"y"}, aInt("axis", 0))
		}, graph.Shape{4, 3, 2}, f32, 0},
		{"dequantizelinear int32 bias", 13, func(b *builder) {
			s(b.input("x", graph.Int32, 8), "s").node("DequantizeLinear", []string{"x", "s"}, []string{"y"})
		}, graph.Shape{8}, f32, 0},
		{"dequantizelinear float16 scale", 19, func(b *builder) {
			b.input("x", i8, 2, 3).weight("s", graph.Float16).node("DequantizeLinear", []string{"x", "s"}, []string{"y"})
		}, graph.Shape{2, 3}, graph.Float16, 0},
		{"dequantizelinear float8e4m3fn", 19, func(b *builder) {
			b.input("x", graph.Float8E4M3FN, 2, 3)
			s(b, "s").node("DequantizeLinear", []string{"x", "s"}, []string{"y"})
		}, graph.Shape{2, 3}, f32, 0},
		{"convinteger zero points", 10, func(b *builder) {
			b.input("x", u8, 1, 2, 5, 5).weight("w", u8, 4, 2, 3, 3).weight("xz", u8).weight("wz", u8).
				node("ConvInteger", []string{"x", "w", "xz", "wz"}, []string{"y"}, aInts("pads", 1, 1, 1, 1))
		}, graph.Shape{1, 4, 5, 5}, graph.Int32, 4 * 25 * 18},
		{"matmulinteger zero points", 10, func(b *builder) {
			b.input("a", u8, 2, 3, 4).weight("b", u8, 4, 5).weight("az", u8).weight("bz", u8, 5).
				node("MatMulInteger", []string{"a", "b", "az", "bz"}, []string{"y"})
		}, graph.Shape{2, 3, 5}, graph.Int32, 2 * 3 * 5 * 4},
		{"qlinearmatmul", 10, func(b *builder) {
			b.input("a", u8, 3, 4)
			s(b, "as").weight("az", u8).weight("b", i8, 4, 5)
			s(b, "bs").weight("bz", i8)
			s(b, "ys").weight("yz", u8).node("QLinearMatMul", []string{"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, []string{"y"})
		}, graph.Shape{3, 5}, u8, 3 * 5 * 4},
		{"qlinearconv per channel with bias", 10, func(b *builder) {
			b.input("x", u8, 1, 2, 6, 6)
			s(b, "xs").weight("xz", u8).weight("w", i8, 4, 2, 3, 3)
			s(b, "ws", 4).zeros("wz", i8, 4)
			s(b, "ys").weight("yz", u8).weight("bias", graph.Int32, 4).
				node("QLinearConv", []string{"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "bias"}, []string{"y"}, aInts("strides", 2, 2))
		}, graph.Shape{1, 4, 2, 2}, u8, 4 * 4 * 18},
		{"qlinearadd broadcast", 13, func(b *builder) {
			b.input("a", u8, 1, 3, 4, 4)
			s(b, "as").weight("az", u8).input("b", u8, 1, 3, 1, 1)
			s(b, "bs").weight("bz", u8)
			s(b, "cs").weight("cz", u8).ms("QLinearAdd", []string{"a", "as", "az", "b", "bs", "bz", "cs", "cz"}, []string{"y"})
		}, graph.Shape{1, 3, 4, 4}, u8, 0},
		{"qlinearmul int8", 13, func(b *builder) {
			b.input("a", i8, 2, 5)
			s(b, "as").weight("az", i8).input("b", i8, 2, 5)
			s(b, "bs").weight("bz", i8)
			s(b, "cs").weight("cz", i8).ms("QLinearMul", []string{"a", "as", "az", "b", "bs", "bz", "cs", "cz"}, []string{"y"})
		}, graph.Shape{2, 5}, i8, 0},
		{"qlinearsigmoid", 13, func(b *builder) {
			b.input("x", u8, 2, 5)
			s(b, "xs").weight("xz", u8)
			s(b, "ys").weight("yz", u8).ms("QLinearSigmoid", []string{"x", "xs", "xz", "ys", "yz"}, []string{"y"})
		}, graph.Shape{2, 5}, u8, 0},
		{"qlinearleakyrelu", 13, func(b *builder) {
			b.input("x", i8, 2, 5)
			s(b, "xs").weight("xz", i8)
			s(b, "ys").weight("yz", i8).ms("QLinearLeakyRelu", []string{"x", "xs", "xz", "ys", "yz"}, []string{"y"}, aFloat("alpha", 0.1))
		}, graph.Shape{2, 5}, i8, 0},
		{"qlinearaveragepool", 13, func(b *builder) {
			b.input("x", u8, 1, 3, 8, 8)
			s(b, "xs").weight("xz", u8)
			s(b, "ys").weight("yz", u8).ms("QLinearAveragePool", []string{"x", "xs", "xz", "ys", "yz"}, []string{"y"}, aInts("kernel_shape", 2, 2), aInts("strides", 2, 2))
		}, graph.Shape{1, 3, 4, 4}, u8, 0},
		{"qlinearaveragepool channels_last", 13, func(b *builder) {
			b.input("x", u8, 1, 8, 8, 3)
			s(b, "xs").weight("xz", u8)
			s(b, "ys").weight("yz", u8).ms("QLinearAveragePool", []string{"x", "xs", "xz", "ys", "yz"}, []string{"y"}, aInts("kernel_shape", 3, 3), aInts("strides", 2, 2), aInt("channels_last", 1))
		}, graph.Shape{1, 3, 3, 3}, u8, 0},
		{"qlinearglobalaveragepool", 13, func(b *builder) {
			b.input("x", u8, 1, 3, 8, 8)
			s(b, "xs").weight("xz", u8)
			s(b, "ys").weight("yz", u8).ms("QLinearGlobalAveragePool", []string{"x", "xs", "xz", "ys", "yz"}, []string{"y"})
		}, graph.Shape{1, 3, 1, 1}, u8, 0},
		{"qlinearconcat", 13, func(b *builder) {
			s(b.input("a", u8, 1, 2, 4, 4).input("b", u8, 1, 3, 4, 4), "ys").weight("yz", u8)
			s(b, "as").weight("az", u8)
			s(b, "bs").weight("bz", u8).ms("QLinearConcat", []string{"ys", "yz", "a", "as", "az", "b", "bs", "bz"}, []string{"y"}, aInt("axis", 1))
		}, graph.Shape{1, 5, 4, 4}, u8, 0},
		{"qgemm float output", 13, func(b *builder) {
			b.input("a", u8, 3, 4)
			s(b, "as").weight("az", u8).weight("b", i8, 5, 4)
			s(b, "bs").zeros("bz", i8).weight("c", graph.Int32, 5).
				ms("QGemm", []string{"a", "as", "az", "b", "bs", "bz", "c"}, []string{"y"}, aInt("transB", 1))
		}, graph.Shape{3, 5}, f32, 3 * 5 * 4},
		{"qgemm quantized output", 13, func(b *builder) {
			b.input("a", u8, 3, 4)
			s(b, "as").weight("az", u8).weight("b", i8, 4, 5)
			s(b, "bs").zeros("bz", i8)
			s(b, "ys").weight("yz", u8).
				ms("QGemm", []string{"a", "as", "az", "b", "bs", "bz", "", "ys", "yz"}, []string{"y"})
		}, graph.Shape{3, 5}, u8, 3 * 5 * 4},
		{"dynamicquantizematmul", 13, func(b *builder) {
			b.input("a", f32, 2, 3, 4).weight("b", i8, 4, 5)
			s(b, "bs", 5).zeros("bz", i8, 5).floats("bias", nil, 1, 2, 3, 4, 5).
				ms("DynamicQuantizeMatMul", []string{"a", "b", "bs", "bz", "bias"}, []string{"y"})
		}, graph.Shape{2, 3, 5}, f32, 2 * 3 * 5 * 4},
		{"matmulintegertofloat", 13, func(b *builder) {
			b.input("a", u8, 2, 3, 4).weight("b", i8, 4, 5)
			s(b, "as")
			s(b, "bs", 5).weight("az", u8).zeros("bz", i8, 5).floats("bias", nil, 1, 2, 3, 4, 5).
				ms("MatMulIntegerToFloat", []string{"a", "b", "as", "bs", "az", "bz", "bias"}, []string{"y"})
		}, graph.Shape{2, 3, 5}, f32, 2 * 3 * 5 * 4},
		{"qattention", 13, func(b *builder) {
			b.input("x", u8, 2, 4, 8).weight("w", u8, 8, 24).floats("bias", nil, make([]float32, 24)...)
			s(b, "xs")
			s(b, "ws").weight("xz", u8).weight("wz", u8).
				ms("QAttention", []string{"x", "w", "bias", "xs", "ws", "", "xz", "wz"}, []string{"y"}, aInt("num_heads", 2))
		}, graph.Shape{2, 4, 8}, f32, 2*4*8*24 + 2*2*2*4*4*4},
	}
	for _, dt := range []graph.DType{graph.Int16, graph.Uint16, graph.Int4, graph.Uint4} {
		cases = append(cases, opCase{"quantizelinear " + dt.String(), 21, func(b *builder) {
			s(b.input("x", f32, 2, 4), "s").zeros("z", dt).node("QuantizeLinear", []string{"x", "s", "z"}, []string{"y"})
		}, graph.Shape{2, 4}, dt, 0})
		cases = append(cases, opCase{"dequantizelinear blocked " + dt.String(), 21, func(b *builder) {
			b.input("x", dt, 4, 6)
			s(b, "s", 2, 6).zeros("z", dt, 2, 6).node("DequantizeLinear", []string{"x", "s", "z"}, []string{"y"}, aInt("axis", 0), aInt("block_size", 2))
		}, graph.Shape{4, 6}, f32, 0})
	}
	return cases
}

// TestQuantRejects: inputs that break the specifications are errors.
func TestQuantRejects(t *testing.T) {
	cases := []struct {
		name  string
		opset int64
		build func(b *builder)
	}{
		{"per-axis scale of the wrong length", 13, func(b *builder) {
			b.input("x", f32, 2, 3).weight("s", f32, 2).node("QuantizeLinear", []string{"x", "s"}, []string{"y"}, aInt("axis", 1))
		}},
		{"per-axis before opset 13", 10, func(b *builder) {
			b.input("x", f32, 2, 3).weight("s", f32, 3).node("QuantizeLinear", []string{"x", "s"}, []string{"y"})
		}},
		{"blocked before opset 21", 19, func(b *builder) {
			b.input("x", f32, 2, 4).weight("s", f32, 2, 2).node("QuantizeLinear", []string{"x", "s"}, []string{"y"}, aInt("block_size", 2))
		}},
		{"int4 before opset 21", 19, func(b *builder) {
			b.input("x", f32, 2, 4).weight("s", f32).weight("z", graph.Int4).node("QuantizeLinear", []string{"x", "s", "z"}, []string{"y"})
		}},
		{"zero point shape differs", 13, func(b *builder) {
			b.input("x", f32, 2, 3).weight("s", f32, 3).weight("z", graph.Int8).node("QuantizeLinear", []string{"x", "s", "z"}, []string{"y"})
		}},
		{"convinteger per-channel x zero point", 10, func(b *builder) {
			b.input("x", graph.Uint8, 1, 2, 5, 5).weight("w", graph.Uint8, 4, 2, 3, 3).weight("xz", graph.Uint8, 2).
				node("ConvInteger", []string{"x", "w", "xz"}, []string{"y"})
		}},
		{"qlinearconv missing y_zero_point", 10, func(b *builder) {
			b.input("x", graph.Uint8, 1, 2, 5, 5).weight("xs", f32).weight("xz", graph.Uint8).weight("w", graph.Int8, 4, 2, 3, 3).
				weight("ws", f32).weight("wz", graph.Int8).weight("ys", f32).
				node("QLinearConv", []string{"x", "xs", "xz", "w", "ws", "wz", "ys"}, []string{"y"})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newModel(tc.opset)
			tc.build(b)
			b.output("y")
			if err := Run(b.m, Options{}); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
