package quant

import (
	"github.com/inlay-dev/inlay/graph"
)

// qval is the quantized (uint8) form of a float tensor.
type qval struct {
	name, scale, zero string
	p                 qparams
}

// qlinear maps the float operators QOperator quantization replaces to
// their operator-oriented form (name and domain).
var qlinear = map[string][2]string{
	"Conv": {"QLinearConv", ""}, "MatMul": {"QLinearMatMul", ""}, "Gemm": {"QGemm", msDomain},
	"Add": {"QLinearAdd", msDomain}, "Mul": {"QLinearMul", msDomain},
	"Sigmoid": {"QLinearSigmoid", msDomain}, "LeakyRelu": {"QLinearLeakyRelu", msDomain},
	"GlobalAveragePool": {"QLinearGlobalAveragePool", msDomain},
	"AveragePool":       {"QLinearAveragePool", msDomain}, "Concat": {"QLinearConcat", msDomain},
}

// direct8Bit are the operators that run on the quantized tensor itself,
// its scale and zero point passing through (ONNX Runtime's Direct8BitOp).
var direct8Bit = map[string]bool{
	"MaxPool": true, "Reshape": true, "Transpose": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true,
}

// qop holds the state of a QOperator rewrite.
type qop struct {
	e       *editor
	ranges  Ranges
	q       map[string]qval // tensor → its quantized form
	isFloat map[string]bool // tensor → its float value is computed
	outs    map[string]Range
}

// qoperator rewrites the model into the operator-oriented form.
func qoperator(e *editor, ranges Ranges) error {
	nodes, err := topo(e.m)
	if err != nil {
		return err
	}
	s := &qop{e: e, ranges: ranges, q: map[string]qval{}, isFloat: map[string]bool{}, outs: map[string]Range{}}
	for _, in := range e.m.Inputs {
		s.isFloat[in] = true
	}
	for name, t := range e.m.Tensors {
		if t.IsConst() {
			s.isFloat[name] = true
		}
	}
	// A Relu, or a Clip from 0, right after an operator that will be
	// quantized and that nothing else reads folds into that operator's
	// output range (its quantized output then saturates as the
	// activation would).
	folds := map[*graph.Node]bool{}
	isOutput := map[string]bool{}
	for _, o := range e.m.Outputs {
		isOutput[o] = true
	}
	for _, n := range nodes {
		if !defaultDomain(n) || (n.Op != "Relu" && n.Op != "Clip") || len(n.Outputs) != 1 {
			continue
		}
		if n.Op == "Clip" {
			lo := e.konst(input(n, 1))
			if v, err := float32s(lo); err != nil || len(v) != 1 || v[0] != 0 || (input(n, 2) != "" && e.konst(input(n, 2)) == nil) {
				continue
			}
		}
		x := n.Inputs[0]
		t := e.m.Tensors[x]
		r, ok := ranges[n.Outputs[0]]
		if t == nil || t.Producer < 0 || len(t.Consumers) != 1 || isOutput[x] || !ok || !r.finite() {
			continue
		}
		if _, ok := qlinear[e.m.Nodes[t.Producer].Op]; !ok {
			continue
		}
		s.outs[x] = r
		folds[n] = true
	}
	for _, n := range nodes {
		if folds[n] {
			if qv, ok := s.q[n.Inputs[0]]; ok && !s.isFloat[n.Inputs[0]] {
				s.q[n.Outputs[0]] = qv // the producer's output range is this node's
				continue
			}
		}
		if s.quantize(n) {
			e.quantized++
			continue
		}
		if s.direct(n) {
			continue
		}
		for _, in := range n.Reads() {
			s.needFloat(in)
		}
		e.keep(n)
		for _, o := range n.Outputs {
			s.isFloat[o] = true
		}
	}
	for _, o := range e.m.Outputs {
		s.needFloat(o)
	}
	return nil
}

// rangeOf is the range a tensor is quantized with.
func (s *qop) rangeOf(name string) (Range, bool) {
	if r, ok := s.outs[name]; ok {
		return r, true
	}
	r, ok := s.ranges[name]
	return r, ok && r.finite()
}

// canQuantize reports whether get(name) will succeed.
func (s *qop) canQuantize(name string) bool {
	if _, ok := s.q[name]; ok {
		return true
	}
	if d := s.e.konst(name); d != nil {
		return d.DType == graph.Float32
	}
	_, ok := s.rangeOf(name)
	return ok && s.e.isActivation(name)
}

// get returns the quantized form of a tensor, adding a QuantizeLinear (for
// an activation) or a quantized initializer (for a constant) the first
// time.
func (s *qop) get(name string) qval {
	if qv, ok := s.q[name]; ok {
		return qv
	}
	e := s.e
	if d := e.konst(name); d != nil {
		qw, _ := quantizeWeight(d, graph.Uint8, -1, false)
		sc, z := e.params(name, qw.params[0], graph.Uint8)
		qv := qval{name: e.initializer(name+"_quantized", qw.data), scale: sc, zero: z, p: qw.params[0]}
		s.q[name] = qv
		return qv
	}
	s.needFloat(name)
	r, _ := s.rangeOf(name)
	p := computeParams(r, graph.Uint8, false)
	sc, z := e.params(name, p, graph.Uint8)
	out := e.fresh(name + "_quantized")
	e.emit("QuantizeLinear", "", name+"_QuantizeLinear", []string{name, sc, z}, []string{out})
	qv := qval{name: out, scale: sc, zero: z, p: p}
	s.q[name] = qv
	return qv
}

// output sets up the quantized form of a quantized operator's output.
func (s *qop) output(name string) qval {
	r, _ := s.rangeOf(name)
	p := computeParams(r, graph.Uint8, false)
	sc, z := s.e.params(name, p, graph.Uint8)
	qv := qval{name: s.e.fresh(name + "_quantized"), scale: sc, zero: z, p: p}
	s.q[name] = qv
	return qv
}

// needFloat makes a tensor's float value available, adding a
// DequantizeLinear of its quantized form where only that exists.
func (s *qop) needFloat(name string) {
	if name == "" || s.isFloat[name] {
		return
	}
	qv, ok := s.q[name]
	if !ok {
		return // computed by a float node not yet reached: cannot happen in topological order
	}
	s.e.emit("DequantizeLinear", "", name+"_DequantizeLinear", []string{qv.name, qv.scale, qv.zero}, []string{name})
	s.isFloat[name] = true
}

// direct runs a data-movement operator (or MaxPool) on the quantized form
// of its input when that is what exists.
func (s *qop) direct(n *graph.Node) bool {
	if !defaultDomain(n) || !direct8Bit[n.Op] || len(n.Outputs) != 1 || !s.e.isActivation(n.Outputs[0]) {
		return false
	}
	qv, ok := s.q[n.Inputs[0]]
	if !ok || s.isFloat[n.Inputs[0]] {
		return false
	}
	out := s.e.fresh(n.Outputs[0] + "_quantized")
	ins := append([]string{qv.name}, n.Inputs[1:]...)
	s.e.emit(n.Op, "", n.Name+"_quant", ins, []string{out}, n.Attrs...)
	s.q[n.Outputs[0]] = qval{name: out, scale: qv.scale, zero: qv.zero, p: qv.p}
	return true
}

// quantize replaces n by its operator-oriented form when it has one and
// every value it needs can be quantized.
func (s *qop) quantize(n *graph.Node) bool {
	e := s.e
	op, ok := qlinear[n.Op]
	if !defaultDomain(n) || !ok || len(n.Outputs) != 1 || !e.isActivation(n.Outputs[0]) {
		return false
	}
	out := n.Outputs[0]
	if _, ok := s.rangeOf(out); !ok {
		return false
	}
	act := func(i int) bool { return e.isActivation(input(n, i)) && s.canQuantize(input(n, i)) }
	var ins []string
	var attrs graph.Attrs
	switch n.Op {
	case "Conv", "Gemm":
		w := e.konst(input(n, 1))
		if w == nil || w.DType != graph.Float32 || !act(0) {
			return false
		}
		axis := weightAxis(n, w)
		b := e.konst(input(n, 2))
		if input(n, 2) != "" && (!biasFits(b, channelCount(w, axis)) || n.Attrs.Float("beta", 1) != 1) {
			return false
		}
		if n.Op == "Gemm" {
			for _, a := range n.Attrs {
				if a.Name == "alpha" || a.Name == "transA" || a.Name == "transB" {
					attrs = append(attrs, a)
				}
			}
		} else {
			attrs = n.Attrs
		}
		x := s.get(n.Inputs[0])
		qw, err := quantizeWeight(w, graph.Int8, axis, true)
		if err != nil {
			return false
		}
		ws, wz := e.weightParams(n.Inputs[1], qw, graph.Int8)
		wq := e.initializer(n.Inputs[1]+"_quantized", qw.data)
		y := s.output(out)
		bias := ""
		if b != nil {
			alpha := float32(1)
			if n.Op == "Gemm" {
				alpha = n.Attrs.Float("alpha", 1)
			}
			qb, _, err := quantizeBias(b, alpha*x.p.scale, qw.params)
			if err != nil {
				return false
			}
			bias = e.initializer(n.Inputs[2]+"_quantized", qb)
		}
		ins = []string{x.name, x.scale, x.zero, wq, ws, wz}
		if n.Op == "Conv" {
			ins = append(ins, y.scale, y.zero)
			if bias != "" {
				ins = append(ins, bias)
			}
		} else {
			ins = append(ins, bias, y.scale, y.zero)
		}
	case "MatMul":
		if !act(0) {
			return false
		}
		a := s.get(n.Inputs[0])
		var bq, bs, bz string
		if w := e.konst(input(n, 1)); w != nil {
			if w.DType != graph.Float32 {
				return false
			}
			qw, err := quantizeWeight(w, graph.Int8, weightAxis(n, w), true)
			if err != nil {
				return false
			}
			bs, bz = e.weightParams(n.Inputs[1], qw, graph.Int8)
			bq = e.initializer(n.Inputs[1]+"_quantized", qw.data)
		} else {
			if !act(1) {
				return false
			}
			b := s.get(n.Inputs[1])
			bq, bs, bz = b.name, b.scale, b.zero
		}
		y := s.output(out)
		ins = []string{a.name, a.scale, a.zero, bq, bs, bz, y.scale, y.zero}
	case "Add", "Mul":
		if !s.canQuantize(input(n, 0)) || !s.canQuantize(input(n, 1)) || (!act(0) && !act(1)) {
			return false
		}
		a, b := s.get(n.Inputs[0]), s.get(n.Inputs[1])
		y := s.output(out)
		ins = []string{a.name, a.scale, a.zero, b.name, b.scale, b.zero, y.scale, y.zero}
	case "Concat":
		for i := range n.Inputs {
			if !s.canQuantize(n.Inputs[i]) {
				return false
			}
		}
		var parts []string
		for _, in := range n.Inputs {
			x := s.get(in)
			parts = append(parts, x.name, x.scale, x.zero)
		}
		y := s.output(out)
		ins = append([]string{y.scale, y.zero}, parts...)
		attrs = n.Attrs
	case "AveragePool":
		if n.Attrs.Get("dilations") != nil || !act(0) {
			return false
		}
		fallthrough
	default: // Sigmoid, LeakyRelu, GlobalAveragePool
		if !act(0) {
			return false
		}
		x := s.get(n.Inputs[0])
		y := s.output(out)
		ins = []string{x.name, x.scale, x.zero, y.scale, y.zero}
		attrs = n.Attrs
		if n.Op == "GlobalAveragePool" || n.Op == "AveragePool" {
			attrs = append(append(graph.Attrs{}, n.Attrs...), intAttr("channels_last", 0))
		}
	}
	e.emit(op[0], op[1], n.Name+"_quant", ins, []string{s.q[out].name}, attrs...)
	return true
}
