package graph

import (
	"math"
	"slices"
	"testing"
)

func TestFloat32RoundTrip(t *testing.T) {
	vals := []float32{0, 1, -2.5, math.MaxFloat32, float32(math.Inf(-1)), 1e-40}
	raw := Float32Raw(vals)
	if len(raw) != 4*len(vals) || raw[4] != 0 || raw[7] != 0x3f { // 1.0 is 0x3f800000, little-endian
		t.Fatalf("raw % x", raw)
	}
	if got := Float32s(raw); !slices.Equal(got, vals) {
		t.Errorf("Float32s(Float32Raw(%v)) = %v", vals, got)
	}
	if got := Float32s(raw[:5]); len(got) != 1 || got[0] != 0 {
		t.Errorf("a partial trailing value: %v, want [0]", got)
	}
	if len(Float32Raw(nil)) != 0 || len(Float32s(nil)) != 0 {
		t.Error("empty input gives a non-empty result")
	}
}
