package hw

import (
	"fmt"
	"slices"

	"github.com/inlay-dev/inlay/graph"
)

// Supports returns nil when the processor can run the node, else an error
// that names the processor, the node and why: the operator is not in its
// support list, a tensor's element type, rank or dimension is beyond its
// limits, a kernel or pooling window is too large, or a shape is dynamic on
// a processor that needs static shapes. Constant inputs (weights) are
// checked for rank only.
func (p *Platform) Supports(proc ProcID, m *graph.Model, n *graph.Node) error {
	pr := p.Proc(proc)
	if pr == nil {
		return fmt.Errorf("hw: platform %q has no processor #%d", p.Name, proc)
	}
	if why := pr.Support.why(m, n); why != "" {
		return fmt.Errorf("hw: %s cannot run %s: %s", pr.Name, n, why)
	}
	return nil
}

func (s *Support) why(m *graph.Model, n *graph.Node) string {
	if len(s.Ops) > 0 && !slices.Contains(s.Ops, n.Op) {
		return "operator not supported"
	}
	if slices.Contains(s.Unsupported, n.Op) {
		return "operator not supported"
	}
	maxRank := s.MaxRank
	if r, ok := s.RankByOp[n.Op]; ok {
		maxRank = r
	}
	check := func(name string, output bool) string {
		if name == "" {
			return ""
		}
		t := m.Tensor(name)
		if t == nil {
			return ""
		}
		if maxRank > 0 && len(t.Shape) > maxRank {
			return fmt.Sprintf("tensor %q has rank %d (at most %d)", name, len(t.Shape), maxRank)
		}
		if t.IsConst() && !output {
			return ""
		}
		if s.StaticShapesOnly && !t.Shape.Known() {
			return fmt.Sprintf("tensor %q has a dynamic shape %s", name, t.Shape)
		}
		if s.MaxDim > 0 {
			for _, d := range t.Shape {
				if d > s.MaxDim {
					return fmt.Sprintf("tensor %q has a dimension of %d (at most %d)", name, d, s.MaxDim)
				}
			}
		}
		if len(s.TensorDTypes) > 0 && t.DType != graph.Undefined && !slices.Contains(s.TensorDTypes, t.DType) {
			return fmt.Sprintf("tensor %q is %s", name, t.DType)
		}
		return ""
	}
	for _, in := range n.Inputs {
		if why := check(in, false); why != "" {
			return why
		}
	}
	for _, out := range n.Outputs {
		if why := check(out, true); why != "" {
			return why
		}
	}
	switch n.Op {
	case "Conv", "ConvTranspose", "ConvInteger", "QLinearConv":
		if k := kernelSide(m, n); s.MaxConvKernel > 0 && k > s.MaxConvKernel {
			return fmt.Sprintf("kernel side %d (at most %d)", k, s.MaxConvKernel)
		}
	case "MaxPool", "AveragePool", "LpPool":
		if k := kernelSide(m, n); s.MaxPoolWindow > 0 && k > s.MaxPoolWindow {
			return fmt.Sprintf("pooling window side %d (at most %d)", k, s.MaxPoolWindow)
		}
	}
	return ""
}

// kernelSide is the largest side of a node's kernel_shape attribute or,
// for convolutions without one, of its weight's spatial dimensions.
func kernelSide(m *graph.Model, n *graph.Node) int64 {
	ks := n.Attrs.Ints("kernel_shape")
	if len(ks) == 0 && len(n.Inputs) > 1 {
		w := n.Inputs[1]
		if n.Op == "QLinearConv" && len(n.Inputs) > 3 {
			w = n.Inputs[3]
		}
		if t := m.Tensor(w); t != nil && len(t.Shape) > 2 {
			ks = t.Shape[2:]
		}
	}
	var k int64
	for _, x := range ks {
		if x > k {
			k = x
		}
	}
	return k
}
