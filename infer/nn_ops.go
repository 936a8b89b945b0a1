package infer

import (
	"errors"
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// window holds the spatial parameters of convolutions and pooling.
type window struct {
	kernel, strides, dilations, pads []int64 // pads: begins then ends
	autoPad                          string
	ceil                             bool
}

// readWindow reads kernel_shape (or kernel, the weight's spatial dims),
// strides, dilations, pads and auto_pad for nsp spatial axes.
func (c *ctx) readWindow(nsp int, kernel []int64) (window, error) {
	a := c.attrs()
	w := window{autoPad: a.Str("auto_pad", "NOTSET"), ceil: a.Int("ceil_mode", 0) != 0}
	if k := a.Ints("kernel_shape"); k != nil {
		kernel = k
	}
	if len(kernel) != nsp {
		return w, fmt.Errorf("kernel shape %v does not match %d spatial axes", kernel, nsp)
	}
	w.kernel = kernel
	fill := func(name string, def int64, n int) ([]int64, error) {
		x := a.Ints(name)
		if x == nil {
			x = make([]int64, n)
			for i := range x {
				x[i] = def
			}
		}
		if len(x) != n {
			return nil, fmt.Errorf("%s %v has %d entries, need %d", name, x, len(x), n)
		}
		return x, nil
	}
	var err error
	if w.strides, err = fill("strides", 1, nsp); err != nil {
		return w, err
	}
	if w.dilations, err = fill("dilations", 1, nsp); err != nil {
		return w, err
	}
	if w.pads, err = fill("pads", 0, 2*nsp); err != nil {
		return w, err
	}
	for i := 0; i < nsp; i++ {
		if w.kernel[i] <= 0 || w.strides[i] <= 0 || w.dilations[i] <= 0 || w.pads[i] < 0 || w.pads[i+nsp] < 0 {
			return w, fmt.Errorf("bad window: kernel %v strides %v dilations %v pads %v", w.kernel, w.strides, w.dilations, w.pads)
		}
		if w.kernel[i] > 1<<31 || w.strides[i] > 1<<31 || w.dilations[i] > 1<<31 || w.pads[i] > 1<<40 || w.pads[i+nsp] > 1<<40 {
			return w, fmt.Errorf("window too large: kernel %v strides %v dilations %v pads %v", w.kernel, w.strides, w.dilations, w.pads)
		}
	}
	return w, nil
}

// outSize is the output size of a convolution or pooling window over in.
func (w window) outSize(i int, in int64) (int64, error) {
	ek := (w.kernel[i]-1)*w.dilations[i] + 1
	s := w.strides[i]
	switch w.autoPad {
	case "SAME_UPPER", "SAME_LOWER":
		if in == 0 {
			return 0, nil
		}
		return (in-1)/s + 1, nil
	case "VALID":
		if in < ek {
			return 0, fmt.Errorf("input size %d is smaller than the kernel extent %d", in, ek)
		}
		return (in-ek)/s + 1, nil
	case "NOTSET", "":
	default:
		return 0, fmt.Errorf("unknown auto_pad %q", w.autoPad)
	}
	nsp := len(w.kernel)
	if in > 1<<50 {
		return 0, fmt.Errorf("input size %d is too large", in)
	}
	padded := in + w.pads[i] + w.pads[i+nsp]
	if padded < ek {
		return 0, fmt.Errorf("padded input size %d is smaller than the kernel extent %d", padded, ek)
	}
	if !w.ceil {
		return (padded-ek)/s + 1, nil
	}
	out := (padded-ek+s-1)/s + 1
	// The last window must start inside the input or its left padding.
	if (out-1)*s >= in+w.pads[i] {
		out--
	}
	return out, nil
}

// convWeight is a convolution's weight (input 1, rank ≥ 3, the rank of
// input x) and its group attribute (default 1), for Conv and ConvTranspose.
func (c *ctx) convWeight(x graph.Shape) (graph.Shape, int64, error) {
	wt, err := c.needRank(1, 3)
	if err != nil {
		return nil, 0, err
	}
	if len(wt) != len(x) {
		return nil, 0, fmt.Errorf("input %s and weight %s differ in rank", x, wt)
	}
	return wt, c.attrs().Int("group", 1), nil
}

func convRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		wt, group, err := c.convWeight(x)
		if err != nil {
			return err
		}
		if group <= 0 || x[1]%group != 0 || wt[0]%group != 0 {
			return fmt.Errorf("group %d does not divide input channels %d and output channels %d", group, x[1], wt[0])
		}
		if x[1]/group != wt[1] {
			return fmt.Errorf("input has %d channels, weight %s expects %d×%d (group %d)", x[1], wt, wt[1], group, group)
		}
		nsp := len(x) - 2
		w, err := c.readWindow(nsp, wt[2:])
		if err != nil {
			return err
		}
		for i := 0; i < nsp; i++ {
			if w.kernel[i] != wt[2+i] {
				return fmt.Errorf("kernel_shape %v does not match weight %s", w.kernel, wt)
			}
		}
		out := graph.Shape{x[0], wt[0]}
		for i := 0; i < nsp; i++ {
			o, err := w.outSize(i, x[2+i])
			if err != nil {
				return err
			}
			out = append(out, o)
		}
		dt := c.dt(0)
		hasBias := false
		if c.n.Op == "ConvInteger" {
			// ConvInteger: x, w, x_zero_point, w_zero_point; no bias.
			dt = graph.Int32
			if err := checkZeroPoint(c, 2, "x_zero_point", 0); err != nil {
				return err
			}
			if err := checkZeroPoint(c, 3, "w_zero_point", wt[0]); err != nil {
				return err
			}
		} else if c.has(2) {
			if len(c.shape(2)) != 1 || c.shape(2)[0] != wt[0] {
				return fmt.Errorf("bias %s does not match %d output channels", c.shape(2), wt[0])
			}
			hasBias = true
		}
		c.set(0, dt, out)
		c.macs = sat(prod(out), wt[1], prod(wt[2:]))
		c.flops = 2 * c.macs
		if hasBias {
			c.flops = satAdd(c.flops, prod(out))
		}
		return nil
	})
}

func convTransposeRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		wt, group, err := c.convWeight(x)
		if err != nil {
			return err
		}
		if group <= 0 || x[1]%group != 0 || x[1] != wt[0] {
			return fmt.Errorf("input channels %d do not match weight %s with group %d", x[1], wt, group)
		}
		nsp := len(x) - 2
		w, err := c.readWindow(nsp, wt[2:])
		if err != nil {
			return err
		}
		cout, err := mul(wt[1], group)
		if err != nil {
			return err
		}
		outPad := c.attrs().Ints("output_padding")
		if outPad == nil {
			outPad = make([]int64, nsp)
		}
		if len(outPad) != nsp {
			return fmt.Errorf("output_padding %v has %d entries, need %d", outPad, len(outPad), nsp)
		}
		out := graph.Shape{x[0], cout}
		if os := c.attrs().Ints("output_shape"); os != nil {
			if len(os) < nsp {
				return fmt.Errorf("output_shape %v has fewer than %d entries", os, nsp)
			}
			out = append(out, os[len(os)-nsp:]...)
		} else {
			for i := 0; i < nsp; i++ {
				var o int64
				if x[2+i] > 1<<40 || outPad[i] < 0 || outPad[i] > 1<<31 {
					return fmt.Errorf("input size %d or output_padding %d out of range", x[2+i], outPad[i])
				}
				full, err := mul(x[2+i], w.strides[i])
				if err != nil {
					return err
				}
				switch w.autoPad {
				case "SAME_UPPER", "SAME_LOWER":
					o = full
				default:
					ek := (w.kernel[i]-1)*w.dilations[i] + 1
					o = full - w.strides[i] + outPad[i] + ek
					if w.autoPad != "VALID" {
						o -= w.pads[i] + w.pads[i+nsp]
					}
				}
				if o < 0 {
					return fmt.Errorf("output size on spatial axis %d is negative", i)
				}
				out = append(out, o)
			}
		}
		c.set(0, c.dt(0), out)
		c.macs = sat(prod(x), wt[1], prod(wt[2:]))
		c.flops = 2 * c.macs
		return nil
	})
}

// pooledShape is a windowed pooling operator's output shape for input x
// (rank ≥ 3) from its attributes (kernel_shape required); channelsLast
// takes x as (N, spatial..., C), as com.microsoft's channels_last does.
func (c *ctx) pooledShape(x graph.Shape, channelsLast bool) (graph.Shape, window, error) {
	if c.attrs().Ints("kernel_shape") == nil {
		return nil, window{}, errors.New("kernel_shape is required")
	}
	nsp, first := len(x)-2, 2
	if channelsLast {
		first = 1
	}
	w, err := c.readWindow(nsp, nil)
	if err != nil {
		return nil, window{}, err
	}
	out := graph.Shape{x[0]}
	if !channelsLast {
		out = append(out, x[1])
	}
	for i := 0; i < nsp; i++ {
		o, err := w.outSize(i, x[first+i])
		if err != nil {
			return nil, window{}, err
		}
		out = append(out, o)
	}
	if channelsLast {
		out = append(out, x[len(x)-1])
	}
	return out, w, nil
}

// globalPooled is x with its spatial dimensions set to 1 (channels first,
// or with channelsLast channels last).
func globalPooled(x graph.Shape, channelsLast bool) graph.Shape {
	out := x.Clone()
	first, end := 2, len(out)
	if channelsLast {
		first, end = 1, len(out)-1
	}
	for i := first; i < end; i++ {
		out[i] = 1
	}
	return out
}

func poolRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		out, w, err := c.pooledShape(x, false)
		if err != nil {
			return err
		}
		c.set(0, c.dt(0), out)
		c.set(1, graph.Int64, out) // MaxPool's Indices
		c.flops = sat(prod(out), prod(w.kernel))
		return nil
	})
}

func globalPoolRule() rule {
	return rankRule(2, func(c *ctx, x graph.Shape) error {
		c.set(0, c.dt(0), globalPooled(x, false))
		c.flops = prod(x)
		return nil
	})
}

func maxRoiPoolRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		rois, err := c.needRank(1, 2)
		if err != nil {
			return err
		}
		ps := c.attrs().Ints("pooled_shape")
		if len(ps) != len(x)-2 {
			return fmt.Errorf("pooled_shape %v does not match input %s", ps, x)
		}
		out := append(graph.Shape{rois[0], x[1]}, ps...)
		c.set(0, c.dt(0), out)
		c.flops = prod(out)
		return nil
	})
}

func maxUnpoolRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		if c.has(2) {
			s, err := c.ints(2)
			if err != nil {
				return err
			}
			c.set(0, c.dt(0), graph.Shape(append([]int64{}, s...)))
			return nil
		}
		nsp := len(x) - 2
		w, err := c.readWindow(nsp, nil)
		if err != nil {
			return err
		}
		out := graph.Shape{x[0], x[1]}
		for i := 0; i < nsp; i++ {
			if x[2+i] > 1<<30 {
				return fmt.Errorf("input size %d is too large", x[2+i])
			}
			out = append(out, (x[2+i]-1)*w.strides[i]+w.kernel[i]-w.pads[i]-w.pads[i+nsp])
		}
		c.set(0, c.dt(0), out)
		return nil
	})
}

// normRule is BatchNormalization, InstanceNormalization and the like:
// output as input 0, parameters per channel (axis 1).
func normRule(flopsPerElem int64) rule {
	return rankRule(1, func(c *ctx, x graph.Shape) error {
		ch := int64(1)
		if len(x) > 1 {
			ch = x[1]
		}
		for i := 1; i < c.nin(); i++ {
			if c.has(i) && c.n.Op != "GroupNormalization" && c.n.Op != "LRN" && c.n.Op != "MeanVarianceNormalization" {
				if s := c.shape(i); len(s) == 1 && s[0] != ch {
					return fmt.Errorf("parameter %d has shape %s, input has %d channels", i, s, ch)
				}
			}
		}
		c.set(0, c.dt(0), x)
		// BatchNormalization in training mode (or old opsets): running stats.
		for i := 1; i < len(c.outs); i++ {
			c.set(i, c.dt(0), graph.Shape{ch})
		}
		c.flops = sat(flopsPerElem, prod(x))
		return nil
	})
}

func layerNormRule() rule {
	return rankRule(1, func(c *ctx, x graph.Shape) error {
		a, err := normAxis(c.attrs().Int("axis", -1), len(x))
		if err != nil {
			return err
		}
		norm := x[a:]
		for i := 1; i < 3; i++ {
			if c.has(i) {
				if _, err := broadcast(norm, c.shape(i)); err != nil {
					return fmt.Errorf("parameter %d: %w", i, err)
				}
			}
		}
		c.set(0, c.dt(0), x)
		stat := x.Clone()
		for i := a; i < len(stat); i++ {
			stat[i] = 1
		}
		sdt := graph.DType(c.attrs().Int("stash_type", int64(graph.Float32)))
		if c.n.Domain != "" || !sdt.IsFloat() {
			sdt = graph.Float32
		}
		c.set(1, sdt, stat)
		c.set(2, sdt, stat)
		c.flops = sat(8, prod(x))
		return nil
	})
}

// skipLayerNormRule is com.microsoft SkipLayerNormalization: input, skip,
// gamma, beta, bias; outputs output, mean, inv_std_var, input_skip_bias_sum.
func skipLayerNormRule() rule {
	return rankRule(1, func(c *ctx, x graph.Shape) error {
		if err := c.need(2); err != nil {
			return err
		}
		if _, err := broadcast(x, c.shape(1)); err != nil {
			return err
		}
		stat := x.Clone()
		stat[len(stat)-1] = 1
		c.set(0, c.dt(0), x)
		c.set(1, graph.Float32, stat)
		c.set(2, graph.Float32, stat)
		c.set(3, c.dt(0), x)
		c.flops = sat(10, prod(x))
		return nil
	})
}

// matmulShape is numpy matmul's shape rule; it returns the output and K.
func matmulShape(a, b graph.Shape) (graph.Shape, int64, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, 0, errors.New("matmul inputs must not be scalars")
	}
	a1, b1 := len(a) == 1, len(b) == 1
	if a1 {
		a = graph.Shape{1, a[0]}
	}
	if b1 {
		b = graph.Shape{b[0], 1}
	}
	k := a[len(a)-1]
	if b[len(b)-2] != k {
		return nil, 0, fmt.Errorf("matmul of %s and %s: inner dimensions %d and %d differ", a, b, k, b[len(b)-2])
	}
	batch, err := broadcast(a[:len(a)-2], b[:len(b)-2])
	if err != nil {
		return nil, 0, err
	}
	out := append(batch, a[len(a)-2], b[len(b)-1])
	if a1 {
		out = append(out[:len(out)-2], out[len(out)-1])
	}
	if b1 {
		out = out[:len(out)-1]
	}
	return out, k, nil
}

func matmulRule() rule {
	return rule{infer: func(c *ctx) error {
		ai, bi := 0, 1
		switch c.n.Op {
		case "QLinearMatMul":
			// a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
			ai, bi = 0, 3
			if err := c.need(8); err != nil {
				return err
			}
		case "MatMulInteger":
			// A, B, a_zero_point, b_zero_point (both optional)
			if err := c.need(2); err != nil {
				return err
			}
			if b := c.shape(1); len(b) >= 1 {
				if err := checkZeroPoint(c, 3, "b_zero_point", b[len(b)-1]); err != nil {
					return err
				}
			}
		}
		if err := c.need(bi + 1); err != nil {
			return err
		}
		out, k, err := matmulShape(c.shape(ai), c.shape(bi))
		if err != nil {
			return err
		}
		dt := c.dt(ai)
		switch c.n.Op {
		case "MatMul":
			if c.dt(1) != dt {
				return fmt.Errorf("input types differ: %s and %s", dt, c.dt(1))
			}
		case "MatMulInteger":
			dt = graph.Int32
		case "QLinearMatMul":
			dt = c.dt(7)
		}
		c.set(0, dt, out)
		c.macs = sat(prod(out), k)
		c.flops = 2 * c.macs
		return nil
	}, eval: func(c *ctx, in []*value) ([]*value, error) {
		if c.n.Op != "MatMul" || !in[0].isFloat() || in[1].dt != in[0].dt || c.macs > maxFoldMACs {
			return nil, nil
		}
		return []*value{evalMatMul(in[0], in[1], c.outs[0].shape)}, nil
	}}
}

// maxFoldMACs bounds the work of folding a MatMul.
const maxFoldMACs = 1 << 24

// evalMatMul multiplies small constant float matrices (batched, broadcast).
func evalMatMul(a, b *value, out graph.Shape) *value {
	as, bs := a.shape, b.shape
	if len(as) == 1 {
		as = graph.Shape{1, as[0]}
	}
	if len(bs) == 1 {
		bs = graph.Shape{bs[0], 1}
	}
	m, k, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-1]
	batch, _ := broadcast(as[:len(as)-2], bs[:len(bs)-2])
	ia := broadcastIndex(as[:len(as)-2], batch)
	ib := broadcastIndex(bs[:len(bs)-2], batch)
	res := newValue(a.dt, out)
	for p := range ia {
		ao, bo, ro := int64(ia[p])*m*k, int64(ib[p])*k*n, int64(p)*m*n
		for i := int64(0); i < m; i++ {
			for j := int64(0); j < n; j++ {
				s := 0.0
				for q := int64(0); q < k; q++ {
					s += a.f[ao+i*k+q] * b.f[bo+q*n+j]
				}
				res.f[ro+i*n+j] = roundFloat(a.dt, s)
			}
		}
	}
	return res
}

// gemmDims are Gemm's (and QGemm's) M, N and K for rank-2 A and B under
// the transA and transB attributes.
func (c *ctx) gemmDims(a, b graph.Shape) (m, n, k int64, err error) {
	m, k = a[0], a[1]
	if c.attrs().Int("transA", 0) != 0 {
		m, k = k, m
	}
	k2, n := b[0], b[1]
	if c.attrs().Int("transB", 0) != 0 {
		k2, n = n, k2
	}
	if k != k2 {
		return 0, 0, 0, fmt.Errorf("inner dimensions %d and %d differ (A %s, B %s)", k, k2, a, b)
	}
	return m, n, k, nil
}

func gemmRule() rule {
	return rankRule(2, func(c *ctx, a graph.Shape) error {
		b, err := c.needRank(1, 2)
		if err != nil {
			return err
		}
		if len(a) != 2 || len(b) != 2 {
			return fmt.Errorf("Gemm needs rank-2 inputs, has %s and %s", a, b)
		}
		m, n, k, err := c.gemmDims(a, b)
		if err != nil {
			return err
		}
		out := graph.Shape{m, n}
		if c.has(2) {
			if _, err := broadcastTo(c.shape(2), out); err != nil {
				return fmt.Errorf("C: %w", err)
			}
		}
		c.set(0, c.dt(0), out)
		c.macs = sat(m, n, k)
		c.flops = 2 * c.macs
		if c.has(2) {
			c.flops = satAdd(c.flops, prod(out))
		}
		return nil
	})
}

// broadcastTo checks that s broadcasts unidirectionally to target.
func broadcastTo(s, target graph.Shape) (graph.Shape, error) {
	b, err := broadcast(s, target)
	if err != nil || !b.Equal(target) {
		return nil, fmt.Errorf("shape %s does not broadcast to %s", s, target)
	}
	return b, nil
}

func softmaxRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		def := int64(-1)
		if c.opset < 13 {
			def = 1
		}
		if len(s) > 0 {
			if _, err := normAxis(c.attrs().Int("axis", def), len(s)); err != nil {
				return err
			}
		}
		c.set(0, c.dt(0), s)
		c.flops = sat(5, prod(s))
		return nil
	})
}

// reduceAxes reads a reduction's axes: attribute before opset since,
// input 1 from then on. nil with noop=false means all axes.
func (c *ctx) reduceAxes(since int64) (axes []int, noop bool, err error) {
	s := c.shape(0)
	var raw []int64
	given := false
	if c.opset < since {
		if a := c.attrs().Get("axes"); a != nil {
			raw, given = a.Ints, true
		}
	} else if c.has(1) {
		v, err := c.ints(1)
		if err != nil {
			return nil, false, err
		}
		raw, given = v, true
	}
	if !given || len(raw) == 0 {
		if c.attrs().Int("noop_with_empty_axes", 0) != 0 {
			return nil, true, nil
		}
		all := make([]int, len(s))
		for i := range all {
			all[i] = i
		}
		return all, false, nil
	}
	ax, err := normAxes(raw, len(s))
	return ax, false, err
}

func reduceRule(since int64, flopsPerElem int64) rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		axes, noop, err := c.reduceAxes(since)
		if err != nil {
			return err
		}
		if noop {
			c.set(0, c.dt(0), s)
			return nil
		}
		out := reducedShape(s, axes, c.attrs().Int("keepdims", 1) != 0)
		c.set(0, c.dt(0), out)
		c.flops = sat(flopsPerElem, prod(s))
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		axes, noop, err := c.reduceAxes(since)
		if err != nil || noop {
			return []*value{in[0]}, err
		}
		return evalReduce(c.n.Op, in[0], axes, c.outs[0].shape)
	})
}

func reducedShape(s graph.Shape, axes []int, keep bool) graph.Shape {
	red := make([]bool, len(s))
	for _, a := range axes {
		red[a] = true
	}
	out := graph.Shape{}
	for i, d := range s {
		switch {
		case !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

// evalReduce folds ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceProd.
func evalReduce(op string, v *value, axes []int, out graph.Shape) ([]*value, error) {
	switch op {
	case "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd":
	default:
		return nil, nil
	}
	if op == "ReduceMean" && !v.isFloat() {
		return nil, nil
	}
	red := make([]bool, len(v.shape))
	for _, a := range axes {
		red[a] = true
	}
	// keep-dims shape of the result, to index into it
	kshape := v.shape.Clone()
	for i := range kshape {
		if red[i] {
			kshape[i] = 1
		}
	}
	kst := strides(kshape)
	n := prod(v.shape)
	m := prod(kshape)
	acc := make([]float64, m)
	cnt := make([]int64, m)
	vals := v.floats()
	coord := make([]int64, len(v.shape))
	for k := int64(0); k < n; k++ {
		j := int64(0)
		for d := range coord {
			if !red[d] {
				j += coord[d] * kst[d]
			}
		}
		x := vals[k]
		switch {
		case cnt[j] == 0:
			acc[j] = x
		case op == "ReduceMax":
			acc[j] = math.Max(acc[j], x)
		case op == "ReduceMin":
			acc[j] = math.Min(acc[j], x)
		case op == "ReduceProd":
			acc[j] *= x
		default:
			acc[j] += x
		}
		cnt[j]++
		nextCoord(coord, v.shape)
	}
	res := newValue(v.dt, out)
	for j := range acc {
		x := acc[j]
		if cnt[j] == 0 {
			switch op {
			case "ReduceProd":
				x = 1
			case "ReduceMax":
				x = math.Inf(-1)
			case "ReduceMin":
				x = math.Inf(1)
			case "ReduceMean":
				x = math.NaN()
			}
		} else if op == "ReduceMean" {
			x /= float64(cnt[j])
		}
		if res.isFloat() {
			res.f[j] = roundFloat(res.dt, x)
		} else {
			res.i[j] = wrapInt(res.dt, truncInt(x))
		}
	}
	return []*value{res}, nil
}

func argRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		a, err := normAxis(c.attrs().Int("axis", 0), len(s))
		if err != nil {
			return err
		}
		c.set(0, graph.Int64, reducedShape(s, []int{a}, c.attrs().Int("keepdims", 1) != 0))
		c.flops = prod(s)
		return nil
	})
}

func topKRule() rule {
	return rankRule(1, func(c *ctx, s graph.Shape) error {
		var k int64
		var err error
		if c.opset < 10 {
			k = c.attrs().Int("k", -1)
		} else {
			if k, err = c.scalarInt(1); err != nil {
				return err
			}
		}
		a, err := normAxis(c.attrs().Int("axis", -1), len(s))
		if err != nil {
			return err
		}
		if k < 0 || k > s[a] {
			return fmt.Errorf("k %d is out of range for axis %d of size %d", k, a, s[a])
		}
		out := s.Clone()
		out[a] = k
		c.set(0, c.dt(0), out)
		c.set(1, graph.Int64, out)
		c.flops = sat(prod(s), int64(math.Ceil(math.Log2(float64(max(k, 2))))))
		return nil
	})
}

func cumSumRule() rule {
	return needRule(2, func(c *ctx) error {
		c.set(0, c.dt(0), c.shape(0))
		c.flops = prod(c.shape(0))
		return nil
	})
}

func triluRule() rule {
	return rankRule(2, func(c *ctx, s graph.Shape) error {
		c.set(0, c.dt(0), s)
		return nil
	})
}

// rnnRule is LSTM, GRU and RNN: X [seq, batch, input] (layout 1: [batch,
// seq, input]), W [dirs, gates·hidden, input].
func rnnRule(gates int64) rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		w, err := c.needRank(1, 3)
		if err != nil {
			return err
		}
		if len(x) != 3 || len(w) != 3 {
			return fmt.Errorf("X %s and W %s must be rank 3", x, w)
		}
		dirs := int64(1)
		if c.attrs().Str("direction", "forward") == "bidirectional" {
			dirs = 2
		}
		if w[0] != dirs {
			return fmt.Errorf("W %s has %d directions, direction attribute says %d", w, w[0], dirs)
		}
		hidden := c.attrs().Int("hidden_size", w[1]/gates)
		if hidden <= 0 || w[1] != gates*hidden {
			return fmt.Errorf("W %s does not hold %d gates of hidden size %d", w, gates, hidden)
		}
		layout := c.attrs().Int("layout", 0)
		seq, batch, input := x[0], x[1], x[2]
		if layout != 0 {
			seq, batch = x[1], x[0]
		}
		if w[2] != input {
			return fmt.Errorf("W %s expects input size %d, X %s has %d", w, w[2], x, input)
		}
		if c.has(2) {
			if r := c.shape(2); len(r) != 3 || r[0] != dirs || r[1] != gates*hidden || r[2] != hidden {
				return fmt.Errorf("R %s does not match [%d, %d, %d]", r, dirs, gates*hidden, hidden)
			}
		}
		dt := c.dt(0)
		if layout == 0 {
			c.set(0, dt, graph.Shape{seq, dirs, batch, hidden})
			c.set(1, dt, graph.Shape{dirs, batch, hidden})
			c.set(2, dt, graph.Shape{dirs, batch, hidden})
		} else {
			c.set(0, dt, graph.Shape{batch, seq, dirs, hidden})
			c.set(1, dt, graph.Shape{batch, dirs, hidden})
			c.set(2, dt, graph.Shape{batch, dirs, hidden})
		}
		c.macs = sat(dirs, seq, batch, gates*hidden, input+hidden)
		// gate activations and state updates: about four operations per gate element
		c.flops = satAdd(2*c.macs, sat(4, dirs, seq, batch, gates*hidden))
		return nil
	})
}

func einsumRule() rule {
	return rule{infer: func(c *ctx) error {
		eq := c.attrs().Str("equation", "")
		var shapes []graph.Shape
		for i := 0; i < c.nin(); i++ {
			if !c.has(i) {
				return fmt.Errorf("input %d is missing", i)
			}
			shapes = append(shapes, c.shape(i))
		}
		out, macs, err := einsumShape(eq, shapes)
		if err != nil {
			return err
		}
		c.set(0, c.dt(0), out)
		c.macs = macs
		c.flops = 2 * macs
		return nil
	}}
}

// einsumShape parses an Einsum equation ("ij,jk->ik", "...ij,...jk", with
// implicit output when "->" is absent) and returns the output shape and
// the MACs of evaluating it as one contraction.
func einsumShape(eq string, shapes []graph.Shape) (graph.Shape, int64, error) {
	lhs, rhs, explicit := eq, "", false
	for i := 0; i+1 < len(eq); i++ {
		if eq[i] == '-' && eq[i+1] == '>' {
			lhs, rhs, explicit = eq[:i], eq[i+2:], true
			break
		}
	}
	clean := func(s string) string {
		out := []byte{}
		for i := 0; i < len(s); i++ {
			if s[i] != ' ' {
				out = append(out, s[i])
			}
		}
		return string(out)
	}
	lhs, rhs = clean(lhs), clean(rhs)
	var terms []string
	start := 0
	for i := 0; i <= len(lhs); i++ {
		if i == len(lhs) || lhs[i] == ',' {
			terms = append(terms, lhs[start:i])
			start = i + 1
		}
	}
	if len(terms) != len(shapes) {
		return nil, 0, fmt.Errorf("equation %q has %d operands, node has %d inputs", eq, len(terms), len(shapes))
	}
	size := map[byte]int64{}
	count := map[byte]int{}
	var ell graph.Shape
	hasEll := false
	for t, term := range terms {
		s := shapes[t]
		letters := 0
		dots := false
		for i := 0; i < len(term); i++ {
			switch {
			case term[i] == '.':
				if i+2 < len(term) && term[i+1] == '.' && term[i+2] == '.' && !dots {
					dots = true
					i += 2
				} else {
					return nil, 0, fmt.Errorf("bad ellipsis in equation %q", eq)
				}
			case (term[i] >= 'a' && term[i] <= 'z') || (term[i] >= 'A' && term[i] <= 'Z'):
				letters++
			default:
				return nil, 0, fmt.Errorf("bad character %q in equation %q", term[i], eq)
			}
		}
		if (!dots && letters != len(s)) || (dots && letters > len(s)) {
			return nil, 0, fmt.Errorf("operand %d %q does not match shape %s", t, term, s)
		}
		ne := len(s) - letters
		d := 0
		for i := 0; i < len(term); i++ {
			if term[i] == '.' {
				e := s[d : d+ne]
				b, err := broadcast(ell, e)
				if err != nil {
					return nil, 0, fmt.Errorf("ellipsis dims: %w", err)
				}
				ell, hasEll = b, true
				d += ne
				i += 2
				continue
			}
			l := term[i]
			if old, ok := size[l]; ok && old != s[d] && old != 1 && s[d] != 1 {
				return nil, 0, fmt.Errorf("label %c has sizes %d and %d", l, old, s[d])
			} else if !ok || old == 1 {
				size[l] = s[d]
			}
			count[l]++
			d++
		}
	}
	out := graph.Shape{}
	if explicit {
		for i := 0; i < len(rhs); i++ {
			if rhs[i] == '.' {
				if i+2 >= len(rhs) || rhs[i+1] != '.' || rhs[i+2] != '.' {
					return nil, 0, fmt.Errorf("bad ellipsis in equation %q", eq)
				}
				out = append(out, ell...)
				i += 2
				continue
			}
			sz, ok := size[rhs[i]]
			if !ok {
				return nil, 0, fmt.Errorf("output label %c does not appear in the inputs of %q", rhs[i], eq)
			}
			out = append(out, sz)
		}
	} else {
		if hasEll {
			out = append(out, ell...)
		}
		for l := byte('A'); l <= 'z'; l++ {
			if count[l] == 1 {
				out = append(out, size[l])
			}
		}
	}
	total := prod(ell)
	if !hasEll {
		total = 1
	}
	for l := byte('A'); l <= 'z'; l++ {
		if n, ok := size[l]; ok {
			total = sat(total, n)
		}
	}
	return out, total, nil
}

func dftRule() rule {
	return rankRule(2, func(c *ctx, x graph.Shape) error {
		r := len(x)
		if x[r-1] != 1 && x[r-1] != 2 {
			return fmt.Errorf("last dimension of %s must be 1 (real) or 2 (complex)", x)
		}
		var axis int64
		if c.opset >= 20 {
			axis = -2
			if c.has(2) {
				var err error
				if axis, err = c.scalarInt(2); err != nil {
					return err
				}
			}
		} else {
			axis = c.attrs().Int("axis", 1)
		}
		a, err := normAxis(axis, r)
		if err != nil || a == r-1 {
			return fmt.Errorf("axis %d is out of range for %s", axis, x)
		}
		n := x[a]
		if c.has(1) && prod(c.shape(1)) > 0 {
			if n, err = c.scalarInt(1); err != nil {
				return err
			}
			if n <= 0 {
				return fmt.Errorf("dft_length %d must be positive", n)
			}
		}
		out := x.Clone()
		out[r-1] = 2
		out[a] = n
		if c.attrs().Int("onesided", 0) != 0 {
			out[a] = n/2 + 1
		}
		c.set(0, c.dt(0), out)
		c.flops = sat(5, prod(out), int64(math.Ceil(math.Log2(float64(max(n, 2))))))
		return nil
	})
}

func stftRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		if err := c.need(2); err != nil {
			return err
		}
		step, err := c.scalarInt(1)
		if err != nil {
			return err
		}
		var frame int64 = -1
		if c.has(3) {
			if frame, err = c.scalarInt(3); err != nil {
				return err
			}
		} else if c.has(2) {
			if w := c.shape(2); len(w) == 1 {
				frame = w[0]
			}
		}
		if frame <= 0 || step <= 0 || frame > x[1] {
			return fmt.Errorf("frame length %d and step %d do not fit signal %s", frame, step, x)
		}
		frames := (x[1]-frame)/step + 1
		bins := frame
		if c.attrs().Int("onesided", 1) != 0 {
			bins = frame/2 + 1
		}
		out := graph.Shape{x[0], frames, bins, 2}
		c.set(0, c.dt(0), out)
		c.flops = sat(5, prod(out), int64(math.Ceil(math.Log2(float64(max(frame, 2))))))
		return nil
	})
}

func gridSampleRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		g, err := c.needRank(1, 3)
		if err != nil {
			return err
		}
		if len(g) != len(x) || g[0] != x[0] || g[len(g)-1] != int64(len(x)-2) {
			return fmt.Errorf("grid %s does not match input %s", g, x)
		}
		out := append(graph.Shape{x[0], x[1]}, g[1:len(g)-1]...)
		c.set(0, c.dt(0), out)
		c.flops = sat(8, prod(out))
		return nil
	})
}

func roiAlignRule() rule {
	return rankRule(4, func(c *ctx, x graph.Shape) error {
		rois, err := c.needRank(1, 2)
		if err != nil {
			return err
		}
		if len(rois) != 2 || rois[1] != 4 {
			return fmt.Errorf("rois %s must be [num_rois, 4]", rois)
		}
		oh, ow := c.attrs().Int("output_height", 1), c.attrs().Int("output_width", 1)
		if oh <= 0 || ow <= 0 {
			return fmt.Errorf("bad output size %dx%d", oh, ow)
		}
		out := graph.Shape{rois[0], x[1], oh, ow}
		c.set(0, c.dt(0), out)
		sr := c.attrs().Int("sampling_ratio", 0)
		if sr <= 0 {
			sr = 2
		}
		c.flops = sat(8, prod(out), sr*sr)
		return nil
	})
}

// nmsRule gives NonMaxSuppression's documented upper bound:
// batch · classes · min(max_output_boxes_per_class, boxes) selections.
func nmsRule() rule {
	return rankRule(3, func(c *ctx, b graph.Shape) error {
		s, err := c.needRank(1, 3)
		if err != nil {
			return err
		}
		if b[0] != s[0] || b[1] != s[2] || b[2] != 4 {
			return fmt.Errorf("boxes %s and scores %s do not match", b, s)
		}
		var maxOut int64
		if c.has(2) {
			if maxOut, err = c.scalarInt(2); err != nil {
				return err
			}
		}
		maxOut = min(max(maxOut, 0), b[1])
		c.set(0, graph.Int64, graph.Shape{sat(s[0], s[1], maxOut), 3})
		c.flops = sat(s[0], s[1], b[1], max(maxOut, 1), 4)
		return nil
	})
}

func lpNormRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		if len(s) > 0 {
			if _, err := normAxis(c.attrs().Int("axis", -1), len(s)); err != nil {
				return err
			}
		}
		c.set(0, c.dt(0), s)
		c.flops = sat(3, prod(s))
		return nil
	})
}

func windowFuncRule() rule {
	return rule{infer: func(c *ctx) error {
		n, err := c.scalarInt(0)
		if err != nil {
			return err
		}
		if n < 0 || n > 1<<40 {
			return fmt.Errorf("bad window size %d", n)
		}
		c.set(0, graph.DType(c.attrs().Int("output_datatype", int64(graph.Float32))), graph.Shape{n})
		return nil
	}}
}

func melWeightRule() rule {
	return needRule(5, func(c *ctx) error {
		bins, err := c.scalarInt(0)
		if err != nil {
			return err
		}
		dft, err := c.scalarInt(1)
		if err != nil {
			return err
		}
		if bins < 0 || dft < 0 {
			return fmt.Errorf("bad sizes %d, %d", bins, dft)
		}
		c.set(0, graph.DType(c.attrs().Int("output_datatype", int64(graph.Float32))), graph.Shape{dft/2 + 1, bins})
		return nil
	})
}

func affineGridRule() rule {
	return needRule(2, func(c *ctx) error {
		sz, err := c.ints(1)
		if err != nil {
			return err
		}
		if len(sz) != 4 && len(sz) != 5 {
			return fmt.Errorf("size %v must have 4 or 5 entries", sz)
		}
		out := graph.Shape{sz[0]}
		out = append(out, sz[2:]...)
		out = append(out, int64(len(sz)-2))
		c.set(0, c.dt(0), out)
		c.flops = sat(int64(len(sz)-2)*2, prod(out))
		return nil
	})
}

func randomRule(like bool) rule {
	return rule{infer: func(c *ctx) error {
		if like {
			if err := c.need(1); err != nil {
				return err
			}
			dt := c.dt(0)
			if a := c.attrs().Get("dtype"); a != nil {
				dt = graph.DType(a.Int)
			}
			c.set(0, dt, c.shape(0))
			return nil
		}
		s := c.attrs().Ints("shape")
		if s == nil {
			return errors.New("shape attribute is required")
		}
		c.set(0, graph.DType(c.attrs().Int("dtype", int64(graph.Float32))), graph.Shape(append([]int64{}, s...)))
		return nil
	}}
}

func bernoulliRule() rule {
	return needRule(1, func(c *ctx) error {
		c.set(0, graph.DType(c.attrs().Int("dtype", int64(c.dt(0)))), c.shape(0))
		return nil
	})
}

func multinomialRule() rule {
	return rankRule(2, func(c *ctx, s graph.Shape) error {
		c.set(0, graph.DType(c.attrs().Int("dtype", int64(graph.Int32))), graph.Shape{s[0], c.attrs().Int("sample_size", 1)})
		return nil
	})
}

func detRule() rule {
	return rankRule(2, func(c *ctx, s graph.Shape) error {
		if s[len(s)-1] != s[len(s)-2] {
			return fmt.Errorf("matrix %s is not square", s)
		}
		c.set(0, c.dt(0), s[:len(s)-2])
		c.flops = sat(prod(s), s[len(s)-1])
		return nil
	})
}

func col2ImRule() rule {
	return rankRule(3, func(c *ctx, x graph.Shape) error {
		img, err := c.ints(1)
		if err != nil {
			return err
		}
		blk, err := c.ints(2)
		if err != nil {
			return err
		}
		kp := int64(1)
		for _, b := range blk {
			kp = sat(kp, b)
		}
		if kp == 0 || x[1]%kp != 0 || len(img) != len(blk) || len(x) != 3 {
			return fmt.Errorf("input %s does not hold blocks %v of image %v", x, blk, img)
		}
		w, err := c.readWindow(len(blk), blk)
		if err != nil {
			return err
		}
		blocks := int64(1)
		for i := range img {
			n, err := w.outSize(i, img[i])
			if err != nil {
				return err
			}
			blocks = sat(blocks, n)
		}
		if blocks != x[2] {
			return fmt.Errorf("input %s has %d blocks, image %v with block %v gives %d", x, x[2], img, blk, blocks)
		}
		out := append(graph.Shape{x[0], x[1] / kp}, img...)
		c.set(0, c.dt(0), out)
		return nil
	})
}

// lossRule is SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss.
func lossRule() rule {
	return rankRule(2, func(c *ctx, s graph.Shape) error {
		red := c.attrs().Str("reduction", "mean")
		if red == "none" {
			out := append(graph.Shape{s[0]}, s[2:]...)
			c.set(0, c.dt(0), out)
		} else {
			c.set(0, c.dt(0), graph.Shape{})
		}
		c.set(1, c.dt(0), s)
		c.flops = sat(5, prod(s))
		return nil
	})
}
