package infer

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// value is a decoded constant: floating-point types in f, integer and bool
// types in i (unsigned 64-bit values above MaxInt64 wrap).
type value struct {
	dt    graph.DType
	shape graph.Shape
	f     []float64
	i     []int64
}

func foldableDType(d graph.DType) bool {
	switch d {
	case graph.Float32, graph.Float64, graph.Float16, graph.BFloat16,
		graph.Int8, graph.Int16, graph.Int32, graph.Int64,
		graph.Uint8, graph.Uint16, graph.Uint32, graph.Uint64, graph.Bool:
		return true
	}
	return false
}

func (v *value) isFloat() bool { return v.dt.IsFloat() }

func (v *value) len() int {
	if v.isFloat() {
		return len(v.f)
	}
	return len(v.i)
}

// ints returns the elements as integers (floats truncated).
func (v *value) ints() []int64 {
	if !v.isFloat() {
		return v.i
	}
	out := make([]int64, len(v.f))
	for k, x := range v.f {
		out[k] = truncInt(x)
	}
	return out
}

// floats returns the elements as float64.
func (v *value) floats() []float64 {
	if v.isFloat() {
		return v.f
	}
	out := make([]float64, len(v.i))
	for k, x := range v.i {
		out[k] = float64(x)
	}
	return out
}

func truncInt(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}

// newValue allocates a zero value of a dtype and shape.
func newValue(dt graph.DType, s graph.Shape) *value {
	n, _ := s.Elements()
	v := &value{dt: dt, shape: s.Clone()}
	if v.shape == nil {
		v.shape = graph.Shape{}
	}
	if dt.IsFloat() {
		v.f = make([]float64, n)
	} else {
		v.i = make([]int64, n)
	}
	return v
}

// take builds a value of the given shape whose element k is v's element idx[k].
func (v *value) take(s graph.Shape, idx []int) *value {
	out := &value{dt: v.dt, shape: s.Clone()}
	if v.isFloat() {
		out.f = make([]float64, len(idx))
		for k, j := range idx {
			out.f[k] = v.f[j]
		}
	} else {
		out.i = make([]int64, len(idx))
		for k, j := range idx {
			out.i[k] = v.i[j]
		}
	}
	return out
}

// reshaped returns v with another shape, sharing the elements.
func (v *value) reshaped(s graph.Shape) *value {
	return &value{dt: v.dt, shape: s.Clone(), f: v.f, i: v.i}
}

// convert casts v to another dtype with ONNX Cast semantics (saturation
// aside: out-of-range integers wrap as in C).
func (v *value) convert(dt graph.DType) *value {
	out := &value{dt: dt, shape: v.shape.Clone()}
	n := v.len()
	if dt.IsFloat() {
		out.f = make([]float64, n)
		for k := 0; k < n; k++ {
			var x float64
			if v.isFloat() {
				x = v.f[k]
			} else if v.dt == graph.Uint64 {
				x = float64(uint64(v.i[k]))
			} else {
				x = float64(v.i[k])
			}
			out.f[k] = roundFloat(dt, x)
		}
		return out
	}
	out.i = make([]int64, n)
	for k := 0; k < n; k++ {
		var x int64
		if v.isFloat() {
			if dt == graph.Bool {
				if v.f[k] != 0 {
					x = 1
				}
			} else {
				x = truncInt(v.f[k])
			}
		} else {
			x = v.i[k]
		}
		out.i[k] = wrapInt(dt, x)
	}
	return out
}

// roundFloat rounds x to the precision of a float dtype.
func roundFloat(dt graph.DType, x float64) float64 {
	switch dt {
	case graph.Float32:
		return float64(float32(x))
	case graph.Float16:
		return float64(halfToFloat(floatToHalf(float32(x))))
	case graph.BFloat16:
		return float64(math.Float32frombits(uint32(floatToBF16(float32(x))) << 16))
	}
	return x
}

// wrapInt wraps x into an integer dtype's range.
func wrapInt(dt graph.DType, x int64) int64 {
	switch dt {
	case graph.Bool:
		if x != 0 {
			return 1
		}
		return 0
	case graph.Int8:
		return int64(int8(x))
	case graph.Int16:
		return int64(int16(x))
	case graph.Int32:
		return int64(int32(x))
	case graph.Uint8:
		return int64(uint8(x))
	case graph.Uint16:
		return int64(uint16(x))
	case graph.Uint32:
		return int64(uint32(x))
	}
	return x
}

// decode reads raw little-endian bytes of a tensor.
func decode(dt graph.DType, s graph.Shape, raw []byte) (*value, error) {
	n, ok := s.Elements()
	if !ok {
		return nil, fmt.Errorf("shape %s is not known", s)
	}
	if !foldableDType(dt) {
		return nil, fmt.Errorf("cannot read values of type %s", dt)
	}
	sz := int64(dt.Size())
	if int64(len(raw)) != n*sz {
		return nil, fmt.Errorf("has %d bytes, %s %s needs %d", len(raw), dt, s, n*sz)
	}
	v := newValue(dt, s)
	le := binary.LittleEndian
	for k := int64(0); k < n; k++ {
		b := raw[k*sz:]
		switch dt {
		case graph.Float32:
			v.f[k] = float64(math.Float32frombits(le.Uint32(b)))
		case graph.Float64:
			v.f[k] = math.Float64frombits(le.Uint64(b))
		case graph.Float16:
			v.f[k] = float64(halfToFloat(le.Uint16(b)))
		case graph.BFloat16:
			v.f[k] = float64(math.Float32frombits(uint32(le.Uint16(b)) << 16))
		case graph.Int8:
			v.i[k] = int64(int8(b[0]))
		case graph.Uint8:
			v.i[k] = int64(b[0])
		case graph.Bool:
			if b[0] != 0 {
				v.i[k] = 1
			}
		case graph.Int16:
			v.i[k] = int64(int16(le.Uint16(b)))
		case graph.Uint16:
			v.i[k] = int64(le.Uint16(b))
		case graph.Int32:
			v.i[k] = int64(int32(le.Uint32(b)))
		case graph.Uint32:
			v.i[k] = int64(le.Uint32(b))
		case graph.Int64, graph.Uint64:
			v.i[k] = int64(le.Uint64(b))
		}
	}
	return v, nil
}

// encode writes a value as graph.Data.
func encode(v *value) *graph.Data {
	n := v.len()
	sz := v.dt.Size()
	raw := make([]byte, n*sz)
	le := binary.LittleEndian
	for k := 0; k < n; k++ {
		b := raw[k*sz:]
		switch v.dt {
		case graph.Float32:
			le.PutUint32(b, math.Float32bits(float32(v.f[k])))
		case graph.Float64:
			le.PutUint64(b, math.Float64bits(v.f[k]))
		case graph.Float16:
			le.PutUint16(b, floatToHalf(float32(v.f[k])))
		case graph.BFloat16:
			le.PutUint16(b, floatToBF16(float32(v.f[k])))
		case graph.Int8, graph.Uint8:
			b[0] = byte(v.i[k])
		case graph.Bool:
			if v.i[k] != 0 {
				b[0] = 1
			}
		case graph.Int16, graph.Uint16:
			le.PutUint16(b, uint16(v.i[k]))
		case graph.Int32, graph.Uint32:
			le.PutUint32(b, uint32(v.i[k]))
		case graph.Int64, graph.Uint64:
			le.PutUint64(b, uint64(v.i[k]))
		}
	}
	dims := v.shape.Clone()
	if dims == nil {
		dims = graph.Shape{}
	}
	return &graph.Data{DType: v.dt, Dims: dims, Raw: raw}
}

func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		f := float32(mant) / 1024 / 16384
		if sign != 0 {
			return -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff:
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15:
		return sign | 0x7c00
	case exp-127 < -25:
		return sign
	case exp-127 < -14:
		// subnormal half
		m := mant | 0x800000
		shift := uint32(-14 - (exp - 127) + 13)
		h := m >> shift
		if (m>>(shift-1))&1 != 0 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(sign) | uint32(exp-112)<<10 | mant>>13
	if mant&0x1000 != 0 && (mant&0x2fff) != 0 {
		h++
	}
	return uint16(h)
}

func floatToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// strides returns row-major strides of a shape.
func strides(s graph.Shape) []int64 {
	st := make([]int64, len(s))
	p := int64(1)
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = p
		p *= s[i]
	}
	return st
}

// broadcastIndex maps each element of out (a broadcast shape) to the flat
// index of an input of shape in.
func broadcastIndex(in, out graph.Shape) []int {
	off := len(out) - len(in)
	ist := strides(in)
	return gatherIndex(out, func(coord []int64) int64 {
		j := int64(0)
		for d := off; d < len(out); d++ {
			if in[d-off] != 1 {
				j += coord[d] * ist[d-off]
			}
		}
		return j
	})
}
