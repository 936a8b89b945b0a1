package cost

import (
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
)

func TestChannelPadding(t *testing.T) {
	conv := func(out, in, group int64) (*graph.Model, *graph.Node) {
		m := &graph.Model{Tensors: map[string]*graph.Tensor{
			"w": {Name: "w", Kind: graph.Initializer, DType: graph.Float32, Shape: graph.Shape{out, in, 3, 3}}}}
		n := &graph.Node{Op: "Conv", Inputs: []string{"x", "w"}, Attrs: graph.Attrs{{Name: "group", Kind: graph.AttrInt, Int: group}}}
		return m, n
	}
	for _, c := range []struct {
		name           string
		out, in, group int64
		align          int
		want           float64
	}{
		{"stem: 3 input channels fill a 32-deep block", 64, 3, 1, 32, 32.0 / 3},
		{"aligned dense", 64, 64, 1, 32, 1},
		{"24 output channels", 24, 32, 1, 32, 32.0 / 24},
		{"depthwise, 32 channels", 32, 1, 32, 32, 1},
		{"depthwise, 24 channels", 24, 1, 24, 32, 32.0 / 24},
		{"grouped: 50 channels per group each way", 100, 50, 2, 32, (64.0 / 50) * (64.0 / 50)},
		{"no granule", 64, 3, 1, 1, 1},
	} {
		m, n := conv(c.out, c.in, c.group)
		if got := channelPadding(m, n, c.align); got < c.want*0.999 || got > c.want*1.001 {
			t.Errorf("%s: %g, want %g", c.name, got, c.want)
		}
	}
}

// concatModel is x → Conv a, Conv b → Concat → BatchNormalization → Relu
// → Conv c → Relu: DenseNet's pattern.
func concatModel(t *testing.T) *graph.LayerGraph {
	t.Helper()
	m := &graph.Model{Name: "concat", Tensors: map[string]*graph.Tensor{}}
	act := func(name string, c int64) string {
		m.Tensors[name] = &graph.Tensor{Name: name, Kind: graph.Activation, DType: graph.Float32, Shape: graph.Shape{1, c, 16, 16}}
		return name
	}
	cst := func(name string, shape ...int64) string {
		m.Tensors[name] = &graph.Tensor{Name: name, Kind: graph.Initializer, DType: graph.Float32, Shape: shape}
		return name
	}
	act("x", 32)
	m.Tensors["x"].Kind = graph.Input
	el := int64(32 * 16 * 16)
	node := func(name, op string, macs int64, ins ...string) {
		m.Nodes = append(m.Nodes, &graph.Node{Name: name, Op: op, Inputs: ins, Outputs: []string{name},
			Work: graph.Work{MACs: macs, FLOPs: 2*macs + el, ActBytesIn: 4 * el, BytesOut: 4 * el, DType: graph.Float32}})
	}
	node(act("a", 32), "Conv", 1<<20, "x", cst("wa", 32, 32, 1, 1))
	node(act("b", 32), "Conv", 1<<20, "x", cst("wb", 32, 32, 1, 1))
	node(act("cat", 64), "Concat", 0, "a", "b")
	node(act("bn", 64), "BatchNormalization", 0, "cat", cst("s", 64), cst("o", 64), cst("mu", 64), cst("v", 64))
	node(act("r", 64), "Relu", 0, "bn")
	node(act("c", 32), "Conv", 1<<20, "r", cst("wc", 32, 64, 1, 1))
	node(act("y", 32), "Relu", 0, "c")
	m.Inputs, m.Outputs = []string{"x"}, []string{"y"}
	if err := m.Link(); err != nil {
		t.Fatal(err)
	}
	lg, err := graph.BuildLayers(m)
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

// TestRequant: in an integer configuration the Concat and the
// normalisation of the concatenation pay a pass each (an epilogue Relu
// and the convolutions' own activations none); a float configuration, or
// no RequantGBs, pays nothing.
func TestRequant(t *testing.T) {
	lg := concatModel(t)
	m := lg.Model
	epi := epilogues(lg)
	want := map[string]bool{"cat": true, "bn": true}
	for _, n := range m.Nodes {
		if got := needsRequant(m, n, epi); got != want[n.Name] {
			t.Errorf("%s (%s): requantises %v, want %v", n.Name, n.Op, got, want[n.Name])
		}
	}
	p := hwtest.Preset(t, "phone")
	npu, _ := p.Find("npu")
	e := DefaultEfficiency("npu")
	e.RequantGBs = 1 // 1 byte per ns
	a, err := NewPartlyCalibrated(p, map[int]Efficiency{npu: e})
	if err != nil {
		t.Fatal(err)
	}
	var total time.Duration
	for _, d := range []graph.DType{graph.Int8, graph.Float16} {
		rows, _, err := a.Explain(lg, graph.Range(0, len(lg.Layers)), hw.Config{Proc: npu, Backend: "qnn-htp", DType: d})
		if err != nil {
			t.Fatal(err)
		}
		total = 0
		for _, r := range rows {
			total += r.Requant
		}
		// int8: the 64×16×16 concatenation and its normalisation, a byte an element each
		if wantNs := map[graph.DType]time.Duration{graph.Int8: 2 * 64 * 16 * 16}[d]; total != wantNs {
			t.Errorf("%s: requant %v, want %v", d, total, wantNs)
		}
	}
}

// TestWeightPrefetch: a processor that streams weights ahead pays the
// larger of the weight stream and the layers' work, never more than the
// per-layer roofline, and the lower bounds still hold.
func TestWeightPrefetch(t *testing.T) {
	lg := chain(8, 1<<16, 256, 4, 4) // small layers with 256×256 weights: weight-bound
	for _, prefetch := range []bool{false, true} {
		p := hwtest.Preset(t, "phone")
		npu, _ := p.Find("npu")
		p.Processors[npu].WeightPrefetch = prefetch
		a := NewAnalytic(p)
		c := hw.Config{Proc: npu, Backend: "qnn-htp", DType: graph.Float16}
		set := graph.Range(0, len(lg.Layers))
		whole := mustSubgraph(t, a, lg, set, c)
		rows, dispatch, err := a.Explain(lg, set, c)
		if err != nil {
			t.Fatal(err)
		}
		sum := dispatch
		var lb time.Duration
		for _, r := range rows {
			sum += max(r.Compute, r.Memory) + r.Requant + r.Overhead
			b, err := a.LayerLowerBound(lg, r.Layer, c)
			if err != nil {
				t.Fatal(err)
			}
			lb += b
		}
		if d := sum - whole; d < -time.Duration(len(rows)) || d > time.Duration(len(rows)) {
			t.Errorf("prefetch %v: Explain sums to %v, Subgraph says %v", prefetch, sum, whole)
		}
		if lb+a.DispatchLowerBound(npu) > whole {
			t.Errorf("prefetch %v: lower bounds %v above %v", prefetch, lb, whole)
		}
		t.Logf("prefetch %v: %v", prefetch, whole)
	}
}
