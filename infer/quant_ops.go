package infer

import (
	"errors"
	"fmt"

	"github.com/inlay-dev/inlay/graph"
)

// Rules for quantized operators, in both formats ONNX Runtime writes: QDQ
// (QuantizeLinear/DequantizeLinear pairs around float operators) and
// operator-oriented (QLinear*, *Integer and the com.microsoft contrib
// operators of its quantizer). Inputs and attributes follow the ONNX
// operator specification and ONNX Runtime's ContribOperators.md; integer
// MACs count as MACs, and every scale and zero point is an input whose
// elements count as params when it is a constant.

// quantTypes are the element types QuantizeLinear may produce and
// DequantizeLinear may read, with the opset of the default domain that
// introduced each (the com.microsoft versions take all of them).
var quantTypes = map[graph.DType]int64{
	graph.Uint8: 10, graph.Int8: 10,
	graph.Float8E4M3FN: 19, graph.Float8E4M3FNUZ: 19, graph.Float8E5M2: 19, graph.Float8E5M2FNUZ: 19,
	graph.Uint16: 21, graph.Int16: 21, graph.Uint4: 21, graph.Int4: 21,
}

// IsQuantType reports whether d is a type QuantizeLinear produces: the
// 4-, 8- and 16-bit integers and the float8 types.
func IsQuantType(d graph.DType) bool { _, ok := quantTypes[d]; return ok }

// checkQuantType rejects a quantized element type the operator's opset
// does not have (ms: the com.microsoft domain, which has them all).
func checkQuantType(c *ctx, d graph.DType, ms bool) error {
	since, ok := quantTypes[d]
	if !ok {
		return fmt.Errorf("%s is not a quantized type (uint8, int8, uint16, int16, uint4, int4 or a float8 type)", d)
	}
	if !ms && c.opset < since {
		return fmt.Errorf("%s needs opset %d (the model imports %d)", d, since, c.opset)
	}
	return nil
}

// checkZeroPoint checks an optional zero point (or scale) given per
// tensor (a scalar or a 1-element vector) or, when perChannel > 0, as a
// vector of perChannel elements.
func checkZeroPoint(c *ctx, i int, name string, perChannel int64) error {
	if !c.has(i) {
		return nil
	}
	s := c.shape(i)
	if n := prod(s); len(s) <= 1 && n == 1 {
		return nil
	}
	if perChannel > 0 && len(s) == 1 && s[0] == perChannel {
		return nil
	}
	if perChannel > 0 {
		return fmt.Errorf("%s %s is neither a scalar nor %d per-channel values", name, s, perChannel)
	}
	return fmt.Errorf("%s %s must be a scalar", name, s)
}

// checkQParams checks a QuantizeLinear/DequantizeLinear scale (input si)
// and zero point (input zi) against x: per tensor (scalar or [1]), per
// axis (1-D of x[axis]) or, with block_size > 0 (opset 21), blocked (x's
// rank, x[axis] split into ceil(x[axis]/block_size) blocks, the other
// dimensions equal).
func checkQParams(c *ctx, x graph.Shape, si, zi int, ms bool) error {
	scale := c.shape(si)
	if c.has(zi) && !c.shape(zi).Equal(scale) {
		return fmt.Errorf("zero point %s and scale %s differ in shape", c.shape(zi), scale)
	}
	block := c.attrs().Int("block_size", 0)
	if block < 0 {
		return fmt.Errorf("block_size %d is negative", block)
	}
	if block > 0 && !ms && c.opset < 21 {
		return fmt.Errorf("block_size needs opset 21 (the model imports %d)", c.opset)
	}
	if block == 0 && len(scale) <= 1 && prod(scale) == 1 {
		return nil // per tensor
	}
	if !ms && c.opset < 13 {
		return fmt.Errorf("scale %s: opset %d quantizes per tensor only (a scalar scale)", scale, c.opset)
	}
	axis, err := normAxis(c.attrs().Int("axis", 1), len(x))
	if err != nil {
		return fmt.Errorf("axis: %w", err)
	}
	if block == 0 {
		if len(scale) != 1 || scale[0] != x[axis] {
			return fmt.Errorf("scale %s does not give one value per element of axis %d of %s", scale, axis, x)
		}
		return nil
	}
	if len(scale) != len(x) {
		return fmt.Errorf("blocked scale %s must have the rank of %s", scale, x)
	}
	for d := range x {
		want := x[d]
		if d == axis {
			want = (x[d] + block - 1) / block
		}
		if scale[d] != want {
			return fmt.Errorf("blocked scale %s does not match %s with block_size %d on axis %d", scale, x, block, axis)
		}
	}
	return nil
}

// quantizeRule is QuantizeLinear: x, y_scale, y_zero_point (optional);
// attributes axis, block_size, output_dtype, saturate, precision. The
// output type is the zero point's, else output_dtype, else uint8.
func quantizeRule(ms bool) rule {
	return needRule(2, func(c *ctx) error {
		x := c.shape(0)
		if !c.dt(0).IsFloat() && c.dt(0) != graph.Int32 {
			return fmt.Errorf("x is %s, want a float type (or int32)", c.dt(0))
		}
		dt := graph.Uint8
		od := graph.DType(c.attrs().Int("output_dtype", 0))
		switch {
		case c.has(2):
			dt = c.dt(2)
			if od != graph.Undefined && od != dt {
				return fmt.Errorf("output_dtype %s differs from the zero point's type %s", od, dt)
			}
		case od != graph.Undefined:
			dt = od
		}
		if err := checkQuantType(c, dt, ms); err != nil {
			return err
		}
		if err := checkQParams(c, x, 1, 2, ms); err != nil {
			return err
		}
		c.set(0, dt, x)
		c.flops = sat(3, prod(x))
		return nil
	})
}

// dequantizeRule is DequantizeLinear: x, x_scale, x_zero_point (optional);
// attributes axis, block_size, output_dtype. The output type is float32
// before opset 19, the scale's type from 19, and output_dtype when set
// (opset 23).
func dequantizeRule(ms bool) rule {
	return needRule(2, func(c *ctx) error {
		x := c.shape(0)
		if c.dt(0) != graph.Int32 {
			if err := checkQuantType(c, c.dt(0), ms); err != nil {
				return fmt.Errorf("x: %w", err)
			}
		}
		if c.has(2) && c.dt(2) != c.dt(0) {
			return fmt.Errorf("zero point is %s, x is %s", c.dt(2), c.dt(0))
		}
		if !c.dt(1).IsFloat() {
			return fmt.Errorf("x_scale is %s, want a float type", c.dt(1))
		}
		if err := checkQParams(c, x, 1, 2, ms); err != nil {
			return err
		}
		dt := graph.Float32
		if ms || c.opset >= 19 {
			dt = c.dt(1)
		}
		if od := graph.DType(c.attrs().Int("output_dtype", 0)); od != graph.Undefined {
			dt = od
		}
		c.set(0, dt, x)
		c.flops = sat(2, prod(x))
		return nil
	})
}

// dynamicQuantizeRule is DynamicQuantizeLinear: x (float32) → y (uint8),
// y_scale (float32 scalar), y_zero_point (uint8 scalar).
func dynamicQuantizeRule() rule {
	return needRule(1, func(c *ctx) error {
		if c.dt(0) != graph.Float32 {
			return fmt.Errorf("x is %s, want float32", c.dt(0))
		}
		c.set(0, graph.Uint8, c.shape(0))
		c.set(1, graph.Float32, graph.Shape{})
		c.set(2, graph.Uint8, graph.Shape{})
		// min/max reduction, then scale, round and saturate per element
		c.flops = sat(5, prod(c.shape(0)))
		return nil
	})
}

// qlinearConvRule is QLinearConv (ONNX and com.microsoft): x, x_scale,
// x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
// (optional int32 bias); Conv's attributes. w_scale and w_zero_point are
// per tensor or per output channel.
func qlinearConvRule() rule {
	conv := convRule()
	return needRule(8, func(c *ctx) error {
		if len(c.outs) == 0 {
			return errors.New("needs an output")
		}
		sub := &ctx{r: c.r, opset: c.opset, outs: c.outs[:1], n: &graph.Node{
			Name: c.n.Name, Op: "Conv", Inputs: []string{c.n.Inputs[0], c.n.Inputs[3]}, Attrs: c.n.Attrs,
			Outputs: c.n.Outputs[:1],
		}}
		if c.has(8) {
			if c.dt(8) != graph.Int32 {
				return fmt.Errorf("bias B is %s, want int32", c.dt(8))
			}
			sub.n.Inputs = append(sub.n.Inputs, c.n.Inputs[8])
		}
		if err := conv.infer(sub); err != nil {
			return err
		}
		m := c.shape(3)[0]
		for _, p := range []struct {
			i    int
			name string
			per  int64
		}{{1, "x_scale", 0}, {2, "x_zero_point", 0}, {4, "w_scale", m}, {5, "w_zero_point", m}, {6, "y_scale", 0}, {7, "y_zero_point", 0}} {
			if err := checkZeroPoint(c, p.i, p.name, p.per); err != nil {
				return err
			}
		}
		c.outs[0].dtype = c.dt(7)
		c.macs, c.flops = sub.macs, sub.flops
		return nil
	})
}

// qlinearBinaryRule is com.microsoft QLinearAdd and QLinearMul: A,
// A_scale, A_zero_point (optional), B, B_scale, B_zero_point (optional),
// C_scale, C_zero_point (optional); C has A's type.
func qlinearBinaryRule() rule {
	return needRule(2, func(c *ctx) error {
		if !c.has(3) || !c.has(4) || !c.has(6) {
			return errors.New("needs A, A_scale, B, B_scale and C_scale (inputs 0, 1, 3, 4 and 6)")
		}
		if c.dt(3) != c.dt(0) {
			return fmt.Errorf("A is %s, B is %s", c.dt(0), c.dt(3))
		}
		out, err := broadcast(c.shape(0), c.shape(3))
		if err != nil {
			return err
		}
		c.set(0, c.dt(0), out)
		c.flops = sat(4, prod(out))
		return nil
	})
}

// qgemmRule is com.microsoft QGemm: A, a_scale, a_zero_point, B, b_scale,
// b_zero_point, C (optional int32), y_scale (optional), y_zero_point
// (optional); attributes alpha, transA, transB. Y is float32 without
// y_scale, else quantized with y_zero_point's type (A's when absent).
func qgemmRule() rule {
	return needRule(6, func(c *ctx) error {
		a, b := c.shape(0), c.shape(3)
		if len(a) != 2 || len(b) != 2 {
			return fmt.Errorf("A %s and B %s must be rank 2", a, b)
		}
		m, n, k, err := c.gemmDims(a, b)
		if err != nil {
			return err
		}
		if err := checkZeroPoint(c, 4, "b_scale", n); err != nil {
			return err
		}
		if c.has(6) {
			if c.dt(6) != graph.Int32 {
				return fmt.Errorf("C is %s, want int32", c.dt(6))
			}
			if _, err := broadcast(c.shape(6), graph.Shape{m, n}); err != nil {
				return fmt.Errorf("C %s does not broadcast to %dx%d", c.shape(6), m, n)
			}
		}
		dt := graph.Float32
		if c.has(7) {
			dt = c.dt(0)
			if c.has(8) {
				dt = c.dt(8)
			}
		}
		c.set(0, dt, graph.Shape{m, n})
		c.macs = sat(m, n, k)
		c.flops = 2 * c.macs
		if c.has(6) {
			c.flops = satAdd(c.flops, m*n)
		}
		return nil
	})
}

// qlinearUnaryRule is com.microsoft QLinearSigmoid, QLinearLeakyRelu and
// QLinearSoftmax: X, X_scale, X_zero_point (optional), Y_scale,
// Y_zero_point (optional); Y like X.
func qlinearUnaryRule(flops int64) rule {
	return rule{infer: func(c *ctx) error {
		if !c.has(0) || !c.has(1) || !c.has(3) {
			return errors.New("needs X, X_scale and Y_scale (inputs 0, 1 and 3)")
		}
		for _, i := range []int{1, 2, 3, 4} {
			if err := checkZeroPoint(c, i, fmt.Sprintf("input %d", i), 0); err != nil {
				return err
			}
		}
		c.set(0, c.dt(0), c.shape(0))
		c.flops = sat(flops, prod(c.shape(0)))
		return nil
	}}
}

// qlinearGlobalPoolRule is com.microsoft QLinearGlobalAveragePool: X,
// x_scale, x_zero_point, y_scale, y_zero_point; attribute channels_last.
func qlinearGlobalPoolRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		if err := c.need(5); err != nil {
			return err
		}
		c.set(0, c.dt(0), globalPooled(x, c.attrs().Int("channels_last", 0) != 0))
		c.flops = prod(x)
		return nil
	})
}

// qlinearAveragePoolRule is com.microsoft QLinearAveragePool: X, x_scale,
// x_zero_point (optional), y_scale, y_zero_point (optional); AveragePool's
// attributes (auto_pad, ceil_mode, count_include_pad, kernel_shape, pads,
// strides) and channels_last.
func qlinearAveragePoolRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		if !c.has(1) || !c.has(3) {
			return errors.New("needs X, x_scale and y_scale (inputs 0, 1 and 3)")
		}
		out, w, err := c.pooledShape(x, c.attrs().Int("channels_last", 0) != 0)
		if err != nil {
			return err
		}
		c.set(0, c.dt(0), out)
		c.flops = sat(prod(out), prod(w.kernel))
		return nil
	})
}

// qlinearConcatRule is com.microsoft QLinearConcat: Y_scale,
// Y_zero_point, then (X, X_scale, X_zero_point) triples; attribute axis
// (required).
func qlinearConcatRule() rule {
	return rule{infer: func(c *ctx) error {
		if c.nin() < 5 || (c.nin()-2)%3 != 0 {
			return fmt.Errorf("needs Y_scale, Y_zero_point and (X, scale, zero point) triples, has %d inputs", c.nin())
		}
		if c.attrs().Get("axis") == nil {
			return errors.New("axis is required")
		}
		var first graph.Shape
		out := graph.Shape(nil)
		a := 0
		for i := 2; i < c.nin(); i += 3 {
			if !c.has(i) || !c.has(i+1) || !c.has(i+2) {
				return fmt.Errorf("triple at input %d is incomplete", i)
			}
			if c.dt(i) != c.dt(2) {
				return fmt.Errorf("input %d is %s, the first is %s", i, c.dt(i), c.dt(2))
			}
			s := c.shape(i)
			if first == nil {
				if len(s) == 0 {
					return errors.New("cannot concatenate scalars")
				}
				first = s
				var err error
				if a, err = normAxis(c.attrs().Int("axis", 0), len(s)); err != nil {
					return err
				}
				out = s.Clone()
				out[a] = 0
			}
			if len(s) != len(first) {
				return fmt.Errorf("input %d has rank %d, want %d", i, len(s), len(first))
			}
			for d := range s {
				if d != a && s[d] != first[d] {
					return fmt.Errorf("input %d shape %s does not match %s outside axis %d", i, s, first, a)
				}
			}
			out[a] += s[a]
			if out[a] < 0 {
				return errors.New("concatenated size overflows")
			}
		}
		c.set(0, c.dt(2), out)
		c.flops = prod(out)
		return nil
	}}
}

// dynamicQuantizeMatMulRule is com.microsoft DynamicQuantizeMatMul: A
// (float32), B (int8/uint8), b_scale, b_zero_point (optional), bias
// (optional); Y float32. A is quantized at run time (its min/max pass
// counts as FLOPs).
func dynamicQuantizeMatMulRule() rule {
	return needRule(3, func(c *ctx) error {
		if c.dt(0) != graph.Float32 {
			return fmt.Errorf("A is %s, want float32", c.dt(0))
		}
		out, k, err := perColumnMatMul(c, 2, 3, 4)
		if err != nil {
			return err
		}
		c.set(0, graph.Float32, out)
		c.macs = sat(prod(out), k)
		c.flops = satAdd(2*c.macs, sat(5, prod(c.shape(0))))
		return nil
	})
}

// perColumnMatMul is A (input 0) times B (input 1) with B's scale, zero
// point and bias (inputs si, zi, bi; each optional but the scale) per
// tensor or per column of B: the output shape and the inner size.
func perColumnMatMul(c *ctx, si, zi, bi int) (graph.Shape, int64, error) {
	out, k, err := matmulShape(c.shape(0), c.shape(1))
	if err != nil {
		return nil, 0, err
	}
	n := int64(1)
	if b := c.shape(1); len(b) >= 2 {
		n = b[len(b)-1]
	}
	if err := checkZeroPoint(c, si, "b_scale", n); err != nil {
		return nil, 0, err
	}
	if err := checkZeroPoint(c, zi, "b_zero_point", n); err != nil {
		return nil, 0, err
	}
	if c.has(bi) && (len(c.shape(bi)) != 1 || c.shape(bi)[0] != n) {
		return nil, 0, fmt.Errorf("bias %s does not match B's %d columns", c.shape(bi), n)
	}
	return out, k, nil
}

// matMulIntegerToFloatRule is com.microsoft MatMulIntegerToFloat: A, B,
// a_scale, b_scale, a_zero_point (optional), b_zero_point (optional),
// bias (optional); Y has the scales' float type.
func matMulIntegerToFloatRule() rule {
	return needRule(4, func(c *ctx) error {
		if !c.dt(2).IsFloat() || c.dt(3) != c.dt(2) {
			return fmt.Errorf("a_scale %s and b_scale %s must be one float type", c.dt(2), c.dt(3))
		}
		out, k, err := perColumnMatMul(c, 3, 5, 6)
		if err != nil {
			return err
		}
		c.set(0, c.dt(2), out)
		c.macs = sat(prod(out), k)
		c.flops = satAdd(2*c.macs, sat(2, prod(out)))
		return nil
	})
}

// qAttentionRule is com.microsoft QAttention: input (batch, sequence,
// input_hidden), weight (input_hidden, 3·hidden), bias (3·hidden),
// input_scale, weight_scale, mask_index (optional), input_zero_point
// (optional), weight_zero_point (optional), past (optional); attribute
// num_heads (required). Outputs: output (batch, sequence, hidden) in the
// scales' float type, present (2, batch, num_heads, past+sequence,
// head_size).
func qAttentionRule() rule {
	return needRule(5, func(c *ctx) error {
		x, w := c.shape(0), c.shape(1)
		if len(x) != 3 || len(w) != 2 || w[0] != x[2] || w[1]%3 != 0 {
			return fmt.Errorf("input %s and weight %s must be (batch, sequence, hidden) and (hidden, 3·hidden)", x, w)
		}
		heads := c.attrs().Int("num_heads", 0)
		hidden := w[1] / 3
		if heads <= 0 || hidden%heads != 0 {
			return fmt.Errorf("num_heads %d does not divide hidden size %d", heads, hidden)
		}
		if b := c.shape(2); len(b) != 1 || b[0] != w[1] {
			return fmt.Errorf("bias %s does not match weight %s", b, w)
		}
		batch, seq := x[0], x[1]
		past := int64(0)
		if c.has(8) {
			p := c.shape(8)
			if len(p) != 5 || p[0] != 2 || p[1] != batch || p[2] != heads || p[4] != hidden/heads {
				return fmt.Errorf("past %s is not (2, %d, %d, past, %d)", p, batch, heads, hidden/heads)
			}
			past = p[3]
		}
		dt := c.dt(3)
		c.set(0, dt, graph.Shape{batch, seq, hidden})
		c.set(1, dt, graph.Shape{2, batch, heads, past + seq, hidden / heads})
		total := past + seq
		proj := sat(batch, seq, x[2], w[1])
		scores := sat(batch, heads, seq, total, hidden/heads)
		c.macs = satAdd(proj, 2*scores) // QKV projection, Q·Kᵀ, softmax(·)·V
		c.flops = satAdd(2*c.macs, sat(5, batch, heads, seq, total))
		return nil
	})
}
