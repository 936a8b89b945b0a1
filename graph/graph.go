package graph

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/inlay-dev/inlay/internal/intheap"
)

// TensorKind says where a tensor's value comes from.
type TensorKind uint8

const (
	// Activation is computed by a node at run time.
	Activation TensorKind = iota
	// Input is a graph input fed by the caller.
	Input
	// Initializer is a weight stored in the model: an ONNX initializer
	// (Producer -1) or the value of a Constant node (Producer is that node).
	Initializer
	// Folded is a value computed at load time from constants and static
	// shapes (shape arithmetic); it is known without running the model.
	Folded
)

func (k TensorKind) String() string {
	switch k {
	case Activation:
		return "activation"
	case Input:
		return "input"
	case Initializer:
		return "initializer"
	case Folded:
		return "folded"
	}
	return fmt.Sprintf("TensorKind(%d)", uint8(k))
}

// Data is a tensor value: little-endian raw bytes in the layout ONNX uses
// (row-major). Raw may be nil for a weight whose values do not matter (zoo
// networks); exporters then fill it with seeded random values.
type Data struct {
	DType DType
	Dims  Shape
	Raw   []byte
}

// Tensor is a named value of a model.
type Tensor struct {
	Name  string
	DType DType
	// Shape is fully known (no Unknown dimension) once shape inference has run.
	Shape Shape
	Kind  TensorKind
	// Data holds the value of initializers and folded tensors; nil otherwise.
	Data *Data
	// Producer is the ID of the node that writes the tensor, or -1 for graph
	// inputs and initializers.
	Producer int
	// Consumers are the IDs of the nodes that read the tensor, ascending.
	Consumers []int
}

// IsConst reports whether the tensor's value is known without running the model.
func (t *Tensor) IsConst() bool { return t.Kind == Initializer || t.Kind == Folded }

// Bytes is the tensor's size in bytes; 0 while its shape is not fully known.
func (t *Tensor) Bytes() int64 {
	n, ok := t.Shape.Elements()
	if !ok {
		return 0
	}
	return n * int64(t.DType.Size())
}

// Node is one operator of a model's top-level graph.
type Node struct {
	// ID is the node's index in Model.Nodes, which is the order of the ONNX file.
	ID     int
	Name   string
	Op     string
	Domain string
	// Inputs and Outputs name tensors; "" marks an omitted optional one.
	Inputs  []string
	Outputs []string
	// Implicit names the tensors of this graph that the node's nested graphs
	// (If branches, Loop and Scan bodies) read from the enclosing scope,
	// sorted. They are not ONNX inputs of the node, but Link, TopoOrder and
	// the layer graph treat them as inputs (ONNX Runtime's implicit inputs).
	Implicit []string
	Attrs    Attrs
	// Work is filled by shape inference.
	Work Work
}

// Reads returns the tensors the node reads: Inputs, then Implicit.
func (n *Node) Reads() []string {
	if len(n.Implicit) == 0 {
		return n.Inputs
	}
	return append(append(make([]string, 0, len(n.Inputs)+len(n.Implicit)), n.Inputs...), n.Implicit...)
}

// String names the node for error messages: "Conv node \"conv1\" (#12)".
func (n *Node) String() string {
	return fmt.Sprintf("%s node %q (#%d)", n.Op, n.Name, n.ID)
}

// OpsetImport is one operator set the model uses.
type OpsetImport struct {
	Domain  string
	Version int64
}

// Model is the IR of one network: its top-level graph, with nested graphs
// (If, Loop, Scan bodies) kept opaque inside their node's attributes.
type Model struct {
	Name      string
	IRVersion int64
	Producer  string
	Opsets    []OpsetImport
	Nodes     []*Node
	Tensors   map[string]*Tensor
	// Inputs are the graph inputs the caller feeds (initializers excluded), in file order.
	Inputs []string
	// Outputs are the graph outputs, in file order.
	Outputs []string
	// Hash is the content hash of the source (see ContentHash); set by loaders.
	Hash string
}

// Opset returns the version of the default ("" or "ai.onnx") domain, or 0.
func (m *Model) Opset() int64 {
	for _, o := range m.Opsets {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			return o.Version
		}
	}
	return 0
}

// Tensor returns the named tensor or nil.
func (m *Model) Tensor(name string) *Tensor { return m.Tensors[name] }

// Link fills every tensor's Producer and Consumers from the nodes and checks
// the graph's structure: each tensor written once, every input defined.
// It does not check for cycles; use TopoOrder for that.
func (m *Model) Link() error {
	if m.Tensors == nil {
		m.Tensors = map[string]*Tensor{}
	}
	for _, t := range m.Tensors {
		t.Producer = -1
		t.Consumers = t.Consumers[:0]
	}
	for i, n := range m.Nodes {
		n.ID = i
		for _, out := range n.Outputs {
			if out == "" {
				continue
			}
			t := m.Tensors[out]
			if t == nil {
				t = &Tensor{Name: out, Kind: Activation, Producer: -1}
				m.Tensors[out] = t
			}
			if t.Producer >= 0 {
				return fmt.Errorf("tensor %q written by both %s and %s", out, m.Nodes[t.Producer], n)
			}
			if t.Kind == Input || (t.Kind == Initializer && n.Op != "Constant") {
				return fmt.Errorf("%s writes tensor %q, which is a graph %s", n, out, t.Kind)
			}
			t.Producer = i
		}
	}
	for i, n := range m.Nodes {
		for _, in := range n.Reads() {
			if in == "" {
				continue
			}
			t := m.Tensors[in]
			if t == nil || (t.Kind == Activation && t.Producer < 0) {
				return fmt.Errorf("%s reads undefined tensor %q", n, in)
			}
			if len(t.Consumers) == 0 || t.Consumers[len(t.Consumers)-1] != i {
				t.Consumers = append(t.Consumers, i)
			}
		}
	}
	for _, out := range m.Outputs {
		t := m.Tensors[out]
		if t == nil || (t.Kind == Activation && t.Producer < 0) {
			return fmt.Errorf("graph output %q is not defined", out)
		}
	}
	return nil
}

// CycleError reports that a graph's nodes cannot be ordered.
type CycleError struct {
	// Nodes are the IDs of nodes on or behind a cycle, ascending.
	Nodes []int
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("graph has a cycle through %d node(s), first #%d", len(e.Nodes), e.Nodes[0])
}

// TopoOrder returns node IDs in a topological order, ties broken by the
// smallest ID (Kahn's algorithm with a min-heap; O(|E| log |V|)). Link must
// have run. It returns a *CycleError when the graph has a cycle.
func (m *Model) TopoOrder() ([]int, error) {
	indeg := make([]int, len(m.Nodes))
	for _, n := range m.Nodes {
		seen := map[int]bool{}
		for _, in := range n.Reads() {
			if t := m.Tensors[in]; in != "" && t != nil && t.Producer >= 0 && !seen[t.Producer] {
				seen[t.Producer] = true
				indeg[n.ID]++
			}
		}
	}
	h := &intheap.Heap{}
	for i, d := range indeg {
		if d == 0 {
			h.Push(i)
		}
	}
	order := make([]int, 0, len(m.Nodes))
	for h.Len() > 0 {
		id := h.Pop()
		order = append(order, id)
		for _, s := range m.successors(id) {
			indeg[s]--
			if indeg[s] == 0 {
				h.Push(s)
			}
		}
	}
	if len(order) != len(m.Nodes) {
		var left []int
		for i, d := range indeg {
			if d > 0 {
				left = append(left, i)
			}
		}
		return nil, &CycleError{Nodes: left}
	}
	return order, nil
}

// successors returns the distinct consumer node IDs of a node's outputs, ascending.
func (m *Model) successors(id int) []int {
	var out []int
	seen := map[int]bool{}
	for _, o := range m.Nodes[id].Outputs {
		if t := m.Tensors[o]; o != "" && t != nil {
			for _, c := range t.Consumers {
				if !seen[c] {
					seen[c] = true
					out = append(out, c)
				}
			}
		}
	}
	sort.Ints(out)
	return out
}

// Successors returns the distinct consumer node IDs of a node's outputs, ascending.
func (m *Model) Successors(id int) []int { return m.successors(id) }

// Predecessors returns the distinct producer node IDs of a node's inputs, ascending.
func (m *Model) Predecessors(id int) []int {
	var out []int
	seen := map[int]bool{}
	for _, in := range m.Nodes[id].Reads() {
		if t := m.Tensors[in]; in != "" && t != nil && t.Producer >= 0 && !seen[t.Producer] {
			seen[t.Producer] = true
			out = append(out, t.Producer)
		}
	}
	sort.Ints(out)
	return out
}

// SortedTensorNames returns the names of all tensors, sorted, for
// deterministic iteration.
func (m *Model) SortedTensorNames() []string {
	return slices.Sorted(maps.Keys(m.Tensors))
}

// Totals sums the work of all nodes.
func (m *Model) Totals() Work {
	var w Work
	for _, n := range m.Nodes {
		w = w.Add(n.Work)
	}
	return w
}

// Params counts the elements of all initializers (ONNX initializers and
// Constant-node values, not folded shape arithmetic).
func (m *Model) Params() int64 {
	var p int64
	for _, name := range m.SortedTensorNames() {
		t := m.Tensors[name]
		if t.Kind == Initializer {
			if n, ok := t.Shape.Elements(); ok {
				p += n
			}
		}
	}
	return p
}

// TrainableParams counts what Params counts less what is not learned: the
// running mean and variance of every BatchNormalization (inputs 3 and 4),
// initializers of integer or boolean type (shapes, indices, axes) and
// scalars (clip bounds, epsilons). That is close to PyTorch's
// model.parameters() and published counts (ResNet-50: 25,557,032, where
// Params says 25,610,152); float constant tensors the file cannot tell from
// weights (YOLO's grids) still count.
func (m *Model) TrainableParams() int64 {
	var p int64
	for _, n := range m.TrainableSet() {
		p += n
	}
	return p
}

// TrainableSet maps each tensor TrainableParams counts to its elements.
func (m *Model) TrainableSet() map[string]int64 {
	buffers := map[string]bool{}
	for _, n := range m.Nodes {
		if n.Op == "BatchNormalization" {
			for _, i := range []int{3, 4} {
				if i < len(n.Inputs) {
					buffers[n.Inputs[i]] = true
				}
			}
		}
	}
	out := map[string]int64{}
	for name, t := range m.Tensors {
		if t.Kind != Initializer || buffers[name] || !t.DType.IsFloat() {
			continue
		}
		if n, ok := t.Shape.Elements(); ok && n > 1 {
			out[name] = n
		}
	}
	return out
}
