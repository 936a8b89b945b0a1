package infer_test

import (
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/infer"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
)

// TestRealModels loads every real model through the ONNX loader (which runs
// infer.Run) and checks that every tensor ends with a fully known shape.
func TestRealModels(t *testing.T) {
	for _, rm := range assets.RealModels() {
		t.Run(rm.Name, func(t *testing.T) {
			path := assets.Require(t, assets.ModelPath(rm.File))
			m, err := onnx.Load(path, onnx.Options{Inputs: rm.Shapes()})
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[graph.TensorKind]int{}
			for _, name := range m.SortedTensorNames() {
				tt := m.Tensors[name]
				if tt.Shape == nil || !tt.Shape.Known() {
					t.Errorf("tensor %q has shape %v", name, tt.Shape)
				}
				if tt.DType == graph.Undefined {
					t.Errorf("tensor %q has no dtype", name)
				}
				kinds[tt.Kind]++
			}
			w := m.Totals()
			t.Logf("%s: %d nodes, %d tensors (%d activations, %d folded, %d initializers), MACs %d, FLOPs %d",
				rm.Name, len(m.Nodes), len(m.Tensors), kinds[graph.Activation], kinds[graph.Folded], kinds[graph.Initializer], w.MACs, w.FLOPs)
			if w.FLOPs <= 0 {
				t.Errorf("total FLOPs %d", w.FLOPs)
			}
		})
	}
}

// BenchmarkRunOCRRec re-infers the 765-node OCR recognition model.
func BenchmarkRunOCRRec(b *testing.B) {
	path := assets.Require(b, assets.ModelPath("ch_PP-OCRv4_rec_infer.onnx"))
	m, err := onnx.Load(path, onnx.Options{Inputs: map[string]graph.Shape{"x": {1, 3, 48, 320}}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := infer.Run(m, infer.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
