package train

import (
	"strings"
	"testing"
)

// A replica's own micro-batch: the plan's micro-batch given to every
// replica changes nothing; a replica that runs its share in micro-batches
// of its own is timed and sized as the plan with that micro-batch is,
// while the other replicas keep the plan's.
func TestReplicaMicroBatch(t *testing.T) {
	m, _ := Preset("gpt3-1.7b")
	c := mixCluster()
	mixed := func(micro, ownA int) *Plan {
		p := mustUniform(t, &m, 2, 2, 2, micro, 32)
		p.Replicas[0].Batch, p.Replicas[1].Batch = 24, 8
		p.Replicas[0].MicroBatch = ownA
		for s := range p.Replicas[0].Stages {
			p.Replicas[0].Stages[s].GPU = "A100-80"
			p.Replicas[1].Stages[s].GPU = "V100-32"
		}
		return p
	}
	sim := func(p *Plan) *Result {
		t.Helper()
		r, err := Simulate(&m, c, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	plain, same := sim(mixed(2, 0)), sim(mixed(2, 2))
	if plain.IterationS != same.IterationS || plain.PeakMemoryBytes != same.PeakMemoryBytes {
		t.Errorf("own micro-batch equal to the plan's: %.4f s, %.0f B; without: %.4f s, %.0f B", same.IterationS, same.PeakMemoryBytes, plain.IterationS, plain.PeakMemoryBytes)
	}
	own := sim(mixed(2, 4))  // the A100 replica at 4, the V100's at 2
	all4 := sim(mixed(4, 0)) // both at 4
	all2 := sim(mixed(2, 0)) // both at 2
	for _, st := range own.Stages {
		var want []StageResult
		if st.Replica == 0 {
			want = all4.Stages
		} else {
			want = all2.Stages
		}
		for _, w := range want {
			if w.Replica == st.Replica && w.Stage == st.Stage && (w.ForwardS != st.ForwardS || w.BackwardS != st.BackwardS) {
				t.Errorf("replica %d stage %d: %.4f + %.4f s, want %.4f + %.4f s", st.Replica, st.Stage, st.ForwardS, st.BackwardS, w.ForwardS, w.BackwardS)
			}
		}
		if st.Replica == 0 {
			for _, w := range all2.Stages {
				if w.Replica == 0 && w.Stage == st.Stage && !(st.Memory.Activations > w.Memory.Activations) {
					t.Errorf("stage %d: micro-batch 4 keeps %.0f B of activations, 2 keeps %.0f B", st.Stage, st.Memory.Activations, w.Memory.Activations)
				}
			}
		}
	}
	if p := mixed(2, 4); Fits(&m, c, p) != own.Fits {
		t.Errorf("Fits %v, the simulation's %v", Fits(&m, c, p), own.Fits)
	}
	bad := mixed(2, 5)
	if err := bad.Check(&m); err == nil || !strings.Contains(err.Error(), "replicas[0].batch: 24 is not a positive multiple of the micro-batch 5") {
		t.Errorf("batch 24 at micro-batch 5: %v", err)
	}
}

func TestParsePlanReplicaMicroBatch(t *testing.T) {
	m := tinyModel()
	p, err := ParsePlan("p.yaml", []byte(`
micro_batch: 2
global_batch: 12
stages: [{layers: 0-7}]
replicas:
  - {batch: 8, micro_batch: 4, gpu: A100-80}
  - {batch: 4, gpu: V100-16}
`), &m)
	if err != nil {
		t.Fatal(err)
	}
	if p.Micro(0) != 4 || p.Micro(1) != 2 {
		t.Errorf("micro-batches %d and %d, want 4 and 2", p.Micro(0), p.Micro(1))
	}
	_, err = ParsePlan("p.yaml", []byte("micro_batch: 2\nglobal_batch: 6\nstages: [{layers: 0-7}]\nreplicas: [{batch: 6, micro_batch: 4, gpu: A100-80}]"), &m)
	if err == nil || !strings.Contains(err.Error(), "replicas[0].batch: 6 is not a positive multiple of the micro-batch 4") {
		t.Errorf("got %v", err)
	}
}
