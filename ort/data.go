//go:build cgo

package ort

import (
	"errors"
	"fmt"
	"unsafe"

	onnxruntime "github.com/yalue/onnxruntime_go"

	"github.com/inlay-dev/inlay/graph"
)

// supported reports whether tensors of dt can cross the binding.
func supported(dt graph.DType) bool {
	switch dt {
	case graph.Float32, graph.Float64, graph.Int8, graph.Uint8, graph.Int16, graph.Uint16,
		graph.Int32, graph.Uint32, graph.Int64, graph.Uint64, graph.Bool,
		graph.Float16, graph.BFloat16,
		graph.Float8E4M3FN, graph.Float8E4M3FNUZ, graph.Float8E5M2, graph.Float8E5M2FNUZ,
		graph.Int4, graph.Uint4:
		return true
	}
	return false
}

// rawBytes is the size of n elements of dt as ONNX lays them out (4-bit
// types pack two to a byte).
func rawBytes(dt graph.DType, n int64) int64 {
	if dt == graph.Int4 || dt == graph.Uint4 {
		return (n + 1) / 2
	}
	return n * int64(dt.Size())
}

// rawOnly reports whether dt has no Go element type in the binding and
// travels as raw bytes (with the binding's restrictions, see the package doc).
func rawOnly(dt graph.DType) bool {
	switch dt {
	case graph.Float16, graph.BFloat16, graph.Float8E4M3FN, graph.Float8E4M3FNUZ, graph.Float8E5M2, graph.Float8E5M2FNUZ, graph.Int4, graph.Uint4:
		return true
	}
	return false
}

// toValue converts a graph.Data into a new ONNX Runtime tensor that owns a
// copy of the values; the caller destroys it.
func toValue(d *graph.Data) (onnxruntime.Value, error) {
	if d == nil {
		return nil, errors.New("nil data")
	}
	if !supported(d.DType) {
		return nil, fmt.Errorf("element type %s is not supported", d.DType)
	}
	n, ok := d.Dims.Elements()
	if !ok {
		return nil, fmt.Errorf("shape %s is not fully known", d.Dims)
	}
	if want := rawBytes(d.DType, n); int64(len(d.Raw)) != want {
		return nil, fmt.Errorf("%s %s needs %d bytes, Raw has %d", d.DType, d.Dims, want, len(d.Raw))
	}
	shape := onnxruntime.Shape(d.Dims.Clone())
	if k, ok := kinds[d.DType]; ok {
		return k.tensor(shape, d.Raw)
	}
	// float16, bfloat16, float8, int4, uint4
	if len(shape) == 0 || n == 0 {
		return nil, fmt.Errorf("%s tensors of shape %s are not supported by the onnxruntime_go binding (rank 0 or empty)", d.DType, d.Dims)
	}
	v, err := onnxruntime.NewCustomDataTensor(shape, append([]byte(nil), d.Raw...), onnxruntime.TensorElementDataType(d.DType))
	if err != nil {
		return nil, err
	}
	return v, nil
}

// newTensor copies raw little-endian values into a new typed tensor (a
// Scalar for rank 0).
func newTensor[T onnxruntime.TensorData](shape onnxruntime.Shape, raw []byte) (onnxruntime.Value, error) {
	if len(shape) == 0 {
		var x T
		copy(bytesOf(unsafe.Slice(&x, 1)), raw)
		return onnxruntime.NewScalar(x)
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	buf := make([]T, n)
	copy(bytesOf(buf), raw)
	return onnxruntime.NewTensor(shape, buf)
}

// newOutputValue allocates an output tensor that ONNX Runtime writes into.
func newOutputValue(dt graph.DType, shape graph.Shape) (onnxruntime.Value, error) {
	if len(shape) == 0 {
		if k, ok := kinds[dt]; ok {
			return k.emptyScalar()
		}
		return nil, fmt.Errorf("%s scalars are not supported", dt)
	}
	n, ok := shape.Elements()
	if !ok || n == 0 {
		return nil, fmt.Errorf("cannot allocate %s output of shape %s", dt, shape)
	}
	return onnxruntime.NewCustomDataTensor(onnxruntime.Shape(shape.Clone()), make([]byte, rawBytes(dt, n)), onnxruntime.TensorElementDataType(dt))
}

// fromValue converts an output tensor into graph.Data. The Raw bytes do not
// alias memory that ONNX Runtime owns, so they stay valid after the value is
// destroyed.
func fromValue(v onnxruntime.Value) (*graph.Data, error) {
	switch t := v.(type) {
	case *onnxruntime.CustomDataTensor:
		// The caller knows the element type (it allocated the tensor).
		return &graph.Data{Dims: graph.Shape(t.GetShape()), Raw: append([]byte(nil), t.GetData()...)}, nil
	case nil:
		return nil, errors.New("no value")
	}
	for _, k := range kinds {
		if d, ok := k.read(v); ok {
			return d, nil
		}
	}
	return nil, fmt.Errorf("unsupported value %T", v)
}

// elemKind is what this file does with one element type the binding has
// typed values for: make a tensor of raw bytes, allocate an output scalar,
// and read a typed tensor or scalar back.
type elemKind struct {
	tensor      func(shape onnxruntime.Shape, raw []byte) (onnxruntime.Value, error)
	emptyScalar func() (onnxruntime.Value, error)
	read        func(v onnxruntime.Value) (*graph.Data, bool)
}

func kindOf[T onnxruntime.TensorData](dt graph.DType) elemKind {
	return elemKind{
		tensor:      newTensor[T],
		emptyScalar: func() (onnxruntime.Value, error) { return onnxruntime.NewEmptyScalar[T]() },
		read: func(v onnxruntime.Value) (*graph.Data, bool) {
			switch t := v.(type) {
			case *onnxruntime.Tensor[T]:
				return tensorData(dt, t), true
			case *onnxruntime.Scalar[T]:
				return scalarData(dt, t), true
			}
			return nil, false
		},
	}
}

// kinds are the element types with typed values, by ONNX type; the others
// (float16, bfloat16, float8, int4, uint4) travel as raw bytes.
var kinds = map[graph.DType]elemKind{
	graph.Float32: kindOf[float32](graph.Float32),
	graph.Float64: kindOf[float64](graph.Float64),
	graph.Int8:    kindOf[int8](graph.Int8),
	graph.Uint8:   kindOf[uint8](graph.Uint8),
	graph.Int16:   kindOf[int16](graph.Int16),
	graph.Uint16:  kindOf[uint16](graph.Uint16),
	graph.Int32:   kindOf[int32](graph.Int32),
	graph.Uint32:  kindOf[uint32](graph.Uint32),
	graph.Int64:   kindOf[int64](graph.Int64),
	graph.Uint64:  kindOf[uint64](graph.Uint64),
	graph.Bool:    kindOf[bool](graph.Bool),
}

func tensorData[T onnxruntime.TensorData](dt graph.DType, t *onnxruntime.Tensor[T]) *graph.Data {
	// The binding copied the values into a Go slice; alias it.
	return &graph.Data{DType: dt, Dims: graph.Shape(t.GetShape()), Raw: bytesOf(t.GetData())}
}

func scalarData[T onnxruntime.TensorData](dt graph.DType, s *onnxruntime.Scalar[T]) *graph.Data {
	x := []T{s.GetData()}
	return &graph.Data{DType: dt, Dims: graph.Shape{}, Raw: bytesOf(x)}
}

// bytesOf views a slice's memory as bytes (little-endian on every platform
// ONNX Runtime's CPU build targets here).
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}
