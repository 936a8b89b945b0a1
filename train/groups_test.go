package train

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// asGroups is a uniform plan's per-stage form: every stage dp ranks of one
// sequence a micro-batch each (a micro-batch of dp sequences).
func asGroups(p *Plan) *Plan {
	q := *p
	dp := p.DP()
	q.Groups = make([]Group, p.PP())
	for s := range q.Groups {
		pl := p.Replicas[0].Stages[s]
		q.Groups[s] = Group{Ranks: []Rank{{GPU: pl.GPU, TP: pl.TP, Share: p.MicroBatch, Count: dp}}}
	}
	q.Replicas = nil
	q.MicroBatch = p.MicroBatch * dp
	return &q
}

// Identical replicas are a special case of per-stage data parallelism:
// the same ranks on the same GPUs, each stage's ranks in step, give the
// same iteration and the same memory.
func TestGroupsMatchReplicas(t *testing.T) {
	m, _ := Preset("gpt3-1.7b")
	c := a100Cluster(t, 64)
	for _, zero := range []int{0, 1, 3} {
		p := mustUniform(t, &m, 2, 4, 4, 1, 64)
		p.Zero = zero
		if zero == 1 {
			p.CP = 2 // and under context parallelism
		}
		a, err := Simulate(&m, c, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := asGroups(p)
		b, err := Simulate(&m, c, g, Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(a.IterationS/b.IterationS-1) > 1e-9 || a.PeakMemoryBytes != b.PeakMemoryBytes || a.GPUs != b.GPUs || a.Fits != b.Fits {
			t.Errorf("zero %d: replicas %.6f s, %.3g B, %d GPUs; groups %.6f s, %.3g B, %d GPUs", zero, a.IterationS, a.PeakMemoryBytes, a.GPUs, b.IterationS, b.PeakMemoryBytes, b.GPUs)
		}
		if len(b.Stages) != 4 || b.Stages[0].Ranks != 4 || len(b.Spans) == 0 || b.Stages[0].CP != p.CP {
			t.Errorf("zero %d: %d stage rows (want 4 of 4 ranks), %d spans", zero, len(b.Stages), len(b.Spans))
		}
		if !Fits(&m, c, g) {
			t.Errorf("zero %d: Fits says no", zero)
		}
	}
}

// A stage on fast GPUs with fewer, larger ranks beside a stage on slow
// GPUs with more: the shape replicas cannot take.
func TestGroupsUnlikeStages(t *testing.T) {
	m, _ := Preset("gpt3-1.7b")
	c := mixCluster()
	p := &Plan{MicroBatch: 8, GlobalBatch: 64, Stages: []LayerRange{{0, 15}, {16, 23}},
		Groups: []Group{
			{Ranks: []Rank{{GPU: "A100-80", TP: 1, Share: 1, Count: 8}}},
			{Ranks: []Rank{{GPU: "V100-32", TP: 2, Share: 2, Count: 4}}},
		}}
	p.fillDefaults()
	r, err := Simulate(&m, c, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Fits || r.IterationS <= 0 || r.MFU <= 0 || r.MFU > 1 || r.GPUs != 16 {
		t.Fatalf("got %+v", r)
	}
	// moving layers to the V100s' stage slows it
	q := *p
	q.Stages = []LayerRange{{0, 7}, {8, 23}}
	r2, _ := Simulate(&m, c, &q, Options{})
	if !(r2.IterationS > r.IterationS) {
		t.Errorf("16 layers on the V100s: %.3f s, 8: %.3f s", r2.IterationS, r.IterationS)
	}
	// unlike ranks in one stage: the V100 ranks are the slower on the
	// same share, and set the stage's time
	mixed := *p
	mixed.Stages = []LayerRange{{0, 11}, {12, 23}}
	mixed.Groups = []Group{
		{Ranks: []Rank{{GPU: "A100-80", TP: 1, Share: 2, Count: 4}}},
		{Ranks: []Rank{{GPU: "A100-80", TP: 1, Share: 1, Count: 4}, {GPU: "V100-32", TP: 1, Share: 1, Count: 4}}},
	}
	rm, err := Simulate(&m, c, &mixed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rm.Stages) != 3 || !(rm.Stages[2].ForwardS > rm.Stages[1].ForwardS) || !(rm.Stages[2].ComputeS > rm.Stages[1].ComputeS) {
		t.Errorf("got %+v", rm.Stages)
	}
}

func TestGroupErrors(t *testing.T) {
	m := tinyModel()
	base := "micro_batch: 4\nglobal_batch: 8\nstages: [{layers: 0-3}, {layers: 4-7}]\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"shares", base + "groups: [{ranks: [{gpu: A100-80, share: 2, count: 2}]}, {ranks: [{gpu: A100-80, share: 1, count: 3}]}]", "groups[1]: shares add up to 3 sequences, not the micro-batch 4"},
		{"count", base + "groups: [{ranks: [{gpu: A100-80, share: 4}]}]", "groups: 1 for 2 stages"},
		{"both", base + "replicas: [{gpu: A100-80}]\ngroups: [{ranks: [{gpu: A100-80, share: 4}]}, {ranks: [{gpu: A100-80, share: 4}]}]", "replicas or groups, not both"},
		{"tp", base + "groups: [{ranks: [{gpu: A100-80, share: 4, tp: 3}]}, {ranks: [{gpu: A100-80, share: 4}]}]", "groups[0].ranks[0].tp: 3 does not divide"},
		{"share", base + "groups: [{ranks: [{gpu: A100-80, share: 0, count: 4}]}, {ranks: [{gpu: A100-80, share: 4}]}]", "groups[0].ranks[0].share: 0 must be in 1..4"},
		{"global", "micro_batch: 3\nglobal_batch: 8\nstages: [{layers: 0-7}]\ngroups: [{ranks: [{gpu: A100-80, share: 3}]}]", "global_batch: 8 is not a multiple of the micro-batch 3"},
		{"interleaved", base + "schedule: interleaved:2\ngroups: [{ranks: [{gpu: A100-80, share: 4}]}, {ranks: [{gpu: A100-80, share: 4}]}]", "runs gpipe or 1f1b"},
	} {
		_, err := ParsePlan("p.yaml", []byte(tc.yaml), &m)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "p.yaml") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.name, err, tc.want)
		}
	}
	// more GPUs than the cluster has: the rank is named
	mm, _ := Preset("gpt3-1.7b")
	p := asGroups(mustUniform(t, &mm, 1, 2, 8, 1, 16))
	p.Groups[1].Ranks[0].Count = 9
	p.Groups[1].Ranks[0].Share = 1
	p.MicroBatch = 9
	p.Groups[0].Ranks[0].Count, p.Groups[0].Ranks[0].Share = 9, 1
	p.GlobalBatch = 18
	if _, err := Simulate(&mm, a100Cluster(t, 16), p, Options{}); err == nil || !strings.Contains(err.Error(), "groups[1].ranks[0]") {
		t.Errorf("got %v", err)
	}
}

// A plan with groups reads back from its JSON and its YAML.
func TestGroupsRoundTrip(t *testing.T) {
	m := tinyModel()
	p, err := ParsePlan("p.yaml", []byte("micro_batch: 4\nglobal_batch: 8\nstages: [{layers: 0-3}, {layers: 4-7}]\n"+
		"groups: [{ranks: [{gpu: A100-80, share: 2, count: 2}]}, {ranks: [{gpu: V100-16, share: 1, count: 2}, {gpu: A100-80, share: 2, tp: 2}]}]"), &m)
	if err != nil {
		t.Fatal(err)
	}
	if !p.StageDP() || p.GPUs() != 6 || p.Groups[1].DP() != 3 || p.Groups[1].Ranks[1].Count != 1 {
		t.Fatalf("got %+v", p)
	}
	data, _ := json.Marshal(p)
	q, ok, err := ParsePlanJSON("p.json", data, &m)
	if !ok || err != nil {
		t.Fatalf("ok %v, %v", ok, err)
	}
	if q.GPUs() != p.GPUs() || len(q.Groups) != 2 || q.Groups[1].Ranks[0] != p.Groups[1].Ranks[0] {
		t.Errorf("read back %+v", q)
	}
}

// A group plan whose stages share their data parallelism and shares is
// replicas: written as such it is no slower.
func TestAsReplicas(t *testing.T) {
	m, _ := Preset("gpt3-1.7b")
	c := mixCluster()
	p := &Plan{MicroBatch: 8, GlobalBatch: 32, Stages: []LayerRange{{0, 23}},
		Groups: []Group{{Ranks: []Rank{{GPU: "A100-80", TP: 1, Share: 1, Count: 4}, {GPU: "V100-32", TP: 2, Share: 1, Count: 4}}}}}
	q, a, b := bothForms(t, &m, c, p)
	if q.StageDP() || q.DP() != 8 || q.GPUs() != p.GPUs() || q.Check(&m) != nil {
		t.Fatalf("%+v", q)
	}
	if b.IterationS > a.IterationS*(1+1e-9) {
		t.Errorf("replicas %.4f s, groups %.4f s", b.IterationS, a.IterationS)
	}
	two := asGroups(mustUniform(t, &m, 1, 2, 4, 1, 8))
	two.Groups[1].Ranks = []Rank{{GPU: "", TP: 2, Share: 2, Count: 2}}
	if _, ok := two.AsReplicas(); ok {
		t.Error("stages of 4 and 2 ranks read as replicas")
	}
}

// Unlike ranks in one stage are priced as unlike replicas are: a plan of
// one stage written either way takes the same time.
func TestGroupsMatchUnlikeReplicas(t *testing.T) {
	m, _ := Preset("gpt3-1.7b")
	c := mixCluster()
	p := &Plan{MicroBatch: 12, GlobalBatch: 48, Stages: []LayerRange{{0, 23}}, OverlapGradReduce: true,
		Groups: []Group{{Ranks: []Rank{{GPU: "A100-80", TP: 1, Share: 2, Count: 4}, {GPU: "V100-32", TP: 2, Share: 1, Count: 4}}}}}
	_, a, b := bothForms(t, &m, c, p)
	if math.Abs(a.IterationS/b.IterationS-1) > 1e-9 {
		t.Errorf("groups %.6f s, replicas %.6f s", a.IterationS, b.IterationS)
	}
}

// bothForms writes a one-stage group plan (its defaults filled) as
// replicas and simulates both: the replica form, then the groups' result
// and the replicas'.
func bothForms(t *testing.T, m *Model, c *Cluster, p *Plan) (*Plan, *Result, *Result) {
	t.Helper()
	p.fillDefaults()
	q, ok := p.AsReplicas()
	if !ok {
		t.Fatal("one stage is replicas")
	}
	a, err := Simulate(m, c, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Simulate(m, c, q, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return q, a, b
}
