package onnx

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// Defaults written when a model (one built in code) names no IR version or
// opset.
const (
	defaultIRVersion = 8
	defaultOpset     = 17
)

// Encode writes a whole model as ONNX bytes: every node in m.Nodes order
// (Constant nodes included), the ONNX initializers (sorted by name), and
// the graph inputs and outputs with their dtypes and shapes. Initializers
// and Constant values whose Data.Raw is nil are filled with seeded random
// values (see randomFiller: floats normal·0.05 from a source seeded with
// seed and the tensor's name; integers zero). The output is deterministic.
func Encode(m *graph.Model, seed int64) ([]byte, error) {
	if m == nil {
		return nil, errors.New("onnx: encode: nil model")
	}
	fill := randomFiller(seed)
	gp := &onnxpb.GraphProto{Name: proto.String(graphName(m.Name))}
	constOut := map[string]bool{}
	for _, n := range m.Nodes {
		np, err := nodeProto(n, fill)
		if err != nil {
			return nil, fmt.Errorf("onnx: encode: %s: %w", n, err)
		}
		gp.Node = append(gp.Node, np)
		if n.Op == "Constant" {
			for _, o := range n.Outputs {
				constOut[o] = true
			}
		}
	}
	for _, name := range m.SortedTensorNames() {
		t := m.Tensors[name]
		if t.Kind != graph.Initializer || constOut[name] {
			continue
		}
		tp, err := initializer(t, fill)
		if err != nil {
			return nil, fmt.Errorf("onnx: encode: %w", err)
		}
		gp.Initializer = append(gp.Initializer, tp)
	}
	var err error
	if gp.Input, err = valueInfos(m, m.Inputs); err != nil {
		return nil, fmt.Errorf("onnx: encode: %w", err)
	}
	if gp.Output, err = valueInfos(m, m.Outputs); err != nil {
		return nil, fmt.Errorf("onnx: encode: %w", err)
	}
	return marshalModel(m, gp)
}

// ExportSubgraph writes a convex layer set as a standalone valid ONNX model:
// inputs and outputs are lg.Boundary(set) with their dtypes/shapes, every
// constant the nodes read (initializers, Constant-node values, folded
// values; those read by nested graphs included) is an initializer, nodes
// are in lg.Nodes(set) order with their attributes as loaded, opsets and IR
// version as the source model. Constant nodes are not exported: their
// values are initializers. Weights without values are filled as Encode(m,
// 0) fills them, so subgraphs of one model agree with each other and with
// Encode(m, 0). Non-convex or empty sets are an error.
func ExportSubgraph(lg *graph.LayerGraph, set graph.LayerSet) ([]byte, error) {
	if lg == nil || lg.Model == nil {
		return nil, errors.New("onnx: export: nil layer graph")
	}
	if len(set) == 0 {
		return nil, errors.New("onnx: export: empty layer set")
	}
	for i, id := range set {
		if id < 0 || id >= len(lg.Layers) {
			return nil, fmt.Errorf("onnx: export: layer %d does not exist (the model has %d)", id, len(lg.Layers))
		}
		if i > 0 && id <= set[i-1] {
			return nil, fmt.Errorf("onnx: export: layer set %v is not sorted and unique", []int(set))
		}
	}
	if !lg.IsConvex(set) {
		return nil, fmt.Errorf("onnx: export: layer set %s is not convex", set.Key())
	}
	m := lg.Model
	fill := randomFiller(0)
	gp := &onnxpb.GraphProto{Name: proto.String(graphName(m.Name) + "_" + set.Key())}
	ids := lg.Nodes(set)
	produced := map[string]bool{}
	for _, id := range ids {
		for _, o := range m.Nodes[id].Outputs {
			produced[o] = true
		}
	}
	consts := map[string]bool{}
	for _, id := range ids {
		n := m.Nodes[id]
		np, err := nodeProto(n, fill)
		if err != nil {
			return nil, fmt.Errorf("onnx: export: %s: %w", n, err)
		}
		gp.Node = append(gp.Node, np)
		for _, in := range n.Reads() {
			if t := m.Tensors[in]; in != "" && t != nil && t.IsConst() && !produced[in] {
				consts[in] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(consts))
	for _, name := range names {
		tp, err := initializer(m.Tensors[name], fill)
		if err != nil {
			return nil, fmt.Errorf("onnx: export: %w", err)
		}
		gp.Initializer = append(gp.Initializer, tp)
	}
	ins, outs := lg.Boundary(set)
	var err error
	if gp.Input, err = valueInfos(m, ins); err != nil {
		return nil, fmt.Errorf("onnx: export: %w", err)
	}
	if gp.Output, err = valueInfos(m, outs); err != nil {
		return nil, fmt.Errorf("onnx: export: %w", err)
	}
	if len(gp.Output) == 0 {
		return nil, fmt.Errorf("onnx: export: layer set %s has no outputs", set.Key())
	}
	return marshalModel(m, gp)
}

func graphName(name string) string {
	if name == "" {
		return "inlay"
	}
	return name
}

func marshalModel(m *graph.Model, gp *onnxpb.GraphProto) ([]byte, error) {
	ir := m.IRVersion
	if ir == 0 {
		ir = defaultIRVersion
	}
	producer := m.Producer
	if producer == "" {
		producer = "inlay"
	}
	mp := &onnxpb.ModelProto{
		IrVersion:    proto.Int64(ir),
		ProducerName: proto.String(producer),
		Graph:        gp,
	}
	for _, o := range m.Opsets {
		mp.OpsetImport = append(mp.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(o.Domain), Version: proto.Int64(o.Version)})
	}
	if len(mp.OpsetImport) == 0 {
		mp.OpsetImport = []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(defaultOpset)}}
	}
	b, err := marshal.Marshal(mp)
	if err != nil {
		return nil, fmt.Errorf("onnx: marshal: %w", err)
	}
	return b, nil
}

func nodeProto(n *graph.Node, fill func(string, *graph.Data) ([]byte, error)) (*onnxpb.NodeProto, error) {
	np := &onnxpb.NodeProto{
		OpType: proto.String(n.Op),
		Input:  append([]string{}, n.Inputs...),
		Output: append([]string{}, n.Outputs...),
	}
	if n.Name != "" {
		np.Name = proto.String(n.Name)
	}
	if n.Domain != "" {
		np.Domain = proto.String(n.Domain)
	}
	owner := n.Name
	if len(n.Outputs) > 0 {
		owner = n.Outputs[0]
	}
	for _, a := range n.Attrs {
		ap, err := attrProto(a, owner, fill)
		if err != nil {
			return nil, err
		}
		np.Attribute = append(np.Attribute, ap)
	}
	return np, nil
}

// initializer writes a constant tensor; its dtype and shape come from the
// tensor, which must agree with its data.
func initializer(t *graph.Tensor, fill func(string, *graph.Data) ([]byte, error)) (*onnxpb.TensorProto, error) {
	if t.Data == nil {
		return nil, fmt.Errorf("constant %q has no value", t.Name)
	}
	if t.Data.DType != t.DType || !t.Data.Dims.Equal(t.Shape) {
		return nil, fmt.Errorf("constant %q is %s %s but its value is %s %s", t.Name, t.DType, t.Shape, t.Data.DType, t.Data.Dims)
	}
	return tensorProto(t.Name, t.Data, fill)
}

func valueInfos(m *graph.Model, names []string) ([]*onnxpb.ValueInfoProto, error) {
	var out []*onnxpb.ValueInfoProto
	for _, name := range names {
		t := m.Tensors[name]
		if t == nil {
			return nil, fmt.Errorf("tensor %q does not exist", name)
		}
		if !t.Shape.Known() || t.Shape == nil {
			return nil, fmt.Errorf("tensor %q has shape %s; export needs known shapes", name, t.Shape)
		}
		sh := &onnxpb.TensorShapeProto{}
		for _, d := range t.Shape {
			sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		out = append(out, &onnxpb.ValueInfoProto{
			Name: proto.String(name),
			Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
				ElemType: proto.Int32(int32(t.DType)), Shape: sh,
			}}},
		})
	}
	return out, nil
}
