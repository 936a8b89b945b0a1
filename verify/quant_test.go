package verify

import (
	"fmt"
	"math/rand"
	"os"
	"sync"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/quant"
)

// calibrationSamples is how many seeded random inputs the static formats'
// activation ranges are calibrated on (ONNX Runtime runs of the float
// model).
const calibrationSamples = 3

// quantSources are the quantized variants of sources, one per format of
// package quant: statically quantized QDQ and QOperator (calibrated on
// calibrationSamples runs of the float model) and dynamic. They run
// without graph optimizations, like the zoo: ONNX Runtime fuses QDQ
// patterns differently in a full model and in a subgraph cut through
// them, so only unfused runs compute the same values with the same
// kernels; integer tensors must then agree exactly.
func quantSources(sources []source) []source {
	var out []source
	for _, base := range sources {
		for _, f := range quant.Formats {
			b, f := base, f
			opt := b.options
			opt.Optimization = ort.OptimizeNone
			out = append(out, source{name: b.name + "/" + f.String(), inputs: b.inputs, options: opt, quant: &f, base: &b})
		}
	}
	return out
}

// realQuantSources are the real models whose quantized variants are
// checked: all of them, text detection at 1×3×160×96 rather than
// 640×640 in make test (its unfused quantized runs at the typical size
// take most of a minute on one core); with INLAY_E2E (make e2e-zoo) at
// the typical sizes.
func realQuantSources() []source {
	srcs := realSources()
	if os.Getenv("INLAY_E2E") != "" {
		return srcs
	}
	for i, src := range srcs {
		if src.name == "ocr_det" {
			srcs[i].inputs = map[string][]int64{"x": {1, 3, 160, 96}}
			srcs[i].name += "@" + shapesKey(srcs[i].inputs)
		}
	}
	return srcs
}

// zooQuantSources are the zoo networks whose quantized variants make test
// checks: one convolutional network (squeezenet1_1: Conv, Relu, MaxPool,
// Concat, AveragePool) and one transformer (deit_tiny: MatMul, Gemm, Add,
// Mul, Softmax). With INLAY_E2E (make e2e-zoo) every network.
func zooQuantSources() []source {
	all := zooSources()
	if os.Getenv("INLAY_E2E") != "" {
		return all
	}
	var out []source
	for _, src := range all {
		if src.zoo == "squeezenet1_1" {
			out = append(out, src)
		}
	}
	for _, name := range []string{"deit_tiny"} {
		opt := sessionOptions
		opt.Optimization = ort.OptimizeNone
		out = append(out, source{name: "zoo_" + name, zoo: name, options: opt})
	}
	return out
}

var (
	rangesMu sync.Mutex
	rangesOf = map[string]quant.Ranges{}
)

// calibrate returns the activation ranges of a float source, from
// calibrationSamples ONNX Runtime runs on seeded random inputs (known
// values where the model needs them).
func calibrate(t testing.TB, src source, m *graph.Model) (quant.Ranges, error) {
	rangesMu.Lock()
	defer rangesMu.Unlock()
	if r := rangesOf[src.name]; r != nil {
		return r, nil
	}
	rt := openRuntime(t)
	rng := rand.New(rand.NewSource(seedOf(src.name + "/calibration")))
	samples := make([][]*graph.Data, calibrationSamples)
	for i := range samples {
		for _, name := range m.Inputs {
			if known := knownInputs[name]; known != nil {
				samples[i] = append(samples[i], known())
				continue
			}
			tn := m.Tensors[name]
			samples[i] = append(samples[i], ort.RandomData(tn.DType, tn.Shape, rng))
		}
	}
	r, err := quant.Calibrate(rt, m, samples, src.options)
	if err != nil {
		return nil, err
	}
	rangesOf[src.name] = r
	return r, nil
}

// prepareQuantized quantizes the float model of src.base in src.quant's
// format.
func prepareQuantized(t testing.TB, src source) *prepared {
	t.Helper()
	fp := prepare(t, *src.base)
	preparedMu.Lock()
	p := prepareds[src.name]
	preparedMu.Unlock()
	if p != nil {
		return p
	}
	p = &prepared{}
	var ranges quant.Ranges
	switch {
	case fp.err != nil:
		p.err = fmt.Errorf("float model: %w", fp.err)
	case src.quant.Static():
		ranges, p.err = calibrate(t, *src.base, fp.model)
	}
	if p.err == nil {
		var res *quant.Result
		if res, p.err = quant.Quantize(fp.model, *src.quant, ranges); p.err == nil {
			p.model, p.quantized, p.upgraded = res.Model, res.Quantized, res.Upgraded
			p.layers, p.err = graph.BuildLayers(p.model)
		}
	}
	if p.err != nil {
		p.bytesErr = p.err
	} else {
		p.bytes, p.bytesErr = onnx.Encode(p.model, 0)
	}
	preparedMu.Lock()
	prepareds[src.name] = p
	preparedMu.Unlock()
	return p
}

// TestQuantizedShapesMatchORT quantizes every real model in the three
// formats and checks every node output's dtype and shape (and folded
// values) against ONNX Runtime's, as TestShapesMatchORT does for the float
// models.
func TestQuantizedShapesMatchORT(t *testing.T) {
	checkQuantized(t, realQuantSources())
	checkShapes(t, quantSources(realQuantSources()))
}

// TestQuantizedSubgraphsMatchFullModel checks that exported subgraphs of
// the quantized real models reproduce the full quantized model's values
// (integer tensors exactly).
func TestQuantizedSubgraphsMatchFullModel(t *testing.T) {
	checkSubgraphs(t, quantSources(realQuantSources()))
}

// TestZooQuantizedShapesMatchORT does the shape check for the quantized
// zoo networks (a sample; every network with INLAY_E2E).
func TestZooQuantizedShapesMatchORT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs quantized zoo networks on ONNX Runtime")
	}
	checkQuantized(t, zooQuantSources())
	checkShapes(t, quantSources(zooQuantSources()))
}

// TestZooQuantizedSubgraphsMatchFullModel does the subgraph check for the
// quantized zoo networks.
func TestZooQuantizedSubgraphsMatchFullModel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs quantized zoo networks on ONNX Runtime")
	}
	checkSubgraphs(t, quantSources(zooQuantSources()))
}

// checkQuantized reports, per model and format, how many operators were
// quantized and how many layers carry an integer precision, and requires
// both for every model with a convolution or matrix product in its
// top-level graph (a Gemm for the static formats: quantize_dynamic leaves
// Gemm float). The VAD's work is inside If branches, which the quantizer
// leaves alone.
func checkQuantized(t *testing.T, sources []source) {
	openRuntime(t)
	for _, src := range quantSources(sources) {
		p := prepare(t, src)
		if p.err != nil {
			t.Errorf("%s: %v", src.name, p.err)
			continue
		}
		fp := prepare(t, *src.base)
		heavy := 0 // the operators the format quantizes that carry the work
		for _, n := range fp.model.Nodes {
			if n.Op == "Conv" || n.Op == "MatMul" || (n.Op == "Gemm" && *src.quant != quant.Dynamic) {
				heavy++
			}
		}
		intLayers, ops := 0, map[string]int{}
		for _, l := range p.layers.Layers {
			if l.Precision != graph.Undefined {
				intLayers++
			}
		}
		for _, n := range p.model.Nodes {
			ops[n.Op]++
		}
		note := ""
		if p.upgraded != 0 {
			note = fmt.Sprintf(" (upgraded from opset %d)", p.upgraded)
		}
		t.Logf("%-40s %4d operators quantized, %4d of %4d layers integer, %d QLinear/Integer nodes%s", src.name, p.quantized, intLayers, len(p.layers.Layers), quantizedNodes(ops), note)
		if heavy > 0 && (p.quantized == 0 || (*src.quant != quant.Dynamic && intLayers == 0)) {
			t.Errorf("%s: %d quantizable Conv/MatMul/Gemm nodes, but %d operators quantized and %d integer layers", src.name, heavy, p.quantized, intLayers)
		}
	}
}

// quantizedNodes counts the operator-oriented quantized nodes.
func quantizedNodes(ops map[string]int) int {
	n := 0
	for op, c := range ops {
		switch op {
		case "QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearMul", "QLinearSigmoid",
			"QLinearLeakyRelu", "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearConcat",
			"ConvInteger", "MatMulInteger":
			n += c
		}
	}
	return n
}
