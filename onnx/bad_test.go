package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

// relu is a one-node model whose input has a fixed shape.
func relu() *mb {
	return newMB(13).input("x", graph.Float32, 1, 4).
		node("Relu", "r", []string{"x"}, []string{"y"}).
		output("y", graph.Float32, 1, 4)
}

// nestedIfs wraps an Identity in depth levels of If.
func nestedIfs(depth int) *mb {
	leaf := &onnxpb.GraphProto{
		Node:   []*onnxpb.NodeProto{{OpType: proto.String("Identity"), Input: []string{"x"}, Output: []string{"o0"}}},
		Output: []*onnxpb.ValueInfoProto{valueInfo("o0", graph.Float32)},
	}
	g := leaf
	for i := 1; i < depth; i++ {
		out := fmt.Sprintf("o%d", i)
		g = &onnxpb.GraphProto{
			Node: []*onnxpb.NodeProto{{OpType: proto.String("If"), Input: []string{"c"}, Output: []string{out},
				Attribute: []*onnxpb.AttributeProto{attrGraph("then_branch", g), attrGraph("else_branch", leaf)}}},
			Output: []*onnxpb.ValueInfoProto{valueInfo(out, graph.Float32)},
		}
	}
	return newMB(13).input("x", graph.Float32, 1, 4).input("c", graph.Bool, rank0{}).
		node("If", "top", []string{"c"}, []string{"y"}, attrGraph("then_branch", g), attrGraph("else_branch", leaf)).
		output("y", graph.Float32)
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name  string
		data  func(t *testing.T) []byte
		opt   Options
		wants []string
	}{
		{"empty file", func(t *testing.T) []byte { return nil }, Options{}, []string{"empty file"}},
		{"not protobuf", func(t *testing.T) []byte { return []byte("this is a text file\nwith lines\n") }, Options{}, []string{"not a valid ONNX model"}},
		{"truncated", func(t *testing.T) []byte { b := convModel().bytes(t); return b[:len(b)/2] }, Options{}, []string{"not a valid ONNX model"}},
		{"no graph", func(t *testing.T) []byte {
			b, _ := proto.Marshal(&onnxpb.ModelProto{IrVersion: proto.Int64(8)})
			return b
		}, Options{}, []string{"has no graph"}},
		{"cycle", func(t *testing.T) []byte {
			return newMB(13).input("x", graph.Float32, 1, 4).
				node("Add", "a1", []string{"x", "b"}, []string{"a"}).
				node("Add", "a2", []string{"x", "a"}, []string{"b"}).
				output("b", graph.Float32).bytes(t)
		}, Options{}, []string{"cycle", `Add node "a1" (#0)`}},
		{"undefined tensor", func(t *testing.T) []byte {
			return relu().node("Relu", "r2", []string{"nope"}, []string{"z"}).bytes(t)
		}, Options{}, []string{`Relu node "r2" (#1) reads undefined tensor "nope"`}},
		{"undefined outer tensor in a branch", func(t *testing.T) []byte {
			g := &onnxpb.GraphProto{
				Node:   []*onnxpb.NodeProto{{OpType: proto.String("Relu"), Input: []string{"ghost"}, Output: []string{"o"}}},
				Output: []*onnxpb.ValueInfoProto{valueInfo("o", graph.Float32)},
			}
			return newMB(13).input("c", graph.Bool, rank0{}).
				node("If", "if", []string{"c"}, []string{"y"}, attrGraph("then_branch", g), attrGraph("else_branch", g)).
				output("y", graph.Float32).bytes(t)
		}, Options{}, []string{`If node "if" (#0) reads undefined tensor "ghost"`}},
		{"duplicate initializer", func(t *testing.T) []byte {
			return convModel().init(floatTensor("w", 4, 3, 3, 3)).bytes(t)
		}, Options{}, []string{`initializer "w" is defined twice`}},
		{"tensor written twice", func(t *testing.T) []byte {
			return relu().node("Relu", "r2", []string{"x"}, []string{"y"}).bytes(t)
		}, Options{}, []string{`tensor "y" written by both`, `"r2"`}},
		{"Constant shadows an initializer", func(t *testing.T) []byte {
			return convModel().node("Constant", "k", nil, []string{"w"}, attrTensor("value", floatTensor("", 2))).bytes(t)
		}, Options{}, []string{`Constant node "k" (#4)`, `"w"`, "already a graph initializer"}},
		{"duplicate input", func(t *testing.T) []byte {
			return relu().input("x", graph.Float32, 1, 4).bytes(t)
		}, Options{}, []string{`graph input "x" is listed twice`}},
		{"input disagrees with its initializer", func(t *testing.T) []byte {
			b := convModel()
			b.g.Input = append(b.g.Input, valueInfo("w", graph.Float32, 4, 3, 5, 5))
			return b.bytes(t)
		}, Options{}, []string{`graph input "w" is declared 4x3x5x5 but its initializer has shape 4x3x3x3`}},
		{"dims overflow", func(t *testing.T) []byte {
			return relu().init(&onnxpb.TensorProto{Name: proto.String("big"), Dims: []int64{1 << 40, 1 << 40}, DataType: proto.Int32(1), RawData: []byte{1, 2, 3, 4}}).bytes(t)
		}, Options{}, []string{`initializer "big"`, "overflows"}},
		{"huge declared dims, little data", func(t *testing.T) []byte {
			return relu().init(&onnxpb.TensorProto{Name: proto.String("big"), Dims: []int64{1 << 30, 1 << 12}, DataType: proto.Int32(1), RawData: []byte{1, 2, 3, 4}}).bytes(t)
		}, Options{}, []string{`initializer "big"`, "larger than"}},
		{"raw data too short", func(t *testing.T) []byte {
			return relu().init(&onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{1000, 1000}, DataType: proto.Int32(1), RawData: []byte{1, 2, 3, 4}}).bytes(t)
		}, Options{}, []string{`initializer "w": raw data has 4 bytes, shape 1000x1000 of float32 needs 4000000`}},
		{"typed data too short", func(t *testing.T) []byte {
			return relu().init(&onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{3}, DataType: proto.Int32(1), FloatData: []float32{1, 2}}).bytes(t)
		}, Options{}, []string{`initializer "w": has 2 values, shape 3 of float32 needs 3`}},
		{"negative dim", func(t *testing.T) []byte {
			return relu().init(&onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{-3}, DataType: proto.Int32(1)}).bytes(t)
		}, Options{}, []string{`initializer "w": dimension 0 is negative (-3)`}},
		{"external data", func(t *testing.T) []byte {
			return relu().init(&onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{3}, DataType: proto.Int32(1),
				DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
				ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("w.bin")}}}).bytes(t)
		}, Options{}, []string{`initializer "w": external data is not supported`}},
		{"string tensor", func(t *testing.T) []byte {
			return relu().init(&onnxpb.TensorProto{Name: proto.String("s"), Dims: []int64{1}, DataType: proto.Int32(8), StringData: [][]byte{[]byte("a")}}).bytes(t)
		}, Options{}, []string{`initializer "s": string tensors are not supported`}},
		{"bad dtype", func(t *testing.T) []byte {
			return relu().init(&onnxpb.TensorProto{Name: proto.String("s"), Dims: []int64{1}, DataType: proto.Int32(99), RawData: []byte{1}}).bytes(t)
		}, Options{}, []string{`initializer "s": unsupported data type dtype(99)`}},
		{"sequence input", func(t *testing.T) []byte {
			b := relu()
			b.g.Input = append(b.g.Input, &onnxpb.ValueInfoProto{Name: proto.String("seq"), Type: &onnxpb.TypeProto{
				Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{}}}})
			return b.bytes(t)
		}, Options{}, []string{`graph input "seq" has a sequence type`}},
		{"input without shape", func(t *testing.T) []byte {
			return newMB(13).input("x", graph.Float32).node("Relu", "r", []string{"x"}, []string{"y"}).output("y", graph.Float32).bytes(t)
		}, Options{}, []string{`graph input "x" has no declared shape; set it with --input x=d0,d1,... on the command line, or inputs: {x: [d0, d1, ...]} on the model in a workload`}},
		{"node without op", func(t *testing.T) []byte {
			return relu().node("", "blank", []string{"x"}, []string{"z"}).bytes(t)
		}, Options{}, []string{`node "blank" (#1): node has no op_type`}},
		{"Constant without value", func(t *testing.T) []byte {
			return relu().node("Constant", "k", nil, []string{"z"}).bytes(t)
		}, Options{}, []string{`Constant node "k" (#1): Constant needs exactly one value attribute, has 0`}},
		{"unknown operator", func(t *testing.T) []byte {
			return relu().node("Frobnicate", "frob", []string{"y"}, []string{"z"}).bytes(t)
		}, Options{}, []string{"Frobnicate", `"frob"`}},
		{"shapes disagree", func(t *testing.T) []byte {
			return newMB(13).input("a", graph.Float32, 2, 3).input("b", graph.Float32, 4, 5).
				node("Add", "add", []string{"a", "b"}, []string{"c"}).output("c", graph.Float32).bytes(t)
		}, Options{}, []string{`"add"`}},
		{"declared output disagrees", func(t *testing.T) []byte {
			return newMB(13).input("x", graph.Float32, 1, 4).node("Relu", "r", []string{"x"}, []string{"y"}).
				output("y", graph.Float32, 1, 5).bytes(t)
		}, Options{}, []string{`graph output "y" is declared with shape 1x5, but inference gives 1x4`}},
		{"nesting too deep", func(t *testing.T) []byte { return nestedIfs(maxDepth + 2).bytes(t) }, Options{}, []string{`If node "top" (#0)`, "nested more than 16 levels"}},
		{"Loop with unknown trip count", func(t *testing.T) []byte {
			body := &onnxpb.GraphProto{
				Input:  []*onnxpb.ValueInfoProto{valueInfo("i", graph.Int64), valueInfo("c", graph.Bool)},
				Node:   []*onnxpb.NodeProto{{OpType: proto.String("Identity"), Input: []string{"c"}, Output: []string{"co"}}},
				Output: []*onnxpb.ValueInfoProto{valueInfo("co", graph.Bool)},
			}
			return newMB(13).input("M", graph.Int64, rank0{}).input("x", graph.Float32, 1, 4).
				node("Loop", "loop", []string{"M", ""}, nil, attrGraph("body", body)).
				node("Relu", "r", []string{"x"}, []string{"y"}).output("y", graph.Float32).bytes(t)
		}, Options{}, []string{`"loop"`, `trip count "M" is not a constant`}},
		{"override of an initializer", func(t *testing.T) []byte { return convModel().bytes(t) },
			Options{Inputs: map[string]graph.Shape{"w": {1}}}, []string{`--input w: "w" is an initializer`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(tt.data(t), "bad.onnx", tt.opt)
			if err == nil {
				t.Fatalf("no error; model has %d nodes", len(m.Nodes))
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "bad.onnx: ") {
				t.Errorf("not one line starting with the file: %q", msg)
			}
			for _, w := range tt.wants {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\nlacks %q", msg, w)
				}
			}
			var le *LoadError
			if !errors.As(err, &le) || le.File != "bad.onnx" {
				t.Errorf("not a *LoadError: %T", err)
			}
		})
	}
}

func TestCycleErrorUnwraps(t *testing.T) {
	data := newMB(13).input("x", graph.Float32, 1, 4).
		node("Add", "a1", []string{"x", "b"}, []string{"a"}).
		node("Add", "a2", []string{"x", "a"}, []string{"b"}).
		output("b", graph.Float32).bytes(t)
	_, err := Decode(data, "c.onnx", Options{})
	var ce *graph.CycleError
	if !errors.As(err, &ce) || len(ce.Nodes) != 2 {
		t.Errorf("%v does not carry the cycle", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.onnx")
	if _, err := Load(missing, Options{}); err == nil || err.Error() != missing+": no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load(dir, Options{}); err == nil || !strings.HasPrefix(err.Error(), dir+": is a directory") {
		t.Errorf("directory: %v", err)
	}
	p := filepath.Join(dir, "ok.onnx")
	if err := os.WriteFile(p, convModel().bytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(p, Options{})
	if err != nil || m.Name != "ok" {
		t.Fatalf("load: %v", err)
	}
}
