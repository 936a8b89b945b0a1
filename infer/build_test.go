package infer

import (
	"encoding/binary"

	"github.com/inlay-dev/inlay/graph"
)

// builder makes small models by hand for the tests.
type builder struct{ m *graph.Model }

func newModel(opset int64) *builder {
	return &builder{m: &graph.Model{
		Name:    "test",
		Opsets:  []graph.OpsetImport{{Domain: "", Version: opset}},
		Tensors: map[string]*graph.Tensor{},
	}}
}

func (b *builder) input(name string, dt graph.DType, s ...int64) *builder {
	b.m.Tensors[name] = &graph.Tensor{Name: name, DType: dt, Shape: graph.Shape(append([]int64{}, s...)), Kind: graph.Input, Producer: -1}
	b.m.Inputs = append(b.m.Inputs, name)
	return b
}

// weight is an initializer without values (Raw nil).
func (b *builder) weight(name string, dt graph.DType, s ...int64) *builder {
	return b.initializer(name, dt, graph.Shape(append([]int64{}, s...)), nil)
}

// ints is an int64 initializer with values; shape nil means 1-D.
func (b *builder) ints(name string, shape graph.Shape, v ...int64) *builder {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return b.initializer(name, graph.Int64, oneD(shape, len(v)), raw)
}

// floats is a float32 initializer with values; shape nil means 1-D.
func (b *builder) floats(name string, shape graph.Shape, v ...float32) *builder {
	return b.initializer(name, graph.Float32, oneD(shape, len(v)), graph.Float32Raw(v))
}

// initializer adds the initializer with its shape and raw values.
func (b *builder) initializer(name string, dt graph.DType, shape graph.Shape, raw []byte) *builder {
	b.m.Tensors[name] = &graph.Tensor{Name: name, DType: dt, Shape: shape, Kind: graph.Initializer, Producer: -1,
		Data: &graph.Data{DType: dt, Dims: shape, Raw: raw}}
	return b
}

// oneD is shape, or the 1-D shape of n values when shape is nil.
func oneD(shape graph.Shape, n int) graph.Shape {
	if shape == nil {
		return graph.Shape{int64(n)}
	}
	return shape
}

func (b *builder) node(op string, ins, outs []string, attrs ...graph.Attr) *builder {
	b.m.Nodes = append(b.m.Nodes, &graph.Node{Name: op + "_" + outs[0], Op: op, Inputs: ins, Outputs: outs, Attrs: attrs})
	return b
}

func (b *builder) output(names ...string) *builder {
	b.m.Outputs = append(b.m.Outputs, names...)
	return b
}

func aInt(name string, v int64) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrInt, Int: v}
}
func aFloat(name string, v float32) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrFloat, Float: v}
}
func aStr(name, v string) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrString, String: v}
}
func aInts(name string, v ...int64) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrInts, Ints: v}
}
func aFloats(name string, v ...float32) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrFloats, Floats: v}
}

// int64s decodes a tensor's int64 data.
func int64s(d *graph.Data) []int64 {
	out := make([]int64, len(d.Raw)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(d.Raw[8*i:]))
	}
	return out
}

// float32s decodes a tensor's float32 data.
func float32s(d *graph.Data) []float32 { return graph.Float32s(d.Raw) }
