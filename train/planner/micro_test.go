package planner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/train"
)

// TestOwnMicroBatches checks that with two sequences a GPU, inlay gives
// the A100 replicas larger shares in micro-batches of their own beside
// V100 replicas at one (no plan-wide micro-batch does as well: one
// makes the A100s slow, two the V100s), that the plan fits and beats
// the best of Megatron-LM's grid on the A100s alone, and that the rank
// file carries each replica's micro-batch while Megatron-LM's arguments
// are refused.
func TestOwnMicroBatches(t *testing.T) {
	m, err := train.ResolveModel("opt-350m")
	if err != nil {
		t.Fatal(err)
	}
	res, rate := planRate(t, &m, "32xA100-40,32xV100-16", 128)
	p := res.Plan
	if u := planTypes(p); !u["A100-40"] || !u["V100-16"] {
		t.Errorf("the plan uses %v, want both types", u)
	}
	own := false
	for r := range p.Replicas {
		own = own || p.Micro(r) != p.MicroBatch
	}
	if !own {
		t.Errorf("plan %s: every replica at the plan's micro-batch", Shape(p))
	}
	t.Logf("%s: %.0f tokens/s", Shape(p), rate)
	c, _ := Scenario{GPUs: "32xA100-40,32xV100-16"}.Cluster()
	if !res.Sim.Fits || !train.Fits(&m, c, p) {
		t.Errorf("plan %s does not fit", Shape(p))
	}
	mg, err := Megatron{}.Plan(&m, c, Options{GlobalBatch: 128, Budget: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	if rate < 1.1*mg.Sim.TokensPerS {
		t.Errorf("%.0f tokens/s (%s), megatron %.0f (%s)", rate, Shape(p), mg.Sim.TokensPerS, Shape(mg.Plan))
	}
	if _, err := Export("ranks", &m, c, p); err != nil {
		t.Errorf("ranks: %v", err)
	}
	if f, err := Ranks(c, p); err == nil {
		for _, r := range f.Ranks {
			if r.MicroBatch != p.Micro(r.Replica) {
				t.Errorf("rank %d: micro-batch %d, its replica's %d", r.Rank, r.MicroBatch, p.Micro(r.Replica))
				break
			}
		}
	}
	if _, err := Export("megatron", &m, c, p); err == nil || !strings.Contains(err.Error(), "--export ranks") {
		t.Errorf("megatron export: %v", err)
	}
}

// TestRefineShares: with 16 sequences a replica's worth of batch on 32
// A100-40 and 32 V100-16, the split's estimate leaves the A100s at the
// V100s' micro-batch; the simulator-led moves give them more of the batch
// in larger micro-batches, and the plan beats the split it started from.
func TestRefineShares(t *testing.T) {
	m, c := setup(t, "opt-350m", "32xA100-40,32xV100-16")
	e := newEvaluator(m, c, Options{GlobalBatch: 1024}, time.Minute)
	p := basePlan(c, 2, 1024, "none", 1)
	p.Stages = []train.LayerRange{{First: 0, Last: m.Layers - 1}}
	for i := 0; i < 64; i++ {
		gpu, n := "A100-40", 24
		if i >= 32 {
			gpu, n = "V100-16", 8
		}
		p.Replicas = append(p.Replicas, train.Replica{Batch: n, Stages: []train.Placement{{GPU: gpu, TP: 1}}})
	}
	start := e.try(p, nil)
	if start == nil {
		t.Fatal("the starting plan does not fit")
	}
	refineShares(e)
	if !(e.score > start.TokensPerS*1.02) || e.best.Check(m) != nil || !train.Fits(m, c, e.best) {
		t.Errorf("%.0f tokens/s (%s) from %.0f", e.score, Shape(e.best), start.TokensPerS)
	}
	if e.best.Replicas[0].Batch <= 24 {
		t.Errorf("the A100 replicas take %d sequences", e.best.Replicas[0].Batch)
	}
}

// TestFarKindsKeepOwnMicro: on three types, with AMP's three-type
// pipeline as the best so far, the kinds' rates at micro-batch 1 put the
// all-data-parallel combination out of reach, yet with micro-batches of
// their own (the A100s' far larger) its replicas beat the pipeline; the
// search must still try them.
func TestFarKindsKeepOwnMicro(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40,16xV100-16,32xRTX-2080Ti")
	e := newEvaluator(m, c, Options{GlobalBatch: 1024}, time.Minute)
	seed(e, time.Now(), AMP{})
	if e.best == nil {
		t.Fatal("no AMP plan")
	}
	ampRate := e.score
	base := basePlan(c, 1, 1024, "none", 1)
	base.Stages = train.EvenStages(m.Layers, 1)
	var ks []kind
	for _, gpu := range c.Types() {
		ks = append(ks, newKind(e, base, pure(gpu, 1, 1), c.GPUs(gpu)))
	}
	if !e.beyondReach(base, ks) {
		t.Fatalf("the case no longer tests the prune (update it): the kinds are within reach of AMP's %.0f tokens/s", ampRate)
	}
	settle(e, 1, 1, "none", 1)
	if u := planTypes(e.best); len(u) != 3 || e.best.PP() != 1 {
		t.Errorf("best %s, want every type's replicas at one stage", Shape(e.best))
	}
	if e.score < 1.1*ampRate {
		t.Errorf("%.0f tokens/s (%s), AMP's pipeline %.0f", e.score, Shape(e.best), ampRate)
	}
}

// TestOwnRecompute: Llama-3-8B on 32 A100-40 and 32 V100-16 at one
// stage. The V100s hold a replica only with full recomputation, which the
// A100s need not pay: their replicas run without it, the V100 replicas
// recompute on their own. The plan beats the same replicas all at full
// recomputation, fits, and only the per-rank file carries it.
func TestOwnRecompute(t *testing.T) {
	m, c := setup(t, "llama-3-8b", "32xA100-40,32xV100-16")
	e := newEvaluator(m, c, Options{GlobalBatch: 256}, time.Minute)
	settle(e, 1, 1, "none", 2)
	p := e.best
	if p == nil {
		t.Fatal("no plan")
	}
	rcs := map[string]string{}
	for r, rep := range p.Replicas {
		rcs[rep.Stages[0].GPU] = p.RecomputeOf(r)
	}
	if rcs["A100-40"] != "none" || rcs["V100-16"] == "" || rcs["V100-16"] == "none" {
		t.Fatalf("plan %s: recompute by type %v, want the A100s none and the V100s some", Shape(p), rcs)
	}
	if !e.bestSim.Fits || !train.Fits(m, c, p) {
		t.Errorf("plan %s does not fit", Shape(p))
	}
	all := *p
	all.Recompute = rcs["V100-16"]
	all.Replicas = slices.Clone(p.Replicas)
	for r := range all.Replicas {
		all.Replicas[r].Recompute = ""
	}
	one, err := train.Simulate(m, c, &all, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !(e.bestSim.TokensPerS > one.TokensPerS) {
		t.Errorf("%.0f tokens/s with each type's own recomputation, %.0f with all at %s", e.bestSim.TokensPerS, one.TokensPerS, all.Recompute)
	}
	f, err := Ranks(c, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Ranks {
		if r.Recompute != rcs[r.GPU] {
			t.Fatalf("rank %d on %s: recompute %q, want %q", r.Rank, r.GPU, r.Recompute, rcs[r.GPU])
		}
	}
	if _, err := Export("megatron", m, c, p); err == nil || !strings.Contains(err.Error(), "--export ranks") {
		t.Errorf("megatron export: %v", err)
	}
}
