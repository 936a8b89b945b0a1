package quant

import (
	"errors"
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/ort"
)

// Calibrate runs m on ONNX Runtime once per sample (each a value per
// graph input, in the order of m.Inputs) with every float32 tensor of
// its top-level graph exposed as a graph output, and returns each
// tensor's minimum and maximum over all samples (ONNX Runtime's MinMax
// calibration). Tensors with no elements, and values that are not
// finite, are left out; weights are not activations and are not ranged.
func Calibrate(rt *ort.Runtime, m *graph.Model, samples [][]*graph.Data, opt ort.SessionOptions) (Ranges, error) {
	if m == nil {
		return nil, errors.New("quant: calibrate: nil model")
	}
	if len(samples) == 0 {
		return nil, errors.New("quant: calibrate: no samples")
	}
	c := *m
	c.Outputs = append([]string{}, m.Outputs...)
	isOut := map[string]bool{}
	for _, o := range m.Outputs {
		isOut[o] = true
	}
	var exposed []string
	for _, name := range m.SortedTensorNames() {
		t := m.Tensors[name]
		if t.DType != graph.Float32 || t.IsConst() || !t.Shape.Known() {
			continue
		}
		if n, _ := t.Shape.Elements(); n == 0 {
			continue
		}
		if t.Kind == graph.Activation && t.Producer < 0 {
			continue
		}
		exposed = append(exposed, name)
		if !isOut[name] {
			c.Outputs = append(c.Outputs, name)
		}
	}
	data, err := onnx.Encode(&c, 0)
	if err != nil {
		return nil, fmt.Errorf("quant: calibrate %s: %w", m.Name, err)
	}
	sess, err := rt.NewSession(data, m.Inputs, exposed, opt)
	if err != nil {
		return nil, fmt.Errorf("quant: calibrate %s: %w", m.Name, err)
	}
	defer sess.Close()
	ranges := Ranges{}
	seen := map[string]bool{}
	bad := map[string]bool{}
	for i, feeds := range samples {
		if len(feeds) != len(m.Inputs) {
			return nil, fmt.Errorf("quant: calibrate %s: sample %d has %d values for %d inputs", m.Name, i, len(feeds), len(m.Inputs))
		}
		outs, err := sess.Run(feeds)
		if err != nil {
			return nil, fmt.Errorf("quant: calibrate %s: sample %d: %w", m.Name, i, err)
		}
		for j, name := range exposed {
			vals, err := float32s(outs[j])
			if err != nil {
				return nil, fmt.Errorf("quant: calibrate %s: %q: %w", m.Name, name, err)
			}
			r, ok := ranges[name], seen[name]
			for _, v := range vals {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					bad[name] = true
					continue
				}
				if !ok {
					r, ok = Range{v, v}, true
				}
				r = r.observe(v)
			}
			if ok {
				ranges[name], seen[name] = r, true
			}
		}
	}
	for name := range bad {
		delete(ranges, name)
	}
	return ranges, nil
}
