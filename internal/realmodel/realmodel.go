// Package realmodel loads the fetched real models of shared/REAL_MODELS.md
// for tests: the ONNX graph with the model's typical input shapes and its
// layer graph. (It lives apart from internal/assets, which the onnx
// package's own tests use, so that it may import onnx.)
package realmodel

import (
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
)

// Load loads rm from the cache with rm.Shapes() as its inputs and builds
// its layer graph; it returns the file's path too. Without the file the
// test stops as assets.Require says; a model that does not load fails it.
func Load(tb testing.TB, rm assets.RealModel) (path string, m *graph.Model, lg *graph.LayerGraph) {
	tb.Helper()
	path = assets.Require(tb, assets.ModelPath(rm.File))
	m, err := onnx.Load(path, onnx.Options{Inputs: rm.Shapes()})
	if err != nil {
		tb.Fatal(err)
	}
	lg, err = graph.BuildLayers(m)
	if err != nil {
		tb.Fatal(err)
	}
	return path, m, lg
}
