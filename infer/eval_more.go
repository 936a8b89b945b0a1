package infer

import (
	"fmt"

	"github.com/inlay-dev/inlay/graph"
)

// Evaluators for operators that exporters sometimes use on small constant
// tensors (index arithmetic, masks, padding tables).

// axisIndex is index x of an axis of size n, counted from the end when
// negative; ok is false when it is out of range.
func axisIndex(x, n int64) (int64, bool) {
	if x < 0 {
		x += n
	}
	return x, x >= 0 && x < n
}

// nextCoord moves c to the next coordinate of shape s in row-major order
// (from the last, back to all zeros).
func nextCoord(c []int64, s graph.Shape) {
	for d := len(s) - 1; d >= 0; d-- {
		c[d]++
		if c[d] < s[d] {
			break
		}
		c[d] = 0
	}
}

// coords iterates the coordinates of a shape in row-major order.
func coords(s graph.Shape, f func(k int, c []int64)) {
	n := prod(s)
	c := make([]int64, len(s))
	for k := int64(0); k < n; k++ {
		f(int(k), c)
		nextCoord(c, s)
	}
}

// gatherIndex is, for each coordinate of out in row-major order, the flat
// index into the input that src gives for it: the index list a value's
// take reads out by.
func gatherIndex(out graph.Shape, src func(c []int64) int64) []int {
	idx := make([]int, prod(out))
	coords(out, func(k int, c []int64) { idx[k] = int(src(c)) })
	return idx
}

// flat is the row-major index of a coordinate.
func flat(c []int64, st []int64) int {
	j := int64(0)
	for d := range c {
		j += c[d] * st[d]
	}
	return int(j)
}

// padEval folds Pad in constant mode.
func padEval(c *ctx, in []*value) ([]*value, error) {
	if m := c.attrs().Str("mode", "constant"); m != "constant" {
		return nil, nil
	}
	v := in[0]
	r := len(v.shape)
	pads, err := c.padsOf(r)
	if err != nil {
		return nil, err
	}
	fill := float64(c.attrs().Float("value", 0))
	if c.opset >= 11 && len(in) > 2 && in[2] != nil && in[2].len() > 0 {
		fill = in[2].floats()[0]
	}
	out := c.outs[0].shape
	res := newValue(v.dt, out)
	st := strides(v.shape)
	src := make([]int64, r)
	coords(out, func(k int, o []int64) {
		inside := true
		for d := range o {
			src[d] = o[d] - pads[d]
			if src[d] < 0 || src[d] >= v.shape[d] {
				inside = false
			}
		}
		switch {
		case inside && res.isFloat():
			res.f[k] = v.f[flat(src, st)]
		case inside:
			res.i[k] = v.i[flat(src, st)]
		case res.isFloat():
			res.f[k] = roundFloat(res.dt, fill)
		default:
			res.i[k] = wrapInt(res.dt, truncInt(fill))
		}
	})
	return []*value{res}, nil
}

// gatherElementsEval folds GatherElements.
func gatherElementsEval(c *ctx, in []*value) ([]*value, error) {
	v, ind := in[0], in[1]
	a, _ := normAxis(c.attrs().Int("axis", 0), len(v.shape))
	st := strides(v.shape)
	iv := ind.ints()
	idx := make([]int, len(iv))
	var bad error
	coords(ind.shape, func(k int, co []int64) {
		x, ok := axisIndex(iv[k], v.shape[a])
		if !ok {
			bad = fmt.Errorf("index %d is out of range for axis %d of size %d", iv[k], a, v.shape[a])
			return
		}
		for d := range co {
			if d != a && co[d] >= v.shape[d] {
				bad = fmt.Errorf("indices %s exceed data %s", ind.shape, v.shape)
				return
			}
		}
		j := int64(0)
		for d := range co {
			if d == a {
				j += x * st[d]
			} else {
				j += co[d] * st[d]
			}
		}
		idx[k] = int(j)
	})
	if bad != nil {
		return nil, bad
	}
	return []*value{v.take(ind.shape, idx)}, nil
}

// scatterNDEval folds ScatterND (reduction none, add, mul, max, min).
func scatterNDEval(c *ctx, in []*value) ([]*value, error) {
	if len(in) < 3 || in[1] == nil || in[2] == nil || len(in[1].shape) == 0 {
		return nil, nil
	}
	data, ind, upd := in[0], in[1], in[2]
	if upd.dt != data.dt {
		return nil, nil
	}
	k := int(ind.shape[len(ind.shape)-1])
	if k > len(data.shape) {
		return nil, fmt.Errorf("indices %s do not fit data %s", ind.shape, data.shape)
	}
	slice := prod(data.shape[k:])
	nidx := prod(ind.shape[:len(ind.shape)-1])
	if nidx*slice != int64(upd.len()) {
		return nil, fmt.Errorf("updates %s do not match indices %s and data %s", upd.shape, ind.shape, data.shape)
	}
	res := &value{dt: data.dt, shape: data.shape.Clone(), f: append([]float64(nil), data.f...), i: append([]int64(nil), data.i...)}
	st := strides(data.shape)
	iv := ind.ints()
	red := c.attrs().Str("reduction", "none")
	for p := int64(0); p < nidx; p++ {
		off := int64(0)
		for d := 0; d < k; d++ {
			x, ok := axisIndex(iv[int(p)*k+d], data.shape[d])
			if !ok {
				return nil, fmt.Errorf("index %d is out of range for axis %d of size %d", iv[int(p)*k+d], d, data.shape[d])
			}
			off += x * st[d]
		}
		for q := int64(0); q < slice; q++ {
			scatterOne(res, int(off+q), upd, int(p*slice+q), red)
		}
	}
	return []*value{res}, nil
}

func scatterOne(res *value, at int, upd *value, from int, red string) {
	if res.isFloat() {
		res.f[at] = roundFloat(res.dt, reduceOne(red, res.f[at], upd.f[from]))
		return
	}
	res.i[at] = wrapInt(res.dt, reduceOne(red, res.i[at], upd.i[from]))
}

// reduceOne is update y of x under a scatter reduction (none: y).
func reduceOne[T int64 | float64](red string, x, y T) T {
	switch red {
	case "add":
		return y + x
	case "mul":
		return y * x
	case "max":
		return max(x, y)
	case "min":
		return min(x, y)
	}
	return y
}

// scatterElementsEval folds ScatterElements (and the old Scatter).
func scatterElementsEval(c *ctx, in []*value) ([]*value, error) {
	if len(in) < 3 || in[1] == nil || in[2] == nil {
		return nil, nil
	}
	data, ind, upd := in[0], in[1], in[2]
	if !ind.shape.Equal(upd.shape) || len(ind.shape) != len(data.shape) || upd.dt != data.dt {
		return nil, nil
	}
	a, err := normAxis(c.attrs().Int("axis", 0), len(data.shape))
	if err != nil {
		return nil, err
	}
	res := &value{dt: data.dt, shape: data.shape.Clone(), f: append([]float64(nil), data.f...), i: append([]int64(nil), data.i...)}
	st := strides(data.shape)
	iv := ind.ints()
	red := c.attrs().Str("reduction", "none")
	var bad error
	coords(ind.shape, func(k int, co []int64) {
		if bad != nil {
			return
		}
		x, ok := axisIndex(iv[k], data.shape[a])
		if !ok {
			bad = fmt.Errorf("index %d is out of range for axis %d of size %d", iv[k], a, data.shape[a])
			return
		}
		j := int64(0)
		for d := range co {
			cd := co[d]
			if d == a {
				cd = x
			} else if cd >= data.shape[d] {
				bad = fmt.Errorf("indices %s exceed data %s", ind.shape, data.shape)
				return
			}
			j += cd * st[d]
		}
		scatterOne(res, int(j), upd, k, red)
	})
	if bad != nil {
		return nil, bad
	}
	return []*value{res}, nil
}

// cumSumEval folds CumSum with its exclusive and reverse attributes.
func cumSumEval(c *ctx, in []*value) ([]*value, error) {
	v := in[0]
	ax, err := in[1].ints(), error(nil)
	if len(ax) != 1 {
		return nil, fmt.Errorf("axis must hold one value, has %d", len(ax))
	}
	a, err := normAxis(ax[0], len(v.shape))
	if err != nil {
		return nil, err
	}
	excl, rev := c.attrs().Int("exclusive", 0) != 0, c.attrs().Int("reverse", 0) != 0
	res := newValue(v.dt, v.shape)
	st := strides(v.shape)
	n := v.shape[a]
	coords(v.shape, func(k int, co []int64) {
		if co[a] != 0 {
			return
		}
		base := flat(co, st)
		var accF float64
		var accI int64
		for q := int64(0); q < n; q++ {
			p := q
			if rev {
				p = n - 1 - q
			}
			j := base + int(p*st[a])
			if res.isFloat() {
				res.f[j] = roundFloat(res.dt, cumStep(&accF, v.f[j], excl))
			} else {
				res.i[j] = wrapInt(res.dt, cumStep(&accI, v.i[j], excl))
			}
		}
	})
	return []*value{res}, nil
}

// cumStep adds x to the running sum *acc and returns what CumSum writes
// for x: the sum before it when exclusive, with it otherwise.
func cumStep[T int64 | float64](acc *T, x T, excl bool) T {
	before := *acc
	*acc += x
	if excl {
		return before
	}
	return *acc
}

// argEval folds ArgMax and ArgMin.
func argEval(c *ctx, in []*value) ([]*value, error) {
	v := in[0]
	a, err := normAxis(c.attrs().Int("axis", 0), len(v.shape))
	if err != nil {
		return nil, err
	}
	last := c.attrs().Int("select_last_index", 0) != 0
	isMax := c.n.Op == "ArgMax"
	res := newValue(graph.Int64, c.outs[0].shape)
	st := strides(v.shape)
	vals := v.floats()
	n := v.shape[a]
	k := 0
	coords(v.shape, func(_ int, co []int64) {
		if co[a] != 0 {
			return
		}
		base := flat(co, st)
		best, bi := 0.0, int64(0)
		for q := int64(0); q < n; q++ {
			x := vals[base+int(q*st[a])]
			better := q == 0 || (isMax && x > best) || (!isMax && x < best) || (last && x == best)
			if better {
				best, bi = x, q
			}
		}
		res.i[k] = bi
		k++
	})
	return []*value{res}, nil
}

// triluEval folds Trilu.
func triluEval(c *ctx, in []*value) ([]*value, error) {
	v := in[0]
	var kk int64
	if len(in) > 1 && in[1] != nil {
		x := in[1].ints()
		if len(x) != 1 {
			return nil, fmt.Errorf("k must hold one value, has %d", len(x))
		}
		kk = x[0]
	}
	upper := c.attrs().Int("upper", 1) != 0
	res := &value{dt: v.dt, shape: v.shape.Clone(), f: append([]float64(nil), v.f...), i: append([]int64(nil), v.i...)}
	r := len(v.shape)
	coords(v.shape, func(k int, co []int64) {
		i, j := co[r-2], co[r-1]
		keep := j-i >= kk
		if !upper {
			keep = j-i <= kk
		}
		if !keep {
			if res.isFloat() {
				res.f[k] = 0
			} else {
				res.i[k] = 0
			}
		}
	})
	return []*value{res}, nil
}
