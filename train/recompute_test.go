package train

import (
	"strings"
	"testing"
)

// A replica's own recomputation prices its stages as the whole plan at
// that setting would: the same compute and memory per stage, while the
// other replicas keep the plan's; the slower replica sets the iteration.
func TestReplicaRecompute(t *testing.T) {
	m, _ := Preset("gpt3-1.7b")
	c := a100Cluster(t, 16)
	at := func(rc string) *Result {
		p := mustUniform(t, &m, 2, 2, 4, 2, 32)
		p.Recompute = rc
		r, err := Simulate(&m, c, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	none, full := at("none"), at("full")
	p := mustUniform(t, &m, 2, 2, 4, 2, 32)
	p.Recompute = "full"
	p.Replicas[0].Recompute = "none"
	if err := p.Check(&m); err != nil {
		t.Fatal(err)
	}
	mixed, err := Simulate(&m, c, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range mixed.Stages {
		want := full
		if st.Replica == 0 {
			want = none
		}
		var w StageResult
		for _, x := range want.Stages {
			if x.Replica == st.Replica && x.Stage == st.Stage {
				w = x
			}
		}
		if st.ComputeS != w.ComputeS || st.Memory.Total != w.Memory.Total {
			t.Errorf("replica %d stage %d: compute %g s, memory %g; as the plan at its setting %g s, %g", st.Replica, st.Stage, st.ComputeS, st.Memory.Total, w.ComputeS, w.Memory.Total)
		}
	}
	if mixed.IterationS < none.IterationS || mixed.IterationS > full.IterationS {
		t.Errorf("iteration %g s, outside none's %g and full's %g", mixed.IterationS, none.IterationS, full.IterationS)
	}
	if p.RecomputeOf(0) != "none" || p.RecomputeOf(1) != "full" {
		t.Errorf("RecomputeOf: %q, %q; want the replica's none, the plan's full", p.RecomputeOf(0), p.RecomputeOf(1))
	}

	// the YAML form, and a bad setting named by its place
	y := "stages: [{layers: 0-11}, {layers: 12-23}]\nmicro_batch: 2\nglobal_batch: 8\nrecompute: full\nreplicas:\n  - {batch: 4, gpu: A100-80, tp: 2, recompute: none}\n  - {batch: 4, gpu: A100-80, tp: 2}\n"
	q, err := ParsePlan("p.yaml", []byte(y), &m)
	if err != nil {
		t.Fatal(err)
	}
	if q.RecomputeOf(0) != "none" || q.RecomputeOf(1) != "full" {
		t.Errorf("recompute %q, %q; want none, full", q.RecomputeOf(0), q.RecomputeOf(1))
	}
	bad := strings.Replace(y, "recompute: none", "recompute: most", 1)
	if _, err := ParsePlan("p.yaml", []byte(bad), &m); err == nil || !strings.Contains(err.Error(), `replicas[0].recompute: "most"`) {
		t.Errorf("bad replica recompute: %v", err)
	}
}
