package sim

import (
	"context"
	"math"
	"testing"

	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy/dag"
	"github.com/inlay-dev/inlay/cluster/policy/elastic"
	"github.com/inlay-dev/inlay/cluster/policy/packing"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

const fourV100 = `name: four
gpu_types:
  - {name: v100, memory_gib: 16, tensor_tflops: 125, fp32_tflops: 15.7, mem_bandwidth_gbs: 900}
nodes:
  - {name: v, gpu: v100, count: 1, gpus: 4, cpus: 8, memory_gib: 100, intra: {kind: nvlink, bandwidth_gbs: 300}}
network: {bandwidth_gbs: 1}
`

func TestDAGByHand(t *testing.T) {
	c, tb := fixture(t)
	h := stepsFor(tb, "A3C", 1)
	// a → b and a → c on one GPU: 1 h, then b (2 h) before c (1 h) since b
	// has the longer upward rank: JCT 4 h.
	jobs := []job.Job{{ID: 0, Arrival: 0, Stages: []job.Stage{
		{Name: "a", Type: "A3C", GPUs: 1, Steps: h},
		{Name: "b", Type: "A3C", GPUs: 1, Steps: 2 * h, After: []string{"a"}},
		{Name: "c", Type: "A3C", GPUs: 1, Steps: h, After: []string{"a"}},
	}}}
	jobs[0].Type, jobs[0].GPUs, jobs[0].Steps = "A3C", 1, h
	r, err := Run(context.Background(), Config{Timeline: true}, jobs, c, tb, dag.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.PerJob[0].JCT / 3600; math.Abs(got-4) > 1e-6 {
		t.Errorf("JCT %.4f h, want 4", got)
	}
	if len(r.PerJob[0].Spans) != 3 || r.PerJob[0].Spans[1].Start != 3600 || r.PerJob[0].Spans[1].End != 3*3600 {
		t.Errorf("spans %+v, want a, then b from 1 h to 3 h, then c", r.PerJob[0].Spans)
	}
}

func TestElasticTakesFreeGPUs(t *testing.T) {
	c, err := hw.Parse("four.yaml", []byte(fourV100))
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := throughput.Gavel()
	typ := "LM (batch size 20)"
	v := tb.GPUIndex("v100")
	// Gavel measured LM at 2 GPUs faster than at 4: the DP must take 2.
	id1, _ := tb.Resolve(typ, 1)
	id2, _ := tb.Resolve(typ, 2)
	id4, _ := tb.Resolve(typ, 4)
	if !(tb.Alone(id2, v) > tb.Alone(id4, v) && tb.Alone(id2, v) > tb.Alone(id1, v)) {
		t.Fatal("the table changed")
	}
	steps := 3600 * tb.Alone(id2, v)
	jobs := []job.Job{{ID: 0, Type: typ, GPUs: 1, Steps: steps, Elastic: &job.Elastic{Min: 1, Max: 4, Online: true}}}
	r, err := Run(context.Background(), Config{Timeline: true}, jobs, c, tb, elastic.New())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.PerJob[0].JCT / 3600; math.Abs(got-1) > 1e-3 || len(r.PerJob[0].Spans[0].Servers) != 2 {
		t.Errorf("JCT %.4f h on %d GPUs, want 1 h on 2 (1 GPU would take %.2f h)", got, len(r.PerJob[0].Spans[0].Servers), steps/tb.Alone(id1, v)/3600)
	}
}

func TestTetrisRespectsCPUs(t *testing.T) {
	c, err := hw.Parse("four.yaml", []byte(fourV100))
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := throughput.Gavel()
	h := stepsFor(tb, "A3C", 1)
	// Four 1-GPU jobs of 1 h, each asking 4 of the server's 8 cores: only
	// two run at once, so the last ends at 2 h although GPUs sit free.
	var jobs []job.Job
	for i := 0; i < 4; i++ {
		jobs = append(jobs, job.Job{ID: i, Type: "A3C", GPUs: 1, Steps: h, CPUs: 4})
	}
	r, err := Run(context.Background(), Config{}, jobs, c, tb, &packing.Tetris{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Makespan-2) > 1e-6 {
		t.Errorf("makespan %.4f h, want 2", r.Makespan)
	}
}
