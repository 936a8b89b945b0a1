package infer_test

import (
	"math/rand"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/infer"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/ort"
)

// TestCasesAgainstORT runs every case of the operator tables on ONNX
// Runtime and checks that every node output has the dtype and shape that
// Run inferred, and that folded values equal what ONNX Runtime computes.
func TestCasesAgainstORT(t *testing.T) {
	lib := assets.Require(t, assets.ORTLibrary())
	rt, err := ort.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	// Cases ONNX Runtime's CPU provider cannot run.
	skip := map[string]string{
		"gru bidirectional batch-first": "ONNX Runtime CPU has no batch-first (layout 1) recurrent kernels",
	}
	for _, cm := range infer.CaseModels() {
		t.Run(cm.Name, func(t *testing.T) {
			if why, ok := skip[cm.Name]; ok {
				t.Skip(why)
			}
			m := cm.Model
			if len(m.Inputs) == 0 {
				// ONNX Runtime wants an input; folded cases get a dummy one.
				m.Tensors["dummy"] = &graph.Tensor{Name: "dummy", DType: graph.Float32, Shape: graph.Shape{1}, Kind: graph.Input}
				m.Inputs = []string{"dummy"}
				m.Nodes = append(m.Nodes, &graph.Node{Name: "dummy", Op: "Identity", Inputs: []string{"dummy"}, Outputs: []string{"dummy_out"}})
			}
			if err := infer.Run(m, infer.Options{}); err != nil {
				t.Fatal(err)
			}
			m.Outputs = nil
			for _, n := range m.Nodes {
				for _, o := range n.Outputs {
					if o != "" {
						m.Outputs = append(m.Outputs, o)
					}
				}
			}
			data, err := onnx.Encode(m, 1)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewSource(1))
			var feeds []*graph.Data
			for _, in := range m.Inputs {
				tt := m.Tensors[in]
				feeds = append(feeds, ort.RandomData(tt.DType, tt.Shape, rng))
			}
			s, err := rt.NewSession(data, m.Inputs, m.Outputs, ort.SessionOptions{IntraOpThreads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := s.Run(feeds)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range m.Outputs {
				tt := m.Tensors[o]
				if m.Nodes[tt.Producer].Op == "NonMaxSuppression" {
					// The inferred row count is an upper bound.
					if len(got[i].Dims) != 2 || got[i].Dims[0] > tt.Shape[0] || got[i].Dims[1] != 3 {
						t.Errorf("%s: ONNX Runtime gives %s, beyond the bound %s", o, got[i].Dims, tt.Shape)
					}
					continue
				}
				if got[i].DType != tt.DType || !got[i].Dims.Equal(tt.Shape) {
					t.Errorf("%s: inferred %s %s, ONNX Runtime gives %s %s", o, tt.DType, tt.Shape, got[i].DType, got[i].Dims)
					continue
				}
				if tt.Kind == graph.Folded && string(tt.Data.Raw) != string(got[i].Raw) {
					t.Errorf("%s: folded values %v differ from ONNX Runtime's %v", o, tt.Data.Raw, got[i].Raw)
				}
			}
		})
	}
}
