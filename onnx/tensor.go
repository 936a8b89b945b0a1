package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// maxTensorBytes caps the size a declared shape may describe (1 TiB). Larger
// tensors cannot run on any device inlay targets; refusing them keeps byte
// counts far from int64 overflow.
const maxTensorBytes = int64(1) << 40

// byteLen is the number of bytes n elements of dt take (two 4-bit elements a
// byte); ok is false for strings, unknown types or overflow.
func byteLen(dt graph.DType, n int64) (int64, bool) {
	if dt == graph.Int4 || dt == graph.Uint4 {
		return (n + 1) / 2, true
	}
	sz := int64(dt.Size())
	if sz == 0 || n < 0 || n > math.MaxInt64/sz {
		return 0, false
	}
	return n * sz, true
}

// validDType reports whether d is one of ONNX's numeric tensor types that
// inlay can hold as raw bytes.
func validDType(d graph.DType) bool {
	return d >= graph.Float32 && d <= graph.Int4 && d != graph.String
}

// shapeElements checks a fully known shape of dt: no negative dimension, no
// overflow, at most maxTensorBytes. It returns the element count.
func shapeElements(dt graph.DType, s graph.Shape) (int64, error) {
	for i, d := range s {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is negative (%d)", i, d)
		}
	}
	n, ok := s.Elements()
	if !ok {
		return 0, fmt.Errorf("shape %s overflows", s)
	}
	b, ok := byteLen(dt, n)
	if !ok || b > maxTensorBytes {
		return 0, fmt.Errorf("shape %s of %s is larger than %d bytes", s, dt, maxTensorBytes)
	}
	return n, nil
}

// tensorData converts a TensorProto's value into graph.Data. Sizes declared
// by dims are checked against the data actually present before anything is
// allocated from them.
func tensorData(tp *onnxpb.TensorProto) (*graph.Data, error) {
	if len(tp.GetExternalData()) > 0 || tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return nil, errors.New("external data is not supported (save the model with all tensors inside the file)")
	}
	if tp.GetSegment() != nil {
		return nil, errors.New("segmented tensors are not supported")
	}
	dt := graph.DType(tp.GetDataType())
	if dt == graph.String {
		return nil, errors.New("string tensors are not supported")
	}
	if !validDType(dt) {
		return nil, fmt.Errorf("unsupported data type %s", dt)
	}
	dims := graph.Shape(tp.GetDims()).Clone()
	if dims == nil {
		dims = graph.Shape{}
	}
	n, err := shapeElements(dt, dims)
	if err != nil {
		return nil, err
	}
	want, _ := byteLen(dt, n)
	d := &graph.Data{DType: dt, Dims: dims}
	if raw := tp.GetRawData(); len(raw) > 0 || n == 0 {
		if int64(len(raw)) != want {
			return nil, fmt.Errorf("raw data has %d bytes, shape %s of %s needs %d", len(raw), dims, dt, want)
		}
		d.Raw = raw
		if d.Raw == nil {
			d.Raw = []byte{}
		}
		return d, nil
	}
	// count checks the number of values a typed field holds: two a
	// complex element (its real and imaginary parts), one any other.
	per := int64(1)
	if dt == graph.Complex64 || dt == graph.Complex128 {
		per = 2
	}
	count := func(have int) error {
		if int64(have) != n*per {
			return fmt.Errorf("has %d values, shape %s of %s needs %d", have, dims, dt, n*per)
		}
		return nil
	}
	switch dt {
	case graph.Float32, graph.Complex64:
		v := tp.GetFloatData()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		d.Raw = graph.Float32Raw(v)
	case graph.Float64, graph.Complex128:
		v := tp.GetDoubleData()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		d.Raw = make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(d.Raw[8*i:], math.Float64bits(x))
		}
	case graph.Int64:
		v := tp.GetInt64Data()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		d.Raw = make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(d.Raw[8*i:], uint64(x))
		}
	case graph.Uint32, graph.Uint64:
		v := tp.GetUint64Data()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		sz := dt.Size()
		d.Raw = make([]byte, sz*len(v))
		for i, x := range v {
			if sz == 4 {
				binary.LittleEndian.PutUint32(d.Raw[4*i:], uint32(x))
			} else {
				binary.LittleEndian.PutUint64(d.Raw[8*i:], x)
			}
		}
	case graph.Int4, graph.Uint4:
		v := tp.GetInt32Data()
		if int64(len(v)) != want {
			return nil, fmt.Errorf("has %d packed values, shape %s of %s needs %d", len(v), dims, dt, want)
		}
		d.Raw = make([]byte, len(v))
		for i, x := range v {
			d.Raw[i] = byte(x)
		}
	default: // int32 and the types ONNX stores widened in int32_data
		v := tp.GetInt32Data()
		if err := count(len(v)); err != nil {
			return nil, err
		}
		sz := dt.Size()
		d.Raw = make([]byte, sz*len(v))
		for i, x := range v {
			switch sz {
			case 1:
				d.Raw[i] = byte(x)
			case 2:
				binary.LittleEndian.PutUint16(d.Raw[2*i:], uint16(x))
			default:
				binary.LittleEndian.PutUint32(d.Raw[4*i:], uint32(x))
			}
		}
	}
	return d, nil
}

// tensorProto converts Data into a TensorProto with raw_data. A nil Raw is
// filled by fill (seeded random values); fill may be nil only when every
// Raw is set.
func tensorProto(name string, d *graph.Data, fill func(name string, d *graph.Data) ([]byte, error)) (*onnxpb.TensorProto, error) {
	if d == nil {
		return nil, fmt.Errorf("tensor %q has no value", name)
	}
	raw := d.Raw
	if raw == nil {
		if fill == nil {
			return nil, fmt.Errorf("tensor %q has no value", name)
		}
		var err error
		if raw, err = fill(name, d); err != nil {
			return nil, err
		}
	}
	tp := &onnxpb.TensorProto{
		Dims:     append([]int64{}, d.Dims...),
		DataType: proto.Int32(int32(d.DType)),
		RawData:  raw,
	}
	if name != "" {
		tp.Name = proto.String(name)
	}
	if raw != nil && len(raw) == 0 {
		tp.RawData = nil // an empty tensor: no data field at all
	}
	return tp, nil
}

// randomFiller returns the filler Encode and ExportSubgraph use for weights
// without values. Each tensor draws from its own source, seeded with seed
// mixed with the FNV-1a hash of its name, so a weight gets the same values
// whichever model or subgraph it is written into: Encode(m, 0) and every
// ExportSubgraph of m agree. Floating-point values are normal·0.05; integer
// and boolean values are zero (safe as indices, shapes or masks are not:
// those always carry real values).
func randomFiller(seed int64) func(name string, d *graph.Data) ([]byte, error) {
	return func(name string, d *graph.Data) ([]byte, error) {
		n, err := shapeElements(d.DType, d.Dims)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		size, ok := byteLen(d.DType, n)
		if !ok {
			return nil, fmt.Errorf("tensor %q: cannot fill values of type %s", name, d.DType)
		}
		h := fnv.New64a()
		h.Write([]byte(name))
		rng := rand.New(rand.NewSource(seed ^ int64(h.Sum64())))
		raw := make([]byte, size)
		for i := int64(0); i < n; i++ {
			x := rng.NormFloat64() * 0.05
			switch d.DType {
			case graph.Float32:
				binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(x)))
			case graph.Float64:
				binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(x))
			case graph.Float16:
				binary.LittleEndian.PutUint16(raw[2*i:], graph.Float16Bits(float32(x)))
			case graph.BFloat16:
				binary.LittleEndian.PutUint16(raw[2*i:], uint16(math.Float32bits(float32(x))>>16))
			default:
				i = n // integers, booleans and exotic floats stay zero
			}
		}
		return raw, nil
	}
}

func putF32(b []byte, x float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(x)) }
func putI64(b []byte, x int64)   { binary.LittleEndian.PutUint64(b, uint64(x)) }
