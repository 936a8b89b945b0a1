package graph

import (
	"math"
	"testing"
)

func TestFloat16(t *testing.T) {
	tests := []struct {
		f    float32
		bits uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{65504, 0x7bff},
		{1e6, 0x7c00},                   // overflow → +Inf
		{float32(math.Inf(-1)), 0xfc00}, // -Inf
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{6.097555160522461e-05, 0x03ff}, // largest subnormal
		{1.0009765625, 0x3c01},
		{1.00048828125, 0x3c00}, // tie → even
		{1.00146484375, 0x3c02}, // tie → even (up)
	}
	for _, tt := range tests {
		if got := Float16Bits(tt.f); got != tt.bits {
			t.Errorf("Float16Bits(%v) = %#04x, want %#04x", tt.f, got, tt.bits)
		}
		if tt.bits&0x7c00 != 0x7c00 || tt.bits&0x3ff != 0 { // finite values round-trip
			if back := Float16Value(tt.bits); back != tt.f && !(tt.f == 1.00048828125 || tt.f == 1.00146484375) {
				t.Errorf("Float16Value(%#04x) = %v, want %v", tt.bits, back, tt.f)
			}
		}
	}
	if !math.IsNaN(float64(Float16Value(Float16Bits(float32(math.NaN()))))) {
		t.Error("NaN does not survive a round trip")
	}
}
