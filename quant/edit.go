package quant

import (
	"errors"
	"fmt"
	"sort"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx"
)

// msDomain is ONNX Runtime's contrib operator domain.
const msDomain = "com.microsoft"

// editor rewrites a model: it hands out fresh names, adds initializers and
// collects the new node list, which finish links, prunes and re-infers.
type editor struct {
	m     *graph.Model
	used  map[string]bool // tensor and node names taken
	out   []*graph.Node
	msOps bool // a com.microsoft node was emitted
	// quantized counts the float operators replaced or wrapped.
	quantized int
}

// newEditor starts editing a private copy of m: the model as Encode writes
// it (weights without values get Encode's seeded values), decoded again.
func newEditor(m *graph.Model) (*editor, error) {
	if m == nil {
		return nil, errors.New("quant: nil model")
	}
	data, err := onnx.Encode(m, 0)
	if err != nil {
		return nil, fmt.Errorf("quant: %w", err)
	}
	c, err := onnx.Decode(data, m.Name, onnx.Options{})
	if err != nil {
		return nil, fmt.Errorf("quant: %w", err)
	}
	c.Name = m.Name
	e := &editor{m: c, used: map[string]bool{}}
	for name := range c.Tensors {
		e.used[name] = true
	}
	for _, n := range c.Nodes {
		e.used[n.Name] = true
		for _, o := range n.Outputs {
			e.used[o] = true
		}
	}
	return e, nil
}

// fresh returns base, or base_1, base_2, ... whichever is free, and takes it.
func (e *editor) fresh(base string) string {
	name := base
	for i := 1; e.used[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	e.used[name] = true
	return name
}

// initializer adds a constant under a fresh name derived from base.
func (e *editor) initializer(base string, d *graph.Data) string {
	name := e.fresh(base)
	e.m.Tensors[name] = &graph.Tensor{Name: name, DType: d.DType, Shape: d.Dims.Clone(), Kind: graph.Initializer, Producer: -1, Data: d}
	return name
}

// scalar adds a float32 scalar constant.
func (e *editor) scalar(base string, v float32) string {
	return e.initializer(base, encodeFloats(graph.Shape{}, []float32{v}))
}

// params adds a per-tensor scale and zero point of type dt.
func (e *editor) params(base string, p qparams, dt graph.DType) (scale, zero string) {
	scale = e.scalar(base+"_scale", p.scale)
	zero = e.initializer(base+"_zero_point", encodeInts(dt, graph.Shape{}, []int32{p.zero}))
	return scale, zero
}

// weightParams adds a quantized weight's scale and zero point: scalars per
// tensor, vectors per axis.
func (e *editor) weightParams(base string, w quantizedWeight, dt graph.DType) (scale, zero string) {
	if w.axis < 0 {
		return e.params(base, w.params[0], dt)
	}
	s := make([]float32, len(w.params))
	z := make([]int32, len(w.params))
	for i, p := range w.params {
		s[i], z[i] = p.scale, p.zero
	}
	dims := graph.Shape{int64(len(s))}
	return e.initializer(base+"_scale", encodeFloats(dims, s)), e.initializer(base+"_zero_point", encodeInts(dt, dims, z))
}

// emit appends a node with a fresh name; outputs must be fresh names or
// names whose former producer is not emitted.
func (e *editor) emit(op, domain, name string, ins, outs []string, attrs ...graph.Attr) *graph.Node {
	n := &graph.Node{Name: e.fresh(name), Op: op, Domain: domain, Inputs: ins, Outputs: outs, Attrs: attrs}
	if domain == msDomain {
		e.msOps = true
	}
	e.out = append(e.out, n)
	return n
}

// keep appends an existing node unchanged (its inputs may be rewired).
func (e *editor) keep(n *graph.Node) { e.out = append(e.out, n) }

// konst is the constant value of a tensor, or nil.
func (e *editor) konst(name string) *graph.Data {
	t := e.m.Tensors[name]
	if name == "" || t == nil || !t.IsConst() || t.Data == nil || t.Data.Raw == nil {
		return nil
	}
	return t.Data
}

// isActivation reports whether name is a float32 value computed at run
// time (a graph input or a node output that is not constant).
func (e *editor) isActivation(name string) bool {
	t := e.m.Tensors[name]
	return name != "" && t != nil && !t.IsConst() && t.DType == graph.Float32
}

// finish installs the emitted nodes, removes nodes and constants nothing
// reads any more, imports com.microsoft where used, and returns the model
// as ONNX decodes and infers it.
func (e *editor) finish() (*graph.Model, error) {
	m := e.m
	m.Nodes = e.out
	prune(m)
	if e.msOps {
		has := false
		for _, o := range m.Opsets {
			has = has || o.Domain == msDomain
		}
		if !has {
			m.Opsets = append(m.Opsets, graph.OpsetImport{Domain: msDomain, Version: 1})
		}
	}
	if err := m.Link(); err != nil {
		return nil, fmt.Errorf("quant: %s: %w", m.Name, err)
	}
	data, err := onnx.Encode(m, 0)
	if err != nil {
		return nil, fmt.Errorf("quant: %s: %w", m.Name, err)
	}
	q, err := onnx.Decode(data, m.Name, onnx.Options{})
	if err != nil {
		return nil, fmt.Errorf("quant: the quantized model does not load: %w", err)
	}
	q.Name = m.Name
	return q, nil
}

// prune drops the nodes whose outputs nothing reads (graph outputs are
// read) and the initializers no remaining node reads.
func prune(m *graph.Model) {
	live := map[string]bool{}
	for _, o := range m.Outputs {
		live[o] = true
	}
	keep := make([]bool, len(m.Nodes))
	for i := len(m.Nodes) - 1; i >= 0; i-- {
		n := m.Nodes[i]
		for _, o := range n.Outputs {
			keep[i] = keep[i] || (o != "" && live[o])
		}
		if keep[i] {
			for _, in := range n.Reads() {
				live[in] = true
			}
		}
	}
	var nodes []*graph.Node
	for i, n := range m.Nodes {
		if keep[i] {
			nodes = append(nodes, n)
		}
	}
	m.Nodes = nodes
	var names []string
	for name, t := range m.Tensors {
		if !live[name] && t.Kind != graph.Input {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		delete(m.Tensors, name)
	}
}

// topo returns the model's nodes in topological order.
func topo(m *graph.Model) ([]*graph.Node, error) {
	order, err := m.TopoOrder()
	if err != nil {
		return nil, fmt.Errorf("quant: %s: %w", m.Name, err)
	}
	out := make([]*graph.Node, len(order))
	for i, id := range order {
		out[i] = m.Nodes[id]
	}
	return out, nil
}

func intAttr(name string, v int64) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrInt, Int: v}
}
