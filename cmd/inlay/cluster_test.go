package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClusterGenerateSimulateJSON(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "jobs.jsonl")
	if _, err := runInlay(t, "cluster", "generate", "--jobs", "120", "--rate", "30", "--seed", "2", "--multi-gpu", "-o", trace); err != nil {
		t.Fatal(err)
	}
	gantt := filepath.Join(dir, "g.svg")
	cdf := filepath.Join(dir, "c.png")
	out, err := runInlay(t, "cluster", "simulate", trace, "--cluster", "gavel-108-servers", "--policy", "gandiva", "--window", "20:79", "--json", "--gantt", gantt, "--cdf", cdf)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	mustMatchOpenAPI(t, "ClusterOutcome", out)
	var r struct {
		Policy      string             `json:"policy"`
		Cluster     string             `json:"cluster"`
		Jobs        int                `json:"jobs"`
		AvgJCT      float64            `json:"avg_jct_hours"`
		P99JCT      float64            `json:"p99_jct_hours"`
		Makespan    float64            `json:"makespan_hours"`
		Utilization map[string]float64 `json:"utilization"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Policy != "gandiva" || r.Cluster != "gavel-108-servers" || r.Jobs != 60 || !(r.AvgJCT > 0) || !(r.P99JCT >= r.AvgJCT) || !(r.Makespan > 0) || len(r.Utilization) != 3 {
		t.Errorf("result %+v", r)
	}
	for _, f := range []string{gantt, cdf} {
		if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestClusterBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"malformed line", []string{"cluster", "simulate", write("a.trace", "A3C\tcmd\n")}, "a.trace:1: want 9 tab-separated fields"},
		{"unknown job type", []string{"cluster", "simulate", write("b.jsonl", `{"type": "GPT-9", "gpus": 1, "steps": 5}`)}, `job 0: unknown job type "GPT-9"`},
		{"too many GPUs", []string{"cluster", "simulate", write("c.jsonl", `{"type": "LM (batch size 20)", "gpus": 8, "steps": 5}`), "--cluster", write("small.yaml", "name: s\ngpu_types:\n  - {name: v100, memory_gib: 16, tensor_tflops: 1, fp32_tflops: 1, mem_bandwidth_gbs: 1}\nnodes:\n  - {name: v, gpu: v100, count: 4, gpus: 1}\nnetwork: {bandwidth_gbs: 1}\n")}, "asks for 8 GPUs, more than the cluster s holds of any type (4 v100)"},
		{"zero steps", []string{"cluster", "simulate", write("d.jsonl", `{"type": "A3C", "gpus": 1, "steps": 0}`)}, "d.jsonl:1: steps must be a positive number"},
		{"negative steps", []string{"cluster", "simulate", write("e.trace", "A3C\tc\ta\t0\t-5\t1\t1\t-1\t0\n")}, "e.trace:1: steps must be a positive number"},
		{"unknown GPU type", []string{"cluster", "simulate", write("f.jsonl", `{"type": "A3C", "gpus": 1, "steps": 1}`), "--cluster", write("h100.yaml", "name: h\ngpu_types:\n  - {name: h100, memory_gib: 80, tensor_tflops: 1, fp32_tflops: 1, mem_bandwidth_gbs: 1}\nnodes:\n  - {name: h, gpu: h100, gpus: 1}\nnetwork: {bandwidth_gbs: 1}\n")}, `GPU type "h100", which the gavel throughput table lacks`},
		{"unknown cluster GPU", []string{"cluster", "simulate", write("g.jsonl", `{"type": "A3C", "gpus": 1, "steps": 1}`), "--cluster", write("bad.yaml", "name: b\ngpu_types: []\nnodes:\n  - {name: x, gpu: v100, gpus: 1}\nnetwork: {bandwidth_gbs: 1}\n")}, `bad.yaml:4: nodes[0].gpu: unknown GPU type "v100"`},
		{"unknown policy", []string{"cluster", "simulate", write("i.jsonl", `{"type": "A3C", "gpus": 1, "steps": 1}`), "--policy", "nope"}, `unknown policy "nope"`},
		{"bad window", []string{"cluster", "simulate", write("j.jsonl", `{"type": "A3C", "gpus": 1, "steps": 1}`), "--window", "5:1"}, "--window: want FIRST:LAST"},
		{"bad rate", []string{"cluster", "generate", "--jobs", "5", "--rate", "-1"}, "--rate must be a positive number"},
	} {
		out, err := runInlay(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v (%s), want %q", tc.name, err, out, tc.want)
		}
	}
}

func TestClusterEstimateAndPolicies(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "m.jsonl")
	jobs := `{"type": "ResNet-50 (batch size 64)", "gpus": 8, "steps": 20000, "arrival_s": 0}
{"type": "zoo:mobilenet_v2 (batch size 64)", "gpus": 1, "steps": 50000, "arrival_s": 60}
{"type": "LM (batch size 20)", "gpus": 2, "steps": 90000, "arrival_s": 130}
`
	if err := os.WriteFile(trace, []byte(jobs), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"inlay", "dag", "elastic", "tetris", "fifo"} {
		out, err := runInlay(t, "cluster", "simulate", trace, "--cluster", "modern-mix", "--throughputs", "estimate", "--policy", p, "--json")
		if err != nil {
			t.Fatalf("%s: %v: %s", p, err, out)
		}
		var r struct {
			Jobs        int                `json:"jobs"`
			Utilization map[string]float64 `json:"utilization"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Jobs != 3 || len(r.Utilization) != 4 {
			t.Errorf("%s: %v %+v", p, err, r)
		}
	}
	_, err := runInlay(t, "cluster", "simulate", trace, "--cluster", "modern-mix", "--throughputs", "estimate", "--policy", "gavel-ss")
	if err != nil {
		t.Errorf("gavel-ss on an estimated table (no pairs): %v", err)
	}
}

// TestClusterBenchTrace runs cluster bench --trace on jobs given as models
// on 16 A100s and 16 V100s: one experiment, inlay's policy with mixed
// gangs off and on, every row with its average and p99 JCT.
func TestClusterBenchTrace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "models.jsonl")
	jobs := `{"model":"opt-350m","batch":256,"gpus":8,"steps":1500,"arrival_s":0}
{"model":"gpt3-1.7b","batch":512,"gpus":16,"steps":200,"arrival_s":0}
{"model":"resnet50","input":"3x224x224","batch":1024,"gpus":4,"steps":2000,"arrival_s":300}
`
	cluster := filepath.Join(dir, "av.yaml")
	yaml := `name: av
gpu_types:
  - {name: a100, memory_gib: 40, tensor_tflops: 312, fp32_tflops: 19.5, mem_bandwidth_gbs: 1555}
  - {name: v100, memory_gib: 16, tensor_tflops: 125, fp32_tflops: 15.7, mem_bandwidth_gbs: 900}
nodes:
  - {name: a, gpu: a100, count: 2, gpus: 8, intra: {kind: nvlink, bandwidth_gbs: 300}}
  - {name: v, gpu: v100, count: 2, gpus: 8, intra: {kind: nvlink, bandwidth_gbs: 150}}
network: {bandwidth_gbs: 25}
`
	for p, text := range map[string]string{trace: jobs, cluster: yaml} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runInlay(t, "cluster", "bench", "--trace", trace, "--cluster", cluster, "--policies", "inlay", "--json")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	mustMatchOpenAPI(t, "SiaBench", out)
	var rep struct {
		Experiments []struct {
			Name string `json:"name"`
			Rows []struct {
				Policy string  `json:"policy"`
				Mixed  bool    `json:"mixed"`
				Avg    float64 `json:"avg_jct_hours"`
				P99    float64 `json:"p99_jct_hours"`
			} `json:"policies"`
		} `json:"experiments"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(rep.Experiments) != 1 || rep.Experiments[0].Name != "models.jsonl on av" || len(rep.Experiments[0].Rows) != 2 {
		t.Fatalf("report %s", out)
	}
	for i, r := range rep.Experiments[0].Rows {
		if r.Policy != "inlay" || r.Mixed != (i == 1) || !(r.Avg > 0) || !(r.P99 >= r.Avg) {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	if _, err := runInlay(t, "cluster", "bench", "--trace", trace, "--experiments", "sia-philly"); err == nil || !strings.Contains(err.Error(), "--trace runs the trace's jobs instead of --experiments") {
		t.Errorf("--trace with --experiments: %v", err)
	}
}
