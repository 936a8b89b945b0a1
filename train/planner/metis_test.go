package planner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/train"
)

func TestMetisDeviceGroups(t *testing.T) {
	// 8 GPUs in 3 stages: groups of at least 8/3 → 2, 2 and 4 in every order
	if got := fmt.Sprint(metisDeviceGroups(8, 3, 4)); got != "[[2 2 4] [2 4 2] [4 2 2]]" {
		t.Errorf("8 GPUs, 3 stages: %s", got)
	}
	// Metis's own example: six groups of 1 and one of 2, at most 6 blocks
	// to permute: the ones merge into three pairs
	got := metisPermute([]int{1, 1, 1, 1, 1, 1, 2}, 6)
	if len(got) != 4 || fmt.Sprint(got[0]) != "[1 1 1 1 1 1 2]" {
		t.Errorf("permute: %d orders, first %v", len(got), got[0])
	}
	for _, g := range metisDeviceGroups(512, 5, 4) {
		n := 0
		for _, x := range g {
			n += x
			if x < 512/5 || x&(x-1) != 0 {
				t.Fatalf("group %v: %d is not a power of two of at least 102", g, x)
			}
		}
		if n != 512 || len(g) != 5 {
			t.Fatalf("groups %v", g)
		}
	}
}

// Metis gives stages their own data parallelism: on a V100-heavy mix its
// plan's stages differ in data parallelism or mix the types, the plan fits,
// exports to the per-rank file (which passes its check) and is refused,
// with the reason, by Megatron-LM's form.
func TestMetisStageGroups(t *testing.T) {
	m, c := setup(t, "gpt-neo-2.7b", "16xA100-40,48xV100-16")
	res, err := Metis{}.Plan(m, c, Options{GlobalBatch: 256})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Plan
	if !p.StageDP() || !res.Sim.Fits || p.GPUs() != 64 {
		t.Fatalf("plan %s, fits %v, %d GPUs", Shape(p), res.Sim.Fits, p.GPUs())
	}
	unlike := false
	for _, g := range p.Groups {
		unlike = unlike || g.DP() != p.Groups[0].DP() || len(g.Ranks) > 1
	}
	if !unlike {
		t.Errorf("every stage alike: %s", Shape(p))
	}
	if _, err := Export("ranks", m, c, p); err != nil {
		t.Errorf("ranks: %v", err)
	}
	if _, err := Export("megatron", m, c, p); err == nil || !strings.Contains(err.Error(), "--export ranks") {
		t.Errorf("megatron: %v", err)
	}
	again, err := Metis{}.Plan(m, c, Options{GlobalBatch: 256})
	if err != nil || Shape(again.Plan) != Shape(p) || again.Sim.TokensPerS != res.Sim.TokensPerS {
		t.Errorf("a second search differs: %s", Shape(again.Plan))
	}
	// a stage whose ranks straddle the types splits the micro-batch by speed
	for _, g := range p.Groups {
		if len(g.Ranks) > 1 && g.Ranks[0].GPU != g.Ranks[len(g.Ranks)-1].GPU {
			a, _ := c.GPUType(g.Ranks[0].GPU)
			b, _ := c.GPUType(g.Ranks[len(g.Ranks)-1].GPU)
			if (a.TensorTFLOPS > b.TensorTFLOPS) != (g.Ranks[0].Share > g.Ranks[len(g.Ranks)-1].Share) && g.Ranks[0].Share != g.Ranks[len(g.Ranks)-1].Share {
				t.Errorf("shares against speed: %+v", g.Ranks)
			}
		}
	}
}

// A plan with per-stage data parallelism under context parallelism
// writes a per-rank file that passes its check: every rank's CP ring, TP
// group and data-parallel peers within its stage.
func TestGroupRanksCP(t *testing.T) {
	m, c := setup(t, "llama-3-8b", "32xA100-40,32xV100-16")
	p := basePlan(c, 8, 64, "none", 1)
	p.CP = 2
	p.Stages = []train.LayerRange{{First: 0, Last: 23}, {First: 24, Last: 31}}
	p.Groups = []train.Group{
		{Ranks: []train.Rank{{GPU: "A100-40", TP: 2, Share: 1, Count: 8}}},
		{Ranks: []train.Rank{{GPU: "V100-16", TP: 4, Share: 2, Count: 4}}},
	}
	if err := p.Check(m); err != nil {
		t.Fatal(err)
	}
	f, err := Ranks(c, p)
	if err != nil {
		t.Fatal(err)
	}
	if f.WorldSize != 64 || f.Ranks[0].CPRank == nil || len(f.Ranks[0].CPGroup) != 2 || len(f.Ranks[0].DPGroup) != 8 || len(f.Ranks[63].DPGroup) != 4 {
		t.Errorf("world %d, rank 0 %+v, rank 63 %+v", f.WorldSize, f.Ranks[0], f.Ranks[63])
	}
	if _, err := Export("ranks", m, c, p); err != nil {
		t.Errorf("ranks: %v", err)
	}
	r, err := train.Simulate(m, c, p, train.Options{})
	if err != nil || r.GPUs != 64 || r.Stages[0].CP != 2 {
		t.Errorf("simulate: %v, %+v", err, r)
	}
}

// inlay explains a plan with per-stage data parallelism it found (its
// stage pipelines alone; with the rest of its search a plan of replicas
// recomputing on their own wins here): the layout of the types, the
// micro-batch, each stage's binding constraint.
func TestExplainStageDP(t *testing.T) {
	m, c := setup(t, "llama-3-8b", "32xA100-40,32xV100-16")
	e := newEvaluator(m, c, Options{GlobalBatch: 256}, time.Minute)
	stageDP(e)
	res, err := e.finish("inlay", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Plan.StageDP() {
		t.Fatalf("inlay's stage pipelines gave a plan of replicas: %s", Shape(res.Plan))
	}
	res.Explain = explainInlay(e, res)
	x := res.Explain
	if x == nil || len(x.Choices) < 3 || !strings.Contains(x.Choices[0], "own data parallelism") || len(x.Stages) != res.Plan.PP() || x.Binding == "" {
		t.Fatalf("explain %+v", x)
	}
	for _, s := range x.Stages {
		if s.Binding == "" || len(s.Kinds) == 0 {
			t.Errorf("stage %+v", s)
		}
	}
}
