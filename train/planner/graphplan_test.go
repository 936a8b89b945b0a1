package planner

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/train"
)

func resnet50(t *testing.T) train.Model {
	t.Helper()
	m, err := train.ResolveModel("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The inlay planner plans a CNN with data and pipeline parallelism only,
// and finds at least the throughput of plain data parallelism at the
// largest micro-batch that fits.
func TestPlanGraph(t *testing.T) {
	m := resnet50(t)
	c, err := train.MixedCluster([]train.GPUCount{{Count: 8, GPU: mustGPU(t, "V100-16")}}, 8, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{GlobalBatch: 2048}
	res, err := Inlay{}.Plan(&m, c, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Sim.Fits || res.Sim.SamplesPerS <= 0 || res.Sim.SamplesPerS != res.Sim.TokensPerS {
		t.Fatalf("plan %s: fits %v, %g samples/s", Shape(res.Plan), res.Sim.Fits, res.Sim.SamplesPerS)
	}
	for _, r := range res.Plan.Replicas {
		for _, s := range r.Stages {
			if s.TP != 1 {
				t.Errorf("plan %s has tp %d", Shape(res.Plan), s.TP)
			}
		}
	}
	if res.Plan.Recompute == "selective" || res.Plan.SequenceParallel || res.Plan.GPUs() != 8 {
		t.Errorf("plan %s: recompute %s, sequence parallel %v, %d GPUs", Shape(res.Plan), res.Plan.Recompute, res.Plan.SequenceParallel, res.Plan.GPUs())
	}
	dp, err := train.Uniform(&m, "V100-16", 1, 1, 8, 256, 2048)
	if err != nil {
		t.Fatal(err)
	}
	dp.Precision = res.Plan.Precision
	base, err := train.Simulate(&m, c, dp, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sim.SamplesPerS < base.SamplesPerS*(1-1e-9) {
		t.Errorf("planned %g samples/s, below plain data parallelism's %g", res.Sim.SamplesPerS, base.SamplesPerS)
	}
	f := File(&m, c, o, res)
	if f.SamplesPerS != res.Sim.SamplesPerS || f.BoundTokensPerS < f.TokensPerS {
		t.Errorf("plan file: %g samples/s, bound %g", f.SamplesPerS, f.BoundTokensPerS)
	}
	for _, name := range []string{"megatron", "metis", "amp"} {
		p, _ := New(name)
		if _, err := p.Plan(&m, c, o); err == nil || !strings.Contains(err.Error(), "graph network") {
			t.Errorf("%s on a CNN: %v", name, err)
		}
	}
}

func mustGPU(t *testing.T, name string) train.GPU {
	t.Helper()
	g, ok := train.LookupGPU(name)
	if !ok {
		t.Fatalf("no GPU %s", name)
	}
	return g
}

// A CNN job given as a model gets samples/s on any allocation: more for
// more GPUs, more on faster types, and a transformer's samples are its
// sequences.
func TestJobThroughputGraph(t *testing.T) {
	j := &JobThroughput{Model: resnet50(t), Options: Options{GlobalBatch: 1024}}
	rate := func(gpus map[string]int) float64 {
		v, err := j.SamplesPerS(Allocation{GPUs: gpus})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v1 := rate(map[string]int{"V100-16": 1})
	v8 := rate(map[string]int{"V100-16": 8})
	a8 := rate(map[string]int{"A100-40": 8})
	mixed := rate(map[string]int{"A100-40": 8, "V100-16": 8})
	if !(v1 > 0 && v8 > 4*v1 && a8 > v8 && mixed >= a8) {
		t.Errorf("samples/s: 1 V100 %g, 8 V100 %g, 8 A100 %g, 8 A100 + 8 V100 %g", v1, v8, a8, mixed)
	}
	if tok, _ := j.TokensPerS(Allocation{GPUs: map[string]int{"V100-16": 8}}); tok != v8 || j.Plans != 4 {
		t.Errorf("tokens/s %g (samples/s %g), %d plans", tok, v8, j.Plans)
	}
	m, _ := train.Preset("opt-350m")
	jt := &JobThroughput{Model: m, Options: Options{GlobalBatch: 64}}
	a := Allocation{GPUs: map[string]int{"A100-40": 8}}
	tok, err := jt.TokensPerS(a)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := jt.SamplesPerS(a); tok <= 0 || s != tok/float64(m.Seq) {
		t.Errorf("opt-350m: %g tokens/s, %g samples/s", tok, s)
	}
}
