package onnx

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

func TestDecodeConvModel(t *testing.T) {
	data := convModel().bytes(t)
	m, err := Decode(data, "models/small.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "small" || m.Hash != ContentHash(data) || len(m.Hash) != 64 {
		t.Errorf("name %q hash %q", m.Name, m.Hash)
	}
	if len(m.Nodes) != 4 || m.Nodes[0].Op != "Constant" {
		t.Fatalf("nodes: %d, first %v", len(m.Nodes), m.Nodes[0])
	}
	if got := m.Tensor("in").Shape; !got.Equal(graph.Shape{1, 3, 8, 8}) {
		t.Errorf("input shape %v", got)
	}
	if b := m.Tensor("b"); b.Kind != graph.Initializer || b.Data == nil || !b.Shape.Equal(graph.Shape{4}) {
		t.Errorf("Constant output: %+v", b)
	}
	if got := m.Tensor("out").Shape; !got.Equal(graph.Shape{1, 4, 1, 1}) {
		t.Errorf("output shape %v", got)
	}
	if p := m.Params(); p != 4*3*3*3+4 {
		t.Errorf("params %d", p)
	}
	if macs := m.Nodes[1].Work.MACs; macs != 1*4*8*8*3*3*3 {
		t.Errorf("conv MACs %d", macs)
	}
	if a := m.Nodes[1].Attrs.Ints("pads"); len(a) != 4 {
		t.Errorf("pads %v", a)
	}
	if m.Opset() != 13 || m.IRVersion != 8 {
		t.Errorf("opset %d ir %d", m.Opset(), m.IRVersion)
	}
}

func TestInitializerInputIsNotAnInput(t *testing.T) {
	b := convModel()
	b.g.Input = append(b.g.Input, valueInfo("w", graph.Float32, 4, 3, 3, 3))
	m, err := Decode(b.bytes(t), "x.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Inputs) != 1 || m.Inputs[0] != "in" || m.Tensor("w").Kind != graph.Initializer {
		t.Errorf("inputs %v, w %v", m.Inputs, m.Tensor("w").Kind)
	}
}

func f32raw(v ...float32) []byte { return graph.Float32Raw(v) }

func TestTensorData(t *testing.T) {
	dt := func(d graph.DType) *int32 { return proto.Int32(int32(d)) }
	tests := []struct {
		name string
		tp   *onnxpb.TensorProto
		want []byte
	}{
		{"float raw", &onnxpb.TensorProto{Dims: []int64{2}, DataType: dt(graph.Float32), RawData: f32raw(1, 2)}, f32raw(1, 2)},
		{"float_data", &onnxpb.TensorProto{Dims: []int64{2}, DataType: dt(graph.Float32), FloatData: []float32{1, 2}}, f32raw(1, 2)},
		{"complex64", &onnxpb.TensorProto{Dims: []int64{1}, DataType: dt(graph.Complex64), FloatData: []float32{1, 2}}, f32raw(1, 2)},
		{"int64_data", &onnxpb.TensorProto{Dims: []int64{2}, DataType: dt(graph.Int64), Int64Data: []int64{-1, 2}},
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 0, 0, 0}},
		{"int32_data", &onnxpb.TensorProto{Dims: []int64{1}, DataType: dt(graph.Int32), Int32Data: []int32{-2}}, []byte{0xfe, 0xff, 0xff, 0xff}},
		{"int8 in int32_data", &onnxpb.TensorProto{Dims: []int64{2}, DataType: dt(graph.Int8), Int32Data: []int32{-1, 5}}, []byte{0xff, 5}},
		{"uint8", &onnxpb.TensorProto{Dims: []int64{2}, DataType: dt(graph.Uint8), Int32Data: []int32{200, 5}}, []byte{200, 5}},
		{"bool", &onnxpb.TensorProto{Dims: []int64{2}, DataType: dt(graph.Bool), Int32Data: []int32{1, 0}}, []byte{1, 0}},
		{"float16 bits", &onnxpb.TensorProto{Dims: []int64{1}, DataType: dt(graph.Float16), Int32Data: []int32{0x3c00}}, []byte{0x00, 0x3c}},
		{"int16", &onnxpb.TensorProto{Dims: []int64{1}, DataType: dt(graph.Int16), Int32Data: []int32{-2}}, []byte{0xfe, 0xff}},
		{"double_data", &onnxpb.TensorProto{Dims: []int64{1}, DataType: dt(graph.Float64), DoubleData: []float64{1}}, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{"uint32 in uint64_data", &onnxpb.TensorProto{Dims: []int64{1}, DataType: dt(graph.Uint32), Uint64Data: []uint64{7}}, []byte{7, 0, 0, 0}},
		{"uint64", &onnxpb.TensorProto{Dims: []int64{1}, DataType: dt(graph.Uint64), Uint64Data: []uint64{7}}, []byte{7, 0, 0, 0, 0, 0, 0, 0}},
		{"scalar", &onnxpb.TensorProto{DataType: dt(graph.Float32), FloatData: []float32{3}}, f32raw(3)},
		{"empty", &onnxpb.TensorProto{Dims: []int64{0, 4}, DataType: dt(graph.Float32)}, []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tensorData(tt.tp)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(d.Raw, tt.want) || d.Raw == nil {
				t.Errorf("raw % x, want % x", d.Raw, tt.want)
			}
			back, err := tensorProto("t", d, nil)
			if err != nil {
				t.Fatal(err)
			}
			again, err := tensorData(back)
			if err != nil || !bytes.Equal(again.Raw, tt.want) || !again.Dims.Equal(d.Dims) {
				t.Errorf("round trip: %v % x %v", err, again.Raw, again.Dims)
			}
		})
	}
}

func TestSymbolicInputs(t *testing.T) {
	model := func() *mb {
		return newMB(13).
			input("x", graph.Float32, "N", 3, "p2o.DynamicDimension.1", "w").
			input("h", graph.Float32, 2, "batch_size", 4).
			node("Relu", "r1", []string{"x"}, []string{"y"}).
			node("Relu", "r2", []string{"h"}, []string{"z"}).
			output("y", graph.Float32).output("z", graph.Float32)
	}
	tests := []struct {
		name      string
		inputs    map[string]graph.Shape
		wantX     graph.Shape
		wantH     graph.Shape
		wantError string
	}{
		{name: "override", inputs: map[string]graph.Shape{"x": {2, 3, 16, 32}}, wantX: graph.Shape{2, 3, 16, 32}, wantH: graph.Shape{2, 1, 4}},
		{name: "override both", inputs: map[string]graph.Shape{"x": {1, 3, 5, 6}, "h": {2, 7, 4}}, wantX: graph.Shape{1, 3, 5, 6}, wantH: graph.Shape{2, 7, 4}},
		{name: "missing", wantError: `t.onnx: graph input "x" dimension 2 ("p2o.DynamicDimension.1") has no value; planning needs it: set it with --input x=1,3,d2,d3 on the command line, or inputs: {x: [1, 3, d2, d3]} on the model in a workload`},
		{name: "rank", inputs: map[string]graph.Shape{"x": {1, 3, 5}}, wantError: `t.onnx: --input x=1,3,5 gives 3 dimension(s), but the model declares 4 (?x3x?x?)`},
		{name: "fixed dim", inputs: map[string]graph.Shape{"x": {1, 4, 5, 5}}, wantError: `t.onnx: --input x=1,4,5,5: dimension 1 is fixed to 3 in the model`},
		{name: "unknown input", inputs: map[string]graph.Shape{"y": {1}, "x": {1, 3, 5, 5}}, wantError: `t.onnx: --input y: the model has no input "y" (inputs: x, h)`},
		{name: "huge", inputs: map[string]graph.Shape{"x": {1 << 20, 3, 1 << 20, 1 << 20}}, wantError: `t.onnx: graph input "x": shape 1048576x3x1048576x1048576 of float32 is larger than 1099511627776 bytes`},
		{name: "overflow", inputs: map[string]graph.Shape{"x": {1 << 40, 3, 1 << 40, 1}}, wantError: `t.onnx: graph input "x": shape 1099511627776x3x1099511627776x1 overflows`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(model().bytes(t), "t.onnx", Options{Inputs: tt.inputs})
			if tt.wantError != "" {
				if err == nil || err.Error() != tt.wantError {
					t.Fatalf("error %v\nwant  %s", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !m.Tensor("x").Shape.Equal(tt.wantX) || !m.Tensor("h").Shape.Equal(tt.wantH) {
				t.Errorf("x %v h %v", m.Tensor("x").Shape, m.Tensor("h").Shape)
			}
		})
	}
}

// ifModel: out = If(cond) then x+x else Relu(x) → Sum with MatMul work in
// the then branch; cond is an input (unknown) or an initializer.
func ifModel(cond *onnxpb.TensorProto) *mb {
	thenG := &onnxpb.GraphProto{
		Name:   proto.String("then"),
		Node:   []*onnxpb.NodeProto{{OpType: proto.String("MatMul"), Name: proto.String("mm"), Input: []string{"x", "w"}, Output: []string{"t"}}},
		Output: []*onnxpb.ValueInfoProto{valueInfo("t", graph.Float32, "a", 4)},
	}
	elseG := &onnxpb.GraphProto{
		Name:   proto.String("else"),
		Node:   []*onnxpb.NodeProto{{OpType: proto.String("Relu"), Name: proto.String("relu"), Input: []string{"x"}, Output: []string{"e"}}},
		Output: []*onnxpb.ValueInfoProto{valueInfo("e", graph.Float32)},
	}
	b := newMB(13).input("x", graph.Float32, 2, 4).init(floatTensor("w", 4, 4))
	if cond == nil {
		b.input("c", graph.Bool, rank0{})
	} else {
		b.init(cond)
	}
	return b.node("If", "if", []string{"c"}, []string{"y"}, attrGraph("then_branch", thenG), attrGraph("else_branch", elseG)).
		output("y", graph.Float32, 2, 4)
}

func TestIf(t *testing.T) {
	tests := []struct {
		name     string
		cond     *onnxpb.TensorProto
		wantMACs int64
	}{
		{"unknown condition: costlier branch", nil, 2 * 4 * 4},
		{"then", boolTensor("c", true), 2 * 4 * 4},
		{"else", boolTensor("c", false), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(ifModel(tt.cond).bytes(t), "if.onnx", Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := m.Nodes[0]
			if n.Work.MACs != tt.wantMACs {
				t.Errorf("MACs %d, want %d", n.Work.MACs, tt.wantMACs)
			}
			if strings.Join(n.Implicit, ",") != "w,x" {
				t.Errorf("implicit %v", n.Implicit)
			}
			if s := m.Tensor("y").Shape; !s.Equal(graph.Shape{2, 4}) {
				t.Errorf("shape %v", s)
			}
			if c := m.Tensor("x").Consumers; len(c) != 1 || c[0] != 0 {
				t.Errorf("x consumers %v", c)
			}
		})
	}
}

// loopModel runs 5 iterations of acc = MatMul(acc, w), also emitting acc
// each time.
func loopModel() *mb {
	body := &onnxpb.GraphProto{
		Name: proto.String("body"),
		Input: []*onnxpb.ValueInfoProto{valueInfo("i", graph.Int64), valueInfo("cin", graph.Bool),
			valueInfo("acc", graph.Float32)},
		Node: []*onnxpb.NodeProto{
			{OpType: proto.String("Identity"), Input: []string{"cin"}, Output: []string{"cout"}},
			{OpType: proto.String("MatMul"), Name: proto.String("mm"), Input: []string{"acc", "w"}, Output: []string{"acc2"}},
			{OpType: proto.String("Identity"), Input: []string{"acc2"}, Output: []string{"scan"}},
		},
		Output: []*onnxpb.ValueInfoProto{valueInfo("cout", graph.Bool), valueInfo("acc2", graph.Float32), valueInfo("scan", graph.Float32)},
	}
	return newMB(13).input("x", graph.Float32, 2, 4).init(floatTensor("w", 4, 4)).
		init(int64Tensor("M", []int64{}, 5)).init(boolTensor("c", true)).
		node("Loop", "loop", []string{"M", "c", "x"}, []string{"final", "all"}, attrGraph("body", body)).
		output("final", graph.Float32).output("all", graph.Float32)
}

// scanModel scans axis 1 of [2, 6, 4]: state = state + slice, output
// slice·w stacked on the last axis.
func scanModel() *mb {
	sbody := &onnxpb.GraphProto{
		Name:  proto.String("sbody"),
		Input: []*onnxpb.ValueInfoProto{valueInfo("s", graph.Float32), valueInfo("el", graph.Float32)},
		Node: []*onnxpb.NodeProto{
			{OpType: proto.String("Add"), Input: []string{"s", "el"}, Output: []string{"s2"}},
			{OpType: proto.String("MatMul"), Input: []string{"el", "w"}, Output: []string{"o"}},
		},
		Output: []*onnxpb.ValueInfoProto{valueInfo("s2", graph.Float32), valueInfo("o", graph.Float32)},
	}
	return newMB(13).input("s0", graph.Float32, 2, 4).input("seq", graph.Float32, 2, 6, 4).init(floatTensor("w", 4, 4)).
		node("Scan", "scan", []string{"s0", "seq"}, []string{"sN", "outs"}, attrGraph("body", sbody),
			attrInt("num_scan_inputs", 1), attrInts("scan_input_axes", 1), attrInts("scan_output_axes", -1)).
		output("sN", graph.Float32).output("outs", graph.Float32)
}

func TestLoopAndScan(t *testing.T) {
	for _, tc := range []struct {
		name   string
		model  *mb
		output string
		shape  graph.Shape
		macs   int64
	}{
		{"loop", loopModel(), "all", graph.Shape{5, 2, 4}, 5 * 2 * 4 * 4},
		{"scan", scanModel(), "outs", graph.Shape{2, 4, 6}, 6 * 2 * 4 * 4},
	} {
		m, err := Decode(tc.model.bytes(t), tc.name+".onnx", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s := m.Tensor(tc.output).Shape; !s.Equal(tc.shape) {
			t.Errorf("%s output %v", tc.name, s)
		}
		if macs := m.Nodes[0].Work.MACs; macs != tc.macs {
			t.Errorf("%s MACs %d", tc.name, macs)
		}
	}
}
