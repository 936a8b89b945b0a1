package hw

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

// supportModel builds one node per case, each reading its own input.
func supportModel() *graph.Model {
	m := &graph.Model{Tensors: map[string]*graph.Tensor{}}
	tensor := func(name string, kind graph.TensorKind, dt graph.DType, shape ...int64) string {
		m.Tensors[name] = &graph.Tensor{Name: name, Kind: kind, DType: dt, Shape: shape}
		return name
	}
	node := func(op string, attrs graph.Attrs, ins []string, out string) {
		m.Nodes = append(m.Nodes, &graph.Node{Name: out, Op: op, Attrs: attrs, Inputs: ins, Outputs: []string{out}})
	}
	x := tensor("x", graph.Input, graph.Float32, 1, 3, 32, 32)
	w3 := tensor("w3", graph.Initializer, graph.Float32, 8, 3, 3, 3)
	w64 := tensor("w64", graph.Initializer, graph.Float32, 8, 3, 64, 64)
	tensor("conv", graph.Activation, graph.Float32, 1, 8, 30, 30)
	node("Conv", nil, []string{x, w3}, "conv")
	tensor("bigconv", graph.Activation, graph.Float32, 1, 8, 1, 1)
	node("Conv", nil, []string{x, w64}, "bigconv")
	seq := tensor("seq", graph.Input, graph.Float32, 10, 1, 16)
	tensor("lstm", graph.Activation, graph.Float32, 10, 1, 1, 32)
	node("LSTM", nil, []string{seq}, "lstm")
	cond := tensor("cond", graph.Input, graph.Bool)
	tensor("if", graph.Activation, graph.Float32, 1, 4)
	node("If", nil, []string{cond}, "if")
	v5 := tensor("v5", graph.Input, graph.Float32, 1, 3, 4, 8, 8)
	tensor("relu5", graph.Activation, graph.Float32, 1, 3, 4, 8, 8)
	node("Relu", nil, []string{v5}, "relu5")
	dyn := tensor("dyn", graph.Input, graph.Float32, 1, graph.Unknown)
	tensor("reludyn", graph.Activation, graph.Float32, 1, graph.Unknown)
	node("Relu", nil, []string{dyn}, "reludyn")
	ids := tensor("ids", graph.Input, graph.Int64, 1, 128)
	emb := tensor("emb", graph.Initializer, graph.Float32, 1000, 64)
	tensor("gather", graph.Activation, graph.Float32, 1, 128, 64)
	node("Gather", nil, []string{emb, ids}, "gather")
	tensor("pool", graph.Activation, graph.Float32, 1, 3, 2, 2)
	node("MaxPool", graph.Attrs{{Name: "kernel_shape", Kind: graph.AttrInts, Ints: []int64{16, 16}}}, []string{x}, "pool")
	tensor("hswish", graph.Activation, graph.Float32, 1, 3, 32, 32)
	node("HardSwish", nil, []string{x}, "hswish")
	m.Inputs = []string{"x", "seq", "cond", "v5", "dyn", "ids"}
	m.Outputs = []string{"conv", "bigconv", "lstm", "if", "relu5", "reludyn", "gather", "pool", "hswish"}
	if err := m.Link(); err != nil {
		panic(err)
	}
	return m
}

func TestSupports(t *testing.T) {
	m := supportModel()
	phone, _ := Preset("phone")
	s23, _ := Preset("galaxy-s23")
	orin, _ := Preset("jetson-orin")
	node := func(out string) *graph.Node {
		for _, n := range m.Nodes {
			if n.Outputs[0] == out {
				return n
			}
		}
		t.Fatalf("no node %q", out)
		return nil
	}
	tests := []struct {
		p    *Platform
		proc string
		node string
		want string // "" when supported, else a fragment of the reason
	}{
		{phone, "npu", "conv", ""},
		{phone, "npu", "lstm", "operator not supported"},
		{phone, "npu", "if", "operator not supported"},
		{phone, "npu", "relu5", "rank 5 (at most 4)"},
		{phone, "npu", "reludyn", "dynamic shape"},
		{phone, "npu", "gather", `tensor "ids" is int64`},
		// galaxy-s23 reads AI Hub's layer counts: the converters narrow
		// int64 ids to int32 (MobileBERT and Whisper run their embeddings
		// on the NPU there)
		{s23, "npu", "gather", ""},
		{phone, "gpu", "if", "operator not supported"},
		{phone, "gpu", "lstm", ""},
		{phone, "cpu-prime", "lstm", ""},
		{phone, "cpu-prime", "if", ""},
		{phone, "cpu-prime", "relu5", ""},
		{phone, "cpu-prime", "reludyn", ""},
		{orin, "dla0", "conv", ""},
		{orin, "dla0", "bigconv", "kernel side 64 (at most 32)"},
		{orin, "dla0", "pool", "pooling window side 16 (at most 8)"},
		{orin, "dla0", "hswish", "operator not supported"},
		{orin, "dla1", "gather", "operator not supported"},
		{orin, "gpu", "bigconv", ""},
	}
	for _, tc := range tests {
		id, err := tc.p.Find(tc.proc)
		if err != nil {
			t.Fatal(err)
		}
		n := node(tc.node)
		err = tc.p.Supports(id, m, n)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s/%s %s: %v", tc.p.Name, tc.proc, tc.node, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s/%s %s: supported, want %q", tc.p.Name, tc.proc, tc.node, tc.want)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s/%s %s: %v, want %q", tc.p.Name, tc.proc, tc.node, err, tc.want)
		case err != nil && (!strings.Contains(err.Error(), tc.proc) || !strings.Contains(err.Error(), n.Op)):
			t.Errorf("error %q does not name the processor and the node", err)
		}
	}
	if err := phone.Supports(42, m, m.Nodes[0]); err == nil {
		t.Error("processor 42 accepted")
	}
}
