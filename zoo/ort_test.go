package zoo

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/ort"
)

// TestRunOnONNXRuntime exports every network with random weights and runs
// it once on ONNX Runtime with random inputs: the outputs must have the
// inferred shapes and finite values.
func TestRunOnONNXRuntime(t *testing.T) {
	lib := assets.Require(t, assets.ORTLibrary())
	if testing.Short() {
		t.Skip("runs the networks on ONNX Runtime")
	}
	rt, err := ort.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for _, name := range TestNetworks() { // every network with INLAY_E2E (make e2e)
		t.Run(name, func(t *testing.T) {
			m, err := Build(name)
			if err != nil {
				t.Fatal(err)
			}
			data, err := onnx.Encode(m, 1)
			if err != nil {
				t.Fatal(err)
			}
			s, err := rt.NewSession(data, m.Inputs, m.Outputs, ort.SessionOptions{IntraOpThreads: 2, InterOpThreads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var inputs, inputs2 []*graph.Data
			for _, in := range m.Inputs {
				tn := m.Tensors[in]
				inputs = append(inputs, ort.RandomData(tn.DType, tn.Shape, rng))
				inputs2 = append(inputs2, ort.RandomData(tn.DType, tn.Shape, rng))
			}
			outs, err := s.Run(inputs)
			if err != nil {
				t.Fatal(err)
			}
			outs2, err := s.Run(inputs2)
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != len(m.Outputs) {
				t.Fatalf("%d outputs, want %d", len(outs), len(m.Outputs))
			}
			for i, o := range outs {
				want := m.Tensors[m.Outputs[i]]
				if !o.Dims.Equal(want.Shape) || o.DType != want.DType {
					t.Errorf("output %q: %v %s, inferred %v %s", m.Outputs[i], o.DType, o.Dims, want.DType, want.Shape)
					continue
				}
				if o.DType != graph.Float32 {
					continue
				}
				a, b := floats(o), floats(outs2[i])
				var sq, diff float64
				for j, v := range a {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("output %q: element %d is %v", m.Outputs[i], j, v)
					}
					sq += v * v
					diff = math.Max(diff, math.Abs(v-b[j]))
				}
				// The signal must reach the output: with weights that made
				// activations vanish, every input would give the same output.
				rms := math.Sqrt(sq / float64(len(a)))
				t.Logf("output %q %s: rms %.3g, max change for another input %.3g", m.Outputs[i], o.Dims, rms, diff)
				if !(diff > 1e-3*rms) {
					t.Errorf("output %q hardly depends on the input: rms %.3g, max change %.3g", m.Outputs[i], rms, diff)
				}
			}
		})
	}
}

func floats(d *graph.Data) []float64 {
	out := make([]float64, len(d.Raw)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(d.Raw[4*i:])))
	}
	return out
}
