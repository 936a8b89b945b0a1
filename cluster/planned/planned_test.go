package planned

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy/inlayadapt"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// small is 2 servers of 8 A100s and 2 of 8 V100s.
var small = &adapt.Cluster{Types: []adapt.Type{{Name: "A100-40", PerNode: 8, Nodes: 2}, {Name: "V100-16", PerNode: 8, Nodes: 2}}}

// A 24-GPU rigid job fits no one type: it runs only as a mixed gang.
const trace = `{"model":"opt-350m","batch":256,"gpus":24,"steps":3000,"arrival_s":0}
{"model":"gpt3-1.7b","batch":512,"gpus":8,"steps":400,"arrival_s":0}
{"model":"resnet50","input":"3x224x224","batch":1024,"gpus":4,"steps":2000,"arrival_s":300,"elastic":{"min_gpus":1,"max_gpus":16}}
{"model":"opt-350m","batch":256,"gpus":8,"steps":1500,"arrival_s":600}
`

func load(t *testing.T, text string) []job.Job {
	t.Helper()
	jobs, err := job.Parse("models.jsonl", []byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func simulate(t *testing.T) (*adapt.Result, []adapt.Job) {
	t.Helper()
	jobs, err := AdaptJobs("models.jsonl", load(t, trace), small, 25, 30)
	if err != nil {
		t.Fatal(err)
	}
	res, err := adapt.Simulate(context.Background(), adapt.Config{Cluster: small, Round: 60, Mixed: true, Split: goodput.Proportional}, jobs, inlayadapt.New())
	if err != nil {
		t.Fatal(err)
	}
	return res, jobs
}

func TestAdaptMixedGangsFromPlanner(t *testing.T) {
	res, jobs := simulate(t)
	for _, j := range res.Jobs {
		if !(j.JCT > 0) || !(j.GPUSeconds > 0) {
			t.Errorf("%s did not run to completion: %+v", j.Name, j)
		}
	}
	if res.MixedRounds == 0 {
		t.Fatal("no job ran on a mixed gang (the 24-GPU job needs one)")
	}
	t.Logf("avg JCT %.3f h, makespan %.3f h, %d of the job-rounds on mixed gangs, %d rounds", res.AvgJCT, res.Makespan, res.MixedRounds, res.Rounds)
	s := &adapt.State{Cluster: small}
	for _, j := range jobs {
		mixed := j.Model.Planned(s.Pair(0, 8, 1, 8))
		a100 := j.Model.Planned(s.Single(0, 8))
		v100 := j.Model.Planned(s.Single(1, 8))
		t.Logf("%s: samples/s on 8 A100 %.1f, 8 V100 %.1f, both %.1f", j.Name, a100, v100, mixed)
		if !(mixed > 0) || mixed > a100+v100 {
			t.Errorf("%s: 8 A100 + 8 V100 give %g samples/s; 8 A100 %g, 8 V100 %g", j.Name, mixed, a100, v100)
		}
		// the transformers use the V100s beside the A100s (fused attention
		// stays on the A100s); ResNet-50 keeps to the A100s (one
		// micro-batch a plan: see train/planner's mixed tests)
		if !strings.Contains(j.Model.Name, "resnet50") && !(mixed > a100) {
			t.Errorf("%s: 8 A100 + 8 V100 give %g samples/s, no more than 8 A100 (%g)", j.Name, mixed, a100)
		}
	}
	if big := jobs[0].Model.Planned(s.Pair(0, 16, 1, 8)); !(big > 0) {
		t.Errorf("the 24-GPU job has no plan on 16 A100 + 8 V100: %g", big)
	}
	again, _ := simulate(t)
	if !reflect.DeepEqual(res, again) {
		t.Errorf("same trace, different results:\n%+v\n%+v", res, again)
	}
}

func TestAdaptBadInput(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`{"type":"ResNet-50 (batch size 64)","gpus":1,"steps":10,"arrival_s":0}`, "models.jsonl:1: job 0: the adaptive simulator runs jobs given as models"},
		{"{\"model\":\"opt-350m\",\"batch\":64,\"gpus\":1,\"steps\":10,\"arrival_s\":0}\n{\"model\":\"llama-3-70b\",\"batch\":64,\"gpus\":1,\"steps\":10,\"arrival_s\":0}", "models.jsonl:2: model llama-3-70b (batch size 64) fits no GPU type"},
	} {
		_, err := AdaptJobs("models.jsonl", load(t, c.text), small, 25, 30)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", c.text, err, c.want)
		}
	}
	odd := &adapt.Cluster{Types: []adapt.Type{{Name: "quantum", PerNode: 8, Nodes: 1}}}
	if _, err := AdaptJobs("models.jsonl", load(t, trace), odd, 25, 30); err == nil || !strings.Contains(err.Error(), `"quantum"`) {
		t.Errorf("unknown GPU type: %v", err)
	}
	if _, err := job.Parse("models.jsonl", []byte(`{"model":"gpt-9","batch":8,"gpus":1,"steps":10,"arrival_s":0}`), ""); err == nil || !strings.Contains(err.Error(), `models.jsonl:1: unknown model "gpt-9"`) {
		t.Errorf("unknown model: %v", err)
	}
}

func TestFillTable(t *testing.T) {
	c, err := hw.Resolve("gavel-108")
	if err != nil {
		t.Fatal(err)
	}
	jobs := load(t, `{"model":"opt-350m","batch":64,"gpus":1,"steps":10,"arrival_s":0}`)
	tb := throughput.New("test", c.Types())
	if err := Fill("models.jsonl", tb, c, jobs); err != nil {
		t.Fatal(err)
	}
	id, err := tb.Resolve(jobs[0].Type, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := New(jobs[0].Type, c.Network.BandwidthGBs)
	want, _ := m.StepsPerS(map[string]int{"V100-16": 1}, nil)
	if got := tb.Alone(id, tb.GPUIndex("v100")); !(got > 0) || got != want {
		t.Errorf("opt-350m on one V100: table %g steps/s, planner %g", got, want)
	}
	if got := tb.Alone(id, tb.GPUIndex("k80")); got != 0 {
		t.Errorf("K80 (no planner type) gives %g", got)
	}
	bad := load(t, "{\"model\":\"opt-350m\",\"batch\":64,\"gpus\":1,\"steps\":10,\"arrival_s\":0}\n# big\n{\"model\":\"llama-3-70b\",\"batch\":64,\"gpus\":1,\"steps\":10,\"arrival_s\":0}")
	if err := Fill("models.jsonl", throughput.New("test", c.Types()), c, bad); err == nil || !strings.Contains(err.Error(), "models.jsonl:3: model llama-3-70b") {
		t.Errorf("model too big: %v", err)
	}
}
