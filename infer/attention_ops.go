package infer

import (
	"errors"
	"fmt"

	"github.com/inlay-dev/inlay/graph"
)

// splitHeads reads a rank-3 [B, S, heads·head] or rank-4 [B, heads, S, head]
// tensor as (batch, heads, seq, head).
func splitHeads(s graph.Shape, heads int64, what string) (b, n, seq, head int64, err error) {
	switch len(s) {
	case 4:
		return s[0], s[1], s[2], s[3], nil
	case 3:
		if heads <= 0 || s[2]%heads != 0 {
			return 0, 0, 0, 0, fmt.Errorf("%s %s: hidden size %d does not split into %d heads", what, s, s[2], heads)
		}
		return s[0], heads, s[1], s[2] / heads, nil
	}
	return 0, 0, 0, 0, fmt.Errorf("%s %s must be rank 3 or 4", what, s)
}

// attentionRule is ONNX Attention (opset 23): Q, K, V, attn_mask,
// past_key, past_value → Y, present_key, present_value, qk_matmul_output.
func attentionRule() rule {
	return needRule(3, func(c *ctx) error {
		qh, kvh := c.attrs().Int("q_num_heads", 0), c.attrs().Int("kv_num_heads", 0)
		b, nq, sq, hd, err := splitHeads(c.shape(0), qh, "Q")
		if err != nil {
			return err
		}
		bk, nk, sk, hk, err := splitHeads(c.shape(1), kvh, "K")
		if err != nil {
			return err
		}
		bv, nv, sv, hv, err := splitHeads(c.shape(2), kvh, "V")
		if err != nil {
			return err
		}
		if bk != b || bv != b || nv != nk || sv != sk || hk != hd || nk <= 0 || nq%nk != 0 {
			return fmt.Errorf("Q %s, K %s and V %s do not match", c.shape(0), c.shape(1), c.shape(2))
		}
		past := int64(0)
		if c.has(4) {
			p := c.shape(4)
			if len(p) != 4 || p[0] != b || p[1] != nk || p[3] != hd {
				return fmt.Errorf("past_key %s does not match [%d, %d, *, %d]", p, b, nk, hd)
			}
			past = p[2]
		}
		total := past + sk
		dt := c.dt(0)
		if len(c.shape(0)) == 3 {
			c.set(0, dt, graph.Shape{b, sq, sat(nq, hv)})
		} else {
			c.set(0, dt, graph.Shape{b, nq, sq, hv})
		}
		c.set(1, dt, graph.Shape{b, nk, total, hd})
		c.set(2, dt, graph.Shape{b, nk, total, hv})
		c.set(3, dt, graph.Shape{b, nq, sq, total})
		c.macs = sat(b, nq, sq, total, hd+hv)
		c.flops = satAdd(2*c.macs, sat(5, b, nq, sq, total))
		return nil
	})
}

// msMultiHeadAttentionRule is com.microsoft MultiHeadAttention with
// separate rank-3 query, key and value: output [B, S, v_hidden].
func msMultiHeadAttentionRule() rule {
	return needRule(3, func(c *ctx) error {
		q, k, v := c.shape(0), c.shape(1), c.shape(2)
		n := c.attrs().Int("num_heads", 0)
		if len(q) != 3 || len(k) != 3 || len(v) != 3 {
			return errors.New("only rank-3 query, key and value are supported")
		}
		if n <= 0 || q[2]%n != 0 || v[2]%n != 0 || q[2] != k[2] || q[0] != k[0] || k[0] != v[0] || k[1] != v[1] {
			return fmt.Errorf("query %s, key %s, value %s do not match with %d heads", q, k, v, n)
		}
		past := int64(0)
		if c.has(6) {
			if p := c.shape(6); len(p) == 4 {
				past = p[2]
			}
		}
		total := past + k[1]
		c.set(0, c.dt(0), graph.Shape{q[0], q[1], v[2]})
		c.set(1, c.dt(0), graph.Shape{q[0], n, total, q[2] / n})
		c.set(2, c.dt(0), graph.Shape{q[0], n, total, v[2] / n})
		c.macs = sat(q[0], q[1], total, q[2]+v[2])
		c.flops = satAdd(2*c.macs, sat(5, q[0], n, q[1], total))
		return nil
	})
}

// msAttentionRule is com.microsoft Attention: input [B, S, in], weights
// [in, q+k+v hidden], bias, mask_index, past [2, B, N, P, H] → output
// [B, S, v_hidden], present [2, B, N, P+S, H].
func msAttentionRule() rule {
	return needRule(2, func(c *ctx) error {
		x, w := c.shape(0), c.shape(1)
		if len(x) != 3 || len(w) != 2 || w[0] != x[2] {
			return fmt.Errorf("input %s and weights %s do not match", x, w)
		}
		n := c.attrs().Int("num_heads", 0)
		sizes := c.attrs().Ints("qkv_hidden_sizes")
		if sizes == nil {
			if w[1]%3 != 0 {
				return fmt.Errorf("weights %s do not hold three equal projections", w)
			}
			sizes = []int64{w[1] / 3, w[1] / 3, w[1] / 3}
		}
		if len(sizes) != 3 || sizes[0]+sizes[1]+sizes[2] != w[1] || n <= 0 || sizes[0]%n != 0 || sizes[2]%n != 0 {
			return fmt.Errorf("qkv_hidden_sizes %v do not fit weights %s and %d heads", sizes, w, n)
		}
		past := int64(0)
		if c.has(4) {
			if p := c.shape(4); len(p) == 5 {
				past = p[3]
			}
		}
		b, s := x[0], x[1]
		total := past + s
		c.set(0, c.dt(0), graph.Shape{b, s, sizes[2]})
		c.set(1, c.dt(0), graph.Shape{2, b, n, total, sizes[0] / n})
		c.macs = satAdd(sat(b, s, x[2], w[1]), sat(b, s, total, sizes[0]+sizes[2]))
		c.flops = satAdd(2*c.macs, sat(5, b, n, s, total))
		return nil
	})
}

// rmsNormRule is RMSNormalization (opset 23) and the SimplifiedLayerNormalization
// family ONNX Runtime writes: output as input 0.
func rmsNormRule() rule {
	return rankRule(1, func(c *ctx, x graph.Shape) error {
		a, err := normAxis(c.attrs().Int("axis", -1), len(x))
		if err != nil {
			return err
		}
		if c.has(1) {
			if _, err := broadcast(x[a:], c.shape(1)); err != nil {
				return fmt.Errorf("scale: %w", err)
			}
		}
		c.set(0, c.dt(0), x)
		stat := x.Clone()
		for i := a; i < len(stat); i++ {
			stat[i] = 1
		}
		c.set(1, graph.Float32, stat)
		c.flops = sat(4, prod(x))
		return nil
	})
}

// skipSimplifiedLayerNormRule: input, skip, gamma[, bias] → output, mean,
// inv_std_var, input_skip_bias_sum.
func skipSimplifiedLayerNormRule() rule {
	return skipLayerNormRule()
}
