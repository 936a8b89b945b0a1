package quant

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/infer"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/zoo"
)

func TestComputeParams(t *testing.T) {
	tests := []struct {
		name      string
		r         Range
		dt        graph.DType
		symmetric bool
		want      qparams
	}{
		{"uint8 from 0", Range{0, 2.55}, graph.Uint8, false, qparams{0.01, 0}},
		{"uint8 widened to 0", Range{1, 2.55}, graph.Uint8, false, qparams{0.01, 0}},
		{"uint8 around 0", Range{-1, 1.55}, graph.Uint8, false, qparams{0.01, 100}},
		{"uint8 negative only", Range{-2.55, -1}, graph.Uint8, false, qparams{0.01, 255}},
		{"int8 symmetric", Range{-0.5, 1.27}, graph.Int8, true, qparams{0.01, 0}},
		{"zero width", Range{0, 0}, graph.Uint8, false, qparams{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := computeParams(tt.r, tt.dt, tt.symmetric)
			if math.Abs(float64(got.scale-tt.want.scale)) > 1e-6 || got.zero != tt.want.zero {
				t.Errorf("computeParams(%v) = %+v, want %+v", tt.r, got, tt.want)
			}
		})
	}
}

func TestQuantizeWeightPerChannel(t *testing.T) {
	// Two output channels of two values: each channel gets its own scale.
	w := encodeFloats(graph.Shape{2, 2}, []float32{1.27, -0.635, 0.127, 0.0635})
	qw, err := quantizeWeight(w, graph.Int8, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(qw.params) != 2 || math.Abs(float64(qw.params[0].scale-0.01)) > 1e-7 || math.Abs(float64(qw.params[1].scale-0.001)) > 1e-8 {
		t.Fatalf("params %+v, want scales 0.01 and 0.001", qw.params)
	}
	want := []int8{127, -64, 127, 64} // -63.5 and 63.5 round half to even
	for i, b := range qw.data.Raw {
		if int8(b) != want[i] {
			t.Errorf("value %d quantized to %d, want %d", i, int8(b), want[i])
		}
	}
	b, scales, err := quantizeBias(encodeFloats(graph.Shape{2}, []float32{0.5, -0.25}), 0.1, qw.params)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(scales[0]-0.001)) > 1e-9 || math.Abs(float64(scales[1]-0.0001)) > 1e-10 {
		t.Errorf("bias scales %v, want x_scale·w_scale", scales)
	}
	got := []int32{int32(uint32(b.Raw[0]) | uint32(b.Raw[1])<<8 | uint32(b.Raw[2])<<16 | uint32(b.Raw[3])<<24),
		int32(uint32(b.Raw[4]) | uint32(b.Raw[5])<<8 | uint32(b.Raw[6])<<16 | uint32(b.Raw[7])<<24)}
	if got[0] != 500 || got[1] != -2500 {
		t.Errorf("bias quantized to %v, want [500 -2500]", got)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		if g, err := ParseFormat(f.String()); err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f, g, err)
		}
	}
	if _, err := ParseFormat("int8"); err == nil || !strings.Contains(err.Error(), "qdq, qoperator, dynamic") {
		t.Errorf("ParseFormat(int8) = %v, want an error listing the formats", err)
	}
}

// syntheticRanges gives every float activation of m the range [-1, 1]
// (Relu outputs [0, 1]), standing in for calibration.
func syntheticRanges(m *graph.Model) Ranges {
	r := Ranges{}
	for name, t := range m.Tensors {
		if t.DType == graph.Float32 && !t.IsConst() {
			r[name] = Range{-1, 1}
		}
	}
	for _, n := range m.Nodes {
		if n.Op == "Relu" {
			r[n.Outputs[0]] = Range{0, 1}
		}
	}
	return r
}

// TestQuantizeStructure quantizes zoo SqueezeNet 1.1 (Conv, Relu, MaxPool,
// Concat, AveragePool) in every format and checks the operators each form
// must have.
func TestQuantizeStructure(t *testing.T) {
	m, err := zoo.Build("squeezenet1_1")
	if err != nil {
		t.Fatal(err)
	}
	convs := 0
	for _, n := range m.Nodes {
		if n.Op == "Conv" {
			convs++
		}
	}
	tests := []struct {
		f    Format
		want map[string]int // operator → count (-1: some)
		none []string
	}{
		{QDQ, map[string]int{"QuantizeLinear": -1, "DequantizeLinear": -1, "Conv": convs}, []string{"QLinearConv", "ConvInteger"}},
		{QOperator, map[string]int{"QLinearConv": convs, "QLinearConcat": -1}, []string{"Conv", "Relu", "Concat"}},
		{Dynamic, map[string]int{"DynamicQuantizeLinear": -1, "ConvInteger": convs, "Cast": convs}, []string{"Conv", "QLinearConv"}},
	}
	for _, tt := range tests {
		t.Run(tt.f.String(), func(t *testing.T) {
			var r Ranges
			if tt.f.Static() {
				r = syntheticRanges(m)
			}
			res, err := Quantize(m, tt.f, r)
			if err != nil {
				t.Fatal(err)
			}
			ops := map[string]int{}
			for _, n := range res.Model.Nodes {
				ops[n.Op]++
			}
			for op, n := range tt.want {
				if (n < 0 && ops[op] == 0) || (n >= 0 && ops[op] != n) {
					t.Errorf("%d %s nodes, want %d (-1: some)", ops[op], op, n)
				}
			}
			for _, op := range tt.none {
				if ops[op] != 0 {
					t.Errorf("%d %s nodes left", ops[op], op)
				}
			}
			if res.Quantized < convs {
				t.Errorf("%d operators quantized, want at least the %d convolutions", res.Quantized, convs)
			}
			if got, want := res.Model.Totals().MACs, m.Totals().MACs; got != want {
				t.Errorf("quantized model has %d MACs, the float one %d", got, want)
			}
			lg, err := graph.BuildLayers(res.Model)
			if err != nil {
				t.Fatal(err)
			}
			ints := 0
			for _, l := range lg.Layers {
				if l.Precision == graph.Uint8 || l.Precision == graph.Int8 {
					ints++
				}
			}
			if ints < convs {
				t.Errorf("%d integer layers, want at least %d", ints, convs)
			}
		})
	}
	if _, err := Quantize(m, QDQ, nil); err == nil {
		t.Error("static quantization without ranges: no error")
	}
}

// TestUpgradeRewritesOldForms upgrades an opset-9 Slice and Clip (whose
// attributes became inputs) to opset 13.
func TestUpgradeRewritesOldForms(t *testing.T) {
	m := &graph.Model{Name: "old", Opsets: []graph.OpsetImport{{Domain: "", Version: 9}}, IRVersion: 4, Tensors: map[string]*graph.Tensor{
		"x": {Name: "x", DType: graph.Float32, Shape: graph.Shape{1, 8}, Kind: graph.Input, Producer: -1},
	}, Inputs: []string{"x"}, Outputs: []string{"z"}}
	m.Nodes = []*graph.Node{
		{Name: "slice", Op: "Slice", Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: graph.Attrs{
			{Name: "starts", Kind: graph.AttrInts, Ints: []int64{2}}, {Name: "ends", Kind: graph.AttrInts, Ints: []int64{6}}, {Name: "axes", Kind: graph.AttrInts, Ints: []int64{1}}}},
		{Name: "clip", Op: "Clip", Inputs: []string{"y"}, Outputs: []string{"z"}, Attrs: graph.Attrs{{Name: "min", Kind: graph.AttrFloat, Float: 0}, {Name: "max", Kind: graph.AttrFloat, Float: 6}}},
	}
	if err := infer.Run(m, infer.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := Quantize(m, Dynamic, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Model
	if res.Upgraded != 9 || q.Opset() != 13 || q.IRVersion < 7 {
		t.Fatalf("upgraded from %d to opset %d, IR %d", res.Upgraded, q.Opset(), q.IRVersion)
	}
	if s := q.Tensors["y"].Shape; !s.Equal(graph.Shape{1, 4}) {
		t.Errorf("Slice output %s, want 1x4", s)
	}
	for _, n := range q.Nodes {
		if len(n.Attrs) != 0 {
			t.Errorf("%s keeps attributes %v", n, n.Attrs)
		}
		if n.Op == "Slice" && len(n.Inputs) != 4 || n.Op == "Clip" && len(n.Inputs) != 3 {
			t.Errorf("%s has inputs %v", n, n.Inputs)
		}
	}
	// A Softmax over a non-last axis changed meaning in opset 13.
	m.Nodes[1] = &graph.Node{Name: "sm", Op: "Softmax", Inputs: []string{"y"}, Outputs: []string{"z"}, Attrs: graph.Attrs{{Name: "axis", Kind: graph.AttrInt, Int: 0}}}
	if err := infer.Run(m, infer.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Quantize(m, Dynamic, nil); err == nil || !strings.Contains(err.Error(), "opset 13") {
		t.Errorf("Softmax axis 0 from opset 9: %v, want an error", err)
	}
}

// TestCalibrate checks the MinMax ranges against the sample values of a
// graph input and a Relu output.
func TestCalibrate(t *testing.T) {
	lib := assets.Require(t, assets.ORTLibrary())
	rt, err := ort.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	m, err := zoo.Build("squeezenet1_1")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	in := m.Tensors[m.Inputs[0]]
	var samples [][]*graph.Data
	want := Range{float32(math.Inf(1)), float32(math.Inf(-1))}
	for range 2 {
		d := ort.RandomData(in.DType, in.Shape, rng)
		vals, _ := float32s(d)
		for _, v := range vals {
			want = want.observe(v)
		}
		samples = append(samples, []*graph.Data{d})
	}
	r, err := Calibrate(rt, m, samples, ort.SessionOptions{IntraOpThreads: 1, InterOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := r[m.Inputs[0]]; got != want {
		t.Errorf("input range %v, want %v", got, want)
	}
	relus := 0
	for _, n := range m.Nodes {
		if n.Op != "Relu" {
			continue
		}
		relus++
		if got, ok := r[n.Outputs[0]]; !ok || got.Min != 0 || !(got.Max > 0) {
			t.Errorf("Relu %s range %v (calibrated %v)", n.Outputs[0], got, ok)
		}
	}
	if relus == 0 {
		t.Fatal("no Relu in squeezenet1_1")
	}
}
