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
	switch d.DType {
	case graph.Float32:
		return newTensor[float32](shape, d.Raw)
	case graph.Float64:
		return newTensor[float64](shape, d.Raw)
	case graph.Int8:
		return newTensor[int8](shape, d.Raw)
	case graph.Uint8:
		return newTensor[uint8](shape, d.Raw)
	case graph.Int16:
		return newTensor[int16](shape, d.Raw)
	case graph.Uint16:
		return newTensor[uint16](shape, d.Raw)
	case graph.Int32:
		return newTensor[int32](shape, d.Raw)
	case graph.Uint32:
		return newTensor[uint32](shape, d.Raw)
	case graph.Int64:
		return newTensor[int64](shape, d.Raw)
	case graph.Uint64:
		return newTensor[uint64](shape, d.Raw)
	case graph.Bool:
		return newTensor[bool](shape, d.Raw)
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
		switch dt {
		case graph.Float32:
			return onnxruntime.NewEmptyScalar[float32]()
		case graph.Float64:
			return onnxruntime.NewEmptyScalar[float64]()
		case graph.Int8:
			return onnxruntime.NewEmptyScalar[int8]()
		case graph.Uint8:
			return onnxruntime.NewEmptyScalar[uint8]()
		case graph.Int16:
			return onnxruntime.NewEmptyScalar[int16]()
		case graph.Uint16:
			return onnxruntime.NewEmptyScalar[uint16]()
		case graph.Int32:
			return onnxruntime.NewEmptyScalar[int32]()
		case graph.Uint32:
			return onnxruntime.NewEmptyScalar[uint32]()
		case graph.Int64:
			return onnxruntime.NewEmptyScalar[int64]()
		case graph.Uint64:
			return onnxruntime.NewEmptyScalar[uint64]()
		case graph.Bool:
			return onnxruntime.NewEmptyScalar[bool]()
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
	case *onnxruntime.Tensor[float32]:
		return tensorData(graph.Float32, t), nil
	case *onnxruntime.Tensor[float64]:
		return tensorData(graph.Float64, t), nil
	case *onnxruntime.Tensor[int8]:
		return tensorData(graph.Int8, t), nil
	case *onnxruntime.Tensor[uint8]:
		return tensorData(graph.Uint8, t), nil
	case *onnxruntime.Tensor[int16]:
		return tensorData(graph.Int16, t), nil
	case *onnxruntime.Tensor[uint16]:
		return tensorData(graph.Uint16, t), nil
	case *onnxruntime.Tensor[int32]:
		return tensorData(graph.Int32, t), nil
	case *onnxruntime.Tensor[uint32]:
		return tensorData(graph.Uint32, t), nil
	case *onnxruntime.Tensor[int64]:
		return tensorData(graph.Int64, t), nil
	case *onnxruntime.Tensor[uint64]:
		return tensorData(graph.Uint64, t), nil
	case *onnxruntime.Tensor[bool]:
		return tensorData(graph.Bool, t), nil
	case *onnxruntime.Scalar[float32]:
		return scalarData(graph.Float32, t), nil
	case *onnxruntime.Scalar[float64]:
		return scalarData(graph.Float64, t), nil
	case *onnxruntime.Scalar[int8]:
		return scalarData(graph.Int8, t), nil
	case *onnxruntime.Scalar[uint8]:
		return scalarData(graph.Uint8, t), nil
	case *onnxruntime.Scalar[int16]:
		return scalarData(graph.Int16, t), nil
	case *onnxruntime.Scalar[uint16]:
		return scalarData(graph.Uint16, t), nil
	case *onnxruntime.Scalar[int32]:
		return scalarData(graph.Int32, t), nil
	case *onnxruntime.Scalar[uint32]:
		return scalarData(graph.Uint32, t), nil
	case *onnxruntime.Scalar[int64]:
		return scalarData(graph.Int64, t), nil
	case *onnxruntime.Scalar[uint64]:
		return scalarData(graph.Uint64, t), nil
	case *onnxruntime.Scalar[bool]:
		return scalarData(graph.Bool, t), nil
	case *onnxruntime.CustomDataTensor:
		// The caller knows the element type (it allocated the tensor).
		return &graph.Data{Dims: graph.Shape(t.GetShape()), Raw: append([]byte(nil), t.GetData()...)}, nil
	case nil:
		return nil, errors.New("no value")
	}
	return nil, fmt.Errorf("unsupported value %T", v)
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
