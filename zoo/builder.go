package zoo

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"strings"

	"github.com/inlay-dev/inlay/graph"
)

// opset is the default-domain operator set every zoo network imports; 17 is
// the first with LayerNormalization.
const opset = 17

// net builds one network. Its methods panic on misuse (a wrong shape, an
// axis out of range): those are mistakes in this package's network code,
// which the tests build in full, never in user input.
type net struct {
	m *graph.Model
	// prefix names the block being built ("layer2.1"); node names are
	// prefix/op_k.
	prefix string
	count  map[string]int
	consts map[string]string // canonical value key → tensor name
}

func newNet(name string) *net {
	return &net{
		m: &graph.Model{
			Name:      name,
			IRVersion: 8,
			Producer:  "inlay zoo",
			Opsets:    []graph.OpsetImport{{Domain: "", Version: opset}},
			Tensors:   map[string]*graph.Tensor{},
		},
		count:  map[string]int{},
		consts: map[string]string{},
	}
}

// T is a tensor under construction: its name and the shape the builder
// tracks so that it can size weights. Shape inference checks the tracked
// shapes independently when Build runs it.
type T struct {
	n     *net
	Name  string
	Shape graph.Shape
	DType graph.DType
	// fanIn is the number of inputs summed into each element when t is a
	// convolution's output; BN uses it to scale the random weights (see BNEps).
	fanIn int64
}

// scope sets the prefix of the names that follow.
func (n *net) scope(format string, args ...any) { n.prefix = fmt.Sprintf(format, args...) }

func (n *net) input(name string, dt graph.DType, shape ...int64) T {
	n.m.Tensors[name] = &graph.Tensor{Name: name, DType: dt, Shape: graph.Shape(shape).Clone(), Kind: graph.Input, Producer: -1}
	n.m.Inputs = append(n.m.Inputs, name)
	return T{n: n, Name: name, Shape: graph.Shape(shape).Clone(), DType: dt}
}

func (n *net) output(ts ...T) {
	for _, t := range ts {
		n.m.Outputs = append(n.m.Outputs, t.Name)
	}
}

func (n *net) uniqueName(op string) string {
	base := strings.ToLower(op)
	if n.prefix != "" {
		base = n.prefix + "/" + base
	}
	n.count[base]++
	return fmt.Sprintf("%s_%d", base, n.count[base])
}

// param adds a learned float32 initializer whose values are left to the
// exporter.
func (n *net) param(name string, shape ...int64) string {
	if _, dup := n.m.Tensors[name]; dup {
		panic(fmt.Sprintf("zoo: duplicate tensor %q", name))
	}
	s := graph.Shape(shape).Clone()
	n.m.Tensors[name] = &graph.Tensor{
		Name: name, DType: graph.Float32, Shape: s, Kind: graph.Initializer, Producer: -1,
		Data: &graph.Data{DType: graph.Float32, Dims: s.Clone()},
	}
	return name
}

// paramFilled adds a learned float32 initializer with every element set to v.
func (n *net) paramFilled(name string, v float32, shape ...int64) string {
	n.param(name, shape...)
	n.fill(name, v)
	return name
}

// fill sets every element of a float32 parameter to v.
func (n *net) fill(name string, v float32) {
	t := n.m.Tensors[name]
	e, _ := t.Shape.Elements()
	raw := make([]byte, 4*e)
	for i := int64(0); i < e; i++ {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	t.Data.Raw = raw
}

// buffer adds a non-learned initializer with real values; name must satisfy
// IsBuffer.
func (n *net) buffer(name string, dt graph.DType, raw []byte, shape ...int64) string {
	if !IsBuffer(name) {
		panic(fmt.Sprintf("zoo: buffer name %q", name))
	}
	if _, dup := n.m.Tensors[name]; dup {
		panic(fmt.Sprintf("zoo: duplicate tensor %q", name))
	}
	s := graph.Shape(shape).Clone()
	n.m.Tensors[name] = &graph.Tensor{
		Name: name, DType: dt, Shape: s, Kind: graph.Initializer, Producer: -1,
		Data: &graph.Data{DType: dt, Dims: s.Clone(), Raw: raw},
	}
	return name
}

// IsBuffer reports whether an initializer of a zoo network holds a
// non-learned value (BatchNormalization running statistics, shape and grid
// constants) rather than a trained parameter.
func IsBuffer(name string) bool {
	return strings.HasPrefix(name, "const/") || strings.HasSuffix(name, ".running_mean") || strings.HasSuffix(name, ".running_var")
}

// TrainableParams counts the elements of a model's learned initializers,
// the way PyTorch's model.parameters() does: buffers (see IsBuffer) are left
// out.
func TrainableParams(m *graph.Model) int64 {
	var p int64
	for _, name := range m.SortedTensorNames() {
		t := m.Tensors[name]
		if t.Kind != graph.Initializer || IsBuffer(name) {
			continue
		}
		if e, ok := t.Shape.Elements(); ok {
			p += e
		}
	}
	return p
}

// constI64 returns a shared int64 constant with the given values and shape.
func (n *net) constI64(vals []int64, shape ...int64) string {
	raw := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return n.constRaw(graph.Int64, raw, shape)
}

// constF32 returns a shared float32 constant with the given values and shape.
func (n *net) constF32(vals []float32, shape ...int64) string {
	return n.constRaw(graph.Float32, graph.Float32Raw(vals), shape)
}

func (n *net) constRaw(dt graph.DType, raw []byte, shape []int64) string {
	key := fmt.Sprintf("%v|%v|%x", dt, shape, raw)
	if name, ok := n.consts[key]; ok {
		return name
	}
	name := fmt.Sprintf("const/%d", len(n.consts))
	n.consts[key] = name
	return n.buffer(name, dt, raw, shape...)
}

// scalar returns a shared float32 scalar constant.
func (n *net) scalar(v float32) string { return n.constF32([]float32{v}) }

// node adds one single-output node and returns its output.
func (n *net) node(op string, inputs []string, attrs graph.Attrs, dt graph.DType, shape graph.Shape) T {
	return n.emit(n.uniqueName(op), op, inputs, attrs, dt, shape)
}

// emit adds a node named name whose one output, also named name, has the
// tracked dtype and shape (shape inference recomputes both).
func (n *net) emit(name, op string, inputs []string, attrs graph.Attrs, dt graph.DType, shape graph.Shape) T {
	n.m.Nodes = append(n.m.Nodes, &graph.Node{Name: name, Op: op, Inputs: inputs, Outputs: []string{name}, Attrs: attrs})
	n.m.Tensors[name] = &graph.Tensor{Name: name, DType: dt, Shape: shape.Clone(), Kind: graph.Activation, Producer: -1}
	return T{n: n, Name: name, Shape: shape.Clone(), DType: dt}
}

func intAttr(name string, v int64) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrInt, Int: v}
}
func intsAttr(name string, v ...int64) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrInts, Ints: append([]int64(nil), v...)}
}
func floatAttr(name string, v float32) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrFloat, Float: v}
}
func strAttr(name, v string) graph.Attr {
	return graph.Attr{Name: name, Kind: graph.AttrString, String: v}
}

// conv describes a convolution; zero Stride, Group and Dilation mean 1.
type conv struct {
	Out      int64
	KH, KW   int64
	Stride   int64
	Group    int64
	Dilation int64
	// PadH, PadW are symmetric paddings; -1 means dilation·(k-1)/2, which
	// keeps the size at stride 1.
	PadH, PadW int64
	Bias       bool
	// HeInit gives the weights He-initialised values (normal, std
	// √(2/fanIn), seeded by the weight's name) and a zero bias, for
	// networks without BatchNormalization to rescale the exported random
	// weights (SqueezeNet).
	HeInit bool
}

// Conv is a square k×k convolution without bias and with "same" padding.
func (t T) Conv(out, k, stride int64) T {
	return t.ConvWith(conv{Out: out, KH: k, KW: k, Stride: stride, PadH: -1, PadW: -1})
}

// DWConv is a depthwise k×k convolution.
func (t T) DWConv(k, stride, dilation int64) T {
	c := t.Shape[1]
	return t.ConvWith(conv{Out: c, KH: k, KW: k, Stride: stride, Group: c, Dilation: dilation, PadH: -1, PadW: -1})
}

// ConvWith is the general convolution (NCHW).
func (t T) ConvWith(c conv) T {
	n := t.n
	if c.Stride == 0 {
		c.Stride = 1
	}
	if c.Group == 0 {
		c.Group = 1
	}
	if c.Dilation == 0 {
		c.Dilation = 1
	}
	if c.PadH < 0 {
		c.PadH = c.Dilation * (c.KH - 1) / 2
	}
	if c.PadW < 0 {
		c.PadW = c.Dilation * (c.KW - 1) / 2
	}
	if len(t.Shape) != 4 || t.Shape[1]%c.Group != 0 || c.Out%c.Group != 0 {
		panic(fmt.Sprintf("zoo: conv on %s with %+v", t.Shape, c))
	}
	name := n.uniqueName("Conv")
	w := n.param(name+".weight", c.Out, t.Shape[1]/c.Group, c.KH, c.KW)
	inputs := []string{t.Name, w}
	if c.Bias {
		inputs = append(inputs, n.param(name+".bias", c.Out))
	}
	outSize := func(in, k, p int64) int64 { return (in+2*p-c.Dilation*(k-1)-1)/c.Stride + 1 }
	shape := graph.Shape{t.Shape[0], c.Out, outSize(t.Shape[2], c.KH, c.PadH), outSize(t.Shape[3], c.KW, c.PadW)}
	attrs := graph.Attrs{
		intsAttr("dilations", c.Dilation, c.Dilation),
		intAttr("group", c.Group),
		intsAttr("kernel_shape", c.KH, c.KW),
		intsAttr("pads", c.PadH, c.PadW, c.PadH, c.PadW),
		intsAttr("strides", c.Stride, c.Stride),
	}
	y := n.emit(name, "Conv", inputs, attrs, t.DType, shape)
	y.fanIn = t.Shape[1] / c.Group * c.KH * c.KW
	if c.HeInit {
		n.heFill(w, y.fanIn)
		if c.Bias {
			n.fill(name+".bias", 0)
		}
	}
	return y
}

// heFill sets a float32 parameter to normal values of std √(2/fanIn),
// from a source seeded by its name (deterministic).
func (n *net) heFill(name string, fanIn int64) {
	t := n.m.Tensors[name]
	e, _ := t.Shape.Elements()
	h := fnv.New64a()
	h.Write([]byte(name))
	rng := rand.New(rand.NewSource(int64(h.Sum64() >> 1)))
	std := math.Sqrt(2 / float64(fanIn))
	raw := make([]byte, 4*e)
	for i := int64(0); i < e; i++ {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(rng.NormFloat64()*std)))
	}
	t.Data.Raw = raw
}

// BN is inference-mode BatchNormalization over channel axis 1 with learned
// scale and bias and running statistics (mean 0, variance 1) as buffers.
func (t T) BN() T { return t.BNEps(1e-5) }

// exportWeightStd is the standard deviation of the random weights that
// onnx.Encode fills in.
const exportWeightStd = 0.05

// BNEps is BN with a given epsilon. Its scale is set, not left random: after
// a convolution it is √(2/fanIn)/exportWeightStd, which turns the exported
// random weights into He-initialised ones, so that activations keep their
// magnitude through deep networks instead of vanishing into denormals
// (which would distort measured run times); elsewhere it is 1. Its bias is 0.
func (t T) BNEps(eps float32) T {
	n := t.n
	c := t.Shape[1]
	name := n.uniqueName("BatchNormalization")
	gamma := float32(1)
	if t.fanIn > 0 {
		gamma = float32(math.Sqrt(2/float64(t.fanIn)) / exportWeightStd)
	}
	zeros := make([]byte, 4*c)
	ones := make([]byte, 4*c)
	for i := int64(0); i < c; i++ {
		binary.LittleEndian.PutUint32(ones[4*i:], math.Float32bits(1))
	}
	inputs := []string{
		t.Name,
		n.paramFilled(name+".weight", gamma, c),
		n.paramFilled(name+".bias", 0, c),
		n.buffer(name+".running_mean", graph.Float32, zeros, c),
		n.buffer(name+".running_var", graph.Float32, ones, c),
	}
	return n.emit(name, "BatchNormalization", inputs, graph.Attrs{floatAttr("epsilon", eps)}, t.DType, t.Shape)
}

func (t T) unary(op string, attrs ...graph.Attr) T {
	return t.n.node(op, []string{t.Name}, attrs, t.DType, t.Shape)
}

// Relu, Sigmoid, Tanh, Erf and HardSwish are the ONNX operators of those names.
func (t T) Relu() T      { return t.unary("Relu") }
func (t T) Sigmoid() T   { return t.unary("Sigmoid") }
func (t T) Tanh() T      { return t.unary("Tanh") }
func (t T) Erf() T       { return t.unary("Erf") }
func (t T) HardSwish() T { return t.unary("HardSwish") }

// HardSigmoid is PyTorch's hardsigmoid: relu6(x+3)/6.
func (t T) HardSigmoid() T {
	return t.unary("HardSigmoid", floatAttr("alpha", 1.0/6), floatAttr("beta", 0.5))
}

// Relu6 is Clip(x, 0, 6).
func (t T) Relu6() T {
	return t.n.node("Clip", []string{t.Name, t.n.scalar(0), t.n.scalar(6)}, nil, t.DType, t.Shape)
}

// SiLU is x·sigmoid(x).
func (t T) SiLU() T { return t.Mul(t.Sigmoid()) }

// GELU is the exact (erf) form: x·0.5·(1+erf(x/√2)).
func (t T) GELU() T {
	e := t.MulScalar(float32(1 / math.Sqrt2)).Erf().AddScalar(1)
	return t.Mul(e).MulScalar(0.5)
}

// Act applies a named activation: relu, relu6, hswish, hsigmoid, sigmoid,
// silu, gelu or none.
func (t T) Act(name string) T {
	switch name {
	case "relu":
		return t.Relu()
	case "relu6":
		return t.Relu6()
	case "hswish":
		return t.HardSwish()
	case "hsigmoid":
		return t.HardSigmoid()
	case "sigmoid":
		return t.Sigmoid()
	case "silu":
		return t.SiLU()
	case "gelu":
		return t.GELU()
	case "none", "":
		return t
	}
	panic(fmt.Sprintf("zoo: unknown activation %q", name))
}

func broadcast(a, b graph.Shape) graph.Shape {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := a.Clone()
	off := len(a) - len(b)
	for i, d := range b {
		switch {
		case out[off+i] == d || d == 1:
		case out[off+i] == 1:
			out[off+i] = d
		default:
			panic(fmt.Sprintf("zoo: cannot broadcast %s and %s", a, b))
		}
	}
	return out
}

func (t T) binary(op string, o T) T {
	return t.n.node(op, []string{t.Name, o.Name}, nil, t.DType, broadcast(t.Shape, o.Shape))
}

// Add, Mul and Sub are element-wise with broadcasting.
func (t T) Add(o T) T { return t.binary("Add", o) }
func (t T) Mul(o T) T { return t.binary("Mul", o) }
func (t T) Sub(o T) T { return t.binary("Sub", o) }

// AddScalar and MulScalar combine with a shared float32 scalar constant.
func (t T) AddScalar(v float32) T {
	return t.n.node("Add", []string{t.Name, t.n.scalar(v)}, nil, t.DType, t.Shape)
}
func (t T) MulScalar(v float32) T {
	return t.n.node("Mul", []string{t.Name, t.n.scalar(v)}, nil, t.DType, t.Shape)
}

// AddConst and MulConst combine with a float32 constant buffer of the given
// values and shape (broadcast).
func (t T) AddConst(vals []float32, shape ...int64) T {
	return t.n.node("Add", []string{t.Name, t.n.constF32(vals, shape...)}, nil, t.DType, broadcast(t.Shape, shape))
}
func (t T) MulConst(vals []float32, shape ...int64) T {
	return t.n.node("Mul", []string{t.Name, t.n.constF32(vals, shape...)}, nil, t.DType, broadcast(t.Shape, shape))
}

// AddParam adds a learned tensor of the given shape (broadcast), named
// prefix/name.
func (t T) AddParam(name string, shape ...int64) T {
	p := t.n.param(t.n.paramName(name), shape...)
	return t.n.node("Add", []string{t.Name, p}, nil, t.DType, broadcast(t.Shape, shape))
}

// MulParam multiplies by a learned tensor of the given shape (broadcast).
func (t T) MulParam(name string, shape ...int64) T {
	p := t.n.param(t.n.paramName(name), shape...)
	return t.n.node("Mul", []string{t.Name, p}, nil, t.DType, broadcast(t.Shape, shape))
}

func (n *net) paramName(name string) string {
	if n.prefix != "" {
		return n.prefix + "/" + name
	}
	return name
}

// GAP is GlobalAveragePool.
func (t T) GAP() T {
	return t.n.node("GlobalAveragePool", []string{t.Name}, nil, t.DType, graph.Shape{t.Shape[0], t.Shape[1], 1, 1})
}

func poolSize(in, k, s, p int64) int64 { return (in+2*p-k)/s + 1 }

// MaxPool is a square max pooling.
func (t T) MaxPool(k, stride, pad int64) T {
	shape := graph.Shape{t.Shape[0], t.Shape[1], poolSize(t.Shape[2], k, stride, pad), poolSize(t.Shape[3], k, stride, pad)}
	return t.n.node("MaxPool", []string{t.Name}, graph.Attrs{
		intsAttr("kernel_shape", k, k), intsAttr("pads", pad, pad, pad, pad), intsAttr("strides", stride, stride),
	}, t.DType, shape)
}

// MaxPoolCeil is an unpadded square max pooling with ceil_mode (PyTorch's
// MaxPool2d(ceil_mode=True), as SqueezeNet uses).
func (t T) MaxPoolCeil(k, stride int64) T {
	size := func(in int64) int64 { return (in-k+stride-1)/stride + 1 }
	shape := graph.Shape{t.Shape[0], t.Shape[1], size(t.Shape[2]), size(t.Shape[3])}
	return t.n.node("MaxPool", []string{t.Name}, graph.Attrs{
		intAttr("ceil_mode", 1), intsAttr("kernel_shape", k, k), intsAttr("pads", 0, 0, 0, 0), intsAttr("strides", stride, stride),
	}, t.DType, shape)
}

// AvgPool is a square average pooling that counts padding (PyTorch's default).
func (t T) AvgPool(k, stride, pad int64) T {
	shape := graph.Shape{t.Shape[0], t.Shape[1], poolSize(t.Shape[2], k, stride, pad), poolSize(t.Shape[3], k, stride, pad)}
	return t.n.node("AveragePool", []string{t.Name}, graph.Attrs{
		intAttr("count_include_pad", 1), intsAttr("kernel_shape", k, k), intsAttr("pads", pad, pad, pad, pad), intsAttr("strides", stride, stride),
	}, t.DType, shape)
}

// Flatten keeps axis 0 and flattens the rest.
func (t T) Flatten() T {
	rest, _ := t.Shape[1:].Elements()
	return t.n.node("Flatten", []string{t.Name}, graph.Attrs{intAttr("axis", 1)}, t.DType, graph.Shape{t.Shape[0], rest})
}

// Gemm is a fully connected layer on a 2-D input: x·Wᵀ + b (PyTorch Linear).
func (t T) Gemm(out int64) T {
	n := t.n
	name := n.uniqueName("Gemm")
	w := n.param(name+".weight", out, t.Shape[1])
	b := n.param(name+".bias", out)
	return n.emit(name, "Gemm", []string{t.Name, w, b}, graph.Attrs{intAttr("transB", 1)}, t.DType, graph.Shape{t.Shape[0], out})
}

// Linear is a fully connected layer on the last axis of an N-D input:
// MatMul with a [in, out] weight, then Add of the bias when bias is set.
func (t T) Linear(out int64, bias bool) T {
	n := t.n
	in := t.Shape[len(t.Shape)-1]
	name := n.uniqueName("MatMul")
	w := n.param(name+".weight", in, out)
	shape := t.Shape.Clone()
	shape[len(shape)-1] = out
	y := n.emit(name, "MatMul", []string{t.Name, w}, nil, t.DType, shape)
	if !bias {
		return y
	}
	b := n.param(name+".bias", out)
	return n.node("Add", []string{y.Name, b}, nil, t.DType, shape)
}

// MatMul multiplies two activations (batched over leading axes).
func (t T) MatMul(o T) T {
	r := len(t.Shape)
	if len(o.Shape) != r || t.Shape[r-1] != o.Shape[r-2] {
		panic(fmt.Sprintf("zoo: matmul %s by %s", t.Shape, o.Shape))
	}
	shape := t.Shape.Clone()
	shape[r-1] = o.Shape[r-1]
	return t.n.node("MatMul", []string{t.Name, o.Name}, nil, t.DType, shape)
}

// Concat joins tensors along an axis.
func (t T) Concat(axis int, others ...T) T {
	names := []string{t.Name}
	shape := t.Shape.Clone()
	for _, o := range others {
		names = append(names, o.Name)
		shape[axis] += o.Shape[axis]
	}
	return t.n.node("Concat", names, graph.Attrs{intAttr("axis", int64(axis))}, t.DType, shape)
}

// Reshape changes the shape to fully given dimensions.
func (t T) Reshape(shape ...int64) T {
	a, _ := t.Shape.Elements()
	b, _ := graph.Shape(shape).Elements()
	if a != b {
		panic(fmt.Sprintf("zoo: reshape %s to %v", t.Shape, shape))
	}
	return t.n.node("Reshape", []string{t.Name, t.n.constI64(shape, int64(len(shape)))}, nil, t.DType, graph.Shape(shape))
}

// Transpose permutes the axes.
func (t T) Transpose(perm ...int64) T {
	shape := make(graph.Shape, len(perm))
	for i, p := range perm {
		shape[i] = t.Shape[p]
	}
	return t.n.node("Transpose", []string{t.Name}, graph.Attrs{intsAttr("perm", perm...)}, t.DType, shape)
}

// Slice takes [start, end) along one axis.
func (t T) Slice(axis, start, end int64) T {
	n := t.n
	shape := t.Shape.Clone()
	shape[axis] = end - start
	return n.node("Slice", []string{t.Name, n.constI64([]int64{start}, 1), n.constI64([]int64{end}, 1), n.constI64([]int64{axis}, 1)}, nil, t.DType, shape)
}

// Pick gathers index i of an axis, dropping the axis.
func (t T) Pick(axis, i int64) T {
	shape := append(t.Shape[:axis:axis].Clone(), t.Shape[axis+1:]...)
	return t.n.node("Gather", []string{t.Name, t.n.constI64([]int64{i})}, graph.Attrs{intAttr("axis", axis)}, t.DType, shape)
}

// Pad pads with zeros: pads lists begin values for every axis, then end values.
func (t T) Pad(pads ...int64) T {
	shape := t.Shape.Clone()
	r := len(shape)
	for i := range shape {
		shape[i] += pads[i] + pads[r+i]
	}
	return t.n.node("Pad", []string{t.Name, t.n.constI64(pads, int64(len(pads)))}, graph.Attrs{strAttr("mode", "constant")}, t.DType, shape)
}

// Softmax normalises along an axis.
func (t T) Softmax(axis int64) T {
	return t.unary("Softmax", intAttr("axis", axis))
}

// LayerNorm normalises the last axis with learned scale and bias.
func (t T) LayerNorm(eps float32) T {
	n := t.n
	d := t.Shape[len(t.Shape)-1]
	name := n.uniqueName("LayerNormalization")
	inputs := []string{t.Name, n.paramFilled(name+".weight", 1, d), n.paramFilled(name+".bias", 0, d)}
	return n.emit(name, "LayerNormalization", inputs, graph.Attrs{intAttr("axis", -1), floatAttr("epsilon", eps)}, t.DType, t.Shape)
}

// Resize scales an NCHW tensor to h×w: bilinear with PyTorch's
// align_corners=False sampling, or nearest.
func (t T) Resize(h, w int64, mode string) T {
	n := t.n
	attrs := graph.Attrs{strAttr("mode", mode)}
	if mode == "linear" {
		attrs = append(attrs, strAttr("coordinate_transformation_mode", "pytorch_half_pixel"))
	} else {
		attrs = append(attrs, strAttr("coordinate_transformation_mode", "asymmetric"), strAttr("nearest_mode", "floor"))
	}
	sizes := n.constI64([]int64{t.Shape[0], t.Shape[1], h, w}, 4)
	return n.node("Resize", []string{t.Name, "", "", sizes}, attrs, t.DType, graph.Shape{t.Shape[0], t.Shape[1], h, w})
}

// Embedding looks rows of a learned [vocab, dim] table up by the int64
// indices in t.
func (t T) Embedding(name string, vocab, dim int64) T {
	n := t.n
	table := n.param(n.paramName(name), vocab, dim)
	shape := append(t.Shape.Clone(), dim)
	return n.node("Gather", []string{table, t.Name}, graph.Attrs{intAttr("axis", 0)}, graph.Float32, shape)
}
