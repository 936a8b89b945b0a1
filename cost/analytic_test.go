package cost

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
)

// chain builds x → [Conv → Relu] × n → y: every Conv has the given MACs on
// a 1×C×H×W float32 activation, so each layer is one Conv with its Relu.
func chain(n int, macs int64, c, h, w int64) *graph.LayerGraph {
	m := &graph.Model{Name: "chain", Tensors: map[string]*graph.Tensor{}}
	act := func(name string, kind graph.TensorKind) string {
		m.Tensors[name] = &graph.Tensor{Name: name, Kind: kind, DType: graph.Float32, Shape: graph.Shape{1, c, h, w}}
		return name
	}
	elems := c * h * w
	prev := act("x", graph.Input)
	for i := 0; i < n; i++ {
		wt := fmt.Sprintf("w%d", i)
		m.Tensors[wt] = &graph.Tensor{Name: wt, Kind: graph.Initializer, DType: graph.Float32, Shape: graph.Shape{c, c, 1, 1}}
		conv := act(fmt.Sprintf("conv%d", i), graph.Activation)
		m.Nodes = append(m.Nodes, &graph.Node{Name: conv, Op: "Conv", Inputs: []string{prev, wt}, Outputs: []string{conv},
			Work: graph.Work{MACs: macs, FLOPs: 2 * macs, ActBytesIn: 4 * elems, WeightBytes: 4 * c * c, BytesOut: 4 * elems, DType: graph.Float32}})
		relu := act(fmt.Sprintf("relu%d", i), graph.Activation)
		m.Nodes = append(m.Nodes, &graph.Node{Name: relu, Op: "Relu", Inputs: []string{conv}, Outputs: []string{relu},
			Work: graph.Work{FLOPs: elems, ActBytesIn: 4 * elems, BytesOut: 4 * elems, DType: graph.Float32}})
		prev = relu
	}
	m.Inputs, m.Outputs = []string{"x"}, []string{prev}
	if err := m.Link(); err != nil {
		panic(err)
	}
	lg, err := graph.BuildLayers(m)
	if err != nil {
		panic(err)
	}
	return lg
}

func cfg(t testing.TB, p *hw.Platform, proc string) hw.Config {
	t.Helper()
	id, err := p.Find(proc)
	if err != nil {
		t.Fatal(err)
	}
	return p.DefaultConfig(id)
}

func TestMonotonic(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	a := NewAnalytic(p)
	for _, proc := range []string{"cpu-prime", "cpu-eff", "gpu", "npu"} {
		c := cfg(t, p, proc)
		var prev time.Duration
		for _, macs := range []int64{1e4, 1e5, 1e6, 1e7, 1e8, 1e9} {
			lg := chain(4, macs, 32, 28, 28)
			d, err := a.Subgraph(lg, graph.Range(0, 4), c)
			if err != nil {
				t.Fatal(err)
			}
			if d < prev {
				t.Errorf("%s: %d MACs take %v, less than %v for fewer", proc, macs, d, prev)
			}
			prev = d
		}
		// Larger activations (more bytes) never take less time.
		prev = 0
		for _, hw := range []int64{7, 14, 28, 56, 112} {
			lg := chain(4, 1e6, 32, hw, hw)
			d := mustSubgraph(t, a, lg, graph.Range(0, 4), c)
			if d < prev {
				t.Errorf("%s: %dx%d activations take %v, less than %v for smaller", proc, hw, hw, d, prev)
			}
			prev = d
		}
		// Adding layers never makes a subgraph faster.
		lg := chain(6, 5e6, 32, 28, 28)
		prev = 0
		for k := 1; k <= 6; k++ {
			d := mustSubgraph(t, a, lg, graph.Range(0, k), c)
			if d <= prev {
				t.Errorf("%s: %d layers take %v, not more than %v for %d", proc, k, d, prev, k-1)
			}
			prev = d
		}
	}
}

// TestSaturatingEfficiency: a larger layer reaches a larger share of peak.
func TestSaturatingEfficiency(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	a := NewAnalytic(p)
	// The GPU: its default factors saturate (the phone NPU's published fit
	// has no saturation size).
	c := cfg(t, p, "gpu")
	// The compute term alone.
	compute := func(macs int64) float64 {
		rows, _, err := a.Explain(chain(1, macs, 8, 4, 4), graph.Range(0, 1), c)
		if err != nil {
			t.Fatal(err)
		}
		return float64(rows[0].Compute)
	}
	perMACSmall := compute(1e6) / 1e6
	perMACBig := compute(1e9) / 1e9
	if !(perMACBig < perMACSmall/2) {
		t.Errorf("time per MAC: small layer %.3g ns, big layer %.3g ns; want the big layer much more efficient", perMACSmall, perMACBig)
	}
}

// TestNonAdditive: fused neighbours cost less together than apart, by more
// than the saved dispatch when their tensor stays on chip.
func TestNonAdditive(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	a := NewAnalytic(p)
	lg := chain(2, 1e5, 64, 56, 56) // memory-bound layers, 800 KB float32 activations
	for _, proc := range []string{"cpu-prime", "gpu", "npu"} {
		c := cfg(t, p, proc)
		pr := p.Processors[c.Proc]
		A := mustSubgraph(t, a, lg, graph.NewLayerSet(0), c)
		B := mustSubgraph(t, a, lg, graph.NewLayerSet(1), c)
		AB := mustSubgraph(t, a, lg, graph.NewLayerSet(0, 1), c)
		t.Logf("%s: time(A)=%v time(B)=%v time(A∪B)=%v", proc, A, B, AB)
		if !(AB < A+B) {
			t.Errorf("%s: time(A∪B)=%v not < time(A)+time(B)=%v", proc, AB, A+B)
		}
		edge := float64(lg.Edges[0].Bytes) * float64(c.DType.Size()) / 4
		_, dispatch, err := a.Explain(lg, graph.NewLayerSet(0, 1), c) // the fit's where the type has one
		if err != nil {
			t.Fatal(err)
		}
		if edge <= float64(pr.OnChipBytes) && !(AB < A+B-dispatch) {
			t.Errorf("%s: the %0.f-byte tensor fits on chip but A∪B saves only the dispatch: %v vs %v", proc, edge, AB, A+B)
		}
	}
}

// TestPrecision: int8 moves a quarter of float32's bytes, so a
// memory-bound layer runs faster in it, and a higher peak runs compute-bound
// layers faster.
func TestPrecision(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	a := NewAnalytic(p)
	cpu, _ := p.Find("cpu-prime")
	f32 := hw.Config{Proc: cpu, Backend: "xnnpack", DType: graph.Float32}
	f16 := hw.Config{Proc: cpu, Backend: "xnnpack", DType: graph.Float16}
	i8 := hw.Config{Proc: cpu, Backend: "xnnpack", DType: graph.Int8}
	memBound := chain(1, 1, 64, 112, 112)
	computeBound := chain(1, 5e8, 8, 4, 4)
	for _, lg := range []*graph.LayerGraph{memBound, computeBound} {
		d32 := mustSubgraph(t, a, lg, graph.Range(0, 1), f32)
		d16 := mustSubgraph(t, a, lg, graph.Range(0, 1), f16)
		d8 := mustSubgraph(t, a, lg, graph.Range(0, 1), i8)
		if !(d8 < d16 && d16 < d32) {
			t.Errorf("float32 %v, float16 %v, int8 %v: want strictly faster at lower precision", d32, d16, d8)
		}
	}
	over := p.Processors[cpu].DispatchOverhead + p.Processors[cpu].LayerOverhead
	d32 := mustSubgraph(t, a, memBound, graph.Range(0, 1), f32)
	d8 := mustSubgraph(t, a, memBound, graph.Range(0, 1), i8)
	if r := float64(d32-over) / float64(d8-over); r < 3.9 || r > 4.1 {
		t.Errorf("memory-bound float32/int8 = %.2f, want 4 (bytes/4)", r)
	}
}

func TestUnsupported(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	a := NewAnalytic(p)
	lg := chain(3, 1e6, 8, 8, 8)
	lg.Model.Nodes[2].Op = "LSTM" // layer 1's anchor
	npu := cfg(t, p, "npu")
	_, err := a.Subgraph(lg, graph.Range(0, 3), npu)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("LSTM on the NPU: %v, want ErrUnsupported", err)
	}
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Layer != 1 || !strings.Contains(err.Error(), "LSTM") || !strings.Contains(err.Error(), "npu") {
		t.Errorf("error %q does not name layer 1, the LSTM node and the npu", err)
	}
	if _, err := a.Subgraph(lg, graph.NewLayerSet(0, 2), npu); err != nil {
		t.Errorf("layers without the LSTM: %v", err)
	}
	if _, err := a.Subgraph(lg, graph.Range(0, 3), cfg(t, p, "cpu")); err != nil {
		t.Errorf("LSTM on the CPU: %v", err)
	}
}

func TestSubgraphErrors(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	a := NewAnalytic(p)
	lg := chain(2, 1e6, 8, 8, 8)
	npu, _ := p.Find("npu")
	tests := []struct {
		name string
		set  graph.LayerSet
		c    hw.Config
	}{
		{"bad dtype", graph.Range(0, 2), hw.Config{Proc: npu, Backend: "qnn-htp", DType: graph.Float32}},
		{"bad backend", graph.Range(0, 2), hw.Config{Proc: npu, Backend: "cuda", DType: graph.Int8}},
		{"bad processor", graph.Range(0, 2), hw.Config{Proc: 17, Backend: "qnn-htp", DType: graph.Int8}},
		{"layer out of range", graph.NewLayerSet(0, 5), p.DefaultConfig(npu)},
	}
	for _, tc := range tests {
		if _, err := a.Subgraph(lg, tc.set, tc.c); err == nil || errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want a config error", tc.name, err)
		}
	}
	if d, err := a.Subgraph(lg, nil, p.DefaultConfig(npu)); d != 0 || err != nil {
		t.Errorf("empty set: %v, %v", d, err)
	}
}

func TestTransferMatchesPlatform(t *testing.T) {
	p := hwtest.Preset(t, "desktop")
	a := NewAnalytic(p)
	if got, want := a.Transfer(1<<20, 0, 1), p.Transfer(1<<20, 0, 1); got != want || got == 0 {
		t.Errorf("Transfer = %v, platform says %v", got, want)
	}
	if a.Transfer(1<<20, 1, 1) != 0 {
		t.Error("same-processor transfer is not free")
	}
}

func TestConcurrentUse(t *testing.T) {
	p := hwtest.Preset(t, "jetson-orin")
	a := NewAnalytic(p)
	lg := chain(8, 1e7, 32, 28, 28)
	want := mustSubgraph(t, a, chain(8, 1e7, 32, 28, 28), graph.Range(0, 8), p.DefaultConfig(1))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				d, err := a.Subgraph(lg, graph.Range(0, 8), p.DefaultConfig(1))
				if err != nil || d != want {
					errs <- fmt.Errorf("got %v, %v; want %v", d, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClassify(t *testing.T) {
	m := &graph.Model{Tensors: map[string]*graph.Tensor{
		"dw": {Name: "dw", Shape: graph.Shape{32, 1, 3, 3}},
		"gw": {Name: "gw", Shape: graph.Shape{32, 4, 3, 3}},
		"w1": {Name: "w1", Shape: graph.Shape{32, 4, 9}},
	}}
	group := graph.Attrs{{Name: "group", Kind: graph.AttrInt, Int: 8}}
	tests := []struct {
		n    *graph.Node
		want OpClass
	}{
		{&graph.Node{Op: "Conv", Inputs: []string{"x", "dw"}, Attrs: group}, Depthwise},
		{&graph.Node{Op: "Conv", Inputs: []string{"x", "gw"}, Attrs: group}, Conv},
		{&graph.Node{Op: "Conv", Inputs: []string{"x", "gw"}}, Conv},
		{&graph.Node{Op: "Conv", Inputs: []string{"x", "w1"}}, Conv1D},
		{&graph.Node{Op: "MatMul"}, MatMul},
		{&graph.Node{Op: "LSTM"}, Recurrent},
		{&graph.Node{Op: "If"}, Control},
		{&graph.Node{Op: "Transpose"}, DataMovement},
		{&graph.Node{Op: "HardSwish"}, Elementwise},
		{&graph.Node{Op: "CustomMACOp", Work: graph.Work{MACs: 5}}, Other},
		{&graph.Node{Op: "LayerNormalization"}, Norm},
	}
	for _, tc := range tests {
		if got := Classify(m, tc.n); got != tc.want {
			t.Errorf("Classify(%s) = %s, want %s", tc.n.Op, got, tc.want)
		}
	}
}

func TestEfficiency(t *testing.T) {
	for _, k := range hw.Kinds {
		if err := DefaultEfficiency(k).Validate(); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	bad := []func(e *Efficiency){
		func(e *Efficiency) { e.Compute[Conv] = 0 },
		func(e *Efficiency) { e.Compute[Conv] = 1.5 },
		func(e *Efficiency) { delete(e.Compute, Other) },
		func(e *Efficiency) { e.Compute["warp"] = 0.5 },
		func(e *Efficiency) { e.Memory = 0 },
		func(e *Efficiency) { e.HalfFLOPs = -1 },
	}
	for i, f := range bad {
		e := DefaultEfficiency("cpu").Clone()
		f(&e)
		if e.Validate() == nil {
			t.Errorf("bad efficiency %d accepted", i)
		}
	}
	p := hwtest.Preset(t, "phone")
	effs := make([]Efficiency, len(p.Processors))
	for i, pr := range p.Processors {
		effs[i] = DefaultEfficiency(pr.Kind)
	}
	effs[0].Compute[Conv] = 1 // a calibrated CPU reaching peak on convolutions
	cal, err := NewCalibrated(p, effs)
	if err != nil {
		t.Fatal(err)
	}
	lg := chain(2, 1e8, 8, 4, 4)
	d0 := mustSubgraph(t, NewAnalytic(p), lg, graph.Range(0, 2), p.DefaultConfig(0))
	d1 := mustSubgraph(t, cal, lg, graph.Range(0, 2), p.DefaultConfig(0))
	if !(d1 < d0) {
		t.Errorf("calibrated conv efficiency 1: %v, default %v; want faster", d1, d0)
	}
	if cal.Efficiency(0).Compute[Conv] != 1 {
		t.Error("Efficiency(0) does not return the calibrated factors")
	}
	if _, err := NewCalibrated(p, effs[:2]); err == nil {
		t.Error("too few efficiency sets accepted")
	}
}

func BenchmarkSubgraph(b *testing.B) {
	p := hwtest.Preset(b, "phone")
	a := NewAnalytic(p)
	lg := chain(100, 1e7, 32, 28, 28)
	set := graph.Range(10, 60)
	c := p.DefaultConfig(4)
	if _, err := a.Subgraph(lg, set, c); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Subgraph(lg, set, c); err != nil {
			b.Fatal(err)
		}
	}
}

func TestExplain(t *testing.T) {
	p := hwtest.Preset(t, "phone")
	a := NewAnalytic(p)
	lg := chain(5, 3e6, 32, 28, 28)
	for _, proc := range []string{"cpu-prime", "gpu", "npu"} {
		c := cfg(t, p, proc)
		set := graph.Range(1, 5)
		parts, dispatch, err := a.Explain(lg, set, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != len(set) {
			t.Fatalf("%d parts for %d layers", len(parts), len(set))
		}
		sum := dispatch
		for i, lt := range parts {
			if lt.Layer != set[i] {
				t.Errorf("part %d is layer %d, want %d", i, lt.Layer, set[i])
			}
			sum += max(lt.Compute, lt.Memory) + lt.Overhead
		}
		whole := mustSubgraph(t, a, lg, set, c)
		if diff := sum - whole; diff < -time.Duration(len(set)) || diff > time.Duration(len(set)) {
			t.Errorf("%s: parts sum to %v, Subgraph says %v", proc, sum, whole)
		}
	}
	bad := chain(2, 1e6, 8, 8, 8)
	bad.Model.Nodes[0].Op = "LSTM"
	if _, _, err := a.Explain(bad, graph.Range(0, 2), cfg(t, p, "npu")); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Explain of an unsupported set: %v", err)
	}
}

// mustSubgraph is est's time for the set, failing the test on an error.
func mustSubgraph(t *testing.T, est Estimator, lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) time.Duration {
	t.Helper()
	d, err := est.Subgraph(lg, set, on)
	if err != nil {
		t.Fatalf("Subgraph(%s on %v): %v", set.Key(), on, err)
	}
	return d
}
