package quant

import (
	"github.com/inlay-dev/inlay/graph"
)

// qdqOps are the operators QDQ quantization wraps (ONNX Runtime's QDQ
// registry, the ones that occur in the zoo and the real models).
var qdqOps = map[string]bool{
	"Conv": true, "MatMul": true, "Gemm": true, "Add": true, "Mul": true, "Concat": true,
	"GlobalAveragePool": true, "AveragePool": true, "MaxPool": true, "Sigmoid": true,
	"LeakyRelu": true, "Relu": true, "Clip": true,
}

// qdqSlots are the inputs of n that QDQ quantizes as activations, and the
// weight and bias inputs (-1 when absent); ok is false when n stays float.
func qdqSlots(e *editor, n *graph.Node, ranges Ranges) (acts []int, weight, bias int, ok bool) {
	weight, bias = -1, -1
	if !defaultDomain(n) || !qdqOps[n.Op] {
		return nil, -1, -1, false
	}
	ranged := func(name string) bool {
		r, ok := ranges[name]
		return ok && r.finite() && e.isActivation(name)
	}
	for _, o := range n.Outputs {
		if o == "" {
			continue
		}
		if !ranged(o) {
			return nil, -1, -1, false
		}
	}
	switch n.Op {
	case "Conv", "Gemm":
		w := e.konst(input(n, 1))
		if w == nil || w.DType != graph.Float32 || !ranged(input(n, 0)) || (n.Op == "Gemm" && len(w.Dims) != 2) {
			return nil, -1, -1, false
		}
		acts, weight = []int{0}, 1
		if b := e.konst(input(n, 2)); b != nil && biasFits(b, channelCount(w, weightAxis(n, w))) &&
			(n.Op == "Conv" || n.Attrs.Float("beta", 1) == 1) {
			bias = 2
		}
		return acts, weight, bias, true
	case "MatMul":
		if !ranged(input(n, 0)) {
			return nil, -1, -1, false
		}
		if w := e.konst(input(n, 1)); w != nil {
			if w.DType != graph.Float32 {
				return nil, -1, -1, false
			}
			return []int{0}, 1, -1, true
		}
		if !ranged(input(n, 1)) {
			return nil, -1, -1, false
		}
		return []int{0, 1}, -1, -1, true
	case "Add", "Mul", "Concat":
		for i, in := range n.Inputs {
			if e.konst(in) != nil {
				continue
			}
			if !ranged(in) {
				return nil, -1, -1, false
			}
			acts = append(acts, i)
		}
		return acts, -1, -1, len(acts) > 0
	case "MaxPool":
		if len(n.Outputs) > 1 && n.Outputs[1] != "" {
			return nil, -1, -1, false
		}
	}
	if !ranged(input(n, 0)) {
		return nil, -1, -1, false
	}
	return []int{0}, -1, -1, true
}

// input is n's input i, or "".
func input(n *graph.Node, i int) string {
	if i < len(n.Inputs) {
		return n.Inputs[i]
	}
	return ""
}

// qdq inserts QuantizeLinear → DequantizeLinear on the activations and
// outputs of every quantizable operator, and replaces its weight (and
// bias) by an integer initializer read through DequantizeLinear. As in
// ONNX Runtime's QDQ quantizer, every reader of a quantized tensor reads
// its DequantizeLinear output (nested graphs aside); a graph output keeps
// its float producer.
func qdq(e *editor, ranges Ranges) error {
	nodes, err := topo(e.m)
	if err != nil {
		return err
	}
	type slots struct {
		acts         []int
		weight, bias int
	}
	plan := map[*graph.Node]slots{}
	fq := map[string]bool{} // tensors that get a Q → DQ pair
	for _, n := range nodes {
		acts, w, b, ok := qdqSlots(e, n, ranges)
		if !ok {
			continue
		}
		plan[n] = slots{acts, w, b}
		for _, i := range acts {
			fq[n.Inputs[i]] = true
		}
		for _, o := range n.Outputs {
			if o != "" {
				fq[o] = true
			}
		}
	}
	dq := map[string]string{}   // tensor → its DequantizeLinear output
	act := map[string]qparams{} // tensor → its activation params
	pair := func(t string) {
		p := computeParams(ranges[t], graph.Uint8, false)
		s, z := e.params(t, p, graph.Uint8)
		q := e.fresh(t + "_QuantizeLinear_Output")
		d := e.fresh(t + "_DequantizeLinear_Output")
		e.emit("QuantizeLinear", "", t+"_QuantizeLinear", []string{t, s, z}, []string{q})
		e.emit("DequantizeLinear", "", t+"_DequantizeLinear", []string{q, s, z}, []string{d})
		dq[t], act[t] = d, p
	}
	for _, in := range e.m.Inputs {
		if fq[in] {
			pair(in)
		}
	}
	weights := map[string]string{} // weight name/axis → its DequantizeLinear output
	wparams := map[string]quantizedWeight{}
	for _, n := range nodes {
		sl, quantized := plan[n]
		if quantized {
			e.quantized++
			if sl.weight >= 0 {
				wname := n.Inputs[sl.weight]
				w := e.konst(wname)
				axis := weightAxis(n, w)
				key := wname + "\x00" + string(rune('0'+axis+1))
				if weights[key] == "" {
					qw, err := quantizeWeight(w, graph.Int8, axis, true)
					if err != nil {
						return err
					}
					qn := e.initializer(wname+"_quantized", qw.data)
					s, z := e.weightParams(wname, qw, graph.Int8)
					d := e.fresh(wname + "_DequantizeLinear_Output")
					dn := e.emit("DequantizeLinear", "", wname+"_DequantizeLinear", []string{qn, s, z}, []string{d})
					if axis >= 0 {
						dn.Attrs = graph.Attrs{intAttr("axis", int64(axis))}
					}
					weights[key], wparams[key] = d, qw
				}
				n.Inputs[sl.weight] = weights[key]
				if sl.bias >= 0 {
					bname := n.Inputs[sl.bias]
					qb, scales, err := quantizeBias(e.konst(bname), act[n.Inputs[0]].scale, wparams[key].params)
					if err != nil {
						return err
					}
					qn := e.initializer(bname+"_quantized", qb)
					s := e.initializer(bname+"_quantized_scale", encodeFloats(graph.Shape{int64(len(scales))}, scales))
					z := e.initializer(bname+"_quantized_zero_point", encodeInts(graph.Int32, graph.Shape{int64(len(scales))}, make([]int32, len(scales))))
					d := e.fresh(bname + "_DequantizeLinear_Output")
					e.emit("DequantizeLinear", "", bname+"_DequantizeLinear", []string{qn, s, z}, []string{d}, intAttr("axis", 0))
					n.Inputs[sl.bias] = d
				}
			}
		}
		for i, in := range n.Inputs {
			if d := dq[in]; d != "" {
				n.Inputs[i] = d
			}
		}
		e.keep(n)
		for _, o := range n.Outputs {
			if fq[o] && dq[o] == "" {
				pair(o)
			}
		}
	}
	return nil
}
