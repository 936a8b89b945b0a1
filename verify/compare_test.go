package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

// relTol is the allowed difference between two runs of the same values:
// max |a-b| ≤ relTol · max(1, max |b|).
const relTol = 1e-4

// floatsOf decodes float tensors; ok is false for other types.
func floatsOf(d *graph.Data) (vals []float64, ok bool) {
	switch d.DType {
	case graph.Float32:
		vals = make([]float64, len(d.Raw)/4)
		for i := range vals {
			vals[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(d.Raw[4*i:])))
		}
	case graph.Float64:
		vals = make([]float64, len(d.Raw)/8)
		for i := range vals {
			vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(d.Raw[8*i:]))
		}
	default:
		return nil, false
	}
	return vals, true
}

// compareData returns "" when got matches want (same dtype and shape; floats
// within relTol, NaN matching NaN; other types byte for byte), else what differs.
func compareData(got, want *graph.Data) string {
	if got.DType != want.DType {
		return fmt.Sprintf("dtype %s, want %s", got.DType, want.DType)
	}
	if !got.Dims.Equal(want.Dims) {
		return fmt.Sprintf("shape %s, want %s", got.Dims, want.Dims)
	}
	a, ok := floatsOf(got)
	if !ok {
		if !bytes.Equal(got.Raw, want.Raw) {
			return fmt.Sprintf("%s values differ", got.DType)
		}
		return ""
	}
	b, _ := floatsOf(want)
	if len(a) != len(b) {
		return fmt.Sprintf("%d values, want %d", len(a), len(b))
	}
	maxB, maxDiff, at := 0.0, 0.0, -1
	for i := range b {
		if !math.IsNaN(b[i]) && !math.IsInf(b[i], 0) {
			maxB = math.Max(maxB, math.Abs(b[i]))
		}
	}
	for i := range a {
		switch {
		case math.IsNaN(a[i]) || math.IsNaN(b[i]):
			if math.IsNaN(a[i]) != math.IsNaN(b[i]) {
				return fmt.Sprintf("element %d is %v, want %v", i, a[i], b[i])
			}
		case math.IsInf(a[i], 0) || math.IsInf(b[i], 0):
			if a[i] != b[i] {
				return fmt.Sprintf("element %d is %v, want %v", i, a[i], b[i])
			}
		default:
			if d := math.Abs(a[i] - b[i]); d > maxDiff {
				maxDiff, at = d, i
			}
		}
	}
	if limit := relTol * math.Max(1, maxB); maxDiff > limit {
		return fmt.Sprintf("max |diff| %.3g at element %d (%v vs %v) exceeds %.3g (max |want| %.3g)", maxDiff, at, a[at], b[at], limit, maxB)
	}
	return ""
}

func f32s(dims graph.Shape, vals ...float32) *graph.Data {
	return &graph.Data{DType: graph.Float32, Dims: dims, Raw: graph.Float32Raw(vals)}
}

func TestCompareData(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name      string
		got, want *graph.Data
		ok        bool
	}{
		{"equal", f32s(graph.Shape{2}, 1, 2), f32s(graph.Shape{2}, 1, 2), true},
		{"within absolute tolerance", f32s(graph.Shape{2}, 1, 2.00005), f32s(graph.Shape{2}, 1, 2), true},
		{"outside tolerance", f32s(graph.Shape{2}, 1, 2.001), f32s(graph.Shape{2}, 1, 2), false},
		{"relative to the largest value", f32s(graph.Shape{2}, 1000, 0.05), f32s(graph.Shape{2}, 1000, 0), true},
		{"NaN matches NaN", f32s(graph.Shape{1}, nan), f32s(graph.Shape{1}, nan), true},
		{"NaN against a number", f32s(graph.Shape{1}, nan), f32s(graph.Shape{1}, 0), false},
		{"shape", f32s(graph.Shape{2, 1}, 1, 2), f32s(graph.Shape{2}, 1, 2), false},
		{"dtype", &graph.Data{DType: graph.Int32, Dims: graph.Shape{2}, Raw: make([]byte, 8)}, f32s(graph.Shape{2}, 0, 0), false},
		{"ints exact", &graph.Data{DType: graph.Int64, Dims: graph.Shape{1}, Raw: []byte{1, 0, 0, 0, 0, 0, 0, 0}}, &graph.Data{DType: graph.Int64, Dims: graph.Shape{1}, Raw: []byte{2, 0, 0, 0, 0, 0, 0, 0}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if msg := compareData(tt.got, tt.want); (msg == "") != tt.ok {
				t.Errorf("compareData = %q, want ok=%v", msg, tt.ok)
			}
		})
	}
}
