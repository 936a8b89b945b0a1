package onnx

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

func TestEncodeFillsMissingWeights(t *testing.T) {
	m, err := Decode(convModel().bytes(t), "c.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Tensor("w").Data.Raw = nil // a zoo-style weight without values
	m.Tensor("b").Data.Raw = nil // and a Constant node's value
	a, err := Encode(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Encode(m, 1)
	c, _ := Encode(m, 2)
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatal("Encode must be deterministic for one seed and differ across seeds")
	}
	back, err := Decode(a, "c.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"w", "b"} {
		raw := back.Tensor(name).Data.Raw
		nonzero := 0
		for i := 0; i+4 <= len(raw); i += 4 {
			x := math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))
			if x != 0 {
				nonzero++
			}
			if math.Abs(float64(x)) > 0.5 {
				t.Errorf("%s: value %g is not small", name, x)
			}
		}
		if nonzero < len(raw)/4/2 {
			t.Errorf("%s: only %d of %d values set", name, nonzero, len(raw)/4)
		}
	}
	if back.Nodes[0].Op != "Constant" || len(back.Nodes) != len(m.Nodes) {
		t.Errorf("nodes changed: %d", len(back.Nodes))
	}
}

func TestAttributesRoundTrip(t *testing.T) {
	tp := &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(1)}}}
	exotic := &onnxpb.AttributeProto{Name: proto.String("tp"), Type: onnxpb.AttributeProto_TYPE_PROTO.Enum(), Tp: tp}
	strs := &onnxpb.AttributeProto{Name: proto.String("names"), Type: onnxpb.AttributeProto_STRINGS.Enum(), Strings: [][]byte{[]byte("a"), []byte("b")}}
	f := &onnxpb.AttributeProto{Name: proto.String("alpha"), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(0.25)}
	b := ifModel(nil)
	b.g.Node[0].Attribute = append(b.g.Node[0].Attribute, exotic, strs, f)
	m, err := Decode(b.bytes(t), "if.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	attrs := m.Nodes[0].Attrs
	if a := attrs.Get("tp"); a == nil || a.Kind != graph.AttrOther {
		t.Fatalf("tp: %+v", a)
	}
	if a := attrs.Get("then_branch"); a == nil || a.Kind != graph.AttrGraph {
		t.Fatalf("then_branch: %+v", a)
	}
	data, err := Encode(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data, "if.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range attrs {
		got := back.Nodes[0].Attrs[i]
		if got.Name != a.Name || got.Kind != a.Kind || !bytes.Equal(got.Graph, a.Graph) ||
			strings.Join(got.Strings, ",") != strings.Join(a.Strings, ",") || got.Float != a.Float {
			t.Errorf("attribute %q changed: %+v → %+v", a.Name, a, got)
		}
	}
	if back.Nodes[0].Work != m.Nodes[0].Work {
		t.Errorf("If work changed: %+v → %+v", m.Nodes[0].Work, back.Nodes[0].Work)
	}
}

// chain is in → MatMul → Relu → MatMul → Relu → MatMul → out: three layers.
func chain() *mb {
	return newMB(13).input("in", graph.Float32, 2, 8).
		init(floatTensor("w1", 8, 8)).init(floatTensor("w2", 8, 8)).init(floatTensor("w3", 8, 4)).
		node("MatMul", "mm1", []string{"in", "w1"}, []string{"a"}).
		node("Relu", "r1", []string{"a"}, []string{"b"}).
		node("MatMul", "mm2", []string{"b", "w2"}, []string{"c"}).
		node("Relu", "r2", []string{"c"}, []string{"d"}).
		node("MatMul", "mm3", []string{"d", "w3"}, []string{"out"}).
		output("out", graph.Float32, 2, 4)
}

func TestExportSubgraph(t *testing.T) {
	m, err := Decode(chain().bytes(t), "chain.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	lg, err := graph.BuildLayers(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Layers) != 3 {
		t.Fatalf("%d layers", len(lg.Layers))
	}
	tests := []struct {
		set                  graph.LayerSet
		wantErr              string
		inputs, outputs, ini string
	}{
		{set: graph.LayerSet{1}, inputs: "b", outputs: "d", ini: "w2"},
		{set: graph.LayerSet{0, 1, 2}, inputs: "in", outputs: "out", ini: "w1,w2,w3"},
		{set: graph.LayerSet{0, 2}, wantErr: "onnx: export: layer set 0,2 is not convex"},
		{set: graph.LayerSet{}, wantErr: "onnx: export: empty layer set"},
		{set: graph.LayerSet{3}, wantErr: "onnx: export: layer 3 does not exist (the model has 3)"},
	}
	for _, tt := range tests {
		data, err := ExportSubgraph(lg, tt.set)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%v: error %v, want %s", tt.set, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tt.set, err)
		}
		mp := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(data, mp); err != nil {
			t.Fatal(err)
		}
		var ini []string
		for _, x := range mp.GetGraph().GetInitializer() {
			ini = append(ini, x.GetName())
		}
		if strings.Join(ini, ",") != tt.ini || mp.GetOpsetImport()[0].GetVersion() != 13 || mp.GetIrVersion() != 8 {
			t.Errorf("%v: initializers %v, opsets %v, IR %d", tt.set, ini, mp.GetOpsetImport(), mp.GetIrVersion())
		}
		sub, err := Decode(data, "sub.onnx", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(sub.Inputs, ",") != tt.inputs || strings.Join(sub.Outputs, ",") != tt.outputs {
			t.Errorf("%v: inputs %v outputs %v", tt.set, sub.Inputs, sub.Outputs)
		}
		for _, name := range append(sub.Inputs, sub.Outputs...) {
			if !sub.Tensor(name).Shape.Equal(m.Tensor(name).Shape) {
				t.Errorf("%v: %s is %v, want %v", tt.set, name, sub.Tensor(name).Shape, m.Tensor(name).Shape)
			}
		}
		// Weights keep their values.
		for _, name := range strings.Split(tt.ini, ",") {
			if !bytes.Equal(sub.Tensor(name).Data.Raw, m.Tensor(name).Data.Raw) {
				t.Errorf("%v: %s values changed", tt.set, name)
			}
		}
	}
}

func TestNestingWithinLimit(t *testing.T) {
	m, err := Decode(nestedIfs(maxDepth).bytes(t), "deep.onnx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Tensor("y").Shape; !s.Equal(graph.Shape{1, 4}) {
		t.Errorf("shape %v", s)
	}
}
