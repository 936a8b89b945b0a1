package infer

import (
	"errors"
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/graph"
)

func shapeRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		r := int64(len(s))
		start, end := c.attrs().Int("start", 0), c.attrs().Int("end", r)
		if start < 0 {
			start += r
		}
		if end < 0 {
			end += r
		}
		start, end = min(max(start, 0), r), min(max(end, 0), r)
		dims := []int64{}
		if start < end {
			dims = append(dims, s[start:end]...)
		}
		c.setData(0, &value{dt: graph.Int64, shape: graph.Shape{int64(len(dims))}, i: dims})
		return nil
	})
}

func sizeRule() rule {
	return needRule(1, func(c *ctx) error {
		c.setData(0, &value{dt: graph.Int64, shape: graph.Shape{}, i: []int64{prod(c.shape(0))}})
		return nil
	})
}

// reshapeEval is the shape-preserving evaluator: the output has the input's
// elements in the inferred shape.
func reshapeEval(c *ctx, in []*value) ([]*value, error) {
	return []*value{in[0].reshaped(c.outs[0].shape)}, nil
}

func reshapeRule() rule {
	return needRule(1, func(c *ctx) error {
		var target []int64
		if c.opset < 5 {
			target = c.attrs().Ints("shape")
		} else {
			if err := c.need(2); err != nil {
				return err
			}
			t, err := c.ints(1)
			if err != nil {
				return err
			}
			target = t
		}
		out, err := reshapeShape(c.shape(0), target, c.attrs().Int("allowzero", 0) != 0)
		if err != nil {
			return err
		}
		c.set(0, c.dt(0), out)
		return nil
	}).folding(reshapeEval)
}

func reshapeShape(in graph.Shape, target []int64, allowZero bool) (graph.Shape, error) {
	out := make(graph.Shape, len(target))
	infer := -1
	known := int64(1)
	for i, d := range target {
		switch {
		case d == -1:
			if infer >= 0 {
				return nil, errors.New("shape has more than one -1")
			}
			infer = i
			continue
		case d == 0 && !allowZero:
			if i >= len(in) {
				return nil, fmt.Errorf("shape %v copies dimension %d, input %s has rank %d", target, i, in, len(in))
			}
			d = in[i]
		case d < 0:
			return nil, fmt.Errorf("shape %v has negative dimension %d", target, d)
		}
		out[i] = d
		k, err := mul(known, d)
		if err != nil {
			return nil, fmt.Errorf("shape %v: %w", target, err)
		}
		known = k
	}
	total := prod(in)
	if infer >= 0 {
		if known == 0 || total%known != 0 {
			return nil, fmt.Errorf("cannot reshape %s (%d elements) to %v", in, total, target)
		}
		out[infer] = total / known
	} else if known != total {
		return nil, fmt.Errorf("cannot reshape %s (%d elements) to %v (%d elements)", in, total, target, known)
	}
	return out, nil
}

func flattenRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		a := c.attrs().Int("axis", 1)
		r := int64(len(s))
		if a < 0 {
			a += r
		}
		if a < 0 || a > r {
			return fmt.Errorf("axis %d is out of range for rank %d", c.attrs().Int("axis", 1), r)
		}
		c.set(0, c.dt(0), graph.Shape{prod(s[:a]), prod(s[a:])})
		return nil
	}).folding(reshapeEval)
}

// axesOf reads an axes list from the attribute (before opset `since`) or from input idx.
func (c *ctx) axesOf(since int64, idx int) ([]int64, bool, error) {
	if c.opset < since {
		a := c.attrs().Get("axes")
		if a == nil {
			return nil, false, nil
		}
		return a.Ints, true, nil
	}
	if !c.has(idx) {
		return nil, false, nil
	}
	v, err := c.ints(idx)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

func squeezeRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		axes, given, err := c.axesOf(13, 1)
		if err != nil {
			return err
		}
		drop := make([]bool, len(s))
		if given {
			ax, err := normAxes(axes, len(s))
			if err != nil {
				return err
			}
			for _, a := range ax {
				if s[a] != 1 {
					return fmt.Errorf("cannot squeeze axis %d of shape %s: size is not 1", a, s)
				}
				drop[a] = true
			}
		} else {
			for i, d := range s {
				drop[i] = d == 1
			}
		}
		out := graph.Shape{}
		for i, d := range s {
			if !drop[i] {
				out = append(out, d)
			}
		}
		c.set(0, c.dt(0), out)
		return nil
	}).folding(reshapeEval)
}

func unsqueezeRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		axes, given, err := c.axesOf(13, 1)
		if err != nil {
			return err
		}
		if !given {
			return errors.New("axes are required")
		}
		r := len(s) + len(axes)
		ax, err := normAxes(axes, r)
		if err != nil {
			return err
		}
		ins := make([]bool, r)
		for _, a := range ax {
			ins[a] = true
		}
		out := make(graph.Shape, 0, r)
		j := 0
		for i := 0; i < r; i++ {
			if ins[i] {
				out = append(out, 1)
			} else {
				out = append(out, s[j])
				j++
			}
		}
		c.set(0, c.dt(0), out)
		return nil
	}).folding(reshapeEval)
}

func concatRule() rule {
	return needRule(1, func(c *ctx) error {
		var first graph.Shape
		var dt graph.DType
		cnt := 0
		for i := 0; i < c.nin(); i++ {
			if !c.has(i) {
				continue
			}
			if cnt == 0 {
				first, dt = c.shape(i), c.dt(i)
			}
			cnt++
		}
		if len(first) == 0 {
			return errors.New("cannot concatenate scalars")
		}
		a, err := normAxis(c.attrs().Int("axis", 0), len(first))
		if err != nil {
			return err
		}
		out := first.Clone()
		out[a] = 0
		for i := 0; i < c.nin(); i++ {
			if !c.has(i) {
				continue
			}
			s := c.shape(i)
			if len(s) != len(first) {
				return fmt.Errorf("input %d has rank %d, input 0 rank %d", i, len(s), len(first))
			}
			if c.dt(i) != dt {
				return fmt.Errorf("input %d is %s, input 0 is %s", i, c.dt(i), dt)
			}
			for d := range s {
				if d != a && s[d] != first[d] {
					return fmt.Errorf("input %d shape %s does not match %s outside axis %d", i, s, first, a)
				}
			}
			if out[a] > math.MaxInt64-s[a] {
				return errors.New("concatenated size overflows")
			}
			out[a] += s[a]
		}
		c.set(0, dt, out)
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		out := c.outs[0].shape
		a, _ := normAxis(c.attrs().Int("axis", 0), len(out))
		outer := prod(out[:a])
		inner := prod(out[a+1:])
		res := newValue(c.outs[0].dtype, out)
		k := 0
		for o := int64(0); o < outer; o++ {
			for _, v := range in {
				if v == nil {
					continue
				}
				blk := int(v.shape[a] * inner)
				base := int(o) * blk
				if res.isFloat() {
					copy(res.f[k:], v.f[base:base+blk])
				} else {
					copy(res.i[k:], v.i[base:base+blk])
				}
				k += blk
			}
		}
		return []*value{res}, nil
	})
}

// splitSizes works out the sizes of Split's outputs.
func (c *ctx) splitSizes(dim int64) ([]int64, error) {
	nout := int64(len(c.n.Outputs))
	var sizes []int64
	if c.opset < 13 {
		sizes = c.attrs().Ints("split")
	} else if c.has(1) {
		v, err := c.ints(1)
		if err != nil {
			return nil, err
		}
		sizes = v
	}
	if sizes != nil {
		if int64(len(sizes)) != nout {
			return nil, fmt.Errorf("split has %d sizes for %d outputs", len(sizes), nout)
		}
		sum := int64(0)
		for _, s := range sizes {
			if s < 0 {
				return nil, fmt.Errorf("negative split size %d", s)
			}
			sum += s
		}
		if sum != dim {
			return nil, fmt.Errorf("split sizes %v sum to %d, axis has %d", sizes, sum, dim)
		}
		return sizes, nil
	}
	if nout == 0 {
		return nil, errors.New("no outputs")
	}
	if num := c.attrs().Int("num_outputs", 0); num > 0 {
		if num != nout {
			return nil, fmt.Errorf("num_outputs %d but %d outputs", num, nout)
		}
		chunk := (dim + num - 1) / num
		sizes = make([]int64, num)
		left := dim
		for i := range sizes {
			sizes[i] = min(chunk, left)
			left -= sizes[i]
		}
		return sizes, nil
	}
	if dim%nout != 0 {
		return nil, fmt.Errorf("axis size %d does not split evenly into %d outputs", dim, nout)
	}
	sizes = make([]int64, nout)
	for i := range sizes {
		sizes[i] = dim / nout
	}
	return sizes, nil
}

func splitRule() rule {
	return rankRule(1, func(c *ctx, s graph.Shape) error {
		a, err := normAxis(c.attrs().Int("axis", 0), len(s))
		if err != nil {
			return err
		}
		sizes, err := c.splitSizes(s[a])
		if err != nil {
			return err
		}
		for i, sz := range sizes {
			o := s.Clone()
			o[a] = sz
			c.set(i, c.dt(0), o)
		}
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		v := in[0]
		a, _ := normAxis(c.attrs().Int("axis", 0), len(v.shape))
		inner := prod(v.shape[a+1:])
		outer := prod(v.shape[:a])
		res := make([]*value, len(c.outs))
		off := int64(0)
		for i, o := range c.outs {
			idx := make([]int, 0, prod(o.shape))
			for p := int64(0); p < outer; p++ {
				base := p*v.shape[a]*inner + off*inner
				for k := int64(0); k < o.shape[a]*inner; k++ {
					idx = append(idx, int(base+k))
				}
			}
			res[i] = v.take(o.shape, idx)
			off += o.shape[a]
		}
		return res, nil
	})
}

// sliceParams resolves Slice's starts, ends, axes and steps into per-axis
// (start, step, length) over the input shape.
func (c *ctx) sliceParams(s graph.Shape) (start, step []int64, out graph.Shape, err error) {
	var starts, ends, axes, steps []int64
	if c.opset < 10 {
		starts, ends, axes = c.attrs().Ints("starts"), c.attrs().Ints("ends"), c.attrs().Ints("axes")
	} else {
		if err := c.need(3); err != nil {
			return nil, nil, nil, err
		}
		if starts, err = c.ints(1); err != nil {
			return nil, nil, nil, err
		}
		if ends, err = c.ints(2); err != nil {
			return nil, nil, nil, err
		}
		if c.has(3) {
			if axes, err = c.ints(3); err != nil {
				return nil, nil, nil, err
			}
		}
		if c.has(4) {
			if steps, err = c.ints(4); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if len(starts) != len(ends) {
		return nil, nil, nil, fmt.Errorf("%d starts but %d ends", len(starts), len(ends))
	}
	if axes == nil {
		axes = make([]int64, len(starts))
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	if steps == nil {
		steps = make([]int64, len(starts))
		for i := range steps {
			steps[i] = 1
		}
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		return nil, nil, nil, fmt.Errorf("starts, ends, axes and steps differ in length (%d, %d, %d, %d)", len(starts), len(ends), len(axes), len(steps))
	}
	ax, err := normAxes(axes, len(s))
	if err != nil {
		return nil, nil, nil, err
	}
	start, step, out = make([]int64, len(s)), make([]int64, len(s)), s.Clone()
	for i := range step {
		step[i] = 1
	}
	for i, a := range ax {
		d := s[a]
		b, e, st := starts[i], ends[i], steps[i]
		if st == 0 {
			return nil, nil, nil, fmt.Errorf("step on axis %d is 0", a)
		}
		if b < 0 {
			b += d
		}
		if e < 0 {
			e += d
		}
		var n int64
		if st > 0 {
			b, e = min(max(b, 0), d), min(max(e, 0), d)
			if e > b {
				n = (e-b-1)/st + 1
			}
		} else {
			b, e = min(max(b, 0), d-1), min(max(e, -1), d-1)
			if b > e && st == math.MinInt64 {
				n = 1
			} else if b > e {
				n = (b-e-1)/(-st) + 1
			}
		}
		start[a], step[a], out[a] = b, st, n
	}
	return start, step, out, nil
}

func sliceRule() rule {
	return needRule(1, func(c *ctx) error {
		_, _, out, err := c.sliceParams(c.shape(0))
		if err != nil {
			return err
		}
		c.set(0, c.dt(0), out)
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		v := in[0]
		start, step, out, err := c.sliceParams(v.shape)
		if err != nil {
			return nil, err
		}
		st := strides(v.shape)
		idx := gatherIndex(out, func(coord []int64) int64 {
			j := int64(0)
			for d := range out {
				j += (start[d] + coord[d]*step[d]) * st[d]
			}
			return j
		})
		return []*value{v.take(out, idx)}, nil
	})
}

func gatherRule() rule {
	return rankRule(1, func(c *ctx, s graph.Shape) error {
		if err := c.need(2); err != nil {
			return err
		}
		a, err := normAxis(c.attrs().Int("axis", 0), len(s))
		if err != nil {
			return err
		}
		out := append(append(s[:a:a].Clone(), c.shape(1)...), s[a+1:]...)
		c.set(0, c.dt(0), out)
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		v := in[0]
		a, _ := normAxis(c.attrs().Int("axis", 0), len(v.shape))
		ind := in[1].ints()
		dim := v.shape[a]
		inner := prod(v.shape[a+1:])
		outer := prod(v.shape[:a])
		idx := make([]int, 0, prod(c.outs[0].shape))
		for o := int64(0); o < outer; o++ {
			for _, x := range ind {
				if x < 0 {
					x += dim
				}
				if x < 0 || x >= dim {
					return nil, fmt.Errorf("index %d is out of range for axis %d of size %d", x, a, dim)
				}
				base := (o*dim + x) * inner
				for k := int64(0); k < inner; k++ {
					idx = append(idx, int(base+k))
				}
			}
		}
		return []*value{v.take(c.outs[0].shape, idx)}, nil
	})
}

func gatherElementsRule() rule {
	return needRule(2, func(c *ctx) error {
		s, is := c.shape(0), c.shape(1)
		if len(s) != len(is) || len(s) == 0 {
			return fmt.Errorf("data %s and indices %s must have the same rank ≥ 1", s, is)
		}
		if _, err := normAxis(c.attrs().Int("axis", 0), len(s)); err != nil {
			return err
		}
		c.set(0, c.dt(0), is)
		return nil
	})
}

func gatherNDRule() rule {
	return needRule(2, func(c *ctx) error {
		s, is := c.shape(0), c.shape(1)
		b := c.attrs().Int("batch_dims", 0)
		if len(is) == 0 || len(s) == 0 || b < 0 || b >= int64(min(len(s), len(is))) {
			return fmt.Errorf("bad ranks: data %s, indices %s, batch_dims %d", s, is, b)
		}
		last := is[len(is)-1]
		if last < 1 || last > int64(len(s)) || b+last > int64(len(s)) {
			return fmt.Errorf("indices last dimension %d does not fit data %s with batch_dims %d", last, s, b)
		}
		out := append(is[:len(is)-1].Clone(), s[b+last:]...)
		c.set(0, c.dt(0), out)
		return nil
	})
}

func sameAsInput0Rule(flopsPerElem int64) rule {
	return needRule(1, func(c *ctx) error {
		c.set(0, c.dt(0), c.shape(0))
		c.flops = sat(flopsPerElem, c.outElems(0))
		return nil
	})
}

func transposePerm(c *ctx, rank int) ([]int, error) {
	p := c.attrs().Ints("perm")
	if p == nil {
		perm := make([]int, rank)
		for i := range perm {
			perm[i] = rank - 1 - i
		}
		return perm, nil
	}
	if len(p) != rank {
		return nil, fmt.Errorf("perm %v has %d entries for rank %d", p, len(p), rank)
	}
	perm := make([]int, rank)
	seen := make([]bool, rank)
	for i, x := range p {
		if x < 0 || x >= int64(rank) || seen[x] {
			return nil, fmt.Errorf("perm %v is not a permutation of 0..%d", p, rank-1)
		}
		seen[x] = true
		perm[i] = int(x)
	}
	return perm, nil
}

func transposeRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		perm, err := transposePerm(c, len(s))
		if err != nil {
			return err
		}
		out := make(graph.Shape, len(s))
		for i, p := range perm {
			out[i] = s[p]
		}
		c.set(0, c.dt(0), out)
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		v := in[0]
		perm, _ := transposePerm(c, len(v.shape))
		out := c.outs[0].shape
		st := strides(v.shape)
		idx := gatherIndex(out, func(coord []int64) int64 {
			j := int64(0)
			for d, p := range perm {
				j += coord[d] * st[p]
			}
			return j
		})
		return []*value{v.take(out, idx)}, nil
	})
}

func expandRule() rule {
	return needRule(2, func(c *ctx) error {
		target, err := c.ints(1)
		if err != nil {
			return err
		}
		for _, d := range target {
			if d < 0 {
				return fmt.Errorf("shape %v has a negative dimension", target)
			}
		}
		out, err := broadcast(c.shape(0), graph.Shape(target))
		if err != nil {
			return err
		}
		c.set(0, c.dt(0), out)
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		out := c.outs[0].shape
		return []*value{in[0].take(out, broadcastIndex(in[0].shape, out))}, nil
	})
}

func tileRule() rule {
	return needRule(2, func(c *ctx) error {
		rep, err := c.ints(1)
		if err != nil {
			return err
		}
		s := c.shape(0)
		if len(rep) != len(s) {
			return fmt.Errorf("repeats %v has %d entries for rank %d", rep, len(rep), len(s))
		}
		out := make(graph.Shape, len(s))
		for i := range s {
			if rep[i] < 0 {
				return fmt.Errorf("negative repeat %d", rep[i])
			}
			if out[i], err = mul(s[i], rep[i]); err != nil {
				return err
			}
		}
		c.set(0, c.dt(0), out)
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		v := in[0]
		out := c.outs[0].shape
		st := strides(v.shape)
		idx := gatherIndex(out, func(coord []int64) int64 {
			j := int64(0)
			for d := range out {
				j += (coord[d] % v.shape[d]) * st[d]
			}
			return j
		})
		return []*value{v.take(out, idx)}, nil
	})
}

func constantOfShapeRule() rule {
	return needRule(1, func(c *ctx) error {
		dims, err := c.ints(0)
		if err != nil {
			return err
		}
		out := graph.Shape(append([]int64{}, dims...))
		if err := checkShape(out); err != nil {
			return err
		}
		fill := &value{dt: graph.Float32, shape: graph.Shape{1}, f: []float64{0}}
		if a := c.attrs().Get("value"); a != nil {
			if a.Kind != graph.AttrTensor || a.Tensor == nil {
				return errors.New("attribute value is not a tensor")
			}
			if !foldableDType(a.Tensor.DType) {
				c.set(0, a.Tensor.DType, out)
				return nil
			}
			v, err := decode(a.Tensor.DType, a.Tensor.Dims, a.Tensor.Raw)
			if err != nil {
				return fmt.Errorf("attribute value: %w", err)
			}
			if v.len() != 1 {
				return fmt.Errorf("attribute value must hold one element, has %d", v.len())
			}
			fill = v
		}
		c.set(0, fill.dt, out)
		if prod(out) <= MaxFoldElements {
			n := prod(out)
			idx := make([]int, n)
			c.setData(0, fill.take(out, idx))
		}
		return nil
	})
}

func rangeRule() rule {
	return needRule(3, func(c *ctx) error {
		var vals [3]*value
		for i := range vals {
			v, err := c.value(i)
			if err != nil {
				return err
			}
			if v.len() != 1 {
				return fmt.Errorf("input %d must be a scalar", i)
			}
			vals[i] = v
		}
		dt := c.dt(0)
		var n int64
		if vals[0].isFloat() {
			start, limit, delta := vals[0].f[0], vals[1].floats()[0], vals[2].floats()[0]
			if delta == 0 {
				return errors.New("delta is 0")
			}
			x := math.Ceil((limit - start) / delta)
			if math.IsNaN(x) || x > 1<<40 {
				return fmt.Errorf("range of %v to %v by %v is too long", start, limit, delta)
			}
			n = max(int64(x), 0)
		} else {
			start, limit, delta := vals[0].i[0], vals[1].ints()[0], vals[2].ints()[0]
			if delta == 0 {
				return errors.New("delta is 0")
			}
			span := float64(limit) - float64(start)
			x := math.Ceil(span / float64(delta))
			if x > 1<<40 {
				return fmt.Errorf("range of %d to %d by %d is too long", start, limit, delta)
			}
			n = max(int64(x), 0)
		}
		out := graph.Shape{n}
		c.set(0, dt, out)
		if n <= MaxFoldElements {
			v := newValue(dt, out)
			for k := int64(0); k < n; k++ {
				if v.isFloat() {
					v.f[k] = roundFloat(dt, vals[0].f[0]+float64(k)*vals[2].floats()[0])
				} else {
					v.i[k] = vals[0].i[0] + k*vals[2].ints()[0]
				}
			}
			c.setData(0, v)
		}
		return nil
	})
}

// padsOf reads Pad's pads (attribute before opset 11, input after) as a
// per-axis (begin, end) list over rank r.
func (c *ctx) padsOf(r int) ([]int64, error) {
	var pads []int64
	if c.opset < 11 {
		pads = c.attrs().Ints("pads")
		if pads == nil {
			pads = c.attrs().Ints("paddings")
		}
	} else {
		if err := c.need(2); err != nil {
			return nil, err
		}
		v, err := c.ints(1)
		if err != nil {
			return nil, err
		}
		pads = v
	}
	full := make([]int64, 2*r)
	if c.opset >= 18 && c.has(3) {
		axes, err := c.ints(3)
		if err != nil {
			return nil, err
		}
		ax, err := normAxes(axes, r)
		if err != nil {
			return nil, err
		}
		if len(pads) != 2*len(ax) {
			return nil, fmt.Errorf("%d pads for %d axes", len(pads), len(ax))
		}
		for i, a := range ax {
			full[a], full[a+r] = pads[i], pads[i+len(ax)]
		}
		return full, nil
	}
	if len(pads) != 2*r {
		return nil, fmt.Errorf("%d pads for rank %d", len(pads), r)
	}
	copy(full, pads)
	return full, nil
}

func padRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		pads, err := c.padsOf(len(s))
		if err != nil {
			return err
		}
		out := s.Clone()
		for i := range s {
			out[i] = s[i] + pads[i] + pads[i+len(s)]
			if out[i] < 0 || pads[i] > math.MaxInt32*int64(1<<20) || pads[i+len(s)] > math.MaxInt32*int64(1<<20) {
				return fmt.Errorf("pads %v give a bad size on axis %d of %s", pads, i, s)
			}
		}
		c.set(0, c.dt(0), out)
		return nil
	})
}

func depthToSpaceRule(toSpace bool) rule {
	return rankRule(4, func(c *ctx, s graph.Shape) error {
		if len(s) != 4 {
			return fmt.Errorf("input must be rank 4, is %s", s)
		}
		b := c.attrs().Int("blocksize", 0)
		if b <= 0 || b > 1<<16 {
			return fmt.Errorf("bad blocksize %d", b)
		}
		out := s.Clone()
		if toSpace {
			if s[1]%(b*b) != 0 {
				return fmt.Errorf("channels %d not divisible by blocksize² %d", s[1], b*b)
			}
			h, err1 := mul(s[2], b)
			w, err2 := mul(s[3], b)
			if err1 != nil || err2 != nil {
				return errors.New("output size overflows")
			}
			out[1], out[2], out[3] = s[1]/(b*b), h, w
		} else {
			if s[2]%b != 0 || s[3]%b != 0 {
				return fmt.Errorf("spatial size %dx%d not divisible by blocksize %d", s[2], s[3], b)
			}
			ch, err := mul(s[1], b*b)
			if err != nil {
				return err
			}
			out[1], out[2], out[3] = ch, s[2]/b, s[3]/b
		}
		c.set(0, c.dt(0), out)
		return nil
	})
}

func oneHotRule() rule {
	return needRule(3, func(c *ctx) error {
		d, err := c.scalarInt(1)
		if err != nil {
			return err
		}
		if d < 0 {
			return fmt.Errorf("negative depth %d", d)
		}
		s := c.shape(0)
		a, err := normAxis(c.attrs().Int("axis", -1), len(s)+1)
		if err != nil {
			return err
		}
		out := append(append(s[:a:a].Clone(), d), s[a:]...)
		c.set(0, c.dt(2), out)
		return nil
	})
}

func nonZeroRule() rule {
	return needRule(1, func(c *ctx) error {
		if !c.isConstData(0) {
			return errors.New("output size depends on the input's values, which are not constant; NonZero needs a constant input here")
		}
		v, err := c.value(0)
		if err != nil {
			return err
		}
		var nz []int64
		f := v.floats()
		for k, x := range f {
			if x != 0 {
				nz = append(nz, int64(k))
			}
		}
		r := len(v.shape)
		out := newValue(graph.Int64, graph.Shape{int64(r), int64(len(nz))})
		st := strides(v.shape)
		for j, k := range nz {
			for d := 0; d < r; d++ {
				out.i[d*len(nz)+j] = (k / st[d]) % v.shape[d]
			}
		}
		c.setData(0, out)
		return nil
	})
}

func compressRule() rule {
	return needRule(2, func(c *ctx) error {
		if !c.isConstData(1) {
			return errors.New("output size depends on the condition's values, which are not constant")
		}
		cond, err := c.ints(1)
		if err != nil {
			return err
		}
		s := c.shape(0)
		ax := c.attrs().Get("axis")
		limit := prod(s)
		if ax != nil {
			a, err := normAxis(ax.Int, len(s))
			if err != nil {
				return err
			}
			limit = s[a]
		}
		cnt := int64(0)
		for k, x := range cond {
			if int64(k) < limit && x != 0 {
				cnt++
			}
		}
		if ax == nil {
			c.set(0, c.dt(0), graph.Shape{cnt})
			return nil
		}
		a, _ := normAxis(ax.Int, len(s))
		o := s.Clone()
		o[a] = cnt
		c.set(0, c.dt(0), o)
		return nil
	})
}

func eyeLikeRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		if len(s) != 2 {
			return fmt.Errorf("input must be rank 2, is %s", s)
		}
		dt := graph.DType(c.attrs().Int("dtype", int64(c.dt(0))))
		c.set(0, dt, s)
		return nil
	})
}

func uniqueRule() rule {
	return needRule(1, func(c *ctx) error {
		if !c.isConstData(0) || c.attrs().Get("axis") != nil {
			return errors.New("output size depends on the input's values; Unique needs a constant input and no axis here")
		}
		v, err := c.value(0)
		if err != nil {
			return err
		}
		seen := map[float64]bool{}
		for _, x := range v.floats() {
			seen[x] = true
		}
		u := int64(len(seen))
		c.set(0, c.dt(0), graph.Shape{u})
		c.set(1, graph.Int64, graph.Shape{u})
		c.set(2, graph.Int64, graph.Shape{prod(v.shape)})
		c.set(3, graph.Int64, graph.Shape{u})
		return nil
	})
}

func centerCropPadRule() rule {
	return needRule(2, func(c *ctx) error {
		sz, err := c.ints(1)
		if err != nil {
			return err
		}
		s := c.shape(0)
		axes := c.attrs().Ints("axes")
		if axes == nil {
			for i := range s {
				axes = append(axes, int64(i))
			}
		}
		ax, err := normAxes(axes, len(s))
		if err != nil {
			return err
		}
		if len(sz) != len(ax) {
			return fmt.Errorf("%d sizes for %d axes", len(sz), len(ax))
		}
		out := s.Clone()
		for i, a := range ax {
			out[a] = sz[i]
		}
		c.set(0, c.dt(0), out)
		return nil
	})
}

// resizeRule covers Resize (all opsets) and Upsample.
func resizeRule() rule {
	return needRule(1, func(c *ctx) error {
		s := c.shape(0)
		r := len(s)
		var scales []float64
		var sizes []int64
		present := func(i int) bool { return c.has(i) && prod(c.shape(i)) > 0 }
		switch {
		case c.n.Op == "Upsample" && c.opset < 9:
			for _, x := range c.attrs().Floats("scales") {
				scales = append(scales, float64(x))
			}
		case c.n.Op == "Upsample" || c.opset < 11:
			if !present(1) {
				return errors.New("scales are missing")
			}
			v, err := c.floats(1)
			if err != nil {
				return err
			}
			scales = v
		default:
			if present(3) {
				v, err := c.ints(3)
				if err != nil {
					return err
				}
				sizes = v
			} else if present(2) {
				v, err := c.floats(2)
				if err != nil {
					return err
				}
				scales = v
			} else {
				return errors.New("neither scales nor sizes is given")
			}
		}
		axes := make([]int, r)
		for i := range axes {
			axes[i] = i
		}
		if a := c.attrs().Ints("axes"); a != nil && c.n.Op == "Resize" {
			ax, err := normAxes(a, r)
			if err != nil {
				return err
			}
			axes = ax
		}
		out := s.Clone()
		if sizes != nil {
			if len(sizes) != len(axes) {
				return fmt.Errorf("%d sizes for %d axes", len(sizes), len(axes))
			}
			policy := c.attrs().Str("keep_aspect_ratio_policy", "stretch")
			if policy == "stretch" {
				for i, a := range axes {
					out[a] = sizes[i]
				}
			} else {
				scale := math.Inf(1)
				if policy == "not_smaller" {
					scale = math.Inf(-1)
				}
				for i, a := range axes {
					if s[a] == 0 {
						continue
					}
					x := float64(sizes[i]) / float64(s[a])
					if policy == "not_smaller" {
						scale = math.Max(scale, x)
					} else {
						scale = math.Min(scale, x)
					}
				}
				for _, a := range axes {
					out[a] = int64(math.Floor(float64(s[a])*scale + 0.5))
				}
			}
		} else {
			if len(scales) != len(axes) {
				return fmt.Errorf("%d scales for %d axes", len(scales), len(axes))
			}
			for i, a := range axes {
				x := float64(float32(scales[i]) * float32(s[a]))
				if !(x >= 0) || x > 1<<50 {
					return fmt.Errorf("scale %v gives a bad size for axis %d of %s", scales[i], a, s)
				}
				out[a] = int64(x)
			}
		}
		for _, d := range out {
			if d < 0 {
				return fmt.Errorf("output shape %s is negative", out)
			}
		}
		c.set(0, c.dt(0), out)
		mode := c.attrs().Str("mode", "nearest")
		per := int64(1)
		switch mode {
		case "linear", "bilinear":
			per = 4
		case "cubic":
			per = 16
		}
		c.flops = sat(per, c.outElems(0))
		return nil
	})
}

func scatterNDRule() rule {
	return needRule(3, func(c *ctx) error {
		d, is, us := c.shape(0), c.shape(1), c.shape(2)
		if len(is) == 0 {
			return errors.New("indices must have rank at least 1")
		}
		k := is[len(is)-1]
		if k < 1 || k > int64(len(d)) {
			return fmt.Errorf("indices %s do not fit data %s", is, d)
		}
		want := append(is[:len(is)-1].Clone(), d[k:]...)
		if !us.Equal(want) {
			return fmt.Errorf("updates %s, want %s", us, want)
		}
		if c.dt(2) != c.dt(0) {
			return fmt.Errorf("updates are %s, data %s", c.dt(2), c.dt(0))
		}
		c.set(0, c.dt(0), d)
		c.flops = prod(us)
		return nil
	})
}

func scatterElementsRule() rule {
	return needRule(3, func(c *ctx) error {
		d, is, us := c.shape(0), c.shape(1), c.shape(2)
		if !is.Equal(us) || len(is) != len(d) {
			return fmt.Errorf("indices %s and updates %s must match each other and the rank of data %s", is, us, d)
		}
		if _, err := normAxis(c.attrs().Int("axis", 0), len(d)); err != nil {
			return err
		}
		if c.dt(2) != c.dt(0) {
			return fmt.Errorf("updates are %s, data %s", c.dt(2), c.dt(0))
		}
		c.set(0, c.dt(0), d)
		c.flops = prod(us)
		return nil
	})
}
