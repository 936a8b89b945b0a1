package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/job"
)

func TestClusterFlagParsers(t *testing.T) {
	if w, err := ParseWindow(" 3: 7"); err != nil || w != [2]int{3, 7} {
		t.Errorf("ParseWindow: %v %v", w, err)
	}
	for _, bad := range []string{"", "5", "5:1", "-1:3", "a:b"} {
		if _, err := ParseWindow(bad); err == nil || !strings.HasPrefix(err.Error(), "--window: ") {
			t.Errorf("ParseWindow(%q): %v", bad, err)
		}
	}
	if h, err := ParseHours("1.5:4"); err != nil || *h != [2]float64{1.5, 4} {
		t.Errorf("ParseHours: %v %v", h, err)
	}
	if h, err := ParseHours(""); err != nil || h != nil {
		t.Errorf("ParseHours(\"\"): %v %v", h, err)
	}
	if _, err := ParseHours("4:4"); err == nil {
		t.Error("ParseHours(4:4): no error")
	}
	if r, err := ParseRates("single-rates", "5.6, 2,"); err != nil || len(r) != 2 || r[0] != 5.6 || r[1] != 2 {
		t.Errorf("ParseRates: %v %v", r, err)
	}
	if _, err := ParseRates("multi-rates", "0"); err == nil || !strings.HasPrefix(err.Error(), "--multi-rates: ") {
		t.Errorf("ParseRates(0): %v", err)
	}
	if c, err := LPConfig("interior"); err != nil || !c.Interior {
		t.Errorf("LPConfig(interior): %+v %v", c, err)
	}
	if _, err := LPConfig("nope"); err == nil {
		t.Error("LPConfig(nope): no error")
	}
}

// writeTrace draws a small multi-GPU trace into a file.
func writeTrace(t *testing.T) string {
	t.Helper()
	jobs, err := Generate(GenerateInput{Jobs: 120, Rate: 30, Seed: 2, MultiGPU: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 120 {
		t.Fatalf("%d jobs", len(jobs))
	}
	path := filepath.Join(t.TempDir(), "jobs.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := job.WriteJSONL(f, jobs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestGenerateCoversWindow(t *testing.T) {
	jobs, err := Generate(GenerateInput{Rate: 40, Seed: 3, Window: "10:20", TailHours: 1})
	if err != nil || len(jobs) != 21+40 {
		t.Errorf("%d jobs, %v", len(jobs), err)
	}
	if _, err := Generate(GenerateInput{Static: true}); err == nil || err.Error() != "--static needs --jobs" {
		t.Errorf("static without jobs: %v", err)
	}
}

func TestClusterSimulate(t *testing.T) {
	trace := writeTrace(t)
	in := ClusterSimInput{Trace: trace, Cluster: "gavel-108-servers", Policy: "gandiva", Window: "20:79",
		Placement: "consolidated", Round: 360, Reset: 1920, Timeline: true}
	s, err := PrepareClusterSim(in)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	res, wall, err := s.Run(context.Background(), func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if res.Policy != "gandiva" || res.Cluster != "gavel-108-servers" || res.Jobs != 60 || !(res.AvgJCT > 0) ||
		!(res.P99JCT >= res.AvgJCT) || len(res.Utilization) != 3 || len(res.PerJob) == 0 || wall <= 0 || calls == 0 {
		t.Errorf("result %+v, wall %v, %d progress calls", res, wall, calls)
	}
	for _, tc := range []struct {
		edit func(*ClusterSimInput)
		want string
	}{
		{func(in *ClusterSimInput) { in.Window = "5:1000" }, "--window 5:1000: the trace has jobs 0:119"},
		{func(in *ClusterSimInput) { in.Preempt = -1 }, "--preempt must not be negative"},
		{func(in *ClusterSimInput) { in.LP = "x" }, "--lp: unknown"},
		{func(in *ClusterSimInput) { in.Policy = "nope" }, `unknown policy "nope"`},
	} {
		bad := in
		tc.edit(&bad)
		if _, err := PrepareClusterSim(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func TestClusterSimulateEstimated(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "m.jsonl")
	jobs := `{"type": "ResNet-50 (batch size 64)", "gpus": 8, "steps": 20000, "arrival_s": 0}
{"type": "LM (batch size 20)", "gpus": 2, "steps": 90000, "arrival_s": 130}
`
	if err := os.WriteFile(trace, []byte(jobs), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := PrepareClusterSim(ClusterSimInput{Trace: trace, Cluster: "modern-mix", Policy: "fifo", Throughputs: "estimate",
		Placement: "consolidated", Round: 360, Reset: 1920})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Table.GPUs()); got != 4 {
		t.Errorf("estimated table has %d GPU types, want modern-mix's 4", got)
	}
	res, _, err := s.Run(context.Background(), nil)
	if err != nil || res.Jobs != 2 || len(res.Utilization) != 4 {
		t.Errorf("%v %+v", err, res)
	}
}

func TestPrepareClusterBench(t *testing.T) {
	in := ClusterBenchInput{Cluster: "gavel-108", Experiments: "single,static", Policies: "las", StaticPolicies: "fifo", Seeds: "0,1",
		SingleRates: "20", StaticJobs: 20, Window: "10:40", TailHours: 2, Workers: 1}
	b, err := PrepareClusterBench(in)
	if err != nil || b.Sia || len(b.gavel.Seeds) != 2 || len(b.gavel.SingleRates) != 1 || b.gavel.MultiRates != nil || b.gavel.StaticJobs != 20 {
		t.Fatalf("%v %+v", err, b)
	}
	for _, tc := range []struct {
		edit func(*ClusterBenchInput)
		want string
	}{
		{func(in *ClusterBenchInput) { in.Experiments = "foo" }, `--experiments: unknown "foo"`},
		{func(in *ClusterBenchInput) { in.Experiments = "sia-philly,single" }, `--experiments: "single": Sia's experiments`},
		{func(in *ClusterBenchInput) { in.Seeds = "x" }, `--seeds: "x" is not a seed`},
		{func(in *ClusterBenchInput) { in.Seeds = "" }, "--seeds: none given"},
		{func(in *ClusterBenchInput) { in.SingleRates = "-1" }, "--single-rates: want positive numbers"},
		{func(in *ClusterBenchInput) { in.StaticJobs = 0 }, "--static-jobs must be positive"},
	} {
		bad := in
		tc.edit(&bad)
		if _, err := PrepareClusterBench(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// TestPrepareModelsBench checks --trace: a trace of jobs given as models on
// a platform becomes one experiment of the adaptive simulator on the
// planner's GPU types, with the round and policies of Sia's experiments.
func TestPrepareModelsBench(t *testing.T) {
	in := ClusterBenchInput{Cluster: "modern-mix", Trace: "../examples/cluster-models.jsonl", Policies: "inlay", PoliciesGiven: true, Round: "2m", RestartS: 30, Workers: 1}
	b, err := PrepareClusterBench(in)
	if err != nil {
		t.Fatal(err)
	}
	c := b.sia.Cluster
	if !b.Sia || b.sia.Round != 120 || len(b.sia.Sets) != 1 || len(b.sia.Sets[0].Jobs[0]) != 4 || len(c.Types) != 4 || c.Types[0].Name != "A100-40" || c.GPUs(0) != 32 {
		t.Fatalf("%+v", b.sia)
	}
	for _, tc := range []struct {
		edit func(*ClusterBenchInput)
		want string
	}{
		{func(in *ClusterBenchInput) { in.ExperimentsGiven = true }, "--trace runs the trace's jobs instead of --experiments"},
		{func(in *ClusterBenchInput) { in.RestartS = -1 }, "--restart must not be negative"},
		{func(in *ClusterBenchInput) { in.Policies = "gavel" }, "--policies:"},
		{func(in *ClusterBenchInput) { in.Cluster = "gavel-108" }, "cluster-models.jsonl:4: model llama-3-8b (batch size 64) fits no GPU type"},
		{func(in *ClusterBenchInput) { in.Trace = "../examples/nope.jsonl" }, "nope.jsonl"},
	} {
		bad := in
		tc.edit(&bad)
		if _, err := PrepareClusterBench(bad); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want one line with %q", err, tc.want)
		}
	}
}
