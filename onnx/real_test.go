package onnx

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
)

// realWant is what each real model of shared/REAL_MODELS.md loads as, with
// the typical input shapes of assets.RealModels.
var realWant = map[string]struct {
	nodes   int
	sha256  string
	outputs map[string]graph.Shape
}{
	"ocr_det":      {672, "30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff", map[string]graph.Shape{"sigmoid_0.tmp_0": {1, 1, 640, 640}}},
	"ocr_cls":      {471, "491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640", map[string]graph.Shape{"softmax_0.tmp_0": {1, 2}}},
	"ocr_rec":      {765, "06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0", map[string]graph.Shape{"softmax_11.tmp_0": {1, 40, 6625}}},
	"melspec":      {29, "ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f", map[string]graph.Shape{"output": {1, 1, 5, 32}}},
	"speech_embed": {65, "70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f", map[string]graph.Shape{"conv2d_19": {1, 1, 1, 96}}},
	"wakeword":     {33, "94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb", map[string]graph.Shape{"53": {1, 1}}},
	"vad":          {2, "a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28", map[string]graph.Shape{"output": {1, 1}, "hn": {2, 1, 64}, "cn": {2, 1, 64}}},
	"blazeface": {104, "d388b1cf8a5f6f1af2b3f4c14f6d0f138bab970cd618cccd12dddb7484e82e51", map[string]graph.Shape{
		"Identity:0": {1, 512, 1}, "Identity_1:0": {1, 384, 1}, "Identity_2:0": {1, 512, 16}, "Identity_3:0": {1, 384, 16}}},
}

// loadReal loads every real model that is fetched.
func loadReal(t *testing.T) map[string]*graph.Model {
	t.Helper()
	out := map[string]*graph.Model{}
	for _, rm := range assets.RealModels() {
		path := assets.ModelPath(rm.File)
		if _, err := os.Stat(path); err != nil {
			assets.Require(t, path) // skips, or fails under make test
		}
		m, err := Load(path, Options{Inputs: rm.Shapes()})
		if err != nil {
			t.Fatalf("%s: %v", rm.Name, err)
		}
		out[rm.Name] = m
	}
	return out
}

func TestRealModels(t *testing.T) {
	models := loadReal(t)
	for _, rm := range assets.RealModels() {
		m, want := models[rm.Name], realWant[rm.Name]
		if len(m.Nodes) != want.nodes {
			t.Errorf("%s: %d nodes, want %d", rm.Name, len(m.Nodes), want.nodes)
		}
		if m.Hash != want.sha256 {
			t.Errorf("%s: hash %s, want %s", rm.Name, m.Hash, want.sha256)
		}
		for name, shape := range want.outputs {
			if got := m.Tensor(name); got == nil || !got.Shape.Equal(shape) || got.DType != graph.Float32 {
				t.Errorf("%s: output %s is %v, want float32 %v", rm.Name, name, got, shape)
			}
		}
		w := m.Totals()
		if m.Params() <= 0 || w.MACs <= 0 || w.FLOPs < 2*w.MACs {
			t.Errorf("%s: params %d MACs %d FLOPs %d", rm.Name, m.Params(), w.MACs, w.FLOPs)
		}
		for _, name := range m.SortedTensorNames() {
			if tn := m.Tensors[name]; tn.Shape == nil || !tn.Shape.Known() {
				t.Errorf("%s: tensor %q has shape %v", rm.Name, name, tn.Shape)
				break
			}
		}
	}
	// Silero VAD: all the work is inside the If, which reads the model's
	// inputs and weights from its scope.
	vad := models["vad"]
	ifNode := vad.Nodes[1]
	if ifNode.Op != "If" || ifNode.Work.MACs == 0 {
		t.Fatalf("vad If: %v work %+v", ifNode, ifNode.Work)
	}
	for _, name := range []string{"c", "h", "input"} {
		if !slices.Contains(ifNode.Implicit, name) {
			t.Errorf("vad If implicit inputs lack %q: %v", name, ifNode.Implicit)
		}
	}
	lg, err := graph.BuildLayers(vad)
	if err != nil {
		t.Fatal(err)
	}
	if ins, _ := lg.Boundary(graph.Range(0, len(lg.Layers))); strings.Join(ins, ",") != "c,h,input,sr" {
		t.Errorf("vad boundary inputs %v", ins)
	}
}

// TestRealDefaults: the models whose only symbolic dims are batch-like
// load without any --input.
func TestRealDefaults(t *testing.T) {
	for _, tt := range []struct{ file, err string }{
		{"embedding_model.onnx", ""},
		{"hey_jarvis_v0.1.onnx", ""},
		{"face_detection_front_128x128_barracuda.onnx", ""},
		{"ch_PP-OCRv4_det_infer.onnx", `graph input "x" dimension 2 ("p2o.DynamicDimension.1") has no value; planning needs it: set it with --input x=1,3,d2,d3 on the command line, or inputs: {x: [1, 3, d2, d3]} on the model in a workload`},
		{"melspectrogram.onnx", `graph input "input" dimension 1 ("samples") has no value; planning needs it: set it with --input input=1,d1 on the command line, or inputs: {input: [1, d1]} on the model in a workload`},
		{"silero_vad_legacy.onnx", `graph input "input" dimension 1 ("sequence") has no value; planning needs it: set it with --input input=1,d1 on the command line, or inputs: {input: [1, d1]} on the model in a workload`},
	} {
		path := assets.Require(t, assets.ModelPath(tt.file))
		_, err := Load(path, Options{})
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.file, err)
		case tt.err != "" && (err == nil || err.Error() != path+": "+tt.err):
			t.Errorf("%s: error %v, want %s", tt.file, err, tt.err)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for name, m := range loadReal(t) {
		data, err := Encode(m, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, err := Encode(m, 1)
		if err != nil || !bytes.Equal(data, again) {
			t.Errorf("%s: Encode is not deterministic", name)
		}
		back, err := Decode(data, name+".onnx", Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(back.Nodes) != len(m.Nodes) || back.Params() != m.Params() || back.Totals() != m.Totals() {
			t.Errorf("%s: round trip has %d nodes, %d params, %+v; want %d, %d, %+v", name,
				len(back.Nodes), back.Params(), back.Totals(), len(m.Nodes), m.Params(), m.Totals())
		}
		for _, o := range m.Outputs {
			if !back.Tensor(o).Shape.Equal(m.Tensor(o).Shape) {
				t.Errorf("%s: output %s %v, want %v", name, o, back.Tensor(o).Shape, m.Tensor(o).Shape)
			}
		}
	}
}

// TestExportSubgraphs cuts every real model into contiguous layer ranges
// (convex, since layers are numbered topologically), exports each, and
// decodes the result again with the same boundary shapes.
func TestExportSubgraphs(t *testing.T) {
	for name, m := range loadReal(t) {
		lg, err := graph.BuildLayers(m)
		if err != nil {
			t.Fatal(err)
		}
		n := len(lg.Layers)
		sets := []graph.LayerSet{graph.Range(0, n)}
		if n >= 3 {
			sets = append(sets, graph.Range(0, n/3), graph.Range(n/3, 2*n/3), graph.Range(2*n/3, n))
		}
		for _, set := range sets {
			data, err := ExportSubgraph(lg, set)
			if err != nil {
				t.Fatalf("%s %s: %v", name, set.Key(), err)
			}
			sub, err := Decode(data, name+"_"+set.Key()+".onnx", Options{})
			if err != nil {
				t.Fatalf("%s %s: %v", name, set.Key(), err)
			}
			ins, outs := lg.Boundary(set)
			if strings.Join(sub.Inputs, ",") != strings.Join(ins, ",") || strings.Join(sub.Outputs, ",") != strings.Join(outs, ",") {
				t.Errorf("%s %s: inputs %v outputs %v, want %v %v", name, set.Key(), sub.Inputs, sub.Outputs, ins, outs)
			}
			for _, o := range append(ins, outs...) {
				if got, want := sub.Tensor(o), m.Tensor(o); !got.Shape.Equal(want.Shape) || got.DType != want.DType {
					t.Errorf("%s %s: %s is %s %v, want %s %v", name, set.Key(), o, got.DType, got.Shape, want.DType, want.Shape)
				}
			}
			if w, want := sub.Totals().MACs, lg.Work(set).MACs; w != want {
				t.Errorf("%s %s: MACs %d, want %d", name, set.Key(), w, want)
			}
		}
	}
}
