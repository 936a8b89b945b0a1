package train

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/fuzzcheck"
)

func tinyModel() Model {
	m, _ := ParseModelLine("gpt:hidden=256,layers=8,heads=8,seq=128,vocab=1000")
	return m
}

func TestParsePlanExplicit(t *testing.T) {
	m := tinyModel()
	p, err := ParsePlan("p.yaml", []byte(`
micro_batch: 2
global_batch: 12
schedule: interleaved:2
recompute: selective
sequence_parallel: true
zero: 1
stages:
  - {layers: 0-1}
  - {layers: 2-7}
replicas:
  - {batch: 8, stages: [{gpu: A100-80, tp: 4}, {gpu: A100-80, tp: 2}]}
  - {gpu: V100-16, tp: 2}
`), &m)
	if err != nil {
		t.Fatal(err)
	}
	if p.PP() != 2 || p.DP() != 2 || p.Replicas[1].Batch != 4 || p.GPUs() != 10 || p.Schedule.Chunks != 2 || p.Zero != 1 {
		t.Errorf("got %+v", p)
	}
}

func TestPlanErrors(t *testing.T) {
	m := tinyModel()
	for _, tc := range []struct{ name, yaml, want string }{
		{"uncovered", "micro_batch: 1\nglobal_batch: 2\nstages: [{layers: 0-2}, {layers: 4-7}]\nreplicas: [{gpu: A100-80}]", "stages[1]: layers 3-3 are not covered"},
		{"twice", "micro_batch: 1\nglobal_batch: 2\nstages: [{layers: 0-4}, {layers: 4-7}]\nreplicas: [{gpu: A100-80}]", "stages[1]: layer 4 is covered twice"},
		{"tail", "micro_batch: 1\nglobal_batch: 2\nstages: [{layers: 0-5}]\nreplicas: [{gpu: A100-80}]", "layers 6-7 are not covered"},
		{"tp", "micro_batch: 1\nglobal_batch: 2\ntp: 3\n", "tp: 3 does not divide the 8 attention heads"},
		{"batch", "micro_batch: 1\nglobal_batch: 5\nstages: [{layers: 0-7}]\nreplicas: [{gpu: A100-80, batch: 2}, {gpu: A100-80, batch: 2}]", "batches add up to 4, not the global batch 5"},
		{"world", "micro_batch: 1\nglobal_batch: 4\ntp: 2\ndp: 2\nworld_size: 8", "world_size: 8, but the stages and replicas use 4 GPUs"},
		{"recompute", "micro_batch: 1\nglobal_batch: 1\nrecompute: some", `recompute: "some"`},
		{"schedule", "micro_batch: 1\nglobal_batch: 1\nschedule: zigzag", `schedule "zigzag"`},
		{"interleave", "micro_batch: 1\nglobal_batch: 3\npp: 2\nschedule: interleaved:2", "multiple of pp"},
		{"field", "micro_batch: 1\nglobal_bach: 1", "global_bach"},
		{"cp zero", "micro_batch: 1\nglobal_batch: 1\ncp: 0", "cp: 0 must be at least 1"},
		{"cp negative", "micro_batch: 1\nglobal_batch: 1\ncp: -2", "cp: -2 must be at least 1"},
		{"cp seq", "micro_batch: 1\nglobal_batch: 1\ncp: 3", "cp: 3 does not divide the sequence length 128"},
		{"cp tiny", "micro_batch: 1\nglobal_batch: 1\ncp: 128", "fewer than 2 tokens"},
		{"cp huge", "micro_batch: 1\nglobal_batch: 1\ncp: 4096", "cp: 4096 must be in 1..1024"},
		{"cp world", "micro_batch: 1\nglobal_batch: 2\ntp: 2\ndp: 2\ncp: 2\nworld_size: 4", "world_size: 4, but the stages and replicas use 8 GPUs (dp × pp × tp × cp, cp 2)"},
		{"cp type", "micro_batch: 1\nglobal_batch: 1\ncp: two", "line 3"},
	} {
		_, err := ParsePlan("p.yaml", []byte(tc.yaml), &m)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "p.yaml") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.name, err, tc.want)
		}
	}
}

// A plan that uses more GPUs of a type than the cluster has is refused
// with the place.
func TestPlanWorldSize(t *testing.T) {
	m := tinyModel()
	g, _ := LookupGPU("A100-80")
	c, _ := UniformCluster(g, 8, 8, 300, 100)
	p, _ := Uniform(&m, "", 4, 2, 2, 1, 2)
	p.Replicas[1].Stages[1].TP = 8
	if _, err := Simulate(&m, c, p, Options{}); err == nil || !strings.Contains(err.Error(), "world size") {
		t.Errorf("got %v", err)
	}
	p, _ = Uniform(&m, "H100-SXM", 2, 1, 1, 1, 1)
	if _, err := Simulate(&m, c, p, Options{}); err == nil || !strings.Contains(err.Error(), `no "H100-SXM" GPUs`) {
		t.Errorf("got %v", err)
	}
}

func FuzzPlanParse(f *testing.F) {
	for _, s := range []string{
		"micro_batch: 1\nglobal_batch: 8\ntp: 2\npp: 2\ndp: 2\nschedule: interleaved:2\n",
		"micro_batch: 2\nglobal_batch: 12\nstages: [{layers: 0-1}, {layers: 2-7}]\nreplicas: [{batch: 8, stages: [{gpu: A100-80, tp: 4}, {gpu: A100-80, tp: 2}]}, {gpu: V100-16, tp: 2}]\n",
		"stages: [{layers: 5-1}]",
		"micro_batch: 1\nglobal_batch: 4\ntp: 2\ndp: 2\ncp: 4\n",
		"micro_batch: 1\nglobal_batch: 2\ncp: 2\nstages: [{layers: 0-3}, {layers: 4-7}]\nreplicas: [{gpu: A100-80, tp: 2}, {gpu: A100-80, tp: 4}]\n",
		"micro_batch: 1\nglobal_batch: 1\ncp: 0\n",
		"micro_batch: 1\nglobal_batch: 4\nrecompute: full\nstages: [{layers: 0-3}, {layers: 4-7}]\nreplicas: [{gpu: A100-80, tp: 2, recompute: none, micro_batch: 2, batch: 2}, {gpu: A100-80, tp: 2, recompute: Selective}]\n",
		"micro_batch: 4\nglobal_batch: 8\nstages: [{layers: 0-3}, {layers: 4-7}]\ngroups: [{ranks: [{gpu: A100-80, share: 2, count: 2}]}, {ranks: [{gpu: A100-80, tp: 2, share: 1, count: 4}]}]\n",
		"",
	} {
		f.Add([]byte(s))
	}
	m := tinyModel()
	g, _ := LookupGPU("A100-80")
	c, _ := UniformCluster(g, 64, 8, 300, 100)
	fuzzcheck.Accepted(f, func(data []byte) (*Plan, error) { return ParsePlan("f.yaml", data, &m) }, func(t *testing.T, p *Plan) {
		if p.GPUs() > 4096 || p.GlobalBatch > 1<<16 {
			return
		}
		_, err := Simulate(&m, c, p, Options{})
		fuzzcheck.OneLine(t, err)
	})
}

// FuzzPlanJSON reads inlay's plan JSON (a plan file's plan field or a
// bare plan): one-line errors, and a plan it accepts simulates or is
// refused in one line.
func FuzzPlanJSON(f *testing.F) {
	for _, s := range []string{
		`{"plan": {"stages": [{"first": 0, "last": 7}], "replicas": [{"stages": [{"gpu": "A100-80", "tp": 2}], "batch": 2}], "micro_batch": 1, "global_batch": 2, "cp": 2}}`,
		`{"stages": [{"first": 0, "last": 3}, {"first": 4, "last": 7}], "replicas": [{"stages": [{"gpu": "A100-80", "tp": 1}, {"gpu": "A100-80", "tp": 2}], "batch": 4}], "micro_batch": 2, "global_batch": 4, "zero": 1}`,
		`{"replicas": [], "cp": -1}`,
		`{"stages": [{"first": 0, "last": 7}], "replicas": [{"stages": [{"gpu": "A100-80", "tp": 1}], "batch": 2, "recompute": "none"}, {"stages": [{"gpu": "A100-80", "tp": 1}], "batch": 2, "recompute": "x"}], "micro_batch": 1, "global_batch": 4, "recompute": "full"}`,
		`{"plan": 3}`,
		`{"stages": [{"first": 0, "last": 7}], "groups": [{"ranks": [{"gpu": "A100-80", "tp": 1, "share": 2, "count": 2}]}], "micro_batch": 4, "global_batch": 8}`,
	} {
		f.Add([]byte(s))
	}
	m := tinyModel()
	g, _ := LookupGPU("A100-80")
	c, _ := UniformCluster(g, 64, 8, 300, 100)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ok, err := ParsePlanJSON("f.json", data, &m)
		if err != nil {
			if !ok || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ok %v, error %q", ok, err)
			}
			return
		}
		if !ok {
			return
		}
		if p.GPUs() > 4096 || p.GlobalBatch > 1<<16 {
			return
		}
		_, err = Simulate(&m, c, p, Options{})
		fuzzcheck.OneLine(t, err)
	})
}
