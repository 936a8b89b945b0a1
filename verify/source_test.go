package verify

import (
	"os"
	"sync"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/quant"
	"github.com/inlay-dev/inlay/zoo"
)

// source is a model the tests check: a real model of shared/REAL_MODELS.md
// (loaded with onnx.Load, run from its file) or a zoo network (built with
// zoo.Build, run as onnx.Encode(m, 0) writes it, whose weights are the
// ones onnx.ExportSubgraph writes too).
type source struct {
	name string
	// file is the real model's file in the cache; "" for a zoo network.
	file string
	// zoo is the zoo network's name; "" for a real model.
	zoo string
	// inputs gives shapes for symbolic input dimensions.
	inputs map[string][]int64
	// options are the ONNX Runtime options of the full run and of the
	// subgraphs.
	options ort.SessionOptions
	// quant, when set, makes the source the quantized variant of base
	// (see quantSources).
	quant *quant.Format
	base  *source
}

func realSources() []source {
	var out []source
	for _, rm := range assets.RealModels() {
		out = append(out, source{name: rm.Name, file: rm.File, inputs: rm.Inputs, options: sessionOptions})
	}
	return out
}

// zooSourcesUnlessShort are zooSources; a -short run skips the test.
func zooSourcesUnlessShort(t *testing.T) []source {
	if testing.Short() {
		t.Skip("runs the nine zoo networks on ONNX Runtime")
	}
	return zooSources()
}

// zooSources run without graph optimizations: with random weights, deep
// networks amplify rounding differences, and fused and unfused graphs
// disagree far beyond any tolerance (zoo MobileBERT's output by about 2% of
// its largest value). Without fusions a subgraph computes its nodes with
// the same kernels as the full model, so a difference means a wrong export.
func zooSources() []source {
	opt := sessionOptions
	opt.Optimization = ort.OptimizeNone
	var out []source
	for _, name := range zoo.TestNetworks() { // every network with INLAY_E2E (make e2e)
		out = append(out, source{name: "zoo_" + name, zoo: name, options: opt})
	}
	return out
}

// prepared is a source as package onnx (or zoo) loads it, with its layer
// graph and the ONNX bytes ONNX Runtime runs.
type prepared struct {
	model    *graph.Model
	layers   *graph.LayerGraph
	err      error // loading or layering
	bytes    []byte
	bytesErr error
	// quantized and upgraded are quant.Result's, for a quantized source.
	quantized int
	upgraded  int64
}

var (
	preparedMu sync.Mutex
	prepareds  = map[string]*prepared{}
)

// prepare loads a source once per test binary; errors are kept so that
// each test reports them.
func prepare(t testing.TB, src source) *prepared {
	t.Helper()
	if src.quant != nil {
		return prepareQuantized(t, src)
	}
	var path string
	if src.file != "" {
		path = assets.Require(t, assets.ModelPath(src.file))
	}
	preparedMu.Lock()
	defer preparedMu.Unlock()
	if p := prepareds[src.name]; p != nil {
		return p
	}
	p := &prepared{}
	if src.file != "" {
		p.model, p.err = onnx.Load(path, onnx.Options{Inputs: inputShapes(src)})
		p.bytes, p.bytesErr = os.ReadFile(path)
	} else {
		p.model, p.err = zoo.Build(src.zoo)
		if p.err != nil {
			p.bytesErr = p.err
		} else {
			p.bytes, p.bytesErr = onnx.Encode(p.model, 0)
		}
	}
	if p.err == nil {
		p.layers, p.err = graph.BuildLayers(p.model)
	}
	prepareds[src.name] = p
	return p
}
