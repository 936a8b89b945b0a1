package onnx

import (
	"errors"
	"fmt"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

var marshal = proto.MarshalOptions{Deterministic: true}

// attrType is the attribute's declared type, or for IR 0.0.1 files that
// left it out, the type of the one value field that is set.
func attrType(a *onnxpb.AttributeProto) onnxpb.AttributeProto_AttributeType {
	if a.Type != nil {
		return a.GetType()
	}
	switch {
	case a.F != nil:
		return onnxpb.AttributeProto_FLOAT
	case a.I != nil:
		return onnxpb.AttributeProto_INT
	case a.S != nil:
		return onnxpb.AttributeProto_STRING
	case a.T != nil:
		return onnxpb.AttributeProto_TENSOR
	case a.G != nil:
		return onnxpb.AttributeProto_GRAPH
	case len(a.Floats) > 0:
		return onnxpb.AttributeProto_FLOATS
	case len(a.Ints) > 0:
		return onnxpb.AttributeProto_INTS
	case len(a.Strings) > 0:
		return onnxpb.AttributeProto_STRINGS
	}
	return onnxpb.AttributeProto_UNDEFINED
}

// convertAttr turns one AttributeProto into a graph.Attr. Graph-valued
// attributes keep the serialized GraphProto; kinds inlay does not model
// keep the whole serialized AttributeProto (AttrOther).
func convertAttr(a *onnxpb.AttributeProto) (graph.Attr, error) {
	name := a.GetName()
	if name == "" {
		return graph.Attr{}, errors.New("attribute without a name")
	}
	out := graph.Attr{Name: name}
	if a.GetRefAttrName() != "" {
		return other(out, a)
	}
	switch attrType(a) {
	case onnxpb.AttributeProto_FLOAT:
		out.Kind, out.Float = graph.AttrFloat, a.GetF()
	case onnxpb.AttributeProto_INT:
		out.Kind, out.Int = graph.AttrInt, a.GetI()
	case onnxpb.AttributeProto_STRING:
		out.Kind, out.String = graph.AttrString, string(a.GetS())
	case onnxpb.AttributeProto_FLOATS:
		out.Kind, out.Floats = graph.AttrFloats, append([]float32{}, a.GetFloats()...)
	case onnxpb.AttributeProto_INTS:
		out.Kind, out.Ints = graph.AttrInts, append([]int64{}, a.GetInts()...)
	case onnxpb.AttributeProto_STRINGS:
		out.Kind = graph.AttrStrings
		out.Strings = make([]string, len(a.GetStrings()))
		for i, s := range a.GetStrings() {
			out.Strings[i] = string(s)
		}
	case onnxpb.AttributeProto_TENSOR:
		if a.GetT() == nil {
			return out, fmt.Errorf("attribute %q: tensor attribute without a tensor", name)
		}
		if graph.DType(a.GetT().GetDataType()) == graph.String {
			return other(out, a) // string tensors: kept opaque
		}
		d, err := tensorData(a.GetT())
		if err != nil {
			return out, fmt.Errorf("attribute %q: %w", name, err)
		}
		out.Kind, out.Tensor = graph.AttrTensor, d
	case onnxpb.AttributeProto_GRAPH:
		if a.GetG() == nil {
			return out, fmt.Errorf("attribute %q: graph attribute without a graph", name)
		}
		b, err := marshal.Marshal(a.GetG())
		if err != nil {
			return out, fmt.Errorf("attribute %q: %w", name, err)
		}
		out.Kind, out.Graph = graph.AttrGraph, b
	case onnxpb.AttributeProto_UNDEFINED:
		return out, fmt.Errorf("attribute %q has no type and no value", name)
	default:
		return other(out, a)
	}
	return out, nil
}

func other(out graph.Attr, a *onnxpb.AttributeProto) (graph.Attr, error) {
	b, err := marshal.Marshal(a)
	if err != nil {
		return out, fmt.Errorf("attribute %q: %w", out.Name, err)
	}
	out.Kind, out.Graph = graph.AttrOther, b
	return out, nil
}

// attrProto is the inverse of convertAttr. fill supplies values for tensor
// attributes whose Raw is nil (named after owner, the node's output).
func attrProto(a graph.Attr, owner string, fill func(string, *graph.Data) ([]byte, error)) (*onnxpb.AttributeProto, error) {
	p := &onnxpb.AttributeProto{Name: proto.String(a.Name)}
	typ := func(t onnxpb.AttributeProto_AttributeType) { p.Type = t.Enum() }
	switch a.Kind {
	case graph.AttrInt:
		typ(onnxpb.AttributeProto_INT)
		p.I = proto.Int64(a.Int)
	case graph.AttrFloat:
		typ(onnxpb.AttributeProto_FLOAT)
		p.F = proto.Float32(a.Float)
	case graph.AttrString:
		typ(onnxpb.AttributeProto_STRING)
		p.S = []byte(a.String)
	case graph.AttrInts:
		typ(onnxpb.AttributeProto_INTS)
		p.Ints = append([]int64{}, a.Ints...)
	case graph.AttrFloats:
		typ(onnxpb.AttributeProto_FLOATS)
		p.Floats = append([]float32{}, a.Floats...)
	case graph.AttrStrings:
		typ(onnxpb.AttributeProto_STRINGS)
		for _, s := range a.Strings {
			p.Strings = append(p.Strings, []byte(s))
		}
	case graph.AttrTensor:
		typ(onnxpb.AttributeProto_TENSOR)
		t, err := tensorProto("", a.Tensor, func(_ string, d *graph.Data) ([]byte, error) { return fill(owner, d) })
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
		p.T = t
	case graph.AttrGraph:
		typ(onnxpb.AttributeProto_GRAPH)
		g := &onnxpb.GraphProto{}
		if err := proto.Unmarshal(a.Graph, g); err != nil {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
		p.G = g
	case graph.AttrOther:
		if err := proto.Unmarshal(a.Graph, p); err != nil {
			return nil, fmt.Errorf("attribute %q: %w", a.Name, err)
		}
		p.Name = proto.String(a.Name)
	default:
		return nil, fmt.Errorf("attribute %q has unknown kind %d", a.Name, a.Kind)
	}
	return p, nil
}

// constantValue is the value a Constant node produces, from whichever of
// its value attributes is set.
func constantValue(attrs graph.Attrs) (*graph.Data, error) {
	if len(attrs) != 1 {
		return nil, fmt.Errorf("Constant needs exactly one value attribute, has %d", len(attrs))
	}
	a := attrs[0]
	f32 := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			putF32(b[4*i:], x)
		}
		return b
	}
	i64 := func(v []int64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			putI64(b[8*i:], x)
		}
		return b
	}
	switch {
	case a.Name == "value" && a.Kind == graph.AttrTensor:
		return a.Tensor, nil
	case a.Name == "value_float" && a.Kind == graph.AttrFloat:
		return &graph.Data{DType: graph.Float32, Dims: graph.Shape{}, Raw: f32([]float32{a.Float})}, nil
	case a.Name == "value_floats" && a.Kind == graph.AttrFloats:
		return &graph.Data{DType: graph.Float32, Dims: graph.Shape{int64(len(a.Floats))}, Raw: f32(a.Floats)}, nil
	case a.Name == "value_int" && a.Kind == graph.AttrInt:
		return &graph.Data{DType: graph.Int64, Dims: graph.Shape{}, Raw: i64([]int64{a.Int})}, nil
	case a.Name == "value_ints" && a.Kind == graph.AttrInts:
		return &graph.Data{DType: graph.Int64, Dims: graph.Shape{int64(len(a.Ints))}, Raw: i64(a.Ints)}, nil
	}
	return nil, fmt.Errorf("Constant attribute %q (%s) is not supported", a.Name, attrKindName(a.Kind))
}

func attrKindName(k graph.AttrKind) string {
	names := map[graph.AttrKind]string{
		graph.AttrInt: "int", graph.AttrFloat: "float", graph.AttrString: "string",
		graph.AttrInts: "ints", graph.AttrFloats: "floats", graph.AttrStrings: "strings",
		graph.AttrTensor: "tensor", graph.AttrGraph: "graph", graph.AttrOther: "other kind",
	}
	if s, ok := names[k]; ok {
		return s
	}
	return fmt.Sprintf("kind %d", k)
}
