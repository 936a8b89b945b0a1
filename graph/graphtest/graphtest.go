// Package graphtest builds small models for tests.
package graphtest

import "github.com/inlay-dev/inlay/graph"

// Chain is in → L0 → L1 → … → out: n Conv nodes (one layer each) named
// NAME_t0, NAME_t1, …, every tensor float32 of the given shape, every node
// doing work. It panics on a model that does not link (a bug in the test).
func Chain(name string, n int, shape graph.Shape, work graph.Work) *graph.Model {
	m := &graph.Model{Name: name, Tensors: map[string]*graph.Tensor{}}
	add := func(tn string, kind graph.TensorKind) {
		m.Tensors[tn] = &graph.Tensor{Name: tn, DType: graph.Float32, Shape: shape, Kind: kind}
	}
	add("in", graph.Input)
	prev := "in"
	for i := 0; i < n; i++ {
		out := name + "_t" + string(rune('0'+i))
		add(out, graph.Activation)
		m.Nodes = append(m.Nodes, &graph.Node{Name: out, Op: "Conv", Inputs: []string{prev}, Outputs: []string{out}, Work: work})
		prev = out
	}
	m.Inputs, m.Outputs = []string{"in"}, []string{prev}
	if err := m.Link(); err != nil {
		panic(err)
	}
	return m
}
