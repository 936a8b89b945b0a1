// Package onnxtest writes small ONNX models by hand for tests: value
// declarations, nodes and the serialized model (IR 7, opset 13).
package onnxtest

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
)

// ValueInfo declares a tensor; dims nil means no shape, a negative dim is
// symbolic (named after its position: d0, d1, …).
func ValueInfo(name string, dt graph.DType, dims []int64) *onnxpb.ValueInfoProto {
	tt := &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt))}
	if dims != nil {
		tt.Shape = &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{}}
		for i, d := range dims {
			dim := &onnxpb.TensorShapeProto_Dimension{}
			if d < 0 {
				dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "d" + string(rune('0'+i))}
			} else {
				dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}
			}
			tt.Shape.Dim = append(tt.Shape.Dim, dim)
		}
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: tt}}}
}

// Node is an operator node named after its first output.
func Node(op string, in, out []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(out[0]), Input: in, Output: out, Attribute: attrs}
}

// IntAttr is an integer attribute.
func IntAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

// Model serializes g as a model of IR version 7 on the default domain's
// opset 13.
func Model(tb testing.TB, g *onnxpb.GraphProto) []byte {
	tb.Helper()
	b, err := proto.Marshal(&onnxpb.ModelProto{
		IrVersion:   proto.Int64(7),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(13)}},
		Graph:       g,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
