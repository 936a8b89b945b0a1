package onnx

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// fuzzShapes resolve the symbolic dims of the real models (small spatial
// sizes keep each run fast), so that mutations of them reach inference.
var fuzzShapes = map[string]graph.Shape{
	"x":     {1, 3, 64, 192},
	"input": {1, 512},
}

// fuzzOptions overrides the inputs data declares that fuzzShapes knows,
// where the rank agrees: symbolic dims from fuzzShapes, fixed ones kept.
func fuzzOptions(data []byte) Options {
	opt := Options{Inputs: map[string]graph.Shape{}}
	mp := &onnxpb.ModelProto{}
	if proto.Unmarshal(data, mp) != nil {
		return opt
	}
	for _, vi := range mp.GetGraph().GetInput() {
		s, ok := fuzzShapes[vi.GetName()]
		if sh := vi.GetType().GetTensorType().GetShape(); ok && sh != nil && len(sh.GetDim()) == len(s) {
			s = s.Clone()
			for i, d := range sh.GetDim() {
				if v, fixed := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); fixed {
					s[i] = v.DimValue
				}
			}
			opt.Inputs[vi.GetName()] = s
		}
	}
	return opt
}

// FuzzLoad feeds arbitrary bytes to Decode: it must never panic (nor hit
// the recover at its boundary) and every error must be one line naming the
// file. Seeds: pieces of the real models (when fetched), small hand-built
// models and truncations of them.
func FuzzLoad(f *testing.F) {
	// A whole model (megabytes) is no seed: each mutation of it would
	// decode the whole network, and gathering baseline coverage over them
	// took longer than CI's fuzzing pass. Pieces of a few layers each are
	// small, valid models covering the real models' operators; mutating
	// them is fast.
	small := seedModels(f, 4, 3, func(n int) int { return n/12 + 1 }, 64<<10)
	for _, data := range small {
		f.Add(data)
		f.Add(data[:len(data)/2])
		f.Add(data[:len(data)-1])
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, "fuzz.onnx", fuzzOptions(data))
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "fuzz.onnx: ") {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
			if strings.Contains(msg, "internal error") {
				t.Fatalf("Decode panicked: %s", msg) // recovered, but a bug to fix
			}
			return
		}
		if m == nil || m.Hash != ContentHash(data) {
			t.Fatal("no model or wrong hash without an error")
		}
	})
}
