package graph

import "testing"

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
