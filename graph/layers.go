package graph

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Layer is a planning unit: one compute operator (the anchor) with the cheap
// element-wise and data-movement nodes that ride with it.
type Layer struct {
	ID int
	// Name is the anchor node's name (or the first node's when it has none).
	Name string
	// Op is the anchor node's operator.
	Op string
	// Nodes are the IDs of the model nodes in the layer, in topological order.
	Nodes []int
	// Work sums the nodes' work.
	Work Work
	// Inputs are the activation tensors (graph inputs included) read from
	// outside the layer, sorted by name. Constants are not listed.
	Inputs []string
	// Outputs are the tensors written by the layer that another layer reads
	// or that are graph outputs, sorted by name.
	Outputs []string
	// Precision is the quantized type the layer computes in: the integer
	// (or float8) type of a QLinear/Integer operator's input, or of the
	// DequantizeLinear feeding a QDQ layer (DequantizeLinear → op →
	// QuantizeLinear, folded into one layer as delegates fuse it).
	// Undefined for a float layer.
	Precision DType
}

// LayerEdge is one tensor flowing from one layer to another.
type LayerEdge struct {
	From, To int
	Tensor   string
	Bytes    int64
}

// LayerGraph is the condensed view of a model used for planning. Layers are
// numbered in a topological order: every edge goes from a lower to a higher ID.
type LayerGraph struct {
	Model  *Model
	Layers []*Layer
	// NodeLayer maps a node ID to its layer ID, or -1 for nodes folded away
	// (constants and shape arithmetic whose outputs are all known at load time).
	NodeLayer []int
	// Preds and Succs list each layer's distinct neighbour layers, ascending.
	Preds, Succs [][]int
	// Edges are all inter-layer tensor edges, sorted by (From, To, Tensor).
	Edges []LayerEdge
}

// anchorOps start a layer of their own even when they do no MACs.
var anchorOps = map[string]bool{
	"If": true, "Loop": true, "Scan": true,
	"MaxPool": true, "AveragePool": true, "GlobalAveragePool": true, "GlobalMaxPool": true,
	"LpPool": true, "GlobalLpPool": true, "MaxRoiPool": true, "RoiAlign": true, "MaxUnpool": true,
	"Resize": true, "Upsample": true, "Softmax": true, "LogSoftmax": true, "Hardmax": true,
	"ReduceMean": true, "ReduceSum": true, "ReduceMax": true, "ReduceMin": true, "ReduceProd": true,
	"ReduceL1": true, "ReduceL2": true, "ReduceLogSum": true, "ReduceLogSumExp": true, "ReduceSumSquare": true,
	"TopK": true, "NonMaxSuppression": true, "LSTM": true, "GRU": true, "RNN": true,
	"LayerNormalization": true, "InstanceNormalization": true, "GroupNormalization": true,
	"LRN": true, "DFT": true, "STFT": true, "GridSample": true, "CumSum": true,
	"ArgMax": true, "ArgMin": true, "NonZero": true,
}

// IsAnchor reports whether a node starts a layer of its own: it does MACs or
// its operator is in the anchor set (pooling, resizing, softmax, reductions,
// recurrent and control-flow operators, normalisations).
func IsAnchor(n *Node) bool { return n.Work.MACs > 0 || anchorOps[n.Op] }

// BuildLayers condenses a model whose shapes and work are known (after shape
// inference) into a layer graph. Nodes whose outputs are all constant are
// folded away; every other node either anchors a new layer or joins the layer
// of its latest-numbered producer, which keeps every edge going forward and
// the layer graph acyclic.
func BuildLayers(m *Model) (*LayerGraph, error) {
	order, err := m.TopoOrder()
	if err != nil {
		return nil, err
	}
	lg := &LayerGraph{Model: m, NodeLayer: make([]int, len(m.Nodes))}
	for i := range lg.NodeLayer {
		lg.NodeLayer[i] = -1
	}
	// A DequantizeLinear waits for its first consumer and joins that
	// consumer's layer, so that DequantizeLinear → op → QuantizeLinear is
	// one layer and the tensor between two quantized layers stays quantized.
	deferred := map[int]bool{}
	place := func(id, layer int) {
		l := lg.Layers[layer]
		l.Nodes = append(l.Nodes, id)
		l.Work = l.Work.Add(m.Nodes[id].Work)
		lg.NodeLayer[id] = layer
	}
	// latestOf is the latest layer producing an input of node id, looking
	// through deferred DequantizeLinear nodes; -1 when none.
	var latestOf func(id int) int
	latestOf = func(id int) int {
		latest := -1
		for _, in := range m.Nodes[id].Reads() {
			t := m.Tensors[in]
			if in == "" || t == nil || t.IsConst() || t.Producer < 0 {
				continue
			}
			l := lg.NodeLayer[t.Producer]
			if deferred[t.Producer] {
				l = latestOf(t.Producer)
			}
			if l > latest {
				latest = l
			}
		}
		return latest
	}
	// takeDeferred places the deferred DequantizeLinear nodes that node id
	// reads into layer, before the node.
	var takeDeferred func(id, layer int)
	takeDeferred = func(id, layer int) {
		for _, in := range m.Nodes[id].Reads() {
			t := m.Tensors[in]
			if in == "" || t == nil || t.Producer < 0 || !deferred[t.Producer] {
				continue
			}
			delete(deferred, t.Producer)
			takeDeferred(t.Producer, layer)
			place(t.Producer, layer)
		}
	}
	isOutput := map[string]bool{}
	for _, o := range m.Outputs {
		isOutput[o] = true
	}
	for _, id := range order {
		n := m.Nodes[id]
		if nodeIsConstant(m, n) {
			continue
		}
		if isDequantize(n) && len(n.Outputs) == 1 && !isOutput[n.Outputs[0]] {
			if t := m.Tensors[n.Outputs[0]]; t != nil && len(t.Consumers) > 0 {
				deferred[id] = true
				continue
			}
		}
		latest := latestOf(id)
		if latest < 0 || IsAnchor(n) {
			l := &Layer{ID: len(lg.Layers), Name: n.Name, Op: n.Op}
			lg.Layers = append(lg.Layers, l)
			latest = l.ID
		} else if l := lg.Layers[latest]; !IsAnchor(m.Nodes[l.Nodes[0]]) && IsAnchor(n) {
			l.Name, l.Op = n.Name, n.Op
		}
		takeDeferred(id, latest)
		place(id, latest)
	}
	for _, id := range order { // never consumed by a placed node
		if deferred[id] {
			delete(deferred, id)
			l := &Layer{ID: len(lg.Layers), Name: m.Nodes[id].Name, Op: m.Nodes[id].Op}
			lg.Layers = append(lg.Layers, l)
			place(id, l.ID)
		}
	}
	for _, l := range lg.Layers {
		l.Precision = layerPrecision(m, l)
	}
	for _, l := range lg.Layers {
		if l.Name == "" {
			l.Name = fmt.Sprintf("%s_%d", strings.ToLower(l.Op), l.ID)
		}
	}
	lg.link()
	return lg, nil
}

func isDequantize(n *Node) bool {
	return n.Op == "DequantizeLinear" && (n.Domain == "" || n.Domain == "ai.onnx" || n.Domain == "com.microsoft")
}

func isQuantize(n *Node) bool {
	return n.Op == "QuantizeLinear" && (n.Domain == "" || n.Domain == "ai.onnx" || n.Domain == "com.microsoft")
}

// quantizedOps are the operator-oriented quantized operators, each with
// the input whose type is the one it computes in.
var quantizedOps = map[string]int{
	"QLinearConv": 0, "QLinearMatMul": 0, "ConvInteger": 0, "MatMulInteger": 0,
	"QGemm": 0, "QLinearAdd": 0, "QLinearMul": 0, "QLinearSigmoid": 0, "QLinearLeakyRelu": 0,
	"QLinearSoftmax": 0, "QLinearAveragePool": 0, "QLinearGlobalAveragePool": 0, "QLinearConcat": 2,
	"MatMulIntegerToFloat": 0, "QAttention": 0, "DynamicQuantizeMatMul": 1,
}

// layerPrecision is a layer's quantized compute type (see Layer.Precision).
func layerPrecision(m *Model, l *Layer) DType {
	hasQ := false
	actDQ, weightDQ := Undefined, Undefined
	for _, id := range l.Nodes {
		n := m.Nodes[id]
		if i, ok := quantizedOps[n.Op]; ok && i < len(n.Inputs) {
			if t := m.Tensors[n.Inputs[i]]; t != nil && t.DType.IsQuantized() {
				return t.DType
			}
		}
		switch {
		case isQuantize(n):
			hasQ = true
		case isDequantize(n) && len(n.Inputs) > 0:
			t := m.Tensors[n.Inputs[0]]
			if t == nil || !t.DType.IsQuantized() {
				continue
			}
			if t.IsConst() {
				if weightDQ == Undefined {
					weightDQ = t.DType
				}
			} else if actDQ == Undefined {
				actDQ = t.DType
			}
		}
	}
	if !hasQ && actDQ == Undefined {
		return Undefined // weight-only dequantization computes in float
	}
	if actDQ != Undefined {
		return actDQ
	}
	return weightDQ
}

func nodeIsConstant(m *Model, n *Node) bool {
	any := false
	for _, o := range n.Outputs {
		if o == "" {
			continue
		}
		any = true
		if t := m.Tensors[o]; t == nil || !t.IsConst() {
			return false
		}
	}
	return any
}

func (lg *LayerGraph) link() {
	m := lg.Model
	nl := len(lg.Layers)
	preds := make([]map[int]bool, nl)
	succs := make([]map[int]bool, nl)
	for i := range preds {
		preds[i], succs[i] = map[int]bool{}, map[int]bool{}
	}
	isOut := map[string]bool{}
	for _, o := range m.Outputs {
		isOut[o] = true
	}
	for _, l := range lg.Layers {
		ins, outs := map[string]bool{}, map[string]bool{}
		for _, id := range l.Nodes {
			n := m.Nodes[id]
			for _, in := range n.Reads() {
				t := m.Tensors[in]
				if in == "" || t == nil || t.IsConst() {
					continue
				}
				if t.Producer < 0 || lg.NodeLayer[t.Producer] != l.ID {
					ins[in] = true
				}
			}
			for _, o := range n.Outputs {
				t := m.Tensors[o]
				if o == "" || t == nil {
					continue
				}
				if isOut[o] {
					outs[o] = true
				}
				for _, c := range t.Consumers {
					if cl := lg.NodeLayer[c]; cl != l.ID && cl >= 0 {
						outs[o] = true
						preds[cl][l.ID] = true
						succs[l.ID][cl] = true
						lg.Edges = append(lg.Edges, LayerEdge{From: l.ID, To: cl, Tensor: o, Bytes: t.Bytes()})
					}
				}
			}
		}
		l.Inputs, l.Outputs = sortedKeys(ins), sortedKeys(outs)
	}
	sort.Slice(lg.Edges, func(i, j int) bool {
		a, b := lg.Edges[i], lg.Edges[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return a.Tensor < b.Tensor
	})
	// A tensor read twice by one layer appears once.
	dedup := lg.Edges[:0]
	for i, e := range lg.Edges {
		if i > 0 && e == lg.Edges[i-1] {
			continue
		}
		dedup = append(dedup, e)
	}
	lg.Edges = dedup
	lg.Preds, lg.Succs = make([][]int, nl), make([][]int, nl)
	for i := 0; i < nl; i++ {
		lg.Preds[i] = sortedKeys(preds[i])
		lg.Succs[i] = sortedKeys(succs[i])
	}
}

// sortedKeys are a set's members in order.
func sortedKeys[K cmp.Ordered](m map[K]bool) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// LayerSet is a set of layer IDs, sorted ascending without duplicates.
type LayerSet []int

// NewLayerSet sorts and de-duplicates ids into a LayerSet.
func NewLayerSet(ids ...int) LayerSet {
	s := append(LayerSet{}, ids...)
	sort.Ints(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// Range is the set {from, ..., to-1}.
func Range(from, to int) LayerSet {
	s := make(LayerSet, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// Contains reports whether id is in the set (O(log n)).
func (s LayerSet) Contains(id int) bool {
	i := sort.SearchInts(s, id)
	return i < len(s) && s[i] == id
}

// Key is a compact, canonical string for the set ("0-4,7,9-10"), usable as a
// map key and in plan files.
func (s LayerSet) Key() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ParseLayerSet is the inverse of Key.
func ParseLayerSet(key string) (LayerSet, error) {
	var ids []int
	if strings.TrimSpace(key) == "" {
		return LayerSet{}, nil
	}
	for _, part := range strings.Split(key, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad layer %q in %q", part, key)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad layer range %q in %q", part, key)
			}
			if b-a > 1<<20 {
				return nil, fmt.Errorf("layer range %q in %q is too large", part, key)
			}
		}
		for x := a; x <= b; x++ {
			ids = append(ids, x)
		}
	}
	return NewLayerSet(ids...), nil
}

// IsConvex reports whether no path leaves the set and re-enters it.
// O(|layers| + |edges|).
func (lg *LayerGraph) IsConvex(s LayerSet) bool {
	if len(s) == 0 {
		return true
	}
	in := make([]bool, len(lg.Layers))
	for _, id := range s {
		if id < 0 || id >= len(lg.Layers) {
			return false
		}
		in[id] = true
	}
	maxID := s[len(s)-1]
	// Walk forward from the set's outside successors; since edges go to
	// higher IDs, only layers below the set's largest ID can lead back.
	seen := make([]bool, len(lg.Layers))
	var stack []int
	for _, id := range s {
		for _, nx := range lg.Succs[id] {
			if !in[nx] && !seen[nx] && nx < maxID {
				seen[nx] = true
				stack = append(stack, nx)
			}
		}
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, nx := range lg.Succs[x] {
			if in[nx] {
				return false
			}
			if !seen[nx] && nx < maxID {
				seen[nx] = true
				stack = append(stack, nx)
			}
		}
	}
	return true
}

// Boundary returns the tensors a layer set reads from outside (activations
// and graph inputs, sorted) and the tensors it writes that are read outside
// it or are graph outputs (sorted).
func (lg *LayerGraph) Boundary(s LayerSet) (inputs, outputs []string) {
	ins, outs := map[string]bool{}, map[string]bool{}
	produced := map[string]bool{}
	for _, id := range s {
		for _, o := range lg.Layers[id].Outputs {
			produced[o] = true
		}
	}
	for _, id := range s {
		l := lg.Layers[id]
		for _, in := range l.Inputs {
			if !produced[in] {
				ins[in] = true
			}
		}
	}
	isOut := map[string]bool{}
	for _, o := range lg.Model.Outputs {
		isOut[o] = true
	}
	for _, id := range s {
		for _, o := range lg.Layers[id].Outputs {
			t := lg.Model.Tensors[o]
			if isOut[o] {
				outs[o] = true
				continue
			}
			for _, c := range t.Consumers {
				if cl := lg.NodeLayer[c]; cl >= 0 && !s.Contains(cl) {
					outs[o] = true
					break
				}
			}
		}
	}
	return sortedKeys(ins), sortedKeys(outs)
}

// Crossing is what edges carry from one group of layers to another
// (LayerGraph.Crossings).
type Crossing struct {
	From, To int
	Bytes    int64
}

// Crossings are the bytes that edges carry between groups of layers, with
// owner[l] layer l's group: for each ordered pair of different groups, the
// bytes of the tensors going from a layer of one to a layer of the other,
// each tensor counted once per pair. They are sorted by From, then To.
func (lg *LayerGraph) Crossings(owner []int) []Crossing {
	type pair struct{ from, to int }
	bytes := map[pair]int64{}
	seen := map[pair]map[string]bool{}
	for _, e := range lg.Edges {
		a, b := owner[e.From], owner[e.To]
		if a == b {
			continue
		}
		k := pair{a, b}
		if seen[k] == nil {
			seen[k] = map[string]bool{}
		}
		if !seen[k][e.Tensor] {
			seen[k][e.Tensor] = true
			bytes[k] += e.Bytes
		}
	}
	out := make([]Crossing, 0, len(bytes))
	for k, b := range bytes {
		out = append(out, Crossing{From: k.from, To: k.to, Bytes: b})
	}
	slices.SortFunc(out, func(x, y Crossing) int {
		return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.To, y.To))
	})
	return out
}

// Nodes returns the model node IDs of a layer set, in topological order
// (ascending layer, then the layer's own order).
func (lg *LayerGraph) Nodes(s LayerSet) []int {
	var out []int
	for _, id := range s {
		out = append(out, lg.Layers[id].Nodes...)
	}
	return out
}

// Work sums the work of a layer set.
func (lg *LayerGraph) Work(s LayerSet) Work {
	var w Work
	for _, id := range s {
		w = w.Add(lg.Layers[id].Work)
	}
	return w
}
