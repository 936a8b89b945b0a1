package onnx

import (
	"errors"
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/infer"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// nester implements infer.Options.Nested: it converts a node's nested
// GraphProto into a graph.Model of its own, whose inputs are the values the
// graph reads from the enclosing scope (constants stay constants, so shape
// arithmetic still folds), runs infer.Run on it with a nester one level
// deeper, and reports the node's outputs and work.
//
//   - If: a condition known at load time picks its branch. Otherwise both
//     branches are inferred; when one fails (a branch may be invalid for
//     shapes it is never taken with) the other is used; when both succeed
//     they must agree on output types and shapes, and the costlier by FLOPs
//     is charged.
//   - Loop: the trip count M must be a constant; the body's work counts M
//     times (an early exit through the condition is ignored, so this is an
//     upper bound). Loop-carried values must keep their shapes.
//   - Scan (opset 9 and later): the body's work counts once per element of
//     the scan axis.
type nester struct {
	depth  int // nesting level of the graphs this nester builds
	opsets []graph.OpsetImport
	ir     int64
}

// typed is the dtype and shape a body input gets.
type typed struct {
	dtype graph.DType
	shape graph.Shape
}

// subResult is one inferred nested graph: its outputs and total work.
type subResult struct {
	dtypes []graph.DType
	shapes []graph.Shape
	work   graph.Work
}

func (ns *nester) nested(n *graph.Node, scope infer.Scope) (infer.NestedResult, error) {
	if ns.depth > maxDepth {
		return infer.NestedResult{}, fmt.Errorf("graphs are nested more than %d levels deep", maxDepth)
	}
	var r subResult
	var err error
	switch n.Op {
	case "If":
		r, err = ns.ifNode(n, scope)
	case "Loop":
		r, err = ns.loop(n, scope)
	case "Scan":
		r, err = ns.scan(n, scope)
	default:
		return infer.NestedResult{}, fmt.Errorf("graph attributes of %s are not supported", n.Op)
	}
	if err != nil {
		return infer.NestedResult{}, err
	}
	return infer.NestedResult{DTypes: r.dtypes, Shapes: r.shapes, Work: r.work}, nil
}

// run infers the graph held in attribute attr of n. inputs type the
// graph's declared inputs, in order (nil for If branches, which have none).
func (ns *nester) run(n *graph.Node, attr string, scope infer.Scope, inputs []typed) (subResult, error) {
	a := n.Attrs.Get(attr)
	if a == nil || a.Kind != graph.AttrGraph {
		return subResult{}, fmt.Errorf("attribute %q (a graph) is missing", attr)
	}
	g := &onnxpb.GraphProto{}
	if err := proto.Unmarshal(a.Graph, g); err != nil {
		return subResult{}, fmt.Errorf("attribute %q: %v", attr, err)
	}
	sub := &graph.Model{Name: n.Name + "/" + attr, IRVersion: ns.ir, Opsets: ns.opsets}
	built, err := buildGraph(sub, g, ns.depth)
	if err != nil {
		return subResult{}, fmt.Errorf("%s: %w", attr, err)
	}
	if len(built.inputs) != len(inputs) || len(g.GetInput()) != len(inputs) {
		return subResult{}, fmt.Errorf("%s: the graph has %d input(s), %s gives it %d", attr, len(g.GetInput()), n.Op, len(inputs))
	}
	for i, d := range built.inputs {
		if d.dtype != graph.Undefined && d.dtype != inputs[i].dtype {
			return subResult{}, fmt.Errorf("%s: input %q is declared %s but receives %s", attr, d.name, d.dtype, inputs[i].dtype)
		}
		t := sub.Tensors[d.name]
		t.DType, t.Shape = inputs[i].dtype, inputs[i].shape.Clone()
	}
	for _, name := range built.free {
		st := scope[name]
		if st == nil {
			return subResult{}, fmt.Errorf("%s reads %q, which no enclosing graph defines", attr, name)
		}
		t := &graph.Tensor{Name: name, DType: st.DType, Shape: st.Shape.Clone(), Kind: st.Kind, Data: st.Data, Producer: -1}
		if !st.IsConst() || st.Data == nil {
			t.Kind, t.Data = graph.Input, nil
			sub.Inputs = append(sub.Inputs, name)
		}
		sub.Tensors[name] = t
	}
	deeper := &nester{depth: ns.depth + 1, opsets: ns.opsets, ir: ns.ir}
	if err := infer.Run(sub, infer.Options{Nested: deeper.nested}); err != nil {
		return subResult{}, fmt.Errorf("%s: %w", attr, err)
	}
	if err := checkOutputs(sub, built.outputs); err != nil {
		return subResult{}, fmt.Errorf("%s: %w", attr, err)
	}
	r := subResult{work: sub.Totals()}
	for _, o := range sub.Outputs {
		t := sub.Tensors[o]
		r.dtypes = append(r.dtypes, t.DType)
		r.shapes = append(r.shapes, t.Shape.Clone())
	}
	return r, nil
}

// constScalar returns the first element of a constant tensor as an int64
// (booleans and integers; floats truncated).
func constScalar(t *graph.Tensor) (int64, bool) {
	if t == nil || !t.IsConst() || t.Data == nil || t.Data.Raw == nil {
		return 0, false
	}
	n, ok := t.Shape.Elements()
	if !ok || n != 1 {
		return 0, false
	}
	raw := t.Data.Raw
	sz := t.DType.Size()
	if len(raw) < sz {
		return 0, false
	}
	le := func(k int) uint64 {
		var v uint64
		for i := k - 1; i >= 0; i-- {
			v = v<<8 | uint64(raw[i])
		}
		return v
	}
	switch t.DType {
	case graph.Bool, graph.Uint8, graph.Uint16, graph.Uint32, graph.Uint64:
		v := le(sz)
		if v > math.MaxInt64 {
			return math.MaxInt64, true
		}
		return int64(v), true
	case graph.Int8:
		return int64(int8(raw[0])), true
	case graph.Int16:
		return int64(int16(le(2))), true
	case graph.Int32:
		return int64(int32(le(4))), true
	case graph.Int64:
		return int64(le(8)), true
	case graph.Float32:
		f := math.Float32frombits(uint32(le(4)))
		if f != f || math.Abs(float64(f)) > math.MaxInt64/2 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

func (ns *nester) ifNode(n *graph.Node, scope infer.Scope) (subResult, error) {
	if len(n.Inputs) != 1 || n.Inputs[0] == "" {
		return subResult{}, fmt.Errorf("If needs one condition input, has %d", len(n.Inputs))
	}
	check := func(r subResult, err error) (subResult, error) {
		if err == nil && len(r.shapes) != len(n.Outputs) {
			err = fmt.Errorf("the branch has %d output(s), the If node %d", len(r.shapes), len(n.Outputs))
		}
		return r, err
	}
	if c, ok := constScalar(scope[n.Inputs[0]]); ok {
		branch := "else_branch"
		if c != 0 {
			branch = "then_branch"
		}
		return check(ns.run(n, branch, scope, nil))
	}
	rt, errT := check(ns.run(n, "then_branch", scope, nil))
	re, errE := check(ns.run(n, "else_branch", scope, nil))
	switch {
	case errT != nil && errE != nil:
		return subResult{}, errT
	case errT != nil:
		return re, nil
	case errE != nil:
		return rt, nil
	}
	for i := range rt.shapes {
		if rt.dtypes[i] != re.dtypes[i] || !rt.shapes[i].Equal(re.shapes[i]) {
			return subResult{}, fmt.Errorf("the condition is not known at load time and the branches disagree on output %d: then %s %s, else %s %s",
				i, rt.dtypes[i], rt.shapes[i], re.dtypes[i], re.shapes[i])
		}
	}
	if re.work.FLOPs > rt.work.FLOPs {
		return re, nil
	}
	return rt, nil
}

func (ns *nester) loop(n *graph.Node, scope infer.Scope) (subResult, error) {
	if len(n.Inputs) < 2 {
		return subResult{}, fmt.Errorf("Loop needs inputs M and cond (either may be empty), has %d", len(n.Inputs))
	}
	if n.Inputs[0] == "" {
		return subResult{}, errors.New("Loop without a trip count M is not supported (its cost is unknown at load time)")
	}
	trip, ok := constScalar(scope[n.Inputs[0]])
	if !ok {
		return subResult{}, fmt.Errorf("Loop trip count %q is not a constant; its cost is unknown at load time", n.Inputs[0])
	}
	if trip < 0 {
		trip = 0
	}
	if c, ok := constScalar(scope[n.Inputs[1]]); ok && n.Inputs[1] != "" && c == 0 {
		trip = 0
	}
	carried := n.Inputs[2:]
	inputs := []typed{{graph.Int64, graph.Shape{}}, {graph.Bool, graph.Shape{}}}
	for _, name := range carried {
		t := scope[name]
		if name == "" || t == nil {
			return subResult{}, fmt.Errorf("Loop-carried input %q is not defined", name)
		}
		inputs = append(inputs, typed{t.DType, t.Shape})
	}
	body, err := ns.run(n, "body", scope, inputs)
	if err != nil {
		return subResult{}, err
	}
	nc := len(carried)
	if len(body.shapes) < 1+nc {
		return subResult{}, fmt.Errorf("Loop body has %d output(s), needs at least %d (cond and %d carried)", len(body.shapes), 1+nc, nc)
	}
	k := len(body.shapes) - 1 - nc
	if len(n.Outputs) > nc+k {
		return subResult{}, fmt.Errorf("Loop has %d outputs, its body gives %d", len(n.Outputs), nc+k)
	}
	r := subResult{}
	for i := 0; i < nc; i++ {
		in, out := inputs[2+i], typed{body.dtypes[1+i], body.shapes[1+i]}
		if in.dtype != out.dtype || !in.shape.Equal(out.shape) {
			return subResult{}, fmt.Errorf("Loop-carried value %d changes from %s %s to %s %s in the body; not supported", i, in.dtype, in.shape, out.dtype, out.shape)
		}
		r.dtypes = append(r.dtypes, out.dtype)
		r.shapes = append(r.shapes, out.shape)
	}
	for i := 0; i < k; i++ {
		r.dtypes = append(r.dtypes, body.dtypes[1+nc+i])
		r.shapes = append(r.shapes, append(graph.Shape{trip}, body.shapes[1+nc+i]...))
	}
	r.dtypes, r.shapes = r.dtypes[:len(n.Outputs)], r.shapes[:len(n.Outputs)]
	if r.work, err = scaleWork(body.work, trip); err != nil {
		return subResult{}, err
	}
	return r, nil
}

func (ns *nester) scan(n *graph.Node, scope infer.Scope) (subResult, error) {
	opset := int64(0)
	for _, o := range ns.opsets {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			opset = o.Version
		}
	}
	if opset != 0 && opset < 9 {
		return subResult{}, fmt.Errorf("Scan of opset %d (with a batch axis) is not supported; opset 9 and later are", opset)
	}
	m := int(n.Attrs.Int("num_scan_inputs", 0))
	if m <= 0 || m > len(n.Inputs) {
		return subResult{}, fmt.Errorf("Scan num_scan_inputs is %d, the node has %d inputs", m, len(n.Inputs))
	}
	nState := len(n.Inputs) - m
	inAxes := n.Attrs.Ints("scan_input_axes")
	if inAxes != nil && len(inAxes) != m {
		return subResult{}, fmt.Errorf("Scan scan_input_axes has %d entries for %d scan inputs", len(inAxes), m)
	}
	var inputs []typed
	for i := 0; i < nState; i++ {
		t := scope[n.Inputs[i]]
		if t == nil {
			return subResult{}, fmt.Errorf("Scan state input %q is not defined", n.Inputs[i])
		}
		inputs = append(inputs, typed{t.DType, t.Shape})
	}
	length := int64(-1)
	for i := 0; i < m; i++ {
		name := n.Inputs[nState+i]
		t := scope[name]
		if t == nil {
			return subResult{}, fmt.Errorf("Scan input %q is not defined", name)
		}
		axis := int64(0)
		if inAxes != nil {
			axis = inAxes[i]
		}
		r := int64(len(t.Shape))
		if axis < 0 {
			axis += r
		}
		if axis < 0 || axis >= r {
			return subResult{}, fmt.Errorf("Scan input %q has rank %d, scan axis %d is out of range", name, r, axis)
		}
		if length >= 0 && t.Shape[axis] != length {
			return subResult{}, fmt.Errorf("Scan inputs disagree on the scan length: %d and %d", length, t.Shape[axis])
		}
		length = t.Shape[axis]
		slice := append(t.Shape[:axis:axis], t.Shape[axis+1:]...)
		inputs = append(inputs, typed{t.DType, slice})
	}
	body, err := ns.run(n, "body", scope, inputs)
	if err != nil {
		return subResult{}, err
	}
	if len(body.shapes) < nState {
		return subResult{}, fmt.Errorf("Scan body has %d outputs, fewer than its %d states", len(body.shapes), nState)
	}
	k := len(body.shapes) - nState
	if len(n.Outputs) != nState+k {
		return subResult{}, fmt.Errorf("Scan has %d outputs, its body gives %d", len(n.Outputs), nState+k)
	}
	outAxes := n.Attrs.Ints("scan_output_axes")
	if outAxes != nil && len(outAxes) != k {
		return subResult{}, fmt.Errorf("Scan scan_output_axes has %d entries for %d scan outputs", len(outAxes), k)
	}
	r := subResult{}
	for i := 0; i < nState; i++ {
		if body.dtypes[i] != inputs[i].dtype || !body.shapes[i].Equal(inputs[i].shape) {
			return subResult{}, fmt.Errorf("Scan state %d changes from %s %s to %s %s in the body; not supported", i, inputs[i].dtype, inputs[i].shape, body.dtypes[i], body.shapes[i])
		}
		r.dtypes = append(r.dtypes, body.dtypes[i])
		r.shapes = append(r.shapes, body.shapes[i])
	}
	for i := 0; i < k; i++ {
		el := body.shapes[nState+i]
		axis := int64(0)
		if outAxes != nil {
			axis = outAxes[i]
		}
		rank := int64(len(el)) + 1
		if axis < 0 {
			axis += rank
		}
		if axis < 0 || axis >= rank {
			return subResult{}, fmt.Errorf("Scan output %d: axis %d is out of range for rank %d", i, axis, rank)
		}
		s := append(append(append(graph.Shape{}, el[:axis]...), length), el[axis:]...)
		r.dtypes = append(r.dtypes, body.dtypes[nState+i])
		r.shapes = append(r.shapes, s)
	}
	if r.work, err = scaleWork(body.work, length); err != nil {
		return subResult{}, err
	}
	return r, nil
}

// scaleWork multiplies every count of w by k, failing on overflow.
func scaleWork(w graph.Work, k int64) (graph.Work, error) {
	mul := func(x int64) (int64, error) {
		if k != 0 && x > math.MaxInt64/k {
			return 0, fmt.Errorf("work of the body times %d overflows", k)
		}
		return x * k, nil
	}
	var err error
	out := graph.Work{DType: w.DType}
	for _, p := range []struct {
		dst *int64
		src int64
	}{
		{&out.MACs, w.MACs}, {&out.FLOPs, w.FLOPs}, {&out.ActBytesIn, w.ActBytesIn},
		{&out.WeightBytes, w.WeightBytes}, {&out.BytesOut, w.BytesOut},
	} {
		if *p.dst, err = mul(p.src); err != nil {
			return graph.Work{}, err
		}
	}
	out.Params = w.Params // the same weights are read every iteration
	return out, nil
}
