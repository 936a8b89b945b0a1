package onnx

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/infer"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// Options configure Load and Decode.
type Options struct {
	// Inputs overrides graph input shapes (resolves symbolic dims); name → shape.
	Inputs map[string]graph.Shape
}

const (
	// maxModelBytes is protobuf's own limit on a message (2 GiB).
	maxModelBytes = 1<<31 - 1
	// maxDepth bounds how deeply If, Loop and Scan graphs may nest.
	maxDepth = 16
)

// Load reads an ONNX file and decodes it with Decode; errors start with path.
func Load(path string, opt Options) (*graph.Model, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, oneLineError(path, pathCause(err))
	}
	if fi.IsDir() {
		return nil, oneLineError(path, errors.New("is a directory, not an ONNX file"))
	}
	if fi.Size() > maxModelBytes {
		return nil, oneLineError(path, fmt.Errorf("file has %d bytes; ONNX files are at most %d", fi.Size(), maxModelBytes))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, oneLineError(path, pathCause(err))
	}
	return Decode(data, path, opt)
}

// pathCause drops the path an *os.PathError repeats.
func pathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Decode decodes ONNX model bytes into an inferred graph.Model: symbolic
// input dimensions are resolved (see resolveInputs), infer.Run fills shapes,
// folded constants and work, Hash is ContentHash(data) and Name is name's
// base without ".onnx". Errors are one line starting with name.
func Decode(data []byte, name string, opt Options) (m *graph.Model, err error) {
	defer func() {
		// Last resort: no input may crash the caller. Every panic found so
		// far was fixed where it happened; this turns any other into an error.
		if r := recover(); r != nil {
			m, err = nil, oneLineError(name, fmt.Errorf("internal error while loading (please report): %v", r))
		}
	}()
	m, err = decode(data, opt)
	if err != nil {
		return nil, oneLineError(name, err)
	}
	m.Name = strings.TrimSuffix(filepath.Base(name), ".onnx")
	m.Hash = ContentHash(data)
	return m, nil
}

// ContentHash is the hex sha256 of the model bytes.
func ContentHash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// LoadError is the error Load and Decode return: File names the file (or
// the name given to Decode); Err is the cause. Error() is a single line.
type LoadError struct {
	File string
	Err  error
}

func (e *LoadError) Error() string {
	return lineBreaks.Replace(e.File + ": " + e.Err.Error())
}

func (e *LoadError) Unwrap() error { return e.Err }

// lineBreaks keeps an error on one line whatever the file's names contain.
var lineBreaks = strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ")

func oneLineError(file string, err error) error {
	if err == nil {
		err = errors.New("unknown error")
	}
	return &LoadError{File: file, Err: err}
}

func decode(data []byte, opt Options) (*graph.Model, error) {
	if len(data) == 0 {
		return nil, errors.New("empty file, not an ONNX model")
	}
	if len(data) > maxModelBytes {
		return nil, fmt.Errorf("%d bytes; ONNX models are at most %d", len(data), maxModelBytes)
	}
	mp := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		return nil, fmt.Errorf("not a valid ONNX model: %v", err)
	}
	g := mp.GetGraph()
	if g == nil {
		return nil, errors.New("not an ONNX model: it has no graph")
	}
	m := &graph.Model{IRVersion: mp.GetIrVersion(), Producer: mp.GetProducerName()}
	seen := map[string]bool{}
	for _, o := range mp.GetOpsetImport() {
		d := o.GetDomain()
		if d == "ai.onnx" {
			d = ""
		}
		if seen[d] {
			return nil, fmt.Errorf("opset_import lists domain %q twice", o.GetDomain())
		}
		seen[d] = true
		m.Opsets = append(m.Opsets, graph.OpsetImport{Domain: o.GetDomain(), Version: o.GetVersion()})
	}
	if v := m.Opset(); v < 0 {
		return nil, fmt.Errorf("opset version %d is negative", v)
	}
	gr, err := buildGraph(m, g, 0)
	if err != nil {
		return nil, err
	}
	if err := resolveInputs(m, gr.inputs, opt.Inputs); err != nil {
		return nil, err
	}
	if err := structure(m); err != nil {
		return nil, err
	}
	ns := &nester{depth: 1, opsets: m.Opsets, ir: m.IRVersion}
	if err := infer.Run(m, infer.Options{Nested: ns.nested}); err != nil {
		return nil, err
	}
	if err := checkOutputs(m, gr.outputs); err != nil {
		return nil, err
	}
	return m, nil
}

// structure links the graph and orders it, giving errors that name nodes
// before shape inference runs.
func structure(m *graph.Model) error {
	if err := m.Link(); err != nil {
		return err
	}
	if _, err := m.TopoOrder(); err != nil {
		var ce *graph.CycleError
		if errors.As(err, &ce) && len(ce.Nodes) > 0 {
			msg := fmt.Sprintf("graph has a cycle: %d node(s) cannot be ordered, first %s", len(ce.Nodes), m.Nodes[ce.Nodes[0]])
			return &wrapped{msg: msg, err: err}
		}
		return err
	}
	return nil
}

// wrapped is an error with its own message that still unwraps to err.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// dim is one declared dimension of a graph input or output.
type dim struct {
	value int64  // when known
	param string // dim_param, when given
	known bool
}

// declared is the type a graph input or output declares.
type declared struct {
	name     string
	dtype    graph.DType
	hasShape bool
	dims     []dim
}

// shape is the declared shape, graph.Unknown for each unknown dimension
// (nil without a shape).
func (d declared) shape() graph.Shape {
	if !d.hasShape {
		return nil
	}
	s := make(graph.Shape, len(d.dims))
	for i, x := range d.dims {
		s[i] = graph.Unknown
		if x.known {
			s[i] = x.value
		}
	}
	return s
}

func (d declared) shapeString() string {
	if !d.hasShape {
		return "(no shape)"
	}
	return d.shape().String()
}

// declaredEntry reads one entry of a graph's input or output list (what:
// "input" or "output"): its declared type, which must have a name not in
// seen; it adds the name to seen.
func declaredEntry(vi *onnxpb.ValueInfoProto, what string, seen map[string]bool) (declared, error) {
	d, err := declaredType(vi)
	if err != nil {
		return d, fmt.Errorf("graph %s %w", what, err)
	}
	if d.name == "" {
		return d, fmt.Errorf("a graph %s has no name", what)
	}
	if seen[d.name] {
		return d, fmt.Errorf("graph %s %q is listed twice", what, d.name)
	}
	seen[d.name] = true
	return d, nil
}

func declaredType(vi *onnxpb.ValueInfoProto) (declared, error) {
	d := declared{name: vi.GetName()}
	tp := vi.GetType()
	if tp == nil {
		return d, nil
	}
	switch {
	case tp.GetSequenceType() != nil:
		return d, fmt.Errorf("%q has a sequence type, which is not supported", d.name)
	case tp.GetMapType() != nil:
		return d, fmt.Errorf("%q has a map type, which is not supported", d.name)
	case tp.GetOptionalType() != nil:
		return d, fmt.Errorf("%q has an optional type, which is not supported", d.name)
	case tp.GetSparseTensorType() != nil:
		return d, fmt.Errorf("%q has a sparse tensor type, which is not supported", d.name)
	}
	tt := tp.GetTensorType()
	if tt == nil {
		return d, nil
	}
	d.dtype = graph.DType(tt.GetElemType())
	if d.dtype != graph.Undefined && !validDType(d.dtype) {
		return d, fmt.Errorf("%q has unsupported element type %s", d.name, d.dtype)
	}
	if sh := tt.GetShape(); sh != nil {
		d.hasShape = true
		d.dims = make([]dim, len(sh.GetDim()))
		for i, x := range sh.GetDim() {
			switch v := x.GetValue().(type) {
			case *onnxpb.TensorShapeProto_Dimension_DimValue:
				if v.DimValue < 0 {
					return d, fmt.Errorf("%q dimension %d is negative (%d)", d.name, i, v.DimValue)
				}
				d.dims[i] = dim{value: v.DimValue, known: true}
			case *onnxpb.TensorShapeProto_Dimension_DimParam:
				d.dims[i] = dim{param: v.DimParam}
			}
		}
	}
	return d, nil
}

// builtGraph is what buildGraph reports besides the model it fills.
type builtGraph struct {
	inputs, outputs []declared
	// free are the names the graph reads but does not define, sorted.
	free []string
}

// buildGraph converts g's initializers, inputs, nodes and outputs into m,
// whose metadata the caller sets. depth is g's nesting level (0 for the
// model's graph). Constant nodes stay nodes; their outputs become
// initializers holding the value. Input shapes keep Unknown where the file
// has a symbolic or missing dimension.
func buildGraph(m *graph.Model, g *onnxpb.GraphProto, depth int) (*builtGraph, error) {
	if m.Tensors == nil {
		m.Tensors = map[string]*graph.Tensor{}
	}
	out := &builtGraph{}
	if depth > 0 { // the model's graph reads nothing from outside
		free, err := freeVars(g, depth)
		if err != nil {
			return nil, err
		}
		out.free = free
	}
	if len(g.GetSparseInitializer()) > 0 {
		return nil, errors.New("sparse initializers are not supported")
	}
	for _, tp := range g.GetInitializer() {
		name := tp.GetName()
		if name == "" {
			return nil, errors.New("an initializer has no name")
		}
		if m.Tensors[name] != nil {
			return nil, fmt.Errorf("initializer %q is defined twice", name)
		}
		d, err := tensorData(tp)
		if err != nil {
			return nil, fmt.Errorf("initializer %q: %w", name, err)
		}
		m.Tensors[name] = &graph.Tensor{Name: name, DType: d.DType, Shape: d.Dims.Clone(), Kind: graph.Initializer, Data: d, Producer: -1}
	}
	inputSeen := map[string]bool{}
	for _, vi := range g.GetInput() {
		d, err := declaredEntry(vi, "input", inputSeen)
		if err != nil {
			return nil, err
		}
		if t := m.Tensors[d.name]; t != nil { // an initializer with a default value
			if d.dtype != graph.Undefined && d.dtype != t.DType {
				return nil, fmt.Errorf("graph input %q is declared %s but its initializer is %s", d.name, d.dtype, t.DType)
			}
			if d.hasShape && !d.matches(t.Shape) {
				return nil, fmt.Errorf("graph input %q is declared %s but its initializer has shape %s", d.name, d.shapeString(), t.Shape)
			}
			continue
		}
		m.Tensors[d.name] = &graph.Tensor{Name: d.name, DType: d.dtype, Shape: d.shape(), Kind: graph.Input, Producer: -1}
		m.Inputs = append(m.Inputs, d.name)
		out.inputs = append(out.inputs, d)
	}
	for i, np := range g.GetNode() {
		n := &graph.Node{
			ID: i, Name: np.GetName(), Op: np.GetOpType(), Domain: np.GetDomain(),
			Inputs: append([]string{}, np.GetInput()...), Outputs: append([]string{}, np.GetOutput()...),
		}
		if err := buildNode(m, n, np, depth); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		m.Nodes = append(m.Nodes, n)
	}
	outSeen := map[string]bool{}
	for _, vi := range g.GetOutput() {
		d, err := declaredEntry(vi, "output", outSeen)
		if err != nil {
			return nil, err
		}
		m.Outputs = append(m.Outputs, d.name)
		out.outputs = append(out.outputs, d)
	}
	return out, nil
}

func buildNode(m *graph.Model, n *graph.Node, np *onnxpb.NodeProto, depth int) error {
	if n.Op == "" {
		return errors.New("node has no op_type")
	}
	names := map[string]bool{}
	implicit := map[string]bool{}
	for _, ap := range np.GetAttribute() {
		a, err := convertAttr(ap)
		if err != nil {
			return err
		}
		if names[a.Name] {
			return fmt.Errorf("attribute %q is given twice", a.Name)
		}
		names[a.Name] = true
		n.Attrs = append(n.Attrs, a)
		free, err := attrFreeVars(ap, depth)
		if err != nil {
			return fmt.Errorf("attribute %q: %w", a.Name, err)
		}
		for _, f := range free {
			implicit[f] = true
		}
	}
	for name := range implicit {
		n.Implicit = append(n.Implicit, name)
	}
	sort.Strings(n.Implicit)
	if n.Op == "Constant" && (n.Domain == "" || n.Domain == "ai.onnx") {
		if len(n.Outputs) != 1 || n.Outputs[0] == "" {
			return fmt.Errorf("Constant must have exactly one output, has %d", len(n.Outputs))
		}
		d, err := constantValue(n.Attrs)
		if err != nil {
			return err
		}
		out := n.Outputs[0]
		if m.Tensors[out] != nil {
			return fmt.Errorf("writes tensor %q, which is already a graph %s", out, m.Tensors[out].Kind)
		}
		m.Tensors[out] = &graph.Tensor{Name: out, DType: d.DType, Shape: d.Dims.Clone(), Kind: graph.Initializer, Data: d, Producer: -1}
	}
	return nil
}

// freeVars returns the names g (and the graphs nested in it) reads without
// defining them: values of an enclosing scope. It fails when graphs nest
// more than maxDepth levels below the model's graph.
func freeVars(g *onnxpb.GraphProto, depth int) ([]string, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("graphs are nested more than %d levels deep", maxDepth)
	}
	defined := map[string]bool{}
	for _, vi := range g.GetInput() {
		defined[vi.GetName()] = true
	}
	for _, tp := range g.GetInitializer() {
		defined[tp.GetName()] = true
	}
	for _, np := range g.GetNode() {
		for _, o := range np.GetOutput() {
			defined[o] = true
		}
	}
	free := map[string]bool{}
	use := func(name string) {
		if name != "" && !defined[name] {
			free[name] = true
		}
	}
	for _, np := range g.GetNode() {
		for _, in := range np.GetInput() {
			use(in)
		}
		for _, ap := range np.GetAttribute() {
			inner, err := attrFreeVars(ap, depth)
			if err != nil {
				return nil, err
			}
			for _, f := range inner {
				use(f)
			}
		}
	}
	for _, vi := range g.GetOutput() {
		use(vi.GetName())
	}
	return slices.Sorted(maps.Keys(free)), nil
}

// attrFreeVars returns the free names (freeVars) of the graphs an
// attribute of a node at depth holds: its g, then its graphs; a name may
// come more than once.
func attrFreeVars(ap *onnxpb.AttributeProto, depth int) ([]string, error) {
	subs := ap.GetGraphs()
	if ap.GetG() != nil {
		subs = append([]*onnxpb.GraphProto{ap.GetG()}, subs...)
	}
	var free []string
	for _, sub := range subs {
		inner, err := freeVars(sub, depth+1)
		if err != nil {
			return nil, err
		}
		free = append(free, inner...)
	}
	return free, nil
}

// matches reports whether a known shape agrees with the declaration: same
// rank and the same value wherever the declaration fixes one.
func (d declared) matches(s graph.Shape) bool {
	if !d.hasShape {
		return true
	}
	if len(s) != len(d.dims) {
		return false
	}
	for i, x := range d.dims {
		if x.known && x.value != s[i] {
			return false
		}
	}
	return true
}

// checkOutputs compares inferred graph outputs with their declared types.
func checkOutputs(m *graph.Model, outs []declared) error {
	for _, d := range outs {
		t := m.Tensors[d.name]
		if t == nil {
			return fmt.Errorf("graph output %q is not defined", d.name)
		}
		if d.dtype != graph.Undefined && d.dtype != t.DType {
			return fmt.Errorf("graph output %q is declared %s, but inference gives %s", d.name, d.dtype, t.DType)
		}
		if !d.matches(t.Shape) {
			return fmt.Errorf("graph output %q is declared with shape %s, but inference gives %s", d.name, d.shapeString(), t.Shape)
		}
	}
	return nil
}
