package onnx

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// mb builds small ONNX models for tests.
type mb struct {
	mp *onnxpb.ModelProto
	g  *onnxpb.GraphProto
}

func newMB(opset int64) *mb {
	g := &onnxpb.GraphProto{Name: proto.String("test")}
	return &mb{g: g, mp: &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}},
		Graph:       g,
	}}
}

// rank0 as the only dim of valueInfo declares a scalar.
type rank0 struct{}

// valueInfo makes a tensor ValueInfoProto; dims are int (fixed), string
// (dim_param) or nil (unknown). No dims leaves the shape out; rank0{}
// declares a scalar.
func valueInfo(name string, dt graph.DType, dims ...any) *onnxpb.ValueInfoProto {
	var sh *onnxpb.TensorShapeProto
	if len(dims) > 0 {
		sh = &onnxpb.TensorShapeProto{}
	}
	for _, d := range dims {
		if _, ok := d.(rank0); ok {
			continue
		}
		x := &onnxpb.TensorShapeProto_Dimension{}
		switch v := d.(type) {
		case int:
			x.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(v)}
		case string:
			x.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: v}
		}
		sh.Dim = append(sh.Dim, x)
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{
		Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: sh}},
	}}
}

func (b *mb) input(name string, dt graph.DType, dims ...any) *mb {
	b.g.Input = append(b.g.Input, valueInfo(name, dt, dims...))
	return b
}

func (b *mb) output(name string, dt graph.DType, dims ...any) *mb {
	b.g.Output = append(b.g.Output, valueInfo(name, dt, dims...))
	return b
}

func (b *mb) init(tp *onnxpb.TensorProto) *mb {
	b.g.Initializer = append(b.g.Initializer, tp)
	return b
}

func (b *mb) node(op, name string, ins, outs []string, attrs ...*onnxpb.AttributeProto) *mb {
	b.g.Node = append(b.g.Node, &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: ins, Output: outs, Attribute: attrs})
	return b
}

func (b *mb) bytes(t testing.TB) []byte {
	t.Helper()
	data, err := proto.Marshal(b.mp)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// floatTensor is a float32 initializer with raw data (values i*0.01).
func floatTensor(name string, dims ...int64) *onnxpb.TensorProto {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	raw := make([]byte, 4*n)
	for i := int64(0); i < n; i++ {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(i)*0.01))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(int32(graph.Float32)), RawData: raw}
}

func int64Tensor(name string, dims []int64, vals ...int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(int32(graph.Int64)), Int64Data: vals}
}

func boolTensor(name string, v bool) *onnxpb.TensorProto {
	x := int32(0)
	if v {
		x = 1
	}
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: []int64{}, DataType: proto.Int32(int32(graph.Bool)), Int32Data: []int32{x}}
}

func attrInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func attrInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func attrTensor(name string, tp *onnxpb.TensorProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: tp}
}

func attrGraph(name string, g *onnxpb.GraphProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g}
}

// convModel is a small network: Conv (weights an initializer, bias a
// Constant node) → Relu → GlobalAveragePool, input [batch, 3, 8, 8].
func convModel() *mb {
	return newMB(13).
		input("in", graph.Float32, "batch", 3, 8, 8).
		init(floatTensor("w", 4, 3, 3, 3)).
		node("Constant", "bias", nil, []string{"b"}, attrTensor("value", floatTensor("", 4))).
		node("Conv", "conv", []string{"in", "w", "b"}, []string{"c"}, attrInts("kernel_shape", 3, 3), attrInts("pads", 1, 1, 1, 1)).
		node("Relu", "relu", []string{"c"}, []string{"r"}).
		node("GlobalAveragePool", "gap", []string{"r"}, []string{"out"}).
		output("out", graph.Float32, "batch", 4, 1, 1)
}
