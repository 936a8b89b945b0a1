package graph

import (
	"slices"
	"testing"
)

// diamond builds in -> a(Conv) -> b(Relu) -> c(Conv) -> d(Add: b + c) -> out,
// with a side branch a -> e(Conv) -> d2(Add: d + e).
func diamond() *Model {
	m := &Model{Tensors: map[string]*Tensor{}}
	add := func(name string, kind TensorKind) {
		m.Tensors[name] = &Tensor{Name: name, DType: Float32, Shape: Shape{1, 4}, Kind: kind}
	}
	add("in", Input)
	add("w", Initializer)
	node := func(op string, macs int64, ins []string, out string) {
		add(out, Activation)
		m.Nodes = append(m.Nodes, &Node{Name: out, Op: op, Inputs: ins, Outputs: []string{out}, Work: Work{MACs: macs}})
	}
	node("Conv", 10, []string{"in", "w"}, "a")
	node("Relu", 0, []string{"a"}, "b")
	node("Conv", 10, []string{"b", "w"}, "c")
	node("Add", 0, []string{"b", "c"}, "d")
	node("Conv", 10, []string{"a", "w"}, "e")
	node("Add", 0, []string{"d", "e"}, "f")
	m.Inputs = []string{"in"}
	m.Outputs = []string{"f"}
	if err := m.Link(); err != nil {
		panic(err)
	}
	return m
}

func TestBuildLayers(t *testing.T) {
	lg, err := BuildLayers(diamond())
	if err != nil {
		t.Fatal(err)
	}
	// a+b, c+d, e+f
	want := [][]int{{0, 1}, {2, 3}, {4, 5}}
	if len(lg.Layers) != len(want) {
		t.Fatalf("got %d layers, want %d", len(lg.Layers), len(want))
	}
	for i, l := range lg.Layers {
		if len(l.Nodes) != len(want[i]) || l.Nodes[0] != want[i][0] || l.Nodes[1] != want[i][1] {
			t.Errorf("layer %d nodes %v, want %v", i, l.Nodes, want[i])
		}
	}
	for _, e := range lg.Edges {
		if e.From >= e.To {
			t.Errorf("edge %+v goes backwards", e)
		}
	}
	tests := []struct {
		set  LayerSet
		want bool
	}{
		{NewLayerSet(0), true}, {NewLayerSet(0, 1), true}, {NewLayerSet(0, 2), false},
		{NewLayerSet(1, 2), true}, {NewLayerSet(0, 1, 2), true}, {NewLayerSet(), true},
	}
	for _, tc := range tests {
		if got := lg.IsConvex(tc.set); got != tc.want {
			t.Errorf("IsConvex(%v) = %v, want %v", tc.set, got, tc.want)
		}
	}
	in, out := lg.Boundary(NewLayerSet(1, 2))
	if len(in) != 2 || in[0] != "a" || in[1] != "b" || len(out) != 1 || out[0] != "f" {
		t.Errorf("Boundary = %v, %v", in, out)
	}
}

func TestLayerSetKey(t *testing.T) {
	tests := []struct {
		set  LayerSet
		want string
	}{
		{NewLayerSet(), ""}, {NewLayerSet(3), "3"}, {NewLayerSet(0, 1, 2, 4, 6, 7), "0-2,4,6-7"},
	}
	for _, tc := range tests {
		if got := tc.set.Key(); got != tc.want {
			t.Errorf("Key(%v) = %q, want %q", tc.set, got, tc.want)
		}
		back, err := ParseLayerSet(tc.want)
		if err != nil || back.Key() != tc.want {
			t.Errorf("ParseLayerSet(%q) = %v, %v", tc.want, back, err)
		}
	}
	for _, bad := range []string{"a", "3-1", "-1", "1,,2"} {
		if _, err := ParseLayerSet(bad); err == nil {
			t.Errorf("ParseLayerSet(%q) accepted", bad)
		}
	}
}

func TestCycle(t *testing.T) {
	m := diamond()
	m.Nodes[0].Inputs = []string{"f", "w"}
	if err := m.Link(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.TopoOrder(); err == nil {
		t.Fatal("cycle not found")
	}
}

// TestQDQFolds: DequantizeLinear → Conv → QuantizeLinear is one layer of
// integer precision, weights' DequantizeLinear included, and the tensor
// between two quantized layers is the quantized one.
func TestQDQFolds(t *testing.T) {
	m := &Model{Tensors: map[string]*Tensor{}}
	add := func(name string, dt DType, kind TensorKind) {
		m.Tensors[name] = &Tensor{Name: name, DType: dt, Shape: Shape{1, 4}, Kind: kind}
	}
	add("in", Float32, Input)
	add("s", Float32, Initializer)
	add("z", Int8, Initializer)
	add("w", Int8, Initializer)
	node := func(op string, macs int64, ins []string, out string, dt DType) {
		add(out, dt, Activation)
		m.Nodes = append(m.Nodes, &Node{Name: out, Op: op, Inputs: ins, Outputs: []string{out}, Work: Work{MACs: macs}})
	}
	node("QuantizeLinear", 0, []string{"in", "s", "z"}, "q0", Int8)
	node("DequantizeLinear", 0, []string{"q0", "s", "z"}, "d0", Float32)
	node("DequantizeLinear", 0, []string{"w", "s", "z"}, "dw", Float32)
	node("Conv", 10, []string{"d0", "dw"}, "c1", Float32)
	node("QuantizeLinear", 0, []string{"c1", "s", "z"}, "q1", Int8)
	node("DequantizeLinear", 0, []string{"q1", "s", "z"}, "d1", Float32)
	node("DequantizeLinear", 0, []string{"w", "s", "z"}, "dw2", Float32)
	node("Conv", 10, []string{"d1", "dw2"}, "c2", Float32)
	node("Softmax", 0, []string{"c2"}, "out", Float32)
	m.Inputs, m.Outputs = []string{"in"}, []string{"out"}
	if err := m.Link(); err != nil {
		t.Fatal(err)
	}
	lg, err := BuildLayers(m)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		nodes []int
		prec  DType
	}
	wants := []want{{[]int{0}, Undefined}, {[]int{1, 2, 3, 4}, Int8}, {[]int{5, 6, 7}, Int8}, {[]int{8}, Undefined}}
	if len(lg.Layers) != len(wants) {
		t.Fatalf("%d layers, want %d", len(lg.Layers), len(wants))
	}
	for i, w := range wants {
		l := lg.Layers[i]
		if len(l.Nodes) != len(w.nodes) || l.Precision != w.prec {
			t.Errorf("layer %d: nodes %v precision %s, want %v %s", i, l.Nodes, l.Precision, w.nodes, w.prec)
			continue
		}
		for j := range w.nodes {
			if l.Nodes[j] != w.nodes[j] {
				t.Errorf("layer %d: nodes %v, want %v", i, l.Nodes, w.nodes)
			}
		}
	}
	for _, e := range lg.Edges {
		if e.From == 1 && e.To == 2 && e.Tensor != "q1" {
			t.Errorf("edge 1→2 carries %q, want the quantized q1", e.Tensor)
		}
	}
}

// TestCrossings: bytes between groups of layers, a tensor counted once per
// pair of groups however many edges carry it, none within a group, sorted.
func TestCrossings(t *testing.T) {
	lg := &LayerGraph{Edges: []LayerEdge{
		{From: 0, To: 1, Tensor: "a", Bytes: 4},
		{From: 0, To: 2, Tensor: "a", Bytes: 4},
		{From: 0, To: 3, Tensor: "a", Bytes: 4},
		{From: 1, To: 3, Tensor: "b", Bytes: 8},
		{From: 2, To: 3, Tensor: "c", Bytes: 16},
		{From: 3, To: 4, Tensor: "d", Bytes: 2},
	}}
	got := lg.Crossings([]int{0, 1, 1, 2, 2})
	want := []Crossing{{From: 0, To: 1, Bytes: 4}, {From: 0, To: 2, Bytes: 4}, {From: 1, To: 2, Bytes: 24}}
	if !slices.Equal(got, want) {
		t.Errorf("Crossings = %v, want %v", got, want)
	}
}
