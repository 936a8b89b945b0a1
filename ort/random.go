package ort

import (
	"encoding/binary"
	"math"
	"math/rand"

	"github.com/inlay-dev/inlay/graph"
)

// RandomData makes a tensor of the dtype and shape with values from rng:
// floats uniform in [-1, 1), integers uniform in [0, 4), booleans either
// value (8-bit floats are zero). The shape must be fully known (unknown dimensions count as 0, which
// makes a tensor that Run rejects); types without a fixed element size
// (strings) get no bytes.
func RandomData(dt graph.DType, shape graph.Shape, rng *rand.Rand) *graph.Data {
	n, ok := shape.Elements()
	if !ok {
		n = 0
	}
	size := dt.Size()
	if dt == graph.Int4 || dt == graph.Uint4 {
		// two 4-bit values a byte, each in 0..3
		raw := make([]byte, (n+1)/2)
		for i := range raw {
			raw[i] = byte(rng.Intn(4)) | byte(rng.Intn(4))<<4
		}
		return &graph.Data{DType: dt, Dims: shape.Clone(), Raw: raw}
	}
	raw := make([]byte, n*int64(size))
	for i := int64(0); i < n; i++ {
		b := raw[i*int64(size) : (i+1)*int64(size)]
		switch dt {
		case graph.Float32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(rng.Float64()*2-1)))
		case graph.Float64:
			binary.LittleEndian.PutUint64(b, math.Float64bits(rng.Float64()*2-1))
		case graph.Float16:
			binary.LittleEndian.PutUint16(b, float16Bits(float32(rng.Float64()*2-1)))
		case graph.BFloat16:
			binary.LittleEndian.PutUint16(b, uint16(math.Float32bits(float32(rng.Float64()*2-1))>>16))
		case graph.Bool:
			b[0] = byte(rng.Intn(2))
		default:
			if !dt.IsFloat() { // integers (little-endian: the low byte first)
				b[0] = byte(rng.Intn(4))
			} // 8-bit floats stay zero
		}
	}
	return &graph.Data{DType: dt, Dims: shape.Clone(), Raw: raw}
}

// float16Bits converts a float32 to IEEE 754 half precision, rounding to
// nearest even.
func float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return sign | 0x7e00
	case exp >= 0x1f: // overflow or infinity
		return sign | 0x7c00
	case exp <= 0: // subnormal or zero
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		half := mant >> shift
		rem := mant & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, which is right
	}
	return sign | uint16(half)
}

// float16Value converts IEEE 754 half-precision bits to float32.
func float16Value(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h >> 10 & 0x1f)
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(mant) / 1024 / 16384 // mant · 2^-24
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
