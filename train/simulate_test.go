package train

import (
	"encoding/csv"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
)

func a100Cluster(t testing.TB, gpus int) *Cluster {
	g, _ := LookupGPU("A100-80")
	c, err := UniformCluster(g, gpus, 8, 300, 200)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustUniform(t testing.TB, m *Model, tp, pp, dp, micro, global int) *Plan {
	p, err := Uniform(m, "", tp, pp, dp, micro, global)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSimulateDeterministic(t *testing.T) {
	m, _ := Preset("gpt3-175b")
	c := a100Cluster(t, 512)
	p := mustUniform(t, &m, 8, 16, 4, 1, 1536)
	p.Recompute = "full"
	a, err := Simulate(&m, c, p, Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Simulate(&m, c, p, Options{Trace: true})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two simulations of the same plan differ")
	}
	if a.IterationS <= 0 || a.MFU <= 0.2 || a.MFU >= 0.7 || len(a.Stages) != 64 {
		t.Errorf("iteration %.2f s, MFU %.3f, %d stages", a.IterationS, a.MFU, len(a.Stages))
	}
	// every task of the trace sits within the iteration, and a stage's
	// tasks never overlap
	last := map[[2]int]float64{}
	for _, s := range a.Spans {
		if s.Kind != "forward" && s.Kind != "backward" {
			continue
		}
		k := [2]int{s.Replica, s.Stage}
		if s.Start < last[k]-1e-12 || s.End > a.IterationS+1e-9 {
			t.Fatalf("task %+v overlaps its stage's previous one or ends after the iteration", s)
		}
		last[k] = s.End
	}
}

// The schedules order the pipe as their papers say: GPipe and 1F1B take
// the same time (the same bubble), interleaving shrinks the bubble, and
// 1F1B keeps fewer micro-batches in flight than GPipe.
func TestSchedules(t *testing.T) {
	m, _ := Preset("gpt3-39b")
	c := a100Cluster(t, 64)
	run := func(kind string, v int) *Result {
		p := mustUniform(t, &m, 8, 8, 1, 1, 32)
		p.Schedule = Schedule{Kind: kind, Chunks: v}
		r, err := Simulate(&m, c, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	gp, fb, il := run("gpipe", 0), run("1f1b", 0), run("interleaved", 2)
	if math.Abs(gp.IterationS/fb.IterationS-1) > 0.01 {
		t.Errorf("GPipe %.3f s, 1F1B %.3f s: want about the same", gp.IterationS, fb.IterationS)
	}
	if !(il.IterationS < fb.IterationS && il.Bubble < fb.Bubble) {
		t.Errorf("interleaved %.3f s (bubble %.3f) is not faster than 1F1B %.3f s (%.3f)", il.IterationS, il.Bubble, fb.IterationS, fb.Bubble)
	}
	if !(fb.Stages[0].Memory.Activations < gp.Stages[0].Memory.Activations) {
		t.Error("1F1B keeps as many activations as GPipe")
	}
	// bubble ≈ (p−1)/(m+p−1) for 1F1B
	want := 7.0 / (32 + 7)
	if math.Abs(fb.Bubble-want) > 0.05 {
		t.Errorf("1F1B bubble %.3f, want about %.3f", fb.Bubble, want)
	}
}

// Unlike GPUs: a slower stage paces the pipe, and a slower replica sets
// the step.
func TestUnlikeGPUs(t *testing.T) {
	m, _ := Preset("gpt3-1.7b")
	c := mixCluster()
	base := mustUniform(t, &m, 2, 2, 2, 1, 32)
	for r := range base.Replicas {
		for s := range base.Replicas[r].Stages {
			base.Replicas[r].Stages[s].GPU = "A100-80"
		}
	}
	fast, err := Simulate(&m, c, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	slowStage := mustUniform(t, &m, 2, 2, 2, 1, 32)
	for r := range slowStage.Replicas {
		slowStage.Replicas[r].Stages[0].GPU = "A100-80"
		slowStage.Replicas[r].Stages[1].GPU = "V100-32"
	}
	mixed, err := Simulate(&m, c, slowStage, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !(mixed.IterationS > 1.5*fast.IterationS) {
		t.Errorf("a V100 stage: %.3f s against %.3f s on A100s", mixed.IterationS, fast.IterationS)
	}
	// one V100 replica with a smaller share of the batch
	rep := mustUniform(t, &m, 2, 2, 2, 1, 32)
	for s := range rep.Replicas[0].Stages {
		rep.Replicas[0].Stages[s].GPU = "A100-80"
		rep.Replicas[1].Stages[s].GPU = "V100-32"
	}
	even, _ := Simulate(&m, c, rep, Options{})
	rep.Replicas[0].Batch, rep.Replicas[1].Batch = 24, 8
	skewed, _ := Simulate(&m, c, rep, Options{})
	if !(skewed.IterationS < even.IterationS) {
		t.Errorf("giving the V100 replica a quarter of the batch: %.3f s, evenly %.3f s", skewed.IterationS, even.IterationS)
	}
}

// mixCluster is a server of 8 A100-80 and one of 8 V100-32.
func mixCluster() *Cluster {
	a, _ := LookupGPU("A100-80")
	v, _ := LookupGPU("V100-32")
	return &Cluster{Name: "mix", NetworkGBs: 100, NetworkLatencyUs: 5, Groups: []NodeGroup{
		{GPU: a, Nodes: 1, GPUsPerNode: 8, IntraGBs: 300}, {GPU: v, Nodes: 1, GPUsPerNode: 8, IntraGBs: 150}}}
}

// A plan that does not fit still gets its time, with the reason.
func TestDoesNotFit(t *testing.T) {
	m, _ := Preset("gpt3-175b")
	c := a100Cluster(t, 64)
	p := mustUniform(t, &m, 8, 8, 1, 4, 64)
	r, err := Simulate(&m, c, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Fits || r.IterationS <= 0 || !strings.Contains(r.Reason, "stage 0") {
		t.Errorf("fits %v, %.2f s, reason %q", r.Fits, r.IterationS, r.Reason)
	}
	p.Recompute, p.SequenceParallel, p.MicroBatch, p.Zero = "full", true, 1, 1
	p.Schedule = Schedule{Kind: "interleaved", Chunks: 3}
	if r, _ = Simulate(&m, c, p, Options{}); !r.Fits {
		t.Errorf("with full recomputation: %s", r.Reason)
	}
	// ZeRO stages shrink the model states; offload removes the optimizer
	q := mustUniform(t, &m, 8, 8, 1, 1, 64)
	var prev float64
	for z := 0; z <= 3; z++ {
		q.Zero = z
		q.Replicas = append(q.Replicas[:1], q.Replicas[0]) // two replicas
		q.Replicas[0].Batch, q.Replicas[1].Batch = 32, 32
		qc := a100Cluster(t, 128)
		r, err := Simulate(&m, qc, q, Options{})
		if err != nil {
			t.Fatal(err)
		}
		states := r.Stages[0].Memory.Parameters + r.Stages[0].Memory.Gradients + r.Stages[0].Memory.Optimizer
		if z > 0 && !(states < prev) {
			t.Errorf("ZeRO %d: %.3g bytes of states, not below %.3g", z, states, prev)
		}
		prev = states
	}
}

// Memory follows Korthikanti et al. (MLSys'23), Fig. 1: the first stage's
// parameters and optimizer states (18 bytes a parameter) and activations
// without recomputation and with sequence parallelism and selective
// recomputation, in the layouts of their Table 5.
func TestKorthikantiMemory(t *testing.T) {
	data, err := os.ReadFile(assets.RequireTraining(t, "korthikanti_memory.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	layouts, err := os.ReadFile(assets.RequireTraining(t, "korthikanti_mlsys23.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lrows, _ := csv.NewReader(strings.NewReader(string(layouts))).ReadAll()
	layout := map[string][]string{}
	for _, r := range lrows[1:] {
		layout[r[0]] = r
	}
	n := 0
	for _, r := range rows[1:] {
		if r[0] != "fig1" {
			continue
		}
		l := layout[r[1]]
		atoi := func(i int) int { v, _ := strconv.Atoi(l[i]); return v }
		m, _ := ParseModelLine("gpt:hidden=" + l[2] + ",layers=" + l[4] + ",heads=" + l[3] + ",seq=2048,vocab=51200")
		p := mustUniform(t, &m, atoi(8), atoi(9), 1, atoi(12), atoi(11))
		if v := atoi(13); v > 1 {
			p.Schedule = Schedule{Kind: "interleaved", Chunks: v}
		}
		if r[4] != "no_recompute" {
			p.Recompute, p.SequenceParallel = "selective", true
		}
		p.Precision = "fp16"
		want, _ := strconv.ParseFloat(r[5], 64)
		want *= 1 << 30
		x := placed{tp: p.Replicas[0].Stages[0].TP}
		prec := precisionOf("fp16")
		sh := shape{m: &m, prec: prec, tp: x.tp, b: p.MicroBatch, sp: p.SequenceParallel, recomp: p.Recompute}
		var got float64
		switch r[3] {
		case "params_and_optimizer":
			got = float64(p.Stages[0].Count()) * float64(m.LayerParams()) / float64(x.tp) * (prec.param + prec.grad + prec.optim)
		case "activations":
			got = sh.layerActivations() * inFlightLayers(p, 0)
		}
		if math.Abs(got/want-1) > 0.005 {
			t.Errorf("%s %s %s: %.3f GiB, the paper %.3f GiB", r[1], r[3], r[4], got/(1<<30), want/(1<<30))
		}
		n++
	}
	if n != 16 {
		t.Errorf("%d Fig. 1 rows checked, want 16", n)
	}
}

// BenchmarkSimulate175B is the planner's inner loop: one iteration of
// GPT-3 175B on 512 A100s (tp 8, pp 16, dp 4, 64 micro-batches).
func BenchmarkSimulate175B(b *testing.B) {
	m, _ := Preset("gpt3-175b")
	c := a100Cluster(b, 512)
	p := mustUniform(b, &m, 8, 16, 4, 6, 1536)
	p.Recompute = "full"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Simulate(&m, c, p, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFusedSoftmax: Megatron-LM's fused softmax takes a micro-batch whose
// heads on one GPU (b × heads / tp) fill its blocks of 4; other 16-bit
// micro-batches pay the unfused FP32 softmax.
func TestFusedSoftmax(t *testing.T) {
	m, err := ParseModelLine("gpt:hidden=1024,layers=24,heads=16,seq=1024,vocab=50257")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tp, b int
		fused bool
	}{{8, 1, false}, {8, 2, true}, {8, 3, false}, {4, 1, true}, {2, 1, true}, {1, 1, true}} {
		sh := shape{m: &m, tp: tc.tp, b: tc.b}
		if got := sh.fusedSoftmax(); got != tc.fused {
			t.Errorf("tp %d micro-batch %d: fused %v, want %v", tc.tp, tc.b, got, tc.fused)
		}
	}
	long := m
	long.Seq = 8192
	if sh := (shape{m: &long, tp: 1, b: 4}); sh.fusedSoftmax() {
		t.Error("a sequence of 8192 is beyond the fused kernel's 4096 keys")
	}
	// 16 heads of 64 over 8 GPUs at micro-batch 1 (unfused) against 32
	// heads of 32 (fused): the same GEMMs and attention FLOPs, half the
	// score elements, yet the unfused softmax's FP32 traffic makes the
	// layer slower.
	wide, _ := ParseModelLine("gpt:hidden=1024,layers=24,heads=32,seq=1024,vocab=50257")
	d := device{peak: 312e12, bw: 1.5e12, eG: 0.8, eT: 0.5, eM: 1, back: 2}
	l := link{bw: 200e9, lat: 1e-5}
	unfused := (&shape{m: &m, prec: precisionOf("fp16"), tp: 8, b: 1, recomp: "none"}).layer(&d, l, l)
	fused := (&shape{m: &wide, prec: precisionOf("fp16"), tp: 8, b: 1, recomp: "none"}).layer(&d, l, l)
	if !(unfused.fwd > fused.fwd) || !(unfused.bwd > fused.bwd) {
		t.Errorf("layer at 2 heads a GPU (unfused) %+v, at 4 (fused) %+v: want the unfused slower", unfused, fused)
	}
}
