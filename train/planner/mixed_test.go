package planner

import (
	"testing"

	"github.com/inlay-dev/inlay/train"
)

// planRate runs inlay with a budget far beyond the search (so that a loaded
// machine does not cut it short) and returns its tokens a second (a
// graph network's samples).
func planRate(t *testing.T, m *train.Model, gpus string, batch int) (*Result, float64) {
	t.Helper()
	c, err := Scenario{GPUs: gpus}.Cluster()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Inlay{}.Plan(m, c, Options{GlobalBatch: batch, Budget: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	return res, res.Sim.TokensPerS
}

// TestMixedGangBeatsOneType checks that 8 A100s and 8 V100s together train
// the cluster trace's transformers faster than the 8 A100s alone, with
// both types used. The V100s used to stay idle: a plan's fused attention
// was all or nothing, so one V100 turned it off on the A100s too, which
// nearly doubled their time at sequence 2,048 (more than the V100s
// added); now each stage fuses where its GPU runs it.
func TestMixedGangBeatsOneType(t *testing.T) {
	for _, tc := range []struct {
		model string
		batch int
	}{{"opt-350m", 256}, {"gpt3-1.7b", 512}} {
		m, err := train.ResolveModel(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		_, alone := planRate(t, &m, "8xA100-40", tc.batch)
		res, mixed := planRate(t, &m, "8xA100-40,8xV100-16", tc.batch)
		if u := planTypes(res.Plan); !u["A100-40"] || !u["V100-16"] {
			t.Errorf("%s: the mixed plan uses %v, want both types", tc.model, u)
		}
		if mixed <= alone*1.05 {
			t.Errorf("%s: 8 A100 + 8 V100 give %.0f tokens/s, 8 A100 alone %.0f: want the mixed gang faster", tc.model, mixed, alone)
		}
	}
}

// TestFusedAttentionWhereTheGPURunsIt checks that a plan's fused attention
// changes a V100 stage's time and memory not at all (Volta runs no
// FlashAttention) and an A100 stage's a lot.
func TestFusedAttentionWhereTheGPURunsIt(t *testing.T) {
	m, err := train.ResolveModel("opt-350m")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"V100-16", "A100-40"} {
		g, _ := train.LookupGPU(name)
		p := basePlan(&train.Cluster{}, 2, 2, "none", 1)
		p.Precision = "fp16"
		p.Stages = train.EvenStages(m.Layers, 1)
		p.Replicas = []train.Replica{{Batch: 2, Stages: pure(name, 1, 1)}}
		p.FlashAttention = true
		on, onMem := train.PartCosts(&m, &g, 1, p, 100), train.StageMemory(&m, p, 0, &g, 1).Total
		p.FlashAttention = false
		off, offMem := train.PartCosts(&m, &g, 1, p, 100), train.StageMemory(&m, p, 0, &g, 1).Total
		same := on == off && onMem == offMem
		if g.FusedAttention() == same {
			t.Errorf("%s (fused attention %v): flash on %+v %.3g B, off %+v %.3g B", name, g.FusedAttention(), on, onMem, off, offMem)
		}
	}
}

// TestGraphNetworkMixedGangIdle pins why ResNet-50 (global batch 1,024)
// leaves 8 V100s beside 8 A100s idle: a plan has one micro-batch and
// shares the batch in whole micro-batches, and no such plan on both types
// beats the A100s alone. At micro-batch 128 the batch is 8 micro-batches,
// one per A100; smaller micro-batches cost the A100s more than the V100s
// add. The planner's answer must be at least every plan on both types with
// the shares in proportion to each type's own simulated rate.
func TestGraphNetworkMixedGangIdle(t *testing.T) {
	m, err := train.ResolveNetwork("resnet50", "3x224x224")
	if err != nil {
		t.Fatal(err)
	}
	const B = 1024
	res, best := planRate(t, &m, "8xA100-40,8xV100-16", B)
	_, alone := planRate(t, &m, "8xA100-40", B)
	if best < alone*(1-1e-9) {
		t.Errorf("8 A100 + 8 V100: %.0f samples/s, below the A100s alone (%.0f)", best, alone)
	}
	c, _ := Scenario{GPUs: "8xA100-40,8xV100-16"}.Cluster()
	e := newEvaluator(&m, c, Options{GlobalBatch: B}, 0)
	stages := train.EvenStages(m.Layers, 1)
	tried := 0
	for mb := 8; mb <= 64; mb *= 2 {
		rates := map[string]float64{}
		for _, ty := range c.Types() {
			rates[ty] = replicaRate(e, stages, ty, mb, "none")
		}
		p := graphPlan(e, stages, c.Types(), rates, mb, "none", c.GPUs(""))
		if p == nil || len(planTypes(p)) < 2 {
			continue
		}
		e.precision(p)
		r, err := train.Simulate(&m, c, p, train.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tried++
		if r.Fits && r.TokensPerS > best*(1+1e-9) {
			t.Errorf("micro-batch %d on both types: %.0f samples/s beats the planner's %.0f (%s)", mb, r.TokensPerS, best, Shape(res.Plan))
		}
	}
	if tried == 0 {
		t.Fatal("no plan on both types was built")
	}
}
