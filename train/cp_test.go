package train

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// llama32k is Llama-3-8B trained on 32k-token sequences.
func llama32k(t testing.TB) Model {
	m, ok := Preset("llama-3-8b")
	if !ok {
		t.Fatal("no llama-3-8b preset")
	}
	m.Seq = 32768
	return m
}

// cpPlan is Megatron-LM's settings for a long-sequence run on one 8-GPU
// server: tp × cp = 8, one stage, one replica, fused attention,
// sequence parallelism, the distributed optimizer.
func cpPlan(t testing.TB, m *Model, tp, cp int, recompute string) *Plan {
	p := mustUniform(t, m, tp, 1, 1, 1, 8)
	p.CP = cp
	p.FlashAttention, p.SequenceParallel, p.Zero, p.Recompute = true, true, 1, recompute
	if err := p.Check(m); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanCP(t *testing.T) {
	m := tinyModel() // seq 128, 8 heads
	p, err := ParsePlan("p.yaml", []byte("micro_batch: 1\nglobal_batch: 4\ntp: 2\ndp: 2\ncp: 4\n"), &m)
	if err != nil {
		t.Fatal(err)
	}
	if p.CP != 4 || p.GPUs() != 16 || p.ContextParallel() != 4 {
		t.Errorf("cp %d, %d GPUs", p.CP, p.GPUs())
	}
	// unlike replicas: each stage takes its TP × CP GPUs
	p, err = ParsePlan("p.yaml", []byte("micro_batch: 1\nglobal_batch: 2\ncp: 2\nworld_size: 12\nstages: [{layers: 0-3}, {layers: 4-7}]\nreplicas: [{gpu: A100-80, tp: 2}, {stages: [{gpu: V100-16, tp: 1}, {gpu: V100-16, tp: 1}]}]\n"), &m)
	if err != nil || p.GPUs() != 12 {
		t.Fatalf("%v, %d GPUs", err, p.GPUs())
	}
	// absent is 1, and a CP-1 plan is what it was
	p, _ = ParsePlan("p.yaml", []byte("micro_batch: 1\nglobal_batch: 1\n"), &m)
	if p.CP != 0 || p.ContextParallel() != 1 || p.GPUs() != 1 {
		t.Errorf("no cp: cp %d, %d GPUs", p.CP, p.GPUs())
	}
	// a sequence split into cp chunks but not 2 × cp is allowed (unbalanced)
	odd := m
	odd.Seq = 96
	if _, err := ParsePlan("p.yaml", []byte("micro_batch: 1\nglobal_batch: 1\ncp: 32\n"), &odd); err != nil {
		t.Errorf("seq 96, cp 32: %v", err)
	}
}

// TestPlanCPErrors: the YAML cases are in TestPlanErrors; here the JSON
// plan and the world size against the cluster.
func TestPlanCPErrors(t *testing.T) {
	m := tinyModel()
	// the JSON plan reads cp and checks it
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"plan": {"stages": [{"first": 0, "last": 7}], "replicas": [{"stages": [{"gpu": "A100-80", "tp": 1}], "batch": 1}], "micro_batch": 1, "global_batch": 1, "cp": 5}}`), 0o644)
	if _, _, err := LoadPlan(bad, &m); err == nil || !strings.Contains(err.Error(), "cp: 5 does not divide") || strings.Contains(err.Error(), "\n") {
		t.Errorf("json cp 5: %v", err)
	}
	// the world size counts cp against the cluster's GPUs
	c := a100Cluster(t, 8)
	p := mustUniform(t, &m, 4, 1, 2, 1, 2)
	p.CP = 2
	if _, err := Simulate(&m, c, p, Options{}); err == nil || !strings.Contains(err.Error(), "world size") {
		t.Errorf("16 GPUs of 8: %v", err)
	}
}

// TestPlanCPJSONRoundTrip: cp goes into the plan JSON and comes back; a
// plan without it writes no cp.
func TestPlanCPJSONRoundTrip(t *testing.T) {
	m := tinyModel()
	p := mustUniform(t, &m, 2, 1, 1, 1, 1)
	data, _ := json.Marshal(&PlanFile{Plan: p})
	if strings.Contains(string(data), `"cp"`) {
		t.Errorf("a plan without cp writes %s", data)
	}
	p.CP = 4
	data, _ = json.Marshal(&PlanFile{Plan: p})
	q, ok, err := ParsePlanJSON("p.json", data, &m)
	if !ok || err != nil || q.CP != 4 || q.GPUs() != 8 {
		t.Fatalf("read back: %v %v, %+v", ok, err, q)
	}
}

// TestCPMemory: the activations of a long sequence halve at cp 2; the
// parameters, gradients and optimizer states stay (replicated over CP,
// the optimizer sharded over DP × CP under ZeRO 1).
func TestCPMemory(t *testing.T) {
	m := llama32k(t)
	g, _ := LookupGPU("A100-80")
	one := StageMemory(&m, cpPlan(t, &m, 4, 1, "none"), 0, &g, 4)
	two := StageMemory(&m, cpPlan(t, &m, 4, 2, "none"), 0, &g, 4)
	if r := two.Activations / one.Activations; math.Abs(r-0.5) > 0.01 {
		t.Errorf("activations cp 2 / cp 1 = %.3f, want about 0.5", r)
	}
	if two.Parameters != one.Parameters || two.Gradients != one.Gradients {
		t.Errorf("parameters %g vs %g, gradients %g vs %g", two.Parameters, one.Parameters, two.Gradients, one.Gradients)
	}
	if r := two.Optimizer / one.Optimizer; math.Abs(r-0.5) > 1e-9 {
		t.Errorf("ZeRO-1 optimizer cp 2 / cp 1 = %.3f, want 0.5 (sharded over dp × cp)", r)
	}
	// without ZeRO the optimizer states are replicated too
	p1, p2 := cpPlan(t, &m, 4, 1, "none"), cpPlan(t, &m, 4, 2, "none")
	p1.Zero, p2.Zero = 0, 0
	if a, b := StageMemory(&m, p1, 0, &g, 4).Optimizer, StageMemory(&m, p2, 0, &g, 4).Optimizer; a != b {
		t.Errorf("ZeRO 0: optimizer %g vs %g", a, b)
	}
}

// TestCPLongSequence is Llama-3-8B on 32k-token sequences on one server
// of 8 A100-80s. tp 8 and tp 4 × cp 2 both fit, and CP is the faster (its
// ring hides behind attention; tp 8's all-reduces do not). With tp 2,
// the replicas without CP need recomputation to fit, while tp 2 × cp 4
// fits without it and is faster than either recomputation.
func TestCPLongSequence(t *testing.T) {
	m := llama32k(t)
	c := a100Cluster(t, 8)
	run := func(tp, cp int, rc string) *Result {
		p := mustUniform(t, &m, tp, 1, 8/(tp*cp), 1, 8)
		p.CP, p.FlashAttention, p.SequenceParallel, p.Zero, p.Recompute = cp, true, true, 1, rc
		r, err := Simulate(&m, c, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.GPUs != 8 || !(r.IterationS > 0) || r.MFU <= 0.1 || r.MFU >= 0.8 {
			t.Errorf("tp %d cp %d %s: %d GPUs, %.2f s, MFU %.3f", tp, cp, rc, r.GPUs, r.IterationS, r.MFU)
		}
		t.Logf("tp %d cp %d recompute %-9s %.2f s/iteration, %.0f tokens/s, MFU %.3f, peak %.1f GiB, fits %v", tp, cp, rc, r.IterationS, r.TokensPerS, r.MFU, r.PeakMemoryBytes/(1<<30), r.Fits)
		return r
	}
	tp8, cp2 := run(8, 1, "none"), run(4, 2, "none")
	if !tp8.Fits || !cp2.Fits || cp2.IterationS >= tp8.IterationS {
		t.Errorf("tp 8: fits %v, %.2f s; tp 4 cp 2: fits %v, %.2f s", tp8.Fits, tp8.IterationS, cp2.Fits, cp2.IterationS)
	}
	if cp2.Stages[0].CP != 2 || cp2.PeakMemoryBytes >= tp8.PeakMemoryBytes*1.25 {
		t.Errorf("stage cp %d, peak %.1f GiB vs %.1f", cp2.Stages[0].CP, cp2.PeakMemoryBytes/(1<<30), tp8.PeakMemoryBytes/(1<<30))
	}
	tp2, sel, full, cp4 := run(2, 1, "none"), run(2, 1, "selective"), run(2, 1, "full"), run(2, 4, "none")
	if tp2.Fits || !full.Fits || !cp4.Fits {
		t.Errorf("tp 2: fits %v without recomputation, %v with full; tp 2 cp 4 %v", tp2.Fits, full.Fits, cp4.Fits)
	}
	for _, r := range []*Result{sel, full} {
		if r.Fits && cp4.IterationS >= r.IterationS {
			t.Errorf("tp 2 cp 4 %.2f s is not faster than tp 2 with recomputation %.2f s", cp4.IterationS, r.IterationS)
		}
	}
	if r := run(2, 2, "none"); r.Fits || !strings.Contains(r.Reason, "tp 2, cp 2") {
		t.Errorf("tp 2 cp 2: fits %v, reason %q", r.Fits, r.Reason)
	}
}

// TestCPRing: the ring's transfers hide behind attention inside a
// server; across servers the slower link shows. The gradient reduction
// runs over dp × cp ranks.
func TestCPRing(t *testing.T) {
	m := llama32k(t)
	one := cpPlan(t, &m, 4, 2, "none")
	g, _ := LookupGPU("A100-80")
	in, _ := UniformCluster(g, 8, 8, 300, 25)
	across, _ := UniformCluster(g, 8, 4, 300, 1) // the cp ring straddles two 4-GPU servers on a slow network
	a, err := Simulate(&m, in, one, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Simulate(&m, across, one, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !(b.Stages[0].ForwardS > a.Stages[0].ForwardS) {
		t.Errorf("forward %.3f s across servers, %.3f s inside one", b.Stages[0].ForwardS, a.Stages[0].ForwardS)
	}
	if a.Stages[0].SyncS <= 0 {
		t.Errorf("one replica of cp 2: no gradient reduction over the CP ranks")
	}
	// the ring: cp − 1 steps of max(transfer, compute), then one compute
	l := link{bw: 1e9, lat: 0}
	if got := ring(4, 1e9, 4, l); got != 3*1+1 {
		t.Errorf("ring compute-bound: %g", got)
	}
	if got := ring(4, 2e9, 4, l); got != 3*2+1 {
		t.Errorf("ring link-bound: %g", got)
	}
	if got := ring(4, 2e9, 1, l); got != 4 {
		t.Errorf("ring of one: %g", got)
	}
}

// TestBuildCP: the one-line form takes CP from the spec, and dp from
// what tp × pp × cp leaves.
func TestBuildCP(t *testing.T) {
	req, err := Build(Spec{Model: "llama-3-8b", Gpus: "16xA100-80", TP: 4, CP: 2, FlashAttention: true, SequenceParallel: true})
	if err != nil {
		t.Fatal(err)
	}
	if req.Plan.CP != 2 || req.Plan.DP() != 2 || req.Plan.GPUs() != 16 {
		t.Errorf("cp %d, dp %d, %d GPUs", req.Plan.CP, req.Plan.DP(), req.Plan.GPUs())
	}
	if _, err := Build(Spec{Model: "llama-3-8b", Gpus: "16xA100-80", TP: 4, DP: 1, CP: 2}); err == nil || !strings.Contains(err.Error(), "tp 4 × pp 1 × cp 2 × dp 1 = 8 GPUs") {
		t.Errorf("world size: %v", err)
	}
}
