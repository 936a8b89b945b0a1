package verify

import (
	"sync"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
)

// loaded is a real model as package onnx loads it, with its layer graph.
type loaded struct {
	model  *graph.Model
	layers *graph.LayerGraph
	err    error
}

var (
	loadedMu sync.Mutex
	loadeds  = map[string]*loaded{}
)

// getModel loads a real model with onnx.Load once per test binary; the
// error is kept so that each test reports it.
func getModel(t testing.TB, rm assets.RealModel) *loaded {
	t.Helper()
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if l := loadeds[rm.Name]; l != nil {
		return l
	}
	path := assets.Require(t, assets.ModelPath(rm.File))
	l := &loaded{}
	l.model, l.err = onnx.Load(path, onnx.Options{Inputs: inputShapes(rm)})
	if l.err == nil {
		l.layers, l.err = graph.BuildLayers(l.model)
	}
	loadeds[rm.Name] = l
	return l
}
