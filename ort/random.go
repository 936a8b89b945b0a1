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
			binary.LittleEndian.PutUint16(b, graph.Float16Bits(float32(rng.Float64()*2-1)))
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
