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
	return needRule(2, func(c *ctx) error {
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
	})
}

// matMulNBitsRule: A [..., K] times a block-quantised B of N×K given by
// the K and N attributes.
func matMulNBitsRule() rule {
	return rankRule(1, func(c *ctx, a graph.Shape) error {
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
	})
}
