package train

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
// which counts multiply-adds; He et al. 2016 Table 1 say 3.8 × 10^9 for
// v1, whose stride sits in the 1×1 convolution) and 25,557,032
// parameters (torchvision). FLOPs here count a multiply-add as two, so
// about 8.2 GFLOP a sample.
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
	cuts := 0
	for i := range net.Layers[:len(net.Layers)-1] {
		if net.validCut(i) {
			cuts++
		}
	}
	// 16 bottleneck blocks: a cut after each (but the last) and after
	// the stem, the pooling and the classifier's flatten.
	if cuts < 16 || cuts > len(net.Layers)/2 {
		t.Errorf("%d places where one tensor crosses in %d layers", cuts, len(net.Layers))
	}
}

func TestResNet50Simulate(t *testing.T) {
	m := resnet50(t)
	spec := Spec{Model: "zoo:resnet50", Gpus: "8xV100-16", GPUsPerNode: 8, DP: 8, MicroBatch: 256, GlobalBatch: 2048, Precision: "fp16", Optimizer: "sgd"}
	_, res, err := Predict(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %.0f samples/s, iteration %.3f s, mfu %.3f, peak %.2f GiB, fits %v", m.Name, res.SamplesPerS, res.IterationS, res.MFU, res.PeakMemoryBytes/(1<<30), res.Fits)
	t.Logf("%+v", res.Stages[0].Memory)
	spec.Precision = "fp32"
	spec.MicroBatch, spec.GlobalBatch = 112, 896
	_, res, err = Predict(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fp32: %.0f samples/s, iteration %.3f s, peak %.2f GiB", res.SamplesPerS, res.IterationS, res.PeakMemoryBytes/(1<<30))
	_ = os.Stdout
	_ = filepath.Join
	_ = strings.Contains
}
