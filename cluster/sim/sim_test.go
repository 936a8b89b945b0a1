package sim

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/internal/clustertest"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/policy/agnostic"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/internal/openapi"
)

const oneV100 = `name: one
gpu_types:
  - {name: v100, memory_gib: 16, tensor_tflops: 125, fp32_tflops: 15.7, mem_bandwidth_gbs: 900}
nodes:
  - {name: v, gpu: v100, count: 1, gpus: 1}
network: {bandwidth_gbs: 1}
`

func fixture(t *testing.T) (*hw.Platform, *throughput.Table) {
	t.Helper()
	c, err := hw.Parse("one.yaml", []byte(oneV100))
	if err != nil {
		t.Fatal(err)
	}
	return c, clustertest.GavelTable(t)
}

// stepsFor returns the steps that take h hours on a V100.
func stepsFor(tb *throughput.Table, typ string, h float64) float64 {
	id, _ := tb.Resolve(typ, 1)
	return h * 3600 * tb.Alone(id, tb.GPUIndex("v100"))
}

func TestFIFOByHand(t *testing.T) {
	c, tb := fixture(t)
	jobs := []job.Job{
		{ID: 0, Type: "A3C", GPUs: 1, Steps: stepsFor(tb, "A3C", 1), Arrival: 0},
		{ID: 1, Type: "A3C", GPUs: 1, Steps: stepsFor(tb, "A3C", 2), Arrival: 0},
		{ID: 2, Type: "A3C", GPUs: 1, Steps: stepsFor(tb, "A3C", 1), Arrival: 5 * 3600},
	}
	r, err := Run(context.Background(), Config{Timeline: true}, jobs, c, tb, agnostic.NewFIFO(1))
	if err != nil {
		t.Fatal(err)
	}
	// FIFO on one GPU: 0-1 h, 1-3 h, then idle until 5 h, 5-6 h.
	want := []float64{1, 3, 1}
	for i, w := range want {
		if got := r.PerJob[i].JCT / 3600; math.Abs(got-w) > 1e-6 {
			t.Errorf("job %d: JCT %.6f h, want %g", i, got, w)
		}
	}
	if math.Abs(r.AvgJCT-5.0/3) > 1e-6 || math.Abs(r.Makespan-6) > 1e-6 {
		t.Errorf("avg %.6f makespan %.6f", r.AvgJCT, r.Makespan)
	}
	if u := r.Utilization["v100"]; math.Abs(u-4.0/6) > 1e-6 {
		t.Errorf("utilisation %.4f, want 4/6", u)
	}
	if len(r.PerJob[1].Spans) != 1 || r.PerJob[1].Spans[0].Start != 3600 {
		t.Errorf("spans %+v", r.PerJob[1].Spans)
	}
}

// twoEqualJobs is two A3C jobs of 1 h on a V100 each, both arriving at 0.
func twoEqualJobs(tb *throughput.Table) []job.Job {
	return []job.Job{
		{ID: 0, Type: "A3C", GPUs: 1, Steps: stepsFor(tb, "A3C", 1), Arrival: 0},
		{ID: 1, Type: "A3C", GPUs: 1, Steps: stepsFor(tb, "A3C", 1), Arrival: 0},
	}
}

func TestRoundsByHand(t *testing.T) {
	c, tb := fixture(t)
	// Two equal jobs of 1 h under agnostic LAS on one GPU with 360 s rounds
	// take turns: both finish near 2 h. Gavel's rounds: a job runs whole
	// rounds, so the first to finish ends at 1 h of its own service.
	jobs := twoEqualJobs(tb)
	r, err := Run(context.Background(), Config{}, jobs, c, tb, agnostic.LAS{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.PerJob[0].JCT/3600, r.PerJob[1].JCT/3600
	if math.Abs(math.Max(a, b)-2) > 1e-6 || math.Abs(math.Min(a, b)-1.9) > 1e-6 {
		t.Errorf("JCTs %.4f and %.4f h, want 1.9 and 2", a, b)
	}
	if r.Rounds != 20 {
		t.Errorf("%d rounds, want 20", r.Rounds)
	}
}

func TestPreemptionCost(t *testing.T) {
	c, tb := fixture(t)
	jobs := twoEqualJobs(tb)
	free, _ := Run(context.Background(), Config{}, jobs, c, tb, agnostic.LAS{})
	paid, _ := Run(context.Background(), Config{Preempt: 36}, jobs, c, tb, agnostic.LAS{})
	if paid.Preemptions == 0 || !(paid.Makespan > free.Makespan) {
		t.Errorf("preemptions %d, makespan %.3f vs %.3f", paid.Preemptions, paid.Makespan, free.Makespan)
	}
}

func TestDeterministic(t *testing.T) {
	c, _ := hw.Preset("gavel-108-servers")
	tb, _ := throughput.Gavel()
	jobs, err := job.Generate(job.GenConfig{Jobs: 200, Rate: 20, Seed: 7, MultiGPU: true}, tb)
	if err != nil {
		t.Fatal(err)
	}
	run := func(p policy.Policy, pl sched.Placement) *Result {
		r, err := Run(context.Background(), Config{Timeline: true, Window: [2]int{50, 149}, StopAtWindow: true, Sched: sched.Config{Placement: pl}}, jobs, c, tb, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(agnostic.NewGandiva(3), sched.Consolidated), run(agnostic.NewGandiva(3), sched.Consolidated)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs differ")
	}
	if a.Jobs != 100 || a.Unfinished != 0 {
		t.Errorf("jobs %d unfinished %d", a.Jobs, a.Unfinished)
	}
	sp := run(agnostic.NewGandiva(3), sched.Spread)
	spreadSeen := false
	for _, j := range sp.PerJob {
		for _, s := range j.Spans {
			for _, n := range s.Servers[1:] {
				spreadSeen = spreadSeen || n != s.Servers[0]
			}
		}
	}
	if !spreadSeen {
		t.Error("spread placement put no multi-GPU job on several servers")
	}
}

// TestOutcomeMatchesOpenAPI checks the outcome in each front end's form
// against serve/openapi.yaml's ClusterOutcome: cluster simulate --json's
// (wall time), a replay's (speedup and the simulator's JCT), the web API's
// (JCTs and timeline), and that the per-job results stay out of it.
func TestOutcomeMatchesOpenAPI(t *testing.T) {
	doc, err := openapi.ReadFile("../../serve/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, tb := clustertest.Gavel108(t)
	jobs := clustertest.Trace(t, tb, job.GenConfig{Jobs: 30, Rate: 20, Seed: 1})
	res, err := Run(context.Background(), Config{Sched: sched.Config{Round: 360}, Timeline: true}, jobs, c, tb, agnostic.LAS{})
	if err != nil {
		t.Fatal(err)
	}
	cli := NewOutcome(res, 1234567*time.Microsecond)
	replay := NewOutcome(res, time.Second)
	replay.Speedup, replay.SimAvgJCT = 360, res.AvgJCT
	web := NewOutcome(res, time.Second)
	web.AddTimeline(res)
	for name, o := range map[string]*Outcome{"cli": cli, "replay": replay, "web": web} {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate("ClusterOutcome", b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b, &keys); err != nil {
			t.Fatal(err)
		}
		_, perJob := keys["per_job"]
		_, timeline := keys["timeline"]
		_, speedup := keys["speedup"]
		if perJob || timeline != (name == "web") || speedup != (name == "replay") {
			t.Errorf("%s: per_job %v, timeline %v, speedup %v", name, perJob, timeline, speedup)
		}
	}
	if cli.WallSeconds != 1.235 || len(res.PerJob) == 0 || len(web.Timeline) == 0 {
		t.Errorf("wall_s %v (want 1.235), %d per-job results, %d timeline jobs", cli.WallSeconds, len(res.PerJob), len(web.Timeline))
	}
}
