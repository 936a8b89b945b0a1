package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/graph"
)

// targetOpset is the default-domain opset quantized models use: the first
// with per-axis QuantizeLinear/DequantizeLinear.
const targetOpset = 13

// minIRVersion is the IR version opset 13 needs.
const minIRVersion = 7

// upgrade raises the model's default opset to targetOpset, rewriting the
// operators whose form changed between its opset and 13 (attributes that
// became inputs) so that they compute what they did. Operators whose
// meaning changed in ways not rewritten here are an error, as are nested
// graphs (If, Loop, Scan), whose nodes it would have to rewrite too.
// ONNX Runtime's quantizer only bumps the version number; that would
// break, e.g., an opset-9 Slice.
func upgrade(e *editor) error {
	m := e.m
	from := m.Opset()
	if from >= targetOpset {
		return nil
	}
	for _, n := range m.Nodes {
		if n.Domain != "" && n.Domain != "ai.onnx" {
			continue
		}
		if err := upgradeNode(e, n, from); err != nil {
			return fmt.Errorf("quant: %s: upgrading opset %d to %d: %s: %w", m.Name, from, targetOpset, n, err)
		}
	}
	for i, o := range m.Opsets {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			m.Opsets[i].Version = targetOpset
		}
	}
	m.IRVersion = max(m.IRVersion, minIRVersion)
	return nil
}

// ints64 adds an int64 vector constant.
func (e *editor) ints64(base string, vals []int64) string {
	raw := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return e.initializer(base, &graph.Data{DType: graph.Int64, Dims: graph.Shape{int64(len(vals))}, Raw: raw})
}

// dropAttrs removes the named attributes of n.
func dropAttrs(n *graph.Node, names ...string) {
	var out graph.Attrs
	for _, a := range n.Attrs {
		drop := false
		for _, name := range names {
			drop = drop || a.Name == name
		}
		if !drop {
			out = append(out, a)
		}
	}
	n.Attrs = out
}

// setInput sets input i of n, padding with omitted ("") inputs.
func setInput(n *graph.Node, i int, name string) {
	for len(n.Inputs) <= i {
		n.Inputs = append(n.Inputs, "")
	}
	n.Inputs[i] = name
}

func upgradeNode(e *editor, n *graph.Node, from int64) error {
	base := n.Name
	if base == "" && len(n.Outputs) > 0 {
		base = n.Outputs[0]
	}
	for _, a := range n.Attrs {
		if a.Kind == graph.AttrGraph {
			return fmt.Errorf("nested graphs are not upgraded")
		}
	}
	switch n.Op {
	case "Slice":
		if from >= 10 {
			return nil
		}
		starts, ends := n.Attrs.Get("starts"), n.Attrs.Get("ends")
		if starts == nil || ends == nil {
			return fmt.Errorf("starts and ends are required")
		}
		setInput(n, 1, e.ints64(base+"_starts", starts.Ints))
		setInput(n, 2, e.ints64(base+"_ends", ends.Ints))
		if axes := n.Attrs.Get("axes"); axes != nil {
			setInput(n, 3, e.ints64(base+"_axes", axes.Ints))
		}
		dropAttrs(n, "starts", "ends", "axes")
	case "Clip":
		if from >= 11 {
			return nil
		}
		lo, hi := n.Attrs.Float("min", -math.MaxFloat32), n.Attrs.Float("max", math.MaxFloat32)
		if t := e.m.Tensors[n.Inputs[0]]; t == nil || t.DType != graph.Float32 {
			return fmt.Errorf("only float32 Clip is upgraded")
		}
		setInput(n, 1, e.scalar(base+"_min", lo))
		setInput(n, 2, e.scalar(base+"_max", hi))
		dropAttrs(n, "min", "max")
	case "Squeeze", "Unsqueeze", "ReduceSum":
		if axes := n.Attrs.Get("axes"); axes != nil {
			setInput(n, 1, e.ints64(base+"_axes", axes.Ints))
			dropAttrs(n, "axes")
		}
	case "Split":
		if split := n.Attrs.Get("split"); split != nil {
			setInput(n, 1, e.ints64(base+"_split", split.Ints))
			dropAttrs(n, "split")
		}
	case "Softmax", "LogSoftmax", "Hardmax":
		// Before 13 these flatten the input to 2-D at axis (default 1);
		// from 13 they work along one axis (default -1). Both agree when
		// the axis is the last one.
		t := e.m.Tensors[n.Inputs[0]]
		if t == nil {
			return fmt.Errorf("input %q unknown", n.Inputs[0])
		}
		axis := n.Attrs.Int("axis", 1)
		if axis < 0 {
			axis += int64(len(t.Shape))
		}
		if axis != int64(len(t.Shape))-1 {
			return fmt.Errorf("axis %d of a rank-%d input is not the last: its meaning changed in opset 13", axis, len(t.Shape))
		}
		dropAttrs(n, "axis")
		n.Attrs = append(n.Attrs, intAttr("axis", -1))
	case "Pad":
		if from >= 11 {
			return nil
		}
		pads := n.Attrs.Get("pads")
		if pads == nil {
			return fmt.Errorf("pads is required")
		}
		setInput(n, 1, e.ints64(base+"_pads", pads.Ints))
		setInput(n, 2, e.scalar(base+"_value", n.Attrs.Float("value", 0)))
		dropAttrs(n, "pads", "value")
	case "TopK":
		if from >= 10 {
			return nil
		}
		k := n.Attrs.Get("k")
		if k == nil {
			return fmt.Errorf("k is required")
		}
		setInput(n, 1, e.ints64(base+"_k", []int64{k.Int}))
		dropAttrs(n, "k")
	case "Upsample", "Resize", "Scan", "Dropout", "BatchNormalization":
		if n.Op == "Resize" && from >= 11 || n.Op == "BatchNormalization" && from >= 9 || n.Op == "Dropout" && from >= 7 {
			return nil
		}
		return fmt.Errorf("its meaning changed between opset %d and %d", from, targetOpset)
	}
	return nil
}
