package train

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/zoo"
)

// resnet50 is the zoo's ResNet-50 v1.5 as a training model.
func resnet50(t *testing.T) Model {
	t.Helper()
	m, err := ResolveModel("zoo:resnet50")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ResNet-50's forward work and parameters against the published counts:
// 4.09 G multiply-adds per 224×224 image (torchvision's "4.09 GFLOPS",
// which counts multiply-adds) and 25,557,032 parameters (torchvision).
// FLOPs here count a multiply-add as two, so about 8.2 GFLOP a sample.
func TestResNet50Work(t *testing.T) {
	m := resnet50(t)
	net := m.Net
	if got := net.MACs(); math.Abs(got/4.09e9-1) > 0.03 {
		t.Errorf("MACs per sample %.4g, want 4.09e9 ± 3%%", got)
	}
	if got := net.FLOPs(); got < 2*net.MACs() || math.Abs(got/8.18e9-1) > 0.04 {
		t.Errorf("forward FLOPs per sample %.4g, want about 8.2e9 (2 × MACs and the element-wise work)", got)
	}
	if got := m.Params(); math.Abs(float64(got)/25.557e6-1) > 0.01 {
		t.Errorf("parameters %d, want 25.56M ± 1%%", got)
	}
	if m.FLOPsPerToken() != net.FLOPs() {
		t.Errorf("FLOPsPerToken %g, want the forward FLOPs per sample %g", m.FLOPsPerToken(), net.FLOPs())
	}
	// One tensor crosses after each of the 16 bottleneck blocks but the
	// last, after the stem's pooling and in the classifier; never inside
	// a block, where the shortcut crosses too.
	cuts := 0
	for i := range net.Layers[:len(net.Layers)-1] {
		if net.validCut(i) {
			cuts++
		}
	}
	if cuts < 16 || cuts > 24 {
		t.Errorf("%d places where one tensor crosses in %d layers, want 16-24", cuts, len(net.Layers))
	}
	if !net.Layers[0].NoInputGrad || net.Layers[1].NoInputGrad {
		t.Errorf("only the stem's convolution reads the image alone")
	}
}

// published are NVIDIA DeepLearningExamples' ResNet-50 v1.5 training
// throughputs for PyTorch (PyTorch/Classification/ConvNets/resnet50v1.5/
// README.md, pytorch-21.03 NGC container, "Training performance"), in
// images a second: a DGX-1 (8× V100 16 GB) in mixed precision and FP32,
// and a DGX A100 (8× A100 80 GB) in mixed precision and TF32. The batch
// is the recipe's per-GPU batch (256; 112 for FP32 on the V100), the
// optimizer SGD with momentum. The bands are what the test holds the
// prediction to; nothing is fitted to these rows: the GPU types'
// efficiencies are those the transformer calibration found.
var published = []struct {
	gpus, batch int
	gpu         string
	precision   string
	imgPerS     float64
	band        float64 // the largest |error| allowed
}{
	{1, 256, "V100-16", "fp16", 1200, 0.35}, {8, 256, "V100-16", "fp16", 8322, 0.35},
	{1, 112, "V100-16", "fp32", 367, 0.35}, {8, 112, "V100-16", "fp32", 2855, 0.35},
	{1, 256, "A100-80", "fp16", 2470, 0.6}, {8, 256, "A100-80", "fp16", 16621, 0.6},
	{1, 256, "A100-80", "tf32", 938, 0.7}, {8, 256, "A100-80", "tf32", 7248, 0.7},
}

// The prediction is of the right order against measured training runs.
func TestResNet50PublishedThroughput(t *testing.T) {
	for _, c := range published {
		spec := Spec{Model: "resnet50", Gpus: fmt.Sprintf("%dx%s", c.gpus, c.gpu), GPUsPerNode: 8, DP: c.gpus, MicroBatch: c.batch,
			GlobalBatch: c.batch * c.gpus, Precision: c.precision, Optimizer: "sgd"}
		_, res, err := Predict(spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := res.SamplesPerS/c.imgPerS - 1
		t.Logf("%d× %s %s batch %d: predicted %.0f img/s, published %.0f (error %+.1f %%), peak %.1f GiB",
			c.gpus, c.gpu, c.precision, c.batch, res.SamplesPerS, c.imgPerS, 100*e, res.PeakMemoryBytes/(1<<30))
		if math.Abs(e) > c.band {
			t.Errorf("%d× %s %s: %.0f samples/s, published %.0f", c.gpus, c.gpu, c.precision, res.SamplesPerS, c.imgPerS)
		}
		if !res.Fits {
			t.Errorf("%d× %s %s batch %d: the published run does not fit: %s", c.gpus, c.gpu, c.precision, c.batch, res.Reason)
		}
		if res.SamplesPerS != res.TokensPerS || res.MFU <= 0 || res.MFU >= 1 {
			t.Errorf("samples/s %g, tokens/s %g, MFU %g", res.SamplesPerS, res.TokensPerS, res.MFU)
		}
	}
}

func TestGraphMemoryGrowsWithBatch(t *testing.T) {
	prev := MemoryBreakdown{}
	for _, b := range []int{16, 64, 256, 1024} {
		spec := Spec{Model: "resnet50", Gpus: "1xV100-16", MicroBatch: b, Precision: "fp16"}
		_, res, err := Predict(spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		mem := res.Stages[0].Memory
		if mem.Activations <= prev.Activations || mem.Total <= prev.Total || mem.Parameters != 0 && prev.Parameters != 0 && mem.Parameters != prev.Parameters {
			t.Errorf("batch %d: %+v after %+v", b, mem, prev)
		}
		if fits := b <= 256; res.Fits != fits {
			t.Errorf("batch %d on a V100-16: fits %v (%.1f GiB), want %v", b, res.Fits, mem.Total/(1<<30), fits)
		}
		prev = mem
	}
	// Full recomputation keeps only each stage's input.
	spec := Spec{Model: "resnet50", Gpus: "1xV100-16", MicroBatch: 1024, Precision: "fp16", Recompute: "full"}
	_, res, err := Predict(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stages[0].Memory.Activations >= prev.Activations/10 || res.Stages[0].BackwardS <= 2*res.Stages[0].ForwardS {
		t.Errorf("full recomputation: %+v", res.Stages[0])
	}
}

func TestGraphPipeline(t *testing.T) {
	m := resnet50(t)
	spec := Spec{Model: "resnet50", Gpus: "8xV100-16", PP: 4, DP: 2, MicroBatch: 32, GlobalBatch: 512, Precision: "fp16"}
	req, res, err := Predict(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var params float64
	for s, r := range req.Plan.Stages {
		if s < len(req.Plan.Stages)-1 && m.Net.Layers[r.Last].Cut <= 0 {
			t.Errorf("stage %d ends after layer %d, where no single tensor crosses", s, r.Last)
		}
		params += stageParams(&m, req.Plan, s)
	}
	if params != float64(m.Params()) {
		t.Errorf("stages hold %g parameters, the model %d", params, m.Params())
	}
	if len(res.Stages) != 8 || res.Bubble <= 0 {
		t.Errorf("%d stage results, bubble %g", len(res.Stages), res.Bubble)
	}
	// Balanced in time on the GPU (as --pp splits), the slowest stage is
	// faster than when balanced in FLOPs (ResNet's early layers are
	// memory-bound).
	g, _ := LookupGPU("V100-16")
	bal, ok := BalancedStages(&m, &g, req.Plan, 4)
	if !ok || fmt.Sprint(bal) != fmt.Sprint(req.Plan.Stages) {
		t.Fatalf("balanced split %v, --pp's %v", bal, req.Plan.Stages)
	}
	byTime := res
	even, _ := m.Net.EvenCuts(4)
	q := *req.Plan
	q.Stages = even
	res, err = Simulate(&m, req.Cluster, &q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	slowest := func(r *Result) float64 {
		x := 0.0
		for _, s := range r.Stages {
			x = math.Max(x, s.ForwardS+s.BackwardS)
		}
		return x
	}
	if slowest(byTime) >= slowest(res) || byTime.SamplesPerS <= res.SamplesPerS {
		t.Errorf("balanced in time %v: slowest stage %g s, %g samples/s; in FLOPs %v: %g s, %g samples/s",
			bal, slowest(byTime), byTime.SamplesPerS, even, slowest(res), res.SamplesPerS)
	}
	one, err := func() (*Result, error) {
		spec.PP, spec.DP = 1, 8
		_, r, err := Predict(spec, Options{})
		return r, err
	}()
	if err != nil {
		t.Fatal(err)
	}
	if one.SamplesPerS <= res.SamplesPerS {
		t.Errorf("data parallel %g samples/s is not above the pipeline's %g (ResNet-50's parameters are small, its pipeline bubble large)", one.SamplesPerS, res.SamplesPerS)
	}
}

func TestGraphBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.onnx")
	if err := os.WriteFile(bad, []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{Model: "resnet50", Gpus: "8xV100-16", TP: 2}, "replicas[0].stages[0].tp: 2: resnet50 is a graph network"},
		{Spec{Model: "resnet50", Gpus: "8xV100-16", CP: 2}, "cp: 2: resnet50 is a graph network"},
		{Spec{Model: "resnet50", Gpus: "8xV100-16", Recompute: "selective"}, "recompute: selective"},
		{Spec{Model: "resnet50", Gpus: "8xV100-16", SequenceParallel: true}, "sequence_parallel"},
		{Spec{Model: "zoo:resnet5", Gpus: "8xV100-16"}, `unknown network "resnet5"`},
		{Spec{Model: bad, Gpus: "8xV100-16"}, bad + ": not a valid ONNX model"},
		{Spec{Model: filepath.Join(t.TempDir(), "none.onnx"), Gpus: "8xV100-16"}, "none.onnx"},
		{Spec{Model: "resnet50", Input: "3x2x", Gpus: "8xV100-16"}, `--input "3x2x"`},
		{Spec{Model: "resnet50", Input: "3x16x16", Gpus: "8xV100-16"}, "outside 32-4096"},
		{Spec{Model: "gpt3-1.7b", Input: "3x224x224", Gpus: "8xV100-16"}, "gpt3-1.7b is not a graph network"},
		{Spec{Model: "resnet50", Gpus: "8xV100-16", Optimizer: "lamb"}, `optimizer: "lamb"`},
	}
	for _, c := range cases {
		_, _, err := Predict(c.spec, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", c.spec, err, c.want)
		}
	}
	m := resnet50(t)
	p, err := Uniform(&m, "", 1, 2, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.Stages = []LayerRange{{0, 3}, {4, m.Layers - 1}} // inside the first block
	if err := p.Check(&m); err == nil || !strings.Contains(err.Error(), "stages[0]: ends after layer 3") {
		t.Errorf("a cut inside a block: %v", err)
	}
	if _, err := Uniform(&m, "", 1, 40, 1, 1, 1); err == nil || !strings.Contains(err.Error(), "pp 40") {
		t.Errorf("more stages than cuts: %v", err)
	}
}

// An ONNX file of a zoo network prices as the zoo network does, and
// --input changes its size.
func TestGraphONNXFile(t *testing.T) {
	gm, err := zoo.Build("resnet18")
	if err != nil {
		t.Fatal(err)
	}
	data, err := onnx.Encode(gm, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r18.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := ResolveModel(path)
	if err != nil {
		t.Fatal(err)
	}
	z, err := ResolveModel("resnet18")
	if err != nil {
		t.Fatal(err)
	}
	if file.Net.MACs() != z.Net.MACs() || file.Params() != z.Params() || file.Layers != z.Layers {
		t.Errorf("file: %g MACs, %d params, %d layers; zoo: %g, %d, %d", file.Net.MACs(), file.Params(), file.Layers, z.Net.MACs(), z.Params(), z.Layers)
	}
	same, err := ResolveNetwork(path, "3x224x224")
	if err != nil {
		t.Fatal(err)
	}
	if same.Net.MACs() != file.Net.MACs() || !same.Net.Input.Equal(graph.Shape{3, 224, 224}) {
		t.Errorf("--input 3x224x224: %g MACs, input %v", same.Net.MACs(), same.Net.Input)
	}
	// the exported file fixes its input's size
	if _, err := ResolveNetwork(path, "3x112x112"); err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
		t.Errorf("a size the file does not take: %v", err)
	}
	// a zoo network takes other sizes: a quarter of the work at half the side
	small, err := ResolveNetwork("resnet18", "3x112x112")
	if err != nil {
		t.Fatal(err)
	}
	if r := small.Net.MACs() / z.Net.MACs(); math.Abs(r-0.25) > 0.02 || small.Params() != z.Params() {
		t.Errorf("at 112×112: %g of the MACs at 224×224, %d params", r, small.Params())
	}
}

func FuzzInputShape(f *testing.F) {
	for _, s := range []string{"3x224x224", "3,32,32", "x", "0x1", "99999999999x1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseInputShape(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("two-line error %q", err)
			}
			return
		}
		if len(sh) == 0 {
			t.Fatalf("%q: empty shape", s)
		}
		for _, d := range sh {
			if d < 1 || d > 1<<16 {
				t.Fatalf("%q: dimension %d", s, d)
			}
		}
	})
}

// TestNetworks: inlay train models lists every zoo network that trains,
// each with its default input per sample, and the listed input builds the
// same network through --model and --input.
func TestNetworks(t *testing.T) {
	list := Networks()
	if len(list) != len(zoo.Names()) {
		t.Errorf("%d networks listed, want the zoo's %d", len(list), len(zoo.Names()))
	}
	byName := map[string]NetworkInfo{}
	for _, n := range list {
		byName[n.Name] = n
	}
	r := byName["zoo:resnet50"]
	if r.Input != "3x224x224" || !r.InputShape.Equal(graph.Shape{3, 224, 224}) || r.Fixed || r.Params < 25e6 || r.Params > 26e6 ||
		r.ForwardFLOPs < 7.5e9 || r.ForwardFLOPs > 8.5e9 {
		t.Errorf("resnet50: %+v; want input 3x224x224, 25.6 M parameters, about 8.2 GFLOP", r)
	}
	if v := byName["zoo:vit_b_16"]; !v.Fixed {
		t.Errorf("vit_b_16 takes only its input: %+v", v)
	}
	for _, name := range []string{"zoo:inception_v3", "zoo:mobilebert"} {
		n := byName[name]
		m, err := ResolveNetwork(n.Name, n.Input)
		if err != nil || m.Params() != n.Params || m.Layers != n.Layers || FormatInputShape(m.Net.Input) != n.Input {
			t.Errorf("%s at --input %s: %v, %d parameters and %d layers; listed %+v", name, n.Input, err, m.Params(), m.Layers, n)
		}
	}
}
