package train

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/zoo"
)

// Network is a graph network (a zoo network or an ONNX file, through
// inlay's graph IR) as training prices it: its layers in the layer
// graph's topological order, every figure per sample. A Model with a
// Network trains with data and pipeline parallelism only; its "tokens"
// are samples.
type Network struct {
	// Input is one sample's input shape (without the batch dimension).
	Input graph.Shape `json:"input"`
	// Layers are the layer graph's layers (graph.BuildLayers), in order.
	Layers []NetLayer `json:"layers"`
	// InputElems are the elements of one sample's inputs.
	InputElems float64 `json:"input_elems"`
}

// NetLayer is one graph layer per sample. Elements are counted, not
// bytes: the plan's precision gives the bytes.
type NetLayer struct {
	Name string `json:"name"`
	Op   string `json:"op"`
	// MACs are the multiply-accumulates of its matrix operators (Conv,
	// Gemm, MatMul, …); FLOPs every operation of its nodes, a
	// multiply-add counted as two (graph.Work's conventions).
	MACs  float64 `json:"macs"`
	FLOPs float64 `json:"flops"`
	// MatElems are the activation elements its matrix operators read and
	// write; MatWeights the weight elements they read (once a
	// micro-batch, not per sample).
	MatElems   float64 `json:"mat_elems"`
	MatWeights float64 `json:"mat_weights"`
	// StreamElems are the elements its memory-bound nodes (element-wise,
	// normalisation, pooling, data movement) read and write.
	StreamElems float64 `json:"stream_elems"`
	// Kernels is the number of kernels its forward launches.
	Kernels int `json:"kernels"`
	// Params are its trainable parameters.
	Params int64 `json:"params"`
	// Saved are the activation elements its backward needs kept (each
	// tensor counted once, on the first layer that keeps it).
	Saved float64 `json:"saved"`
	// Cut is the elements of the one tensor crossing from this layer and
	// those before it to the layers after it, or -1 when more than one
	// tensor crosses (no pipeline stage may end here).
	Cut float64 `json:"cut"`
	// NoInputGrad marks a layer whose matrix operators read only the
	// graph's inputs: their input gradient is never computed.
	NoInputGrad bool `json:"no_input_grad,omitempty"`
}

// MACs is the network's multiply-accumulates per sample.
func (n *Network) MACs() float64 {
	s := 0.0
	for i := range n.Layers {
		s += n.Layers[i].MACs
	}
	return s
}

// FLOPs is the network's forward work per sample, a multiply-add counted
// as two FLOPs (so about 2 × MACs).
func (n *Network) FLOPs() float64 {
	s := 0.0
	for i := range n.Layers {
		s += n.Layers[i].FLOPs
	}
	return s
}

// Params is the network's trainable parameters.
func (n *Network) Params() int64 {
	var s int64
	for i := range n.Layers {
		s += n.Layers[i].Params
	}
	return s
}

// rangeParams is the parameters of layers r.
func (n *Network) rangeParams(r LayerRange) float64 {
	s := 0.0
	for i := r.First; i <= r.Last; i++ {
		s += float64(n.Layers[i].Params)
	}
	return s
}

// stageInput is the elements per sample that enter a stage starting at
// layer first: the graph's input, or the tensor crossing the cut before it.
func (n *Network) stageInput(first int) float64 {
	if first == 0 {
		return n.InputElems
	}
	return math.Max(n.Layers[first-1].Cut, 0)
}

// freeOps are views and shape operators: no kernel, nothing kept.
var freeOps = map[string]bool{
	"Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true, "Identity": true,
	"Shape": true, "Constant": true, "Size": true, "ConstantOfShape": true,
}

// savesOutput are the operators whose backward reads their output
// (PyTorch keeps the result of ReLU, sigmoid, tanh and softmax).
var savesOutput = map[string]bool{
	"Relu": true, "Sigmoid": true, "Tanh": true, "Softmax": true, "LogSoftmax": true, "Exp": true, "Clip": true,
}

// savesNothing are the operators whose backward needs no activation:
// sums, data movement and average pooling (only the shape).
var savesNothing = map[string]bool{
	"Add": true, "Sub": true, "Concat": true, "Split": true, "Slice": true, "Pad": true, "Transpose": true,
	"AveragePool": true, "GlobalAveragePool": true, "Resize": true, "Upsample": true, "Neg": true,
	"Tile": true, "Expand": true, "Gather": true, "ReduceMean": true, "ReduceSum": true, "Cast": true,
}

// NewNetwork prices a model whose shapes and work are known (after shape
// inference) and its layer graph, for batch samples in the model's
// input's first dimension.
func NewNetwork(m *graph.Model, lg *graph.LayerGraph) (*Network, error) {
	if len(m.Inputs) == 0 {
		return nil, fmt.Errorf("the model has no inputs")
	}
	if len(lg.Layers) == 0 {
		return nil, fmt.Errorf("the model has no layers")
	}
	first := m.Tensors[m.Inputs[0]]
	if first == nil || len(first.Shape) == 0 || !first.Shape.Known() || first.Shape[0] < 1 {
		return nil, fmt.Errorf("input %s: want a known shape [N, …] (give --input)", m.Inputs[0])
	}
	batch := float64(first.Shape[0])
	net := &Network{Input: first.Shape[1:].Clone()}
	elems := func(name string) float64 {
		t := m.Tensors[name]
		if t == nil || t.DType.Size() == 0 {
			return 0
		}
		n, ok := t.Shape.Elements()
		if !ok {
			return 0
		}
		return float64(n) / batch
	}
	isInput := map[string]bool{}
	for _, in := range m.Inputs {
		isInput[in] = true
		net.InputElems += elems(in)
	}
	trainable := m.TrainableSet()
	counted := map[string]bool{} // parameters and kept tensors, counted once
	activation := func(name string) bool {
		t := m.Tensors[name]
		return name != "" && t != nil && !t.IsConst() && t.DType.IsFloat()
	}
	for _, l := range lg.Layers {
		nl := NetLayer{Name: l.Name, Op: l.Op, Cut: -1}
		onlyInputs := true
		keep := func(name string) {
			if activation(name) && !counted[name] {
				counted[name] = true
				nl.Saved += elems(name)
			}
		}
		for _, id := range l.Nodes {
			n := m.Nodes[id]
			var act, weights float64
			for _, in := range n.Reads() {
				if in == "" || m.Tensors[in] == nil {
					continue
				}
				if p, ok := trainable[in]; ok && !counted[in] {
					counted[in] = true
					nl.Params += p
				}
				if activation(in) {
					act += elems(in)
					if !isInput[in] && n.Work.MACs > 0 {
						onlyInputs = false
					}
				} else if m.Tensors[in].IsConst() {
					if e, ok := m.Tensors[in].Shape.Elements(); ok {
						weights += float64(e)
					}
				}
			}
			for _, o := range n.Outputs {
				if activation(o) {
					act += elems(o)
				}
			}
			nl.FLOPs += float64(n.Work.FLOPs) / batch
			switch {
			case n.Work.MACs > 0:
				nl.MACs += float64(n.Work.MACs) / batch
				nl.MatElems += act
				nl.MatWeights += weights
				nl.Kernels++
				for _, in := range n.Reads() { // the weight gradient reads the input
					keep(in)
				}
			case freeOps[n.Op]:
			default:
				nl.StreamElems += act
				nl.Kernels++
				switch {
				case savesNothing[n.Op]:
				case savesOutput[n.Op]:
					for _, o := range n.Outputs {
						keep(o)
					}
				default: // normalisations, products, max pooling: the inputs
					for _, in := range n.Reads() {
						keep(in)
					}
					if n.Op == "MaxPool" || n.Op == "GlobalMaxPool" {
						for _, o := range n.Outputs {
							keep(o)
						}
					}
				}
			}
		}
		nl.NoInputGrad = onlyInputs && nl.MACs > 0
		net.Layers = append(net.Layers, nl)
	}
	// The tensors crossing each cut: a tensor made by layer f (-1 for a
	// graph input) and read up to layer t crosses the cuts after f … t−1.
	L := len(lg.Layers)
	last := map[string]int{}
	from := map[string]int{}
	for _, e := range lg.Edges {
		if t, ok := last[e.Tensor]; !ok || e.To > t {
			last[e.Tensor] = e.To
		}
		from[e.Tensor] = e.From
	}
	for _, in := range m.Inputs {
		if m.Tensors[in] == nil {
			continue
		}
		for _, c := range m.Tensors[in].Consumers {
			if l := lg.NodeLayer[c]; l >= 0 && l > last[in] {
				last[in] = l
				from[in] = -1
			}
		}
	}
	count := make([]int, L)
	cut := make([]float64, L)
	for _, name := range m.SortedTensorNames() {
		t, ok := last[name]
		if !ok {
			continue
		}
		for i := max(from[name], 0); i < t; i++ {
			count[i]++
			cut[i] += elems(name)
		}
	}
	for i := 0; i < L-1; i++ {
		if count[i] == 1 {
			net.Layers[i].Cut = cut[i]
		}
	}
	net.Layers[L-1].Cut = 0
	return net, nil
}

// validCut reports whether a pipeline stage may end after layer i.
func (n *Network) validCut(i int) bool { return i == len(n.Layers)-1 || n.Layers[i].Cut >= 0 }

// EvenCuts splits the layers into pp stages of about equal forward
// FLOPs, ending every stage but the last at a layer after which one
// tensor crosses; false when there are fewer such cuts than pp − 1.
func (n *Network) EvenCuts(pp int) ([]LayerRange, bool) {
	return n.cuts(pp, func(i int) float64 { return n.Layers[i].FLOPs })
}

// BalancedStages splits a graph network's layers into pp stages of about
// equal time per micro-batch (forward, backward and recomputation) on GPU
// type g under plan p's precision, micro-batch and recomputation, each
// stage but the last ending where one tensor crosses; false when there
// are fewer such places than pp − 1 or m is not a graph network.
func BalancedStages(m *Model, g *GPU, p *Plan, pp int) ([]LayerRange, bool) {
	if m.Net == nil {
		return nil, false
	}
	prec := planPrecision(p)
	d := newDevice(g, prec)
	return m.Net.cuts(pp, func(i int) float64 {
		c := netCost(&m.Net.Layers[i], &d, prec, float64(p.MicroBatch), p.Recompute == "full")
		return c.fwd + c.bwd + c.recompute
	})
}

// cuts splits the layers into pp stages of about equal weight, each but
// the last ending at a valid cut: stage s ends at the cut whose prefix
// weight is nearest s/pp of the whole, leaving a cut for every later
// stage.
func (n *Network) cuts(pp int, weight func(i int) float64) ([]LayerRange, bool) {
	var cuts []int
	for i := 0; i < len(n.Layers)-1; i++ {
		if n.validCut(i) {
			cuts = append(cuts, i)
		}
	}
	if pp < 1 || len(cuts) < pp-1 {
		return nil, false
	}
	prefix := make([]float64, len(n.Layers))
	acc := 0.0
	for i := range n.Layers {
		acc += weight(i)
		prefix[i] = acc
	}
	out := make([]LayerRange, 0, pp)
	first, ci := 0, 0
	for s := 1; s < pp; s++ {
		target := acc * float64(s) / float64(pp)
		best := -1
		for j := ci; j <= len(cuts)-(pp-s); j++ {
			if best < 0 || math.Abs(prefix[cuts[j]]-target) < math.Abs(prefix[cuts[best]]-target) {
				best = j
			}
		}
		out = append(out, LayerRange{First: first, Last: cuts[best]})
		first, ci = cuts[best]+1, best+1
	}
	return append(out, LayerRange{First: first, Last: len(n.Layers) - 1}), true
}

// netCost is one graph layer's time per micro-batch of b samples.
//
// Forward: a roofline per layer with the GPU type's calibrated figures as
// the transformer's GEMMs use them — the matrix operators' FLOPs at the
// fitted GEMM efficiency plus their operand traffic (scaled by
// GEMMTraffic) at the memory bandwidth, the memory-bound nodes' traffic at
// the fitted element-wise fraction of the bandwidth — and at least the
// host's dispatch of the layer's kernels (LaunchUs each).
//
// Backward, by operator class:
//   - matrix operators (Conv, Gemm, MatMul): 2 × the forward — the input
//     gradient and the weight gradient are each a product of the forward's
//     size over the same operands; 1 × for a layer that reads only the
//     graph's input, whose input gradient frameworks skip.
//   - memory-bound operators (element-wise, normalisation, pooling):
//     2 × the forward's traffic — the backward reads the kept tensor and
//     the output gradient and writes the input gradient, and a batch
//     normalisation makes a second pass for its reductions. The
//     transformer path's fitted Backward ratio is not used: it was fitted
//     to a transformer block's element-wise mix (bias-dropout-add, GeLU,
//     softmax), not to convolutional networks' normalisations.
func netCost(l *NetLayer, d *device, prec precision, b float64, recompute bool) layerCost {
	mat := b*2*l.MACs/(d.peak*d.eG) + d.eT*(b*l.MatElems*prec.act+l.MatWeights*prec.param)/d.bw
	stream := d.stream(b * l.StreamElems * prec.act)
	kernels := float64(l.Kernels) * d.launch
	matB := 2 * mat
	if l.NoInputGrad {
		matB = mat
	}
	c := layerCost{fwd: math.Max(mat+stream, kernels), bwd: math.Max(matB+2*stream, 2*kernels)}
	if recompute {
		c.recompute = c.fwd
	}
	return c
}

// netStage is a stage's forward and backward (with recomputation) time
// per micro-batch.
func netStage(n *Network, r LayerRange, d *device, prec precision, b int, recompute bool) (fwd, bwd float64) {
	for i := r.First; i <= r.Last; i++ {
		c := netCost(&n.Layers[i], d, prec, float64(b), recompute)
		fwd += c.fwd
		bwd += c.bwd + c.recompute
	}
	return fwd, bwd
}

// netStageMemory is a graph stage's activations (kept for the backward
// of the micro-batches in flight) and buffers (the pipeline's send and
// receive buffers of activations and gradients, the largest layer's
// tensors and their gradients while it runs backward, and under full
// recomputation one micro-batch's activations re-made).
func netStageMemory(n *Network, p *Plan, s int, prec precision) (acts, bufs float64) {
	r := p.Stages[s]
	b := float64(p.MicroBatch)
	saved, largest := 0.0, 0.0
	for i := r.First; i <= r.Last; i++ {
		saved += n.Layers[i].Saved
		largest = math.Max(largest, n.Layers[i].MatElems+n.Layers[i].StreamElems)
	}
	in := n.stageInput(r.First)
	out := math.Max(n.Layers[r.Last].Cut, 0)
	inflight := inFlight(p, s)
	if p.Recompute == "full" {
		acts = in * b * prec.act * inflight
		bufs = saved * b * prec.act
	} else {
		acts = saved * b * prec.act * inflight
	}
	bufs += 2*(in+out)*b*prec.act + largest*b*prec.act
	return acts, bufs
}

// netSendBytes is the bytes stage s sends the next per micro-batch (to
// stage 0 for the last: the interleaved schedule's wrap).
func netSendBytes(n *Network, p *Plan, s int, prec precision) float64 {
	last := p.Stages[s].Last
	if s == len(p.Stages)-1 {
		last = p.Stages[0].Last
	}
	return math.Max(n.Layers[last].Cut, 0) * float64(p.MicroBatch) * prec.act
}

// checkNet checks what a plan may do with a graph network: no tensor or
// context parallelism, no selective recomputation, stages ending where
// one tensor crosses.
func (p *Plan) checkNet(m *Model) error {
	n := m.Net
	for i, s := range p.Stages[:len(p.Stages)-1] {
		if !n.validCut(s.Last) {
			return fmt.Errorf("stages[%d]: ends after layer %d (%s), where more than one tensor crosses; a pipeline stage of %s must end where one does", i, s.Last, n.Layers[s.Last].Name, m.Name)
		}
	}
	for r, rep := range p.Replicas {
		for s, pl := range rep.Stages {
			if pl.TP > 1 {
				return fmt.Errorf("replicas[%d].stages[%d].tp: %d: %s is a graph network; it trains with data and pipeline parallelism only (tp 1)", r, s, pl.TP, m.Name)
			}
		}
	}
	if p.CP > 1 {
		return fmt.Errorf("cp: %d: %s is a graph network; it trains with data and pipeline parallelism only (cp 1)", p.CP, m.Name)
	}
	if p.Recompute == "selective" {
		return fmt.Errorf("recompute: selective recomputes a transformer's attention, which %s does not have; use none or full", m.Name)
	}
	if p.SequenceParallel {
		return fmt.Errorf("sequence_parallel: %s is a graph network; it has no sequence to split", m.Name)
	}
	return nil
}

// graphModelArg reports whether a model argument names a graph network:
// zoo:NAME, a zoo network's name, or an .onnx file.
func graphModelArg(s string) bool {
	if strings.HasPrefix(s, "zoo:") || strings.HasSuffix(strings.ToLower(s), ".onnx") {
		return true
	}
	_, err := zoo.Lookup(s)
	return err == nil
}

// ParseInputShape reads one sample's input shape: "3x224x224" or
// "3,224,224" (no batch dimension).
func ParseInputShape(s string) (graph.Shape, error) {
	sep := "x"
	if strings.Contains(s, ",") {
		sep = ","
	}
	var out graph.Shape
	for _, f := range strings.Split(strings.TrimSpace(s), sep) {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || v < 1 || v > 1<<16 {
			return nil, fmt.Errorf("--input %q: want one sample's dimensions, e.g. 3x224x224", s)
		}
		out = append(out, v)
	}
	if len(out) == 0 || len(out) > 8 {
		return nil, fmt.Errorf("--input %q: want one sample's dimensions, e.g. 3x224x224", s)
	}
	return out, nil
}

// ResolveNetwork builds the graph network a model argument names (zoo:NAME,
// a zoo name, or an ONNX file) at one sample's input shape (empty: the
// zoo network's default, or the file's own shape with batch 1).
func ResolveNetwork(s, input string) (Model, error) {
	var in graph.Shape
	if input != "" {
		var err error
		if in, err = ParseInputShape(input); err != nil {
			return Model{}, fmt.Errorf("train: %v", err)
		}
	}
	var m *graph.Model
	name := strings.TrimPrefix(s, "zoo:")
	if _, statErr := os.Stat(s); statErr != nil && !strings.HasSuffix(strings.ToLower(s), ".onnx") {
		var full graph.Shape
		if in != nil {
			full = append(graph.Shape{1}, in...)
		}
		var err error
		if m, err = zoo.BuildWith(name, full); err != nil {
			return Model{}, fmt.Errorf("train: model %s: %s", s, strings.TrimPrefix(err.Error(), "zoo: "))
		}
	} else {
		opt := onnx.Options{}
		if in != nil {
			first, err := onnxFirstInput(s)
			if err != nil {
				return Model{}, err
			}
			opt.Inputs = map[string]graph.Shape{first: append(graph.Shape{1}, in...)}
		}
		var err error
		if m, err = onnx.Load(s, opt); err != nil {
			if strings.Contains(err.Error(), "--input") {
				// the loader's hint names its own form of the flag
				return Model{}, fmt.Errorf("train: %v (inlay train's --input is one sample's shape, e.g. 3x224x224)", err)
			}
			return Model{}, fmt.Errorf("train: %v", err)
		}
	}
	lg, err := graph.BuildLayers(m)
	if err != nil {
		return Model{}, fmt.Errorf("train: model %s: %v", s, err)
	}
	net, err := NewNetwork(m, lg)
	if err != nil {
		return Model{}, fmt.Errorf("train: model %s: %v", s, err)
	}
	return NetworkModel(name, net), nil
}

// onnxFirstInput is the name of an ONNX file's first graph input.
func onnxFirstInput(path string) (string, error) {
	names, err := onnx.InputNames(path)
	if err != nil {
		return "", fmt.Errorf("train: %v", err)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("train: %s: the model has no graph inputs", path)
	}
	return names[0], nil
}

// NetworkModel is the training model of a graph network: one "token" a
// sample, one layer a graph layer.
func NetworkModel(name string, net *Network) Model {
	return Model{Name: name, Layers: len(net.Layers), Seq: 1, Net: net}
}

// NetworkInfo is one zoo network as a training model (inlay train models):
// --model zoo:NAME at its default --input.
type NetworkInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Input is the default input per sample in --input's form
	// (3x224x224); InputShape the same as numbers.
	Input      string      `json:"input"`
	InputShape graph.Shape `json:"input_shape"`
	// Fixed marks a network that takes only Input; the others take any
	// image size their strides divide.
	Fixed bool `json:"fixed,omitempty"`
	// Layers are the graph layers (pipeline stages split between them),
	// Params the trainable parameters, ForwardFLOPs one sample's forward
	// work at Input.
	Layers       int     `json:"layers"`
	Params       int64   `json:"params"`
	ForwardFLOPs float64 `json:"forward_flops"`
}

// FormatInputShape writes a shape in --input's form (3x224x224).
func FormatInputShape(s graph.Shape) string {
	f := make([]string, len(s))
	for i, d := range s {
		f[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(f, "x")
}

// Networks lists the zoo networks that train as graph networks, in the
// zoo's order, each built once at its default input (a network the
// training model cannot price is left out).
var Networks = sync.OnceValue(func() []NetworkInfo {
	var out []NetworkInfo
	for _, sp := range zoo.Specs() {
		m, err := ResolveNetwork("zoo:"+sp.Name, "")
		if err != nil {
			continue
		}
		in := sp.Input[1:]
		out = append(out, NetworkInfo{Name: "zoo:" + sp.Name, Description: sp.Description, Input: FormatInputShape(in),
			InputShape: in.Clone(), Fixed: sp.Fixed, Layers: len(m.Net.Layers), Params: m.Net.Params(), ForwardFLOPs: m.Net.FLOPs()})
	}
	return out
})
