package workload

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw/hwtest"
)

func TestPrecision(t *testing.T) {
	src := `precision: [float16]
models:
  - {name: a, zoo: mobilenet_v2}
  - {name: b, zoo: mobilenet_v2, precision: [int8, float16]}
  - {name: c, zoo: mobilenet_v2, precision: [uint8]}
groups:
  - {name: g, models: [a, b, c], rate_hz: 10}
`
	w, err := Parse([]byte(src), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model string
		want  string
	}{{"a", "float16"}, {"b", "int8, float16"}, {"c", "int8"}} {
		if got := w.Model(tc.model).AllowedString(); got != tc.want {
			t.Errorf("model %s allows %s, want %s", tc.model, got, tc.want)
		}
	}
	// Defaults: float types; a quantized model adds its own integer type.
	m := &Model{Name: "q"}
	if got := m.AllowedString(); got != "float32, float16" {
		t.Errorf("float model allows %s", got)
	}
	m.Layers = &graph.LayerGraph{Layers: []*graph.Layer{{Precision: graph.Uint8}, {}}}
	if got := m.AllowedString(); got != "int8, float32, float16" {
		t.Errorf("uint8-quantized model allows %s", got)
	}
	pl := hwtest.Preset(t, "phone")
	npu, _ := pl.Find("npu")
	fm := &Model{Name: "f"}
	cfg, err := fm.DefaultConfig(pl, npu)
	if err != nil || cfg.DType != graph.Float16 {
		t.Errorf("float model on the npu: %v %v, want float16", cfg, err)
	}
	if cs := fm.Configs(pl, npu); len(cs) == 0 || cs[0].DType != graph.Float16 {
		t.Errorf("float model's npu configs %v", cs)
	}
	cpuOnly := &Model{Name: "x", Precision: []graph.DType{graph.BFloat16}}
	if _, err := cpuOnly.DefaultConfig(pl, npu); err == nil || !strings.Contains(err.Error(), "may run in bfloat16") {
		t.Errorf("no allowed type: %v", err)
	}
}

func TestPrecisionErrors(t *testing.T) {
	for _, tc := range []struct{ list, want string }{
		{"[]", "empty list"},
		{"[fp16]", `"fp16" is not a processor data type`},
		{"[int8, uint8]", "int8 listed twice"},
		{"[string]", `"string" is not a processor data type`},
		{"float16", "want a list"},
	} {
		src := "models:\n  - {name: a, zoo: mobilenet_v2, precision: " + tc.list + "}\ngroups:\n  - {name: g, models: [a], rate_hz: 10}\n"
		_, err := Parse([]byte(src), "w.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "w.yaml:2") {
			t.Errorf("precision %s: got %v, want %q at w.yaml:2", tc.list, err, tc.want)
		}
	}
}

// TestZooInput: a zoo network takes an input size in a workload.
func TestZooInput(t *testing.T) {
	src := "models:\n  - {name: cls, zoo: inception_v3, input: [1, 3, 224, 224]}\ngroups:\n  - {name: g, models: [cls], rate_hz: 10}\n"
	w, err := Parse([]byte(src), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Model("cls").ZooInput; !got.Equal(graph.Shape{1, 3, 224, 224}) {
		t.Errorf("input %v", got)
	}
	if !strings.Contains(w.YAML(), "input: [1, 3, 224, 224]") {
		t.Errorf("YAML lacks the input:\n%s", w.YAML())
	}
	for _, tc := range []struct{ line, want string }{
		{"{name: cls, zoo: deit_tiny, input: [1, 3, 256, 256]}", "deit_tiny takes only input 1x3x224x224"},
		{"{name: cls, zoo: resnet50, input: [1, 3, 224]}", "takes input [N, 3, H, W]"},
		{"{name: cls, onnx: m.onnx, input: [1, 3, 224, 224]}", "input applies to zoo networks"},
	} {
		_, err := Parse([]byte("models:\n  - "+tc.line+"\ngroups:\n  - {name: g, models: [cls], rate_hz: 10}\n"), "w.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.line, err, tc.want)
		}
	}
}
