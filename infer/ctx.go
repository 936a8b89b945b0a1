package infer

import (
	"errors"
	"fmt"

	"github.com/inlay-dev/inlay/graph"
)

// outSpec is what a rule says about one output.
type outSpec struct {
	set   bool
	dtype graph.DType
	shape graph.Shape
	data  *graph.Data
}

// ctx is one node under inference: its inputs, attributes and opset, and
// what the rule found.
type ctx struct {
	r     *runner
	n     *graph.Node
	opset int64
	outs  []outSpec
	macs  int64
	flops int64
}

// nin is the number of input slots (omitted optional ones included).
func (c *ctx) nin() int { return len(c.n.Inputs) }

// has reports whether input i is present.
func (c *ctx) has(i int) bool { return i >= 0 && i < len(c.n.Inputs) && c.n.Inputs[i] != "" }

// in returns input i, or nil when omitted.
func (c *ctx) in(i int) *graph.Tensor {
	if !c.has(i) {
		return nil
	}
	return c.r.m.Tensors[c.n.Inputs[i]]
}

// shape returns the shape of input i (nil when omitted).
func (c *ctx) shape(i int) graph.Shape {
	if t := c.in(i); t != nil {
		return t.Shape
	}
	return nil
}

// dt returns the dtype of input i (Undefined when omitted).
func (c *ctx) dt(i int) graph.DType {
	if t := c.in(i); t != nil {
		return t.DType
	}
	return graph.Undefined
}

func (c *ctx) attrs() graph.Attrs { return c.n.Attrs }

// need checks that the first k inputs are present.
func (c *ctx) need(k int) error {
	for i := 0; i < k; i++ {
		if !c.has(i) {
			return fmt.Errorf("needs at least %d inputs, input %d is missing", k, i)
		}
	}
	return nil
}

// needRank checks input i's rank against a minimum.
func (c *ctx) needRank(i, min int) (graph.Shape, error) {
	s := c.shape(i)
	if !c.has(i) {
		return nil, fmt.Errorf("input %d is missing", i)
	}
	if len(s) < min {
		return nil, fmt.Errorf("input %d (%q) has rank %d, need at least %d", i, c.n.Inputs[i], len(s), min)
	}
	return s, nil
}

// rankRule is a rule that needs input 0 of rank min or more and infers
// the rest with f, given that input's shape.
func rankRule(min int, f func(c *ctx, x graph.Shape) error) rule {
	return rule{infer: func(c *ctx) error {
		x, err := c.needRank(0, min)
		if err != nil {
			return err
		}
		return f(c, x)
	}}
}

// needRule is a rule that needs n inputs and infers the rest with f.
func needRule(n int, f func(c *ctx) error) rule {
	return rule{infer: func(c *ctx) error {
		if err := c.need(n); err != nil {
			return err
		}
		return f(c)
	}}
}

// folding is the rule with eval, which computes its outputs from
// constant inputs.
func (r rule) folding(eval func(c *ctx, in []*value) ([]*value, error)) rule {
	r.eval = eval
	return r
}

// set records output i's dtype and shape; outputs beyond the node's are ignored.
func (c *ctx) set(i int, dt graph.DType, s graph.Shape) {
	if i < 0 || i >= len(c.outs) {
		return
	}
	if s == nil {
		s = graph.Shape{}
	}
	c.outs[i] = outSpec{set: true, dtype: dt, shape: s.Clone()}
}

// setData records a folded value for output i (its shape and dtype too).
func (c *ctx) setData(i int, v *value) {
	if i < 0 || i >= len(c.outs) {
		return
	}
	c.outs[i] = outSpec{set: true, dtype: v.dt, shape: v.shape.Clone(), data: encode(v)}
}

// outElems is the element count of output i (0 when unknown).
func (c *ctx) outElems(i int) int64 {
	if i < 0 || i >= len(c.outs) {
		return 0
	}
	n, _ := c.outs[i].shape.Elements()
	return n
}

// inElems is the element count of input i (0 when omitted).
func (c *ctx) inElems(i int) int64 {
	n, _ := c.shape(i).Elements()
	if !c.has(i) {
		return 0
	}
	return n
}

// value decodes input i, which must be a constant with data.
func (c *ctx) value(i int) (*value, error) {
	t := c.in(i)
	if t == nil {
		return nil, fmt.Errorf("input %d is missing", i)
	}
	if !t.IsConst() || t.Data == nil || t.Data.Raw == nil {
		return nil, fmt.Errorf("input %d (%q) must be a constant with known values (its values decide the output shape)", i, t.Name)
	}
	if v, ok := c.r.cache[t.Name]; ok {
		return v, nil
	}
	n, _ := t.Shape.Elements()
	if n > MaxFoldElements {
		return nil, fmt.Errorf("input %d (%q) is too large (%d elements) to read its values", i, t.Name, n)
	}
	v, err := decode(t.DType, t.Shape, t.Data.Raw)
	if err != nil {
		return nil, fmt.Errorf("input %d (%q): %w", i, t.Name, err)
	}
	c.r.cache[t.Name] = v
	return v, nil
}

// ints reads constant input i as integers.
func (c *ctx) ints(i int) ([]int64, error) {
	v, err := c.value(i)
	if err != nil {
		return nil, err
	}
	return v.ints(), nil
}

// floats reads constant input i as floats.
func (c *ctx) floats(i int) ([]float64, error) {
	v, err := c.value(i)
	if err != nil {
		return nil, err
	}
	return v.floats(), nil
}

// scalarInt reads constant input i as one integer.
func (c *ctx) scalarInt(i int) (int64, error) {
	x, err := c.ints(i)
	if err != nil {
		return 0, err
	}
	if len(x) != 1 {
		return 0, fmt.Errorf("input %d must hold one value, has %d", i, len(x))
	}
	return x[0], nil
}

// isConstData reports whether input i is a constant whose values are known.
func (c *ctx) isConstData(i int) bool {
	t := c.in(i)
	return t != nil && t.IsConst() && t.Data != nil && t.Data.Raw != nil
}

// foldable reports whether every present input is a small constant with
// data and every output is small.
func (c *ctx) foldable() bool {
	any := false
	for i := range c.n.Inputs {
		if !c.has(i) {
			continue
		}
		any = true
		if !c.isConstData(i) || !foldableDType(c.dt(i)) || c.inElems(i) > MaxFoldElements {
			return false
		}
	}
	if !any {
		return false
	}
	for i := range c.outs {
		if c.n.Outputs[i] != "" && (!foldableDType(c.outs[i].dtype) || c.outElems(i) > MaxFoldElements) {
			return false
		}
	}
	return true
}

// inputValues decodes every present input (nil entries for omitted ones).
func (c *ctx) inputValues() ([]*value, error) {
	vals := make([]*value, len(c.n.Inputs))
	for i := range c.n.Inputs {
		if !c.has(i) {
			continue
		}
		v, err := c.value(i)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// setFolded stores evaluated outputs, checking them against the inferred
// dtypes and shapes.
func (c *ctx) setFolded(res []*value) error {
	for i := range c.outs {
		if c.n.Outputs[i] == "" {
			continue
		}
		if i >= len(res) || res[i] == nil {
			return fmt.Errorf("internal: folding produced no value for output %d", i)
		}
		v := res[i]
		if v.dt != c.outs[i].dtype || !v.shape.Equal(c.outs[i].shape) {
			return fmt.Errorf("internal: folded output %d is %s %s, inferred %s %s", i, v.dt, v.shape, c.outs[i].dtype, c.outs[i].shape)
		}
		c.setData(i, v)
	}
	return nil
}

// allFolded reports whether every output got a folded value.
func (c *ctx) allFolded() bool {
	any := false
	for i, o := range c.outs {
		if c.n.Outputs[i] == "" {
			continue
		}
		any = true
		if o.data == nil {
			return false
		}
	}
	return any
}

// work fills the byte counts of the node from its tensors.
func (c *ctx) work() graph.Work {
	w := graph.Work{MACs: c.macs, FLOPs: c.flops}
	for i := range c.n.Inputs {
		t := c.in(i)
		if t == nil {
			continue
		}
		if t.IsConst() {
			w.WeightBytes += t.Bytes()
			n, _ := t.Shape.Elements()
			w.Params += n
		} else {
			w.ActBytesIn += t.Bytes()
		}
		if w.DType == graph.Undefined && (t.DType.IsFloat() || isInteger(t.DType)) {
			w.DType = t.DType
		}
	}
	for i, o := range c.outs {
		if c.n.Outputs[i] == "" {
			continue
		}
		n, _ := o.shape.Elements()
		w.BytesOut += n * int64(o.dtype.Size())
		if w.DType == graph.Undefined && (o.dtype.IsFloat() || isInteger(o.dtype)) {
			w.DType = o.dtype
		}
	}
	return w
}

func isInteger(d graph.DType) bool {
	switch d {
	case graph.Int8, graph.Int16, graph.Int32, graph.Int64, graph.Uint8, graph.Uint16, graph.Uint32, graph.Uint64, graph.Int4, graph.Uint4:
		return true
	}
	return false
}

// axis normalises an axis attribute against a rank.
func normAxis(a int64, rank int) (int, error) {
	if a < -int64(rank) || a >= int64(rank) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", a, rank)
	}
	if a < 0 {
		a += int64(rank)
	}
	return int(a), nil
}

// normAxes normalises and checks a list of axes (no duplicates).
func normAxes(axes []int64, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := make([]bool, rank)
	for i, a := range axes {
		x, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[x] {
			return nil, fmt.Errorf("axis %d appears twice", a)
		}
		seen[x] = true
		out[i] = x
	}
	return out, nil
}

// mul multiplies non-negative sizes, reporting overflow as an error.
func mul(a, b int64) (int64, error) {
	if a < 0 || b < 0 {
		return 0, errors.New("negative size")
	}
	if a != 0 && b > (1<<63-1)/a {
		return 0, errors.New("size overflows int64")
	}
	return a * b, nil
}

// sat multiplies counts for work figures, saturating instead of overflowing.
func sat(xs ...int64) int64 {
	p := int64(1)
	for _, x := range xs {
		if x <= 0 {
			return 0
		}
		if p > (1<<63-1)/x {
			return 1<<63 - 1
		}
		p *= x
	}
	return p
}

// satAdd adds counts, saturating.
func satAdd(a, b int64) int64 {
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}

// prod is the element count of a shape (0 when it overflows).
func prod(s graph.Shape) int64 {
	n, _ := s.Elements()
	return n
}

// broadcast is ONNX multidirectional broadcasting of shapes.
func broadcast(shapes ...graph.Shape) (graph.Shape, error) {
	rank := 0
	for _, s := range shapes {
		if len(s) > rank {
			rank = len(s)
		}
	}
	out := make(graph.Shape, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for j, d := range s {
			o := out[off+j]
			switch {
			case d == o || d == 1:
			case o == 1:
				out[off+j] = d
			default:
				return nil, fmt.Errorf("shapes %s are not broadcastable", shapeList(shapes))
			}
		}
	}
	return out, nil
}

func shapeList(shapes []graph.Shape) string {
	s := ""
	for i, x := range shapes {
		if i > 0 {
			s += " and "
		}
		s += x.String()
	}
	return s
}
