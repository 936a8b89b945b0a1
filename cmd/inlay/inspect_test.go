package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
)

// inspectJSON is the part of inspect --json the tests read.
type inspectJSON struct {
	Nodes  int            `json:"nodes"`
	Layers int            `json:"layers"`
	Params int64          `json:"params"`
	MACs   int64          `json:"macs"`
	FLOPs  int64          `json:"flops"`
	Ops    map[string]int `json:"ops"`
	Inputs []struct {
		Name  string  `json:"name"`
		DType string  `json:"dtype"`
		Shape []int64 `json:"shape"`
	} `json:"inputs"`
	Outputs []struct {
		Name  string  `json:"name"`
		Shape []int64 `json:"shape"`
	} `json:"outputs"`
}

func TestInspectJSON(t *testing.T) {
	det := assets.Require(t, assets.ModelPath("ch_PP-OCRv4_det_infer.onnx"))
	vad := assets.Require(t, assets.ModelPath("silero_vad_legacy.onnx"))
	tests := []struct {
		args                 []string
		nodes, constants     int
		input                string
		inputShape, outShape string
		minMACs              int64
	}{
		{[]string{det, "--input", "x=1,3,640,640"}, 672, 342, "x", "[1 3 640 640]", "[1 1 640 640]", 2_000_000_000},
		{[]string{vad, "--input", "input=1,512"}, 2, 0, "input", "[1 512]", "[1 1]", 100_000},
		{[]string{"mobilenet_v2"}, 0, 0, "", "[1 3 224 224]", "", 290_000_000},
	}
	for _, tt := range tests {
		out, err := runInlay(t, append([]string{"inspect", "--json"}, tt.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		var got inspectJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %v\n%s", tt.args, err, out)
		}
		if tt.nodes > 0 && got.Nodes != tt.nodes {
			t.Errorf("%v: nodes %d, want %d", tt.args, got.Nodes, tt.nodes)
		}
		if got.Ops["Constant"] != tt.constants {
			t.Errorf("%v: %d Constant nodes, want %d", tt.args, got.Ops["Constant"], tt.constants)
		}
		sum := 0
		for _, c := range got.Ops {
			sum += c
		}
		if sum != got.Nodes || got.Layers <= 0 || got.Layers > got.Nodes || got.Params <= 0 || got.MACs < tt.minMACs || got.FLOPs < 2*got.MACs {
			t.Errorf("%v: inconsistent totals %+v", tt.args, got)
		}
		if len(got.Inputs) == 0 || (tt.input != "" && got.Inputs[0].Name != tt.input) || fmtShape(got.Inputs[0].Shape) != tt.inputShape || got.Inputs[0].DType != "float32" {
			t.Errorf("%v: inputs %+v", tt.args, got.Inputs)
		}
		if tt.outShape != "" && fmtShape(got.Outputs[0].Shape) != tt.outShape {
			t.Errorf("%v: outputs %+v", tt.args, got.Outputs)
		}
	}
}

func fmtShape(s []int64) string {
	b, _ := json.Marshal(s)
	return strings.NewReplacer(",", " ").Replace(string(b))
}

func TestInspectText(t *testing.T) {
	out, err := runInlay(t, "inspect", "resnet50")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"input ", "1x3x224x224", "Conv ", "GMAC", "layers", "LARGEST TENSORS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The operator table is sorted by MACs: Conv first, then Gemm.
	conv, gemm := strings.Index(out, "\nConv "), strings.Index(out, "\nGemm ")
	if conv < 0 || gemm < conv {
		t.Errorf("operator rows out of order:\n%s", out)
	}
}

// TestInspectSymbolic: a model with symbolic dimensions inspects without
// --input, with shapes and work in terms of its symbols; --input may fix
// some of them.
func TestInspectSymbolic(t *testing.T) {
	det := assets.Require(t, assets.ModelPath("ch_PP-OCRv4_det_infer.onnx"))
	mel := assets.Require(t, assets.ModelPath("melspectrogram.onnx"))
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"inspect", det}, []string{"symbolic dimensions: M, N", "N = p2o.DynamicDimension.1", "1x3xNxM", "1x1xNxM", "kMAC·M·N"}},
		{[]string{"inspect", det, "--input", "x=1,3,640,W"}, []string{"symbolic dimensions: W", "1x3x640xW", "MAC·W"}},
		{[]string{"inspect", mel}, []string{"symbolic dimensions: samples", "1xsamples", "MAC·samples"}},
	} {
		wantOutput(t, tc.args, tc.want...)
	}
	out, err := runInlay(t, "inspect", det, "--json")
	if err != nil || !strings.Contains(out, `"symbols": [`) || !strings.Contains(out, `"macs_expr": "`) {
		t.Errorf("--json: %v\n%s", err, out)
	}
	mustMatchOpenAPI(t, "ModelSummary", out)
}

func TestInspectErrors(t *testing.T) {
	det := assets.Require(t, assets.ModelPath("ch_PP-OCRv4_det_infer.onnx"))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", det, "--input", "x=1,3,H,1.5"}, det + `: --input x: dimension 3 "1.5" is neither a size nor a symbol name`},
		{[]string{"inspect", det, "--input", "x=1,3,64"}, det + `: --input x=1,3,64 gives 3 dimension(s), but the model declares 4`},
		{[]string{"inspect", det, "--input", "x"}, `--input "x": want name=d0,d1,...`},
		{[]string{"inspect", "no_such_model"}, "no_such_model: no such file, and not a zoo network (mobilenet_v2, "},
		{[]string{"inspect", "missing.onnx"}, "missing.onnx: no such file or directory"},
		{[]string{"inspect", "deit_tiny", "--input", "input=1,3,64,64"}, "deit_tiny: --input: deit_tiny takes only input 1x3x224x224"},
		{[]string{"inspect", "resnet50", "--input", "input=1,3,64"}, "resnet50: --input: resnet50 takes input [N, 3, H, W]"},
	} {
		_, err := runInlay(t, tt.args...)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line starting %q", tt.args, err, tt.want)
		}
	}
}

// TestInspectParamsLabelled checks that inspect shows both parameter
// counts, labelled: ResNet-50's initializers hold 25,610,152 elements
// (batch-norm statistics included), its trainable parameters are the
// published 25,557,032.
func TestInspectParamsLabelled(t *testing.T) {
	out, err := runInlay(t, "inspect", "resnet50")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"params: every initializer element, 25,610,152 (batch-norm statistics included)", "trainable: 25,557,032"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	out, err = runInlay(t, "inspect", "resnet50", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Params    int64 `json:"params"`
		Trainable int64 `json:"trainable_params"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.Params != 25_610_152 || j.Trainable != 25_557_032 {
		t.Errorf("--json params %d, trainable %d, %v", j.Params, j.Trainable, err)
	}
}
