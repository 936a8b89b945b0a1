package zoo

import (
	"testing"

	"github.com/inlay-dev/inlay/onnx"
)

// TestExportRoundTrip encodes every network as ONNX and loads it back: the
// decoded model must have the same nodes, parameters and work.
func TestExportRoundTrip(t *testing.T) {
	for _, name := range Names() {
		m, err := Build(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, err := onnx.Encode(m, 7)
		if err != nil {
			t.Fatalf("%s: encode: %v", name, err)
		}
		back, err := onnx.Decode(data, name+".onnx", onnx.Options{})
		if err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		if len(back.Nodes) != len(m.Nodes) {
			t.Errorf("%s: %d nodes back, built %d", name, len(back.Nodes), len(m.Nodes))
		}
		if got, want := TrainableParams(back), TrainableParams(m); got != want {
			t.Errorf("%s: %d trainable params back, built %d", name, got, want)
		}
		if got, want := back.Params(), m.Params(); got != want {
			t.Errorf("%s: %d params back, built %d", name, got, want)
		}
		if got, want := back.Totals(), m.Totals(); got.MACs != want.MACs || got.FLOPs != want.FLOPs {
			t.Errorf("%s: work back %+v, built %+v", name, got, want)
		}
		for i, o := range m.Outputs {
			if b := back.Tensors[back.Outputs[i]]; b == nil || !b.Shape.Equal(m.Tensors[o].Shape) {
				t.Errorf("%s: output %q does not come back with shape %s", name, o, m.Tensors[o].Shape)
			}
		}
	}
}
