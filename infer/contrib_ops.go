package infer

import (
	"errors"
	"fmt"

	"github.com/inlay-dev/inlay/graph"
)

// Rules for com.microsoft contrib operators that ONNX Runtime's
// optimisers and quantisation tools write into models.

// fusedMatMulRule: MatMul with transA/transB on the last two axes.
func fusedMatMulRule() rule {
	return rule{infer: func(c *ctx) error {
		if err := c.need(2); err != nil {
			return err
		}
		if c.attrs().Int("transBatchA", 0) != 0 || c.attrs().Int("transBatchB", 0) != 0 {
			return errors.New("transBatchA and transBatchB are not supported")
		}
		a, b := c.shape(0).Clone(), c.shape(1).Clone()
		if c.attrs().Int("transA", 0) != 0 && len(a) >= 2 {
			a[len(a)-1], a[len(a)-2] = a[len(a)-2], a[len(a)-1]
		}
		if c.attrs().Int("transB", 0) != 0 && len(b) >= 2 {
			b[len(b)-1], b[len(b)-2] = b[len(b)-2], b[len(b)-1]
		}
		out, k, err := matmulShape(a, b)
		if err != nil {
			return err
		}
		c.set(0, c.dt(0), out)
		c.macs = sat(prod(out), k)
		c.flops = 2 * c.macs
		return nil
	}}
}

// matMulNBitsRule: A [..., K] times a block-quantised B of N×K given by
// the K and N attributes.
func matMulNBitsRule() rule {
	return rule{infer: func(c *ctx) error {
		a, err := c.needRank(0, 1)
		if err != nil {
			return err
		}
		if err := c.need(3); err != nil {
			return err
		}
		k, n := c.attrs().Int("K", 0), c.attrs().Int("N", 0)
		if k <= 0 || n <= 0 || a[len(a)-1] != k {
			return fmt.Errorf("A %s does not match K=%d, N=%d", a, k, n)
		}
		if b := c.shape(1); len(b) == 0 || b[0] != n {
			return fmt.Errorf("packed B %s does not have N=%d rows", b, n)
		}
		out := a.Clone()
		out[len(out)-1] = n
		c.set(0, c.dt(0), out)
		c.macs = sat(prod(out), k)
		c.flops = 2 * c.macs
		return nil
	}}
}

// qgemmRule: A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp.
func qgemmRule() rule {
	return rule{infer: func(c *ctx) error {
		if err := c.need(6); err != nil {
			return err
		}
		a, b := c.shape(0), c.shape(3)
		if len(a) != 2 || len(b) != 2 {
			return fmt.Errorf("A %s and B %s must be rank 2", a, b)
		}
		m, k := a[0], a[1]
		if c.attrs().Int("transA", 0) != 0 {
			m, k = k, m
		}
		k2, n := b[0], b[1]
		if c.attrs().Int("transB", 0) != 0 {
			k2, n = n, k2
		}
		if k != k2 {
			return fmt.Errorf("inner dimensions %d and %d differ (A %s, B %s)", k, k2, a, b)
		}
		dt := graph.Float32
		if c.has(8) {
			dt = c.dt(8)
		}
		c.set(0, dt, graph.Shape{m, n})
		c.macs = sat(m, n, k)
		c.flops = 2 * c.macs
		return nil
	}}
}

// qlinearUnaryRule: X, X_scale, X_zp, Y_scale, Y_zp → Y like X.
func qlinearUnaryRule(flops int64) rule {
	return rule{infer: func(c *ctx) error {
		if err := c.need(4); err != nil {
			return err
		}
		c.set(0, c.dt(0), c.shape(0))
		c.flops = sat(flops, prod(c.shape(0)))
		return nil
	}}
}

// qlinearGlobalPoolRule: X, x_scale, x_zp, y_scale, y_zp; channels_last.
func qlinearGlobalPoolRule() rule {
	return rule{infer: func(c *ctx) error {
		x, err := c.needRank(0, 3)
		if err != nil {
			return err
		}
		if err := c.need(4); err != nil {
			return err
		}
		out := x.Clone()
		if c.attrs().Int("channels_last", 0) != 0 {
			for i := 1; i < len(out)-1; i++ {
				out[i] = 1
			}
		} else {
			for i := 2; i < len(out); i++ {
				out[i] = 1
			}
		}
		c.set(0, c.dt(0), out)
		c.flops = prod(x)
		return nil
	}}
}

// qlinearConcatRule: Y_scale, Y_zp, then (X, X_scale, X_zp) triples.
func qlinearConcatRule() rule {
	return rule{infer: func(c *ctx) error {
		if c.nin() < 5 || (c.nin()-2)%3 != 0 {
			return fmt.Errorf("needs Y_scale, Y_zp and (X, scale, zero point) triples, has %d inputs", c.nin())
		}
		var first graph.Shape
		out := graph.Shape(nil)
		a := 0
		for i := 2; i < c.nin(); i += 3 {
			if !c.has(i) {
				return fmt.Errorf("input %d is missing", i)
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
		return nil
	}}
}
