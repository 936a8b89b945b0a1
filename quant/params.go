package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// Range is a tensor's observed value range.
type Range struct{ Min, Max float32 }

// Ranges maps tensor names to their calibrated ranges.
type Ranges map[string]Range

// observe widens r to cover v (NaN ignored).
func (r Range) observe(v float32) Range {
	if v < r.Min {
		r.Min = v
	}
	if v > r.Max {
		r.Max = v
	}
	return r
}

// finite reports whether both ends are finite numbers.
func (r Range) finite() bool {
	return !math.IsInf(float64(r.Min), 0) && !math.IsInf(float64(r.Max), 0) &&
		!math.IsNaN(float64(r.Min)) && !math.IsNaN(float64(r.Max))
}

// qparams are a scale and a zero point.
type qparams struct {
	scale float32
	zero  int32
}

// qrange is the integer range of a quantized type: the symmetric int8
// range is [-127, 127], as ONNX Runtime's quantizer uses for weights.
func qrange(dt graph.DType, symmetric bool) (lo, hi int32) {
	switch dt {
	case graph.Uint8:
		return 0, 255
	case graph.Int8:
		if symmetric {
			return -127, 127
		}
		return -128, 127
	}
	panic(fmt.Sprintf("quant: no range for %s", dt))
}

// computeParams is ONNX Runtime's compute_scale_zp: the range is widened
// to include 0; symmetric takes ±max|r| and the middle of the integer
// range as zero point; a zero-width range gets scale 1, zero point 0.
// Arithmetic is in float32, as ONNX Runtime's (numpy float32) is.
func computeParams(r Range, dt graph.DType, symmetric bool) qparams {
	lo, hi := qrange(dt, symmetric)
	rmin, rmax := min(r.Min, 0), max(r.Max, 0)
	if symmetric {
		m := max(-rmin, rmax)
		rmin, rmax = -m, m
	}
	scale := (rmax - rmin) / float32(hi-lo)
	if scale == 0 || rmax == rmin {
		return qparams{scale: 1, zero: 0}
	}
	if symmetric {
		return qparams{scale: scale, zero: (lo + hi) / 2}
	}
	z := roundHalfEven(float64(float32(lo) - rmin/scale))
	return qparams{scale: scale, zero: int32(clamp(z, float64(lo), float64(hi)))}
}

// roundHalfEven rounds as numpy.round and ONNX's QuantizeLinear do.
func roundHalfEven(x float64) float64 { return math.RoundToEven(x) }

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

// quantizeValue is QuantizeLinear's saturate(round(x / scale) + zero).
func quantizeValue(x float32, p qparams, lo, hi int32) int32 {
	return int32(clamp(roundHalfEven(float64(x/p.scale))+float64(p.zero), float64(lo), float64(hi)))
}

// float32s decodes a float32 tensor value.
func float32s(d *graph.Data) ([]float32, error) {
	if d == nil || d.DType != graph.Float32 {
		return nil, fmt.Errorf("not a float32 value")
	}
	return graph.Float32s(d.Raw), nil
}

// rangeOf is the range of values (the NaNs aside).
func rangeOf(vals []float32) Range {
	r := Range{}
	for _, v := range vals {
		if v == v {
			r = r.observe(v)
		}
	}
	return r
}

// encodeInts writes integers as a tensor of dt (uint8, int8 or int32).
func encodeInts(dt graph.DType, dims graph.Shape, vals []int32) *graph.Data {
	var raw []byte
	switch dt {
	case graph.Uint8, graph.Int8:
		raw = make([]byte, len(vals))
		for i, v := range vals {
			raw[i] = byte(v)
		}
	case graph.Int32:
		raw = make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
		}
	default:
		panic(fmt.Sprintf("quant: cannot encode %s", dt))
	}
	return &graph.Data{DType: dt, Dims: dims.Clone(), Raw: raw}
}

// encodeFloats writes a float32 tensor.
func encodeFloats(dims graph.Shape, vals []float32) *graph.Data {
	return &graph.Data{DType: graph.Float32, Dims: dims.Clone(), Raw: graph.Float32Raw(vals)}
}

// quantizedWeight is a weight quantized per tensor or along one axis.
type quantizedWeight struct {
	data   *graph.Data // the integer values
	params []qparams   // one per element of axis, or one
	axis   int         // -1: per tensor
}

// quantizeWeight quantizes a float32 weight to dt: per channel along axis
// (axis ≥ 0) or per tensor (axis -1), symmetric or not.
func quantizeWeight(d *graph.Data, dt graph.DType, axis int, symmetric bool) (quantizedWeight, error) {
	vals, err := float32s(d)
	if err != nil {
		return quantizedWeight{}, err
	}
	lo, hi := qrange(dt, symmetric)
	q := make([]int32, len(vals))
	if axis < 0 {
		p := computeParams(rangeOf(vals), dt, symmetric)
		for i, v := range vals {
			q[i] = quantizeValue(v, p, lo, hi)
		}
		return quantizedWeight{data: encodeInts(dt, d.Dims, q), params: []qparams{p}, axis: -1}, nil
	}
	if axis >= len(d.Dims) {
		return quantizedWeight{}, fmt.Errorf("axis %d of a rank-%d weight", axis, len(d.Dims))
	}
	channels := d.Dims[axis]
	inner := int64(1)
	for _, n := range d.Dims[axis+1:] {
		inner *= n
	}
	ranges := make([]Range, channels)
	for i, v := range vals {
		c := (int64(i) / inner) % channels
		if v == v {
			ranges[c] = ranges[c].observe(v)
		}
	}
	params := make([]qparams, channels)
	for c := range params {
		params[c] = computeParams(ranges[c], dt, symmetric)
	}
	for i, v := range vals {
		q[i] = quantizeValue(v, params[(int64(i)/inner)%channels], lo, hi)
	}
	return quantizedWeight{data: encodeInts(dt, d.Dims, q), params: params, axis: axis}, nil
}

// quantizeBias quantizes a float32 bias to int32 with zero point 0 and
// scale xScale·wScale[c] per element (ONNX Runtime's quantize_bias_static).
func quantizeBias(d *graph.Data, xScale float32, w []qparams) (*graph.Data, []float32, error) {
	vals, err := float32s(d)
	if err != nil {
		return nil, nil, err
	}
	if len(w) != 1 && len(w) != len(vals) {
		return nil, nil, fmt.Errorf("bias has %d values for %d weight scales", len(vals), len(w))
	}
	q := make([]int32, len(vals))
	scales := make([]float32, len(vals))
	for i, v := range vals {
		s := xScale * w[min(i, len(w)-1)].scale
		if s == 0 {
			s = 1
		}
		scales[i] = s
		q[i] = int32(clamp(roundHalfEven(float64(v/s)), math.MinInt32, math.MaxInt32))
	}
	return encodeInts(graph.Int32, d.Dims, q), scales, nil
}
