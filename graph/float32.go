package graph

import (
	"encoding/binary"
	"math"
)

// Float32Raw is vals in Data.Raw's layout for a Float32 tensor:
// little-endian IEEE 754 single precision, 4 bytes a value.
func Float32Raw(vals []float32) []byte {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return raw
}

// Float32s reads Float32Raw's layout back (trailing bytes short of a
// value are ignored); the caller checks that the data is Float32.
func Float32s(raw []byte) []float32 {
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}
