// Package graphtest builds small models for tests.
package graphtest

import (
	"fmt"

	"github.com/inlay-dev/inlay/graph"
)

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

// Branched is in → Conv c0 → c1 → … → c(n-1) (layers 0 to n-1, each
// reading the initializer w too), a side Gemm reading c0 (layer n) and a
// MatMul joining both branches into out (layer n+1; a MatMul keeps the
// join out of its latest producer's layer). Every tensor is float32 of the
// given shape and every node does work. It panics on a model that does not
// link (n < 1, a bug in the test).
func Branched(name string, n int, shape graph.Shape, work graph.Work) *graph.Model {
	m := &graph.Model{Name: name, Tensors: map[string]*graph.Tensor{}}
	add := func(tn string, kind graph.TensorKind) {
		m.Tensors[tn] = &graph.Tensor{Name: tn, DType: graph.Float32, Shape: shape, Kind: kind}
	}
	add("in", graph.Input)
	add("w", graph.Initializer)
	node := func(op string, ins []string, out string) {
		add(out, graph.Activation)
		m.Nodes = append(m.Nodes, &graph.Node{Name: out, Op: op, Inputs: ins, Outputs: []string{out}, Work: work})
	}
	prev := "in"
	for i := 0; i < n; i++ {
		out := fmt.Sprintf("c%d", i)
		node("Conv", []string{prev, "w"}, out)
		prev = out
	}
	node("Gemm", []string{"c0", "w"}, "side")
	node("MatMul", []string{prev, "side"}, "out")
	m.Inputs, m.Outputs = []string{"in"}, []string{"out"}
	if err := m.Link(); err != nil {
		panic(err)
	}
	return m
}
