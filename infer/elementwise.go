package infer

import (
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// unarySpec describes an element-wise unary operator: FLOPs per element
// and, when it can be folded, its float and integer functions.
type unarySpec struct {
	flops int64
	f     func(a graph.Attrs) func(float64) float64
	i     func(a graph.Attrs) func(int64) int64
	// out, when set, fixes the output dtype (IsNaN → bool).
	out graph.DType
}

func fixed(f func(float64) float64) func(graph.Attrs) func(float64) float64 {
	return func(graph.Attrs) func(float64) float64 { return f }
}

func fixedI(f func(int64) int64) func(graph.Attrs) func(int64) int64 {
	return func(graph.Attrs) func(int64) int64 { return f }
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func unaryOps() map[string]unarySpec {
	relu := func(x float64) float64 { return math.Max(x, 0) }
	return map[string]unarySpec{
		"Abs":        {1, fixed(math.Abs), fixedI(func(x int64) int64 { return max(x, -x) }), 0},
		"Neg":        {1, fixed(func(x float64) float64 { return -x }), fixedI(func(x int64) int64 { return -x }), 0},
		"Relu":       {1, fixed(relu), fixedI(func(x int64) int64 { return max(x, 0) }), 0},
		"Sqrt":       {1, fixed(math.Sqrt), nil, 0},
		"Exp":        {1, fixed(math.Exp), nil, 0},
		"Log":        {1, fixed(math.Log), nil, 0},
		"Ceil":       {1, fixed(math.Ceil), nil, 0},
		"Floor":      {1, fixed(math.Floor), nil, 0},
		"Round":      {1, fixed(math.RoundToEven), nil, 0},
		"Sign":       {1, fixed(sign[float64]), fixedI(sign[int64]), 0},
		"Reciprocal": {1, fixed(func(x float64) float64 { return 1 / x }), nil, 0},
		"Sigmoid":    {4, fixed(sigmoid), nil, 0},
		"Tanh":       {4, fixed(math.Tanh), nil, 0},
		"Erf":        {4, fixed(math.Erf), nil, 0},
		"Sin":        {4, fixed(math.Sin), nil, 0},
		"Cos":        {4, fixed(math.Cos), nil, 0},
		"Tan":        {4, fixed(math.Tan), nil, 0},
		"Asin":       {4, fixed(math.Asin), nil, 0},
		"Acos":       {4, fixed(math.Acos), nil, 0},
		"Atan":       {4, fixed(math.Atan), nil, 0},
		"Sinh":       {4, fixed(math.Sinh), nil, 0},
		"Cosh":       {4, fixed(math.Cosh), nil, 0},
		"Asinh":      {4, fixed(math.Asinh), nil, 0},
		"Acosh":      {4, fixed(math.Acosh), nil, 0},
		"Atanh":      {4, fixed(math.Atanh), nil, 0},
		"Softplus":   {3, fixed(func(x float64) float64 { return math.Log1p(math.Exp(x)) }), nil, 0},
		"Softsign":   {2, fixed(func(x float64) float64 { return x / (1 + math.Abs(x)) }), nil, 0},
		"Mish":       {6, fixed(func(x float64) float64 { return x * math.Tanh(math.Log1p(math.Exp(x))) }), nil, 0},
		"Identity":   {0, fixed(func(x float64) float64 { return x }), fixedI(func(x int64) int64 { return x }), 0},
		"Not":        {1, nil, fixedI(func(x int64) int64 { return 1 - x }), 0},
		"BitwiseNot": {1, nil, fixedI(func(x int64) int64 { return ^x }), 0},
		"IsNaN": {1, fixed(func(x float64) float64 {
			if math.IsNaN(x) {
				return 1
			}
			return 0
		}), nil, graph.Bool},
		"IsInf": {1, func(a graph.Attrs) func(float64) float64 {
			pos, neg := a.Int("detect_positive", 1) != 0, a.Int("detect_negative", 1) != 0
			return func(x float64) float64 {
				if (pos && math.IsInf(x, 1)) || (neg && math.IsInf(x, -1)) {
					return 1
				}
				return 0
			}
		}, nil, graph.Bool},
		"LeakyRelu": {2, func(a graph.Attrs) func(float64) float64 {
			al := float64(a.Float("alpha", 0.01))
			return func(x float64) float64 {
				if x < 0 {
					return al * x
				}
				return x
			}
		}, nil, 0},
		"Elu": {3, func(a graph.Attrs) func(float64) float64 {
			al := float64(a.Float("alpha", 1))
			return func(x float64) float64 {
				if x < 0 {
					return al * (math.Exp(x) - 1)
				}
				return x
			}
		}, nil, 0},
		"Celu": {3, func(a graph.Attrs) func(float64) float64 {
			al := float64(a.Float("alpha", 1))
			return func(x float64) float64 { return math.Max(0, x) + math.Min(0, al*(math.Exp(x/al)-1)) }
		}, nil, 0},
		"Selu": {3, func(a graph.Attrs) func(float64) float64 {
			al := float64(a.Float("alpha", 1.67326319217681884765625))
			g := float64(a.Float("gamma", 1.05070102214813232421875))
			return func(x float64) float64 {
				if x <= 0 {
					return g * (al*math.Exp(x) - al)
				}
				return g * x
			}
		}, nil, 0},
		"ThresholdedRelu": {1, func(a graph.Attrs) func(float64) float64 {
			al := float64(a.Float("alpha", 1))
			return func(x float64) float64 {
				if x > al {
					return x
				}
				return 0
			}
		}, nil, 0},
		"HardSigmoid": {3, func(a graph.Attrs) func(float64) float64 {
			al, be := float64(a.Float("alpha", 0.2)), float64(a.Float("beta", 0.5))
			return func(x float64) float64 { return math.Max(0, math.Min(1, al*x+be)) }
		}, nil, 0},
		"HardSwish": {4, fixed(func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) }), nil, 0},
		"Shrink": {2, func(a graph.Attrs) func(float64) float64 {
			bias, l := float64(a.Float("bias", 0)), float64(a.Float("lambd", 0.5))
			return func(x float64) float64 {
				switch {
				case x < -l:
					return x + bias
				case x > l:
					return x - bias
				}
				return 0
			}
		}, nil, 0},
		"Swish": {5, func(a graph.Attrs) func(float64) float64 {
			al := float64(a.Float("alpha", 1))
			return func(x float64) float64 { return x * sigmoid(al*x) }
		}, nil, 0},
		"Gelu": {8, func(a graph.Attrs) func(float64) float64 {
			if a.Str("approximate", "none") == "tanh" {
				return func(x float64) float64 {
					return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
				}
			}
			return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
		}, nil, 0},
	}
}

// unaryRule builds the rule of an element-wise unary operator.
func unaryRule(s unarySpec) rule {
	return needRule(1, func(c *ctx) error {
		dt := c.dt(0)
		if s.out != graph.Undefined {
			dt = s.out
		}
		c.set(0, dt, c.shape(0))
		c.flops = sat(s.flops, c.outElems(0))
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		v := in[0]
		out := &value{dt: v.dt, shape: v.shape.Clone()}
		if s.out != graph.Undefined {
			out.dt = s.out
		}
		switch {
		case v.isFloat() && s.f != nil:
			f := s.f(c.attrs())
			vals := make([]float64, len(v.f))
			for k, x := range v.f {
				vals[k] = f(x)
			}
			if out.dt.IsFloat() {
				for k := range vals {
					vals[k] = roundFloat(out.dt, vals[k])
				}
				out.f = vals
			} else {
				out.i = make([]int64, len(vals))
				for k, x := range vals {
					out.i[k] = truncInt(x)
				}
			}
		case !v.isFloat() && s.i != nil:
			f := s.i(c.attrs())
			out.i = make([]int64, len(v.i))
			for k, x := range v.i {
				out.i[k] = wrapInt(out.dt, f(x))
			}
		default:
			return nil, nil
		}
		return []*value{out}, nil
	})
}

// binarySpec describes an element-wise binary operator.
type binarySpec struct {
	flops int64
	// cmp: the output is bool.
	cmp bool
	f   func(a graph.Attrs) func(x, y float64) float64
	// i returns ok=false when the result is undefined (division by zero).
	i func(a graph.Attrs) func(x, y int64) (int64, bool)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func binaryOps() map[string]binarySpec {
	ff := func(f func(x, y float64) float64) func(graph.Attrs) func(x, y float64) float64 {
		return func(graph.Attrs) func(x, y float64) float64 { return f }
	}
	ii := func(f func(x, y int64) (int64, bool)) func(graph.Attrs) func(x, y int64) (int64, bool) {
		return func(graph.Attrs) func(x, y int64) (int64, bool) { return f }
	}
	cmpF := func(f func(x, y float64) bool) func(graph.Attrs) func(x, y float64) float64 {
		return ff(func(x, y float64) float64 { return b2f(f(x, y)) })
	}
	cmpI := func(f func(x, y int64) bool) func(graph.Attrs) func(x, y int64) (int64, bool) {
		return ii(func(x, y int64) (int64, bool) { return b2i(f(x, y)), true })
	}
	return map[string]binarySpec{
		"Add": {1, false, ff(func(x, y float64) float64 { return x + y }), ii(func(x, y int64) (int64, bool) { return x + y, true })},
		"Sub": {1, false, ff(func(x, y float64) float64 { return x - y }), ii(func(x, y int64) (int64, bool) { return x - y, true })},
		"Mul": {1, false, ff(func(x, y float64) float64 { return x * y }), ii(func(x, y int64) (int64, bool) { return x * y, true })},
		"Div": {1, false, ff(func(x, y float64) float64 { return x / y }), ii(func(x, y int64) (int64, bool) {
			if y == 0 {
				return 0, false
			}
			return x / y, true
		})},
		"Pow": {1, false, ff(math.Pow), ii(func(x, y int64) (int64, bool) {
			if y < 0 || y > 64 {
				return 0, false
			}
			p := int64(1)
			for k := int64(0); k < y; k++ {
				p *= x
			}
			return p, true
		})},
		"Mod": {1, false, func(a graph.Attrs) func(x, y float64) float64 {
			if a.Int("fmod", 0) != 0 {
				return math.Mod
			}
			return func(x, y float64) float64 {
				r := math.Mod(x, y)
				if r != 0 && (r < 0) != (y < 0) {
					r += y
				}
				return r
			}
		}, func(a graph.Attrs) func(x, y int64) (int64, bool) {
			fm := a.Int("fmod", 0) != 0
			return func(x, y int64) (int64, bool) {
				if y == 0 {
					return 0, false
				}
				r := x % y
				if !fm && r != 0 && (r < 0) != (y < 0) {
					r += y
				}
				return r, true
			}
		}},
		"BitShift": {1, false, nil, func(a graph.Attrs) func(x, y int64) (int64, bool) {
			left := a.Str("direction", "") == "LEFT"
			return func(x, y int64) (int64, bool) {
				if y < 0 || y > 63 {
					return 0, true
				}
				if left {
					return x << uint(y), true
				}
				return int64(uint64(x) >> uint(y)), true
			}
		}},
		"BitwiseAnd": {1, false, nil, ii(func(x, y int64) (int64, bool) { return x & y, true })},
		"BitwiseOr":  {1, false, nil, ii(func(x, y int64) (int64, bool) { return x | y, true })},
		"BitwiseXor": {1, false, nil, ii(func(x, y int64) (int64, bool) { return x ^ y, true })},
		"And":        {1, true, nil, cmpI(func(x, y int64) bool { return x != 0 && y != 0 })},
		"Or":         {1, true, nil, cmpI(func(x, y int64) bool { return x != 0 || y != 0 })},
		"Xor":        {1, true, nil, cmpI(func(x, y int64) bool { return (x != 0) != (y != 0) })},
		"Equal":      {1, true, cmpF(func(x, y float64) bool { return x == y }), cmpI(func(x, y int64) bool { return x == y })},
		"Less":       {1, true, cmpF(func(x, y float64) bool { return x < y }), cmpI(func(x, y int64) bool { return x < y })},
		"Greater":    {1, true, cmpF(func(x, y float64) bool { return x > y }), cmpI(func(x, y int64) bool { return x > y })},
		"LessOrEqual": {1, true, cmpF(func(x, y float64) bool { return x <= y }),
			cmpI(func(x, y int64) bool { return x <= y })},
		"GreaterOrEqual": {1, true, cmpF(func(x, y float64) bool { return x >= y }),
			cmpI(func(x, y int64) bool { return x >= y })},
		"PRelu": {2, false, ff(func(x, s float64) float64 {
			if x < 0 {
				return s * x
			}
			return x
		}), ii(func(x, s int64) (int64, bool) {
			if x < 0 {
				return s * x, true
			}
			return x, true
		})},
	}
}

// binaryRule builds the rule of a broadcasting binary operator.
func binaryRule(op string, s binarySpec) rule {
	return needRule(2, func(c *ctx) error {
		out, err := broadcast(c.shape(0), c.shape(1))
		if err != nil {
			return err
		}
		if op != "Pow" && op != "BitShift" && op != "PRelu" && c.dt(0) != c.dt(1) {
			return fmt.Errorf("input types differ: %s and %s", c.dt(0), c.dt(1))
		}
		dt := c.dt(0)
		if s.cmp {
			dt = graph.Bool
		}
		c.set(0, dt, out)
		c.flops = sat(s.flops, c.outElems(0))
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		a, b := in[0], in[1]
		shape := c.outs[0].shape
		ia, ib := broadcastIndex(a.shape, shape), broadcastIndex(b.shape, shape)
		out := newValue(c.outs[0].dtype, shape)
		if a.isFloat() || b.isFloat() {
			if s.f == nil {
				return nil, nil
			}
			f := s.f(c.attrs())
			af, bf := a.floats(), b.floats()
			for k := range ia {
				r := f(af[ia[k]], bf[ib[k]])
				if out.isFloat() {
					out.f[k] = roundFloat(out.dt, r)
				} else {
					out.i[k] = wrapInt(out.dt, truncInt(r))
				}
			}
			return []*value{out}, nil
		}
		if s.i == nil {
			return nil, nil
		}
		f := s.i(c.attrs())
		for k := range ia {
			r, ok := f(a.i[ia[k]], b.i[ib[k]])
			if !ok {
				return nil, nil
			}
			out.i[k] = wrapInt(out.dt, r)
		}
		return []*value{out}, nil
	})
}

// variadicRule is Max, Min, Sum and Mean over any number of inputs.
func variadicRule(op string) rule {
	return needRule(1, func(c *ctx) error {
		var shapes []graph.Shape
		for i := 0; i < c.nin(); i++ {
			if !c.has(i) {
				continue
			}
			if c.dt(i) != c.dt(0) {
				return fmt.Errorf("input types differ: %s and %s", c.dt(0), c.dt(i))
			}
			shapes = append(shapes, c.shape(i))
		}
		out, err := broadcast(shapes...)
		if err != nil {
			return err
		}
		c.set(0, c.dt(0), out)
		c.flops = sat(int64(len(shapes)), c.outElems(0))
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		shape := c.outs[0].shape
		out := newValue(c.outs[0].dtype, shape)
		first := true
		cnt := 0
		for _, v := range in {
			if v == nil {
				continue
			}
			cnt++
			idx := broadcastIndex(v.shape, shape)
			vf, vi := v.f, v.i
			for k, j := range idx {
				if out.isFloat() {
					x := vf[j]
					switch {
					case first:
						out.f[k] = x
					case op == "Max":
						out.f[k] = math.Max(out.f[k], x)
					case op == "Min":
						out.f[k] = math.Min(out.f[k], x)
					default:
						out.f[k] += x
					}
				} else {
					x := vi[j]
					switch {
					case first:
						out.i[k] = x
					case op == "Max":
						out.i[k] = max(out.i[k], x)
					case op == "Min":
						out.i[k] = min(out.i[k], x)
					default:
						out.i[k] += x
					}
				}
			}
			first = false
		}
		if op == "Mean" {
			if !out.isFloat() {
				return nil, nil
			}
			for k := range out.f {
				out.f[k] /= float64(cnt)
			}
		}
		if out.isFloat() {
			for k := range out.f {
				out.f[k] = roundFloat(out.dt, out.f[k])
			}
		} else {
			for k := range out.i {
				out.i[k] = wrapInt(out.dt, out.i[k])
			}
		}
		return []*value{out}, nil
	})
}

func whereRule() rule {
	return needRule(3, func(c *ctx) error {
		out, err := broadcast(c.shape(0), c.shape(1), c.shape(2))
		if err != nil {
			return err
		}
		if c.dt(1) != c.dt(2) {
			return fmt.Errorf("X and Y types differ: %s and %s", c.dt(1), c.dt(2))
		}
		c.set(0, c.dt(1), out)
		c.flops = c.outElems(0)
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		shape := c.outs[0].shape
		ic, ix, iy := broadcastIndex(in[0].shape, shape), broadcastIndex(in[1].shape, shape), broadcastIndex(in[2].shape, shape)
		cond := in[0].ints()
		out := newValue(c.outs[0].dtype, shape)
		for k := range ic {
			src := in[2]
			j := iy[k]
			if cond[ic[k]] != 0 {
				src, j = in[1], ix[k]
			}
			if out.isFloat() {
				out.f[k] = src.f[j]
			} else {
				out.i[k] = src.i[j]
			}
		}
		return []*value{out}, nil
	})
}

func clipRule() rule {
	return needRule(1, func(c *ctx) error {
		for i := 1; i < 3; i++ {
			if c.has(i) && len(c.shape(i)) != 0 && prod(c.shape(i)) != 1 {
				return fmt.Errorf("input %d must be a scalar, has shape %s", i, c.shape(i))
			}
		}
		c.set(0, c.dt(0), c.shape(0))
		c.flops = sat(2, c.outElems(0))
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		v := in[0]
		lo, hi := math.Inf(-1), math.Inf(1)
		if c.opset < 11 {
			lo = float64(c.attrs().Float("min", float32(math.Inf(-1))))
			hi = float64(c.attrs().Float("max", float32(math.Inf(1))))
		}
		if len(in) > 1 && in[1] != nil && in[1].len() > 0 {
			lo = in[1].floats()[0]
		}
		if len(in) > 2 && in[2] != nil && in[2].len() > 0 {
			hi = in[2].floats()[0]
		}
		out := &value{dt: v.dt, shape: v.shape.Clone()}
		if v.isFloat() {
			out.f = make([]float64, len(v.f))
			for k, x := range v.f {
				out.f[k] = math.Min(math.Max(x, lo), hi)
			}
		} else {
			out.i = make([]int64, len(v.i))
			for k, x := range v.i {
				y := float64(x)
				if y < lo {
					x = int64(lo)
				}
				if y > hi {
					x = int64(hi)
				}
				out.i[k] = x
			}
		}
		return []*value{out}, nil
	})
}

func castRule() rule {
	return needRule(1, func(c *ctx) error {
		to := graph.DType(c.attrs().Int("to", 0))
		if c.n.Op == "CastLike" {
			if err := c.need(2); err != nil {
				return err
			}
			to = c.dt(1)
		}
		if to == graph.Undefined || to.String() == fmt.Sprintf("dtype(%d)", int32(to)) {
			return fmt.Errorf("bad target type %d", int32(to))
		}
		c.set(0, to, c.shape(0))
		c.flops = c.outElems(0)
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		return []*value{in[0].convert(c.outs[0].dtype)}, nil
	})
}

// dropoutRule: Dropout is the identity at inference; the optional mask is all true.
func dropoutRule() rule {
	return needRule(1, func(c *ctx) error {
		c.set(0, c.dt(0), c.shape(0))
		c.set(1, graph.Bool, c.shape(0))
		return nil
	}).folding(func(c *ctx, in []*value) ([]*value, error) {
		mask := newValue(graph.Bool, in[0].shape)
		for k := range mask.i {
			mask.i[k] = 1
		}
		return []*value{in[0], mask}, nil
	})
}

// sign is 1, -1 or 0 (for 0 and NaN).
func sign[T int64 | float64](x T) T {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
