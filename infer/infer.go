package infer

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/inlay-dev/inlay/graph"
)

// Scope is what a nested graph sees of its enclosing graph: tensor name → tensor.
type Scope map[string]*graph.Tensor

// NestedResult is what a node with graph attributes (If, Loop, Scan) produces.
type NestedResult struct {
	DTypes []graph.DType
	Shapes []graph.Shape
	Work   graph.Work
}

// Options configure Run.
type Options struct {
	// Nested infers a node that has graph attributes; package onnx supplies it
	// (it parses the nested GraphProto and calls Run on it recursively).
	// When nil, such nodes are an error.
	Nested func(n *graph.Node, scope Scope) (NestedResult, error)
}

// MaxFoldElements bounds constant folding: a node whose inputs or outputs
// hold more elements than this keeps Activation outputs (with inferred
// shapes) instead of folded values.
const MaxFoldElements = 1 << 20

// defaultOpset is assumed for the default domain when a model imports none.
const defaultOpset = 21

// Run infers every tensor's dtype and fully known shape, folds constants
// (every node whose inputs are all constant, and Shape/Size of known shapes,
// gets outputs of Kind graph.Folded with Data set), and fills every node's
// Work. Graph inputs must have known shapes (the loader resolves symbolic
// dims first). Calls m.Link and m.TopoOrder itself. An operator without a
// rule is an error naming the operator and the node.
//
// Nodes are visited in m.TopoOrder(); the cost is linear in the number of
// nodes plus the elements of the folded values.
func Run(m *graph.Model, opt Options) error {
	if m == nil {
		return errors.New("infer: nil model")
	}
	if err := m.Link(); err != nil {
		return fmt.Errorf("infer: %w", err)
	}
	order, err := m.TopoOrder()
	if err != nil {
		return fmt.Errorf("infer: %w", err)
	}
	for _, name := range m.SortedTensorNames() {
		t := m.Tensors[name]
		switch t.Kind {
		case graph.Input:
			if !t.Shape.Known() || t.Shape == nil {
				return fmt.Errorf("infer: graph input %q has shape %s; every dimension must be known", name, shapeOrNone(t.Shape))
			}
			if _, ok := t.Shape.Elements(); !ok {
				return fmt.Errorf("infer: graph input %q: shape %s overflows", name, t.Shape)
			}
		case graph.Initializer, graph.Folded:
			if t.Producer >= 0 {
				continue // a Constant node's value; checked when the node runs
			}
			if err := checkConstTensor(t); err != nil {
				return fmt.Errorf("infer: initializer %q: %w", name, err)
			}
		}
	}
	r := &runner{m: m, opt: opt, opset: m.Opset(), cache: map[string]*value{}, rules: ruleTable()}
	if r.opset == 0 {
		r.opset = defaultOpset
	}
	for _, id := range order {
		n := m.Nodes[id]
		if err := r.node(n); err != nil {
			return err
		}
	}
	return nil
}

func shapeOrNone(s graph.Shape) string {
	if s == nil {
		return "none"
	}
	return s.String()
}

// checkConstTensor validates an initializer's declared shape against its data.
func checkConstTensor(t *graph.Tensor) error {
	if t.Data != nil {
		if t.Shape == nil {
			t.Shape = t.Data.Dims.Clone()
			if t.Shape == nil {
				t.Shape = graph.Shape{}
			}
		}
		if t.DType == graph.Undefined {
			t.DType = t.Data.DType
		}
	}
	if t.Shape == nil || !t.Shape.Known() {
		return fmt.Errorf("shape %s is not fully known", shapeOrNone(t.Shape))
	}
	n, ok := t.Shape.Elements()
	if !ok {
		return fmt.Errorf("shape %s overflows", t.Shape)
	}
	if t.Data != nil && t.Data.Raw != nil {
		if sz := t.DType.Size(); sz > 0 && t.DType != graph.Uint4 && t.DType != graph.Int4 {
			if n > int64(len(t.Data.Raw))/int64(sz) || int64(len(t.Data.Raw)) != n*int64(sz) {
				return fmt.Errorf("has %d bytes of data, shape %s of %s needs %d", len(t.Data.Raw), t.Shape, t.DType, n*int64(sz))
			}
		}
	}
	return nil
}

type runner struct {
	m     *graph.Model
	opt   Options
	opset int64
	// cache holds decoded constant values by tensor name.
	cache map[string]*value
	rules map[string]rule
}

// rule infers one operator: it sets the outputs' dtypes and shapes and the
// node's MACs and FLOPs through the context.
type rule struct {
	infer func(c *ctx) error
	// eval computes the outputs from constant inputs (nil: never folded).
	eval func(c *ctx, in []*value) ([]*value, error)
}

var ruleTable = sync.OnceValue(buildRules)

// Supported lists the operators Run has a rule for, sorted. Operators of a
// domain other than the default are written "domain:Op".
func Supported() []string {
	t := ruleTable()
	out := make([]string, 0, len(t)+4)
	for k := range t {
		out = append(out, k)
	}
	// Handled outside the table: Constant by Run itself, the control-flow
	// operators through Options.Nested.
	out = append(out, "Constant", "If", "Loop", "Scan")
	sort.Strings(out)
	return out
}

// ruleKey names an operator in the rule table.
func ruleKey(domain, op string) string {
	if domain == "" || domain == "ai.onnx" {
		return op
	}
	return domain + ":" + op
}

func (r *runner) node(n *graph.Node) error {
	c := &ctx{r: r, n: n, opset: r.opsetOf(n.Domain)}
	c.outs = make([]outSpec, len(n.Outputs))
	fail := func(err error) error {
		return fmt.Errorf("infer: node %q (%s): %w", n.Name, n.Op, err)
	}
	for i, in := range n.Inputs {
		if in == "" {
			continue
		}
		t := r.m.Tensors[in]
		if t == nil || t.Shape == nil || !t.Shape.Known() {
			return fail(fmt.Errorf("input %d (%q) has no inferred shape", i, in))
		}
	}
	if n.Op == "Constant" && (n.Domain == "" || n.Domain == "ai.onnx") {
		return r.constant(n, fail)
	}
	if hasGraphAttr(n) {
		return r.nested(n, c, fail)
	}
	rl, ok := r.rules[ruleKey(n.Domain, n.Op)]
	if !ok {
		if n.Domain != "" && n.Domain != "ai.onnx" {
			return fail(fmt.Errorf("no shape rule for operator %s in domain %q", n.Op, n.Domain))
		}
		return fail(fmt.Errorf("no shape rule for operator %s", n.Op))
	}
	if err := rl.infer(c); err != nil {
		return fail(err)
	}
	for i, o := range c.outs {
		if n.Outputs[i] == "" {
			continue
		}
		if !o.set {
			return fail(fmt.Errorf("output %d (%q) is not produced by this operator", i, n.Outputs[i]))
		}
		if err := checkShape(o.shape); err != nil {
			return fail(fmt.Errorf("output %d (%q): %w", i, n.Outputs[i], err))
		}
	}
	folded := false
	if rl.eval != nil && c.foldable() {
		vals, err := c.inputValues()
		if err != nil {
			return fail(err)
		}
		if vals != nil {
			res, err := rl.eval(c, vals)
			if err != nil {
				return fail(err)
			}
			if res != nil {
				if err := c.setFolded(res); err != nil {
					return fail(err)
				}
				folded = true
			}
		}
	}
	for i, o := range c.outs {
		if n.Outputs[i] == "" {
			continue
		}
		t := r.m.Tensors[n.Outputs[i]]
		t.DType, t.Shape = o.dtype, o.shape
		if o.data != nil {
			t.Kind, t.Data = graph.Folded, o.data
		} else if t.Kind == graph.Folded {
			t.Kind, t.Data = graph.Activation, nil
		}
		delete(r.cache, t.Name)
	}
	if folded || c.allFolded() {
		n.Work = graph.Work{}
		return nil
	}
	n.Work = c.work()
	return nil
}

func (r *runner) opsetOf(domain string) int64 {
	if domain == "" || domain == "ai.onnx" {
		return r.opset
	}
	for _, o := range r.m.Opsets {
		if o.Domain == domain {
			return o.Version
		}
	}
	return 1
}

func checkShape(s graph.Shape) error {
	if s == nil {
		return errors.New("shape not inferred")
	}
	for _, d := range s {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %s", s)
		}
	}
	if _, ok := s.Elements(); !ok {
		return fmt.Errorf("shape %s overflows int64", s)
	}
	return nil
}

func hasGraphAttr(n *graph.Node) bool {
	for _, a := range n.Attrs {
		if a.Kind == graph.AttrGraph {
			return true
		}
	}
	return false
}

// nested infers If, Loop, Scan and any other node carrying subgraphs
// through Options.Nested.
func (r *runner) nested(n *graph.Node, c *ctx, fail func(error) error) error {
	if r.opt.Nested == nil {
		return fail(errors.New("node has graph attributes but no nested-graph inference was given (Options.Nested)"))
	}
	res, err := r.opt.Nested(n, Scope(r.m.Tensors))
	if err != nil {
		return fail(err)
	}
	if len(res.Shapes) < len(n.Outputs) || len(res.DTypes) < len(n.Outputs) {
		return fail(fmt.Errorf("nested inference gave %d shapes and %d dtypes for %d outputs", len(res.Shapes), len(res.DTypes), len(n.Outputs)))
	}
	for i, name := range n.Outputs {
		if name == "" {
			continue
		}
		if err := checkShape(res.Shapes[i]); err != nil {
			return fail(fmt.Errorf("output %d (%q): %w", i, name, err))
		}
		t := r.m.Tensors[name]
		t.DType, t.Shape = res.DTypes[i], res.Shapes[i].Clone()
		if t.Kind == graph.Folded {
			t.Kind, t.Data = graph.Activation, nil
		}
		c.outs[i] = outSpec{set: true, dtype: t.DType, shape: t.Shape}
	}
	w := res.Work
	if w.DType == graph.Undefined {
		w.DType = c.work().DType
	}
	n.Work = w
	return nil
}

// constant handles the Constant operator: its output is an Initializer
// holding the attribute's value (the loader may already have set it).
func (r *runner) constant(n *graph.Node, fail func(error) error) error {
	if len(n.Outputs) != 1 || n.Outputs[0] == "" {
		return fail(errors.New("Constant must have exactly one output"))
	}
	t := r.m.Tensors[n.Outputs[0]]
	if t.Data == nil {
		d, err := constantAttr(n.Attrs)
		if err != nil {
			return fail(err)
		}
		t.Data = d
		t.DType, t.Shape = d.DType, d.Dims.Clone()
		if t.Shape == nil {
			t.Shape = graph.Shape{}
		}
	}
	t.Kind = graph.Initializer
	if err := checkConstTensor(t); err != nil {
		return fail(err)
	}
	delete(r.cache, t.Name)
	n.Work = graph.Work{}
	return nil
}

// constantAttr builds the value of a Constant node from its attributes.
func constantAttr(a graph.Attrs) (*graph.Data, error) {
	if x := a.Get("value"); x != nil {
		if x.Kind != graph.AttrTensor || x.Tensor == nil {
			return nil, errors.New("attribute value is not a tensor")
		}
		return x.Tensor, nil
	}
	if x := a.Get("value_float"); x != nil {
		return encode(&value{dt: graph.Float32, shape: graph.Shape{}, f: []float64{float64(x.Float)}}), nil
	}
	if x := a.Get("value_floats"); x != nil {
		f := make([]float64, len(x.Floats))
		for i, v := range x.Floats {
			f[i] = float64(v)
		}
		return encode(&value{dt: graph.Float32, shape: graph.Shape{int64(len(f))}, f: f}), nil
	}
	if x := a.Get("value_int"); x != nil {
		return encode(&value{dt: graph.Int64, shape: graph.Shape{}, i: []int64{x.Int}}), nil
	}
	if x := a.Get("value_ints"); x != nil {
		return encode(&value{dt: graph.Int64, shape: graph.Shape{int64(len(x.Ints))}, i: append([]int64{}, x.Ints...)}), nil
	}
	if a.Get("value_string") != nil || a.Get("value_strings") != nil {
		return nil, errors.New("string constants are not supported")
	}
	if a.Get("sparse_value") != nil {
		return nil, errors.New("sparse constants are not supported")
	}
	return nil, errors.New("Constant has no value attribute")
}
