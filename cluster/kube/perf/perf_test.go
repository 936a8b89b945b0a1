package perf

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
	"github.com/inlay-dev/inlay/internal/openapi"
)

// TestBenchSmall (make test-kube) runs the benchmark small: 500 nodes of
// 8 GPUs, 1,500 pods created directly at 300 a second, inlay's scheduler
// and kube-scheduler in turn. It asserts correctness, not speed: every pod
// bound exactly once, none lost, no node over its GPUs.
func TestBenchSmall(t *testing.T) {
	controlplane.SkipUnlessEnabled(t)
	res := benchSmall(t, Config{Nodes: 500, Pods: 1500, Rate: 300, Timeout: 3 * time.Minute})
	if inl := res.Runs[0]; inl.Rounds == 0 || inl.RoundP99Seconds <= 0 {
		t.Errorf("inlay: %d rounds, p99 %.3f s", inl.Rounds, inl.RoundP99Seconds)
	}
}

// TestBenchChurn (make e2e-kube) is TestBenchSmall with 5 % of the nodes
// NotReady for 5 s once a third of the pods are created: nothing may be
// bound to them meanwhile, and still every pod is bound once, none lost.
func TestBenchChurn(t *testing.T) {
	controlplane.SkipUnlessEnabled(t)
	if os.Getenv("INLAY_E2E_CHURN") != "1" {
		t.Skip("runs under make e2e-kube (INLAY_E2E_CHURN=1)")
	}
	res := benchSmall(t, Config{Nodes: 500, Pods: 1500, Rate: 300, Churn: 0.05, ChurnFor: 5 * time.Second, Timeout: 3 * time.Minute})
	for _, r := range res.Runs {
		if r.ChurnNodes != 25 || r.BoundToNotReady != 0 {
			t.Errorf("%s: %d nodes churned (want 25), %d pods bound to them while NotReady", r.Scheduler, r.ChurnNodes, r.BoundToNotReady)
		}
	}
}

// TestBenchKueue (make e2e-kube, with Kueue built) measures the three
// through the Job controller: inlay, kube-scheduler, and Kueue admitting
// the Jobs for kube-scheduler. Every pod bound once, none lost, and
// Kueue's own CPU counted.
func TestBenchKueue(t *testing.T) {
	controlplane.SkipUnlessEnabled(t)
	if os.Getenv("INLAY_E2E_KUEUE") != "1" {
		t.Skip("runs under make e2e-kube (INLAY_E2E_KUEUE=1, Kueue from make fetch-kueue)")
	}
	res := benchSmall(t, Config{Nodes: 200, Pods: 600, Rate: 100, Jobs: true, Timeout: 3 * time.Minute,
		Schedulers: []string{Inlay, KubeScheduler, Kueue}})
	if k := res.Runs[2]; k.QueueCPUSeconds <= 0 || k.QueuePeakBytes <= 0 || res.KueuePodsPerSecond != k.PodsPerSecond {
		t.Errorf("kueue: %.1f CPU s, %d peak bytes, %.1f pods/s in the result against %.1f in its run", k.QueueCPUSeconds, k.QueuePeakBytes, res.KueuePodsPerSecond, k.PodsPerSecond)
	}
}

// TestConfigChecks: a scheduler the benchmark does not know, and Kueue
// without Jobs, are refused before anything starts.
func TestConfigChecks(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Schedulers: []string{"volcano"}}, `unknown scheduler "volcano"`},
		{Config{Schedulers: []string{Kueue}}, "measure it with --jobs"},
		{Config{Pods: -1}, "--pods"},
	} {
		err := c.cfg.fill()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg.Schedulers, err, c.want)
		}
	}
	ok := Config{Jobs: true, Schedulers: []string{Inlay, Kueue}}
	if err := ok.fill(); err != nil {
		t.Errorf("jobs with kueue: %v", err)
	}
}

func benchSmall(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := Bench(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	t.Logf("%s", b)
	want := max(len(cfg.Schedulers), 2)
	if len(res.Runs) != want {
		t.Fatalf("%d runs, want %d (%v)", len(res.Runs), want, cfg.Schedulers)
	}
	for _, r := range res.Runs {
		if r.Bound != r.Pods || r.Pending != 0 {
			t.Errorf("%s: %d of %d pods bound, %d pending", r.Scheduler, r.Bound, r.Pods, r.Pending)
		}
		if r.BoundTwice != 0 || r.Lost != 0 || r.Overcommitted != 0 {
			t.Errorf("%s: %d bound twice, %d lost, %d nodes over their GPUs", r.Scheduler, r.BoundTwice, r.Lost, r.Overcommitted)
		}
		if !(r.PodsPerSecond > 0) || !(r.P99BindSeconds >= r.P50BindSeconds) {
			t.Errorf("%s: %.1f pods/s, p50 %.3f s, p99 %.3f s", r.Scheduler, r.PodsPerSecond, r.P50BindSeconds, r.P99BindSeconds)
		}
	}
	return res
}

// BenchmarkScheduler1000 (make e2e-kube) is the benchmark at 1,000 nodes
// of 8 GPUs and 10,000 pods created all at once, both schedulers; the
// figures are metrics. inlay-scheduler bench runs the larger sizes.
func BenchmarkScheduler1000(b *testing.B) {
	controlplane.SkipUnlessEnabled(b)
	for range b.N {
		res, err := Bench(context.Background(), Config{Nodes: 1000, Pods: 10000})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.PodsPerSecond, "inlay-pods/s")
		b.ReportMetric(res.KubeSchedulerPodsPerSecond, "kube-scheduler-pods/s")
		b.ReportMetric(res.P99BindSeconds, "inlay-p99-bind-s")
		b.ReportMetric(res.RoundP99Seconds, "inlay-round-p99-s")
	}
}

// TestResultMatchesOpenAPI: inlay-scheduler bench --json (a Result)
// matches serve/openapi.yaml's SchedulerBench, with every field set (so
// that a field the schema does not describe fails) and with only what is
// always written.
func TestResultMatchesOpenAPI(t *testing.T) {
	doc, err := openapi.ReadFile("../../../serve/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var full Result
	fill(reflect.ValueOf(&full).Elem())
	full.Mode = "jobs"
	bare := Result{Mode: "pods", Runs: []Run{{Scheduler: KubeScheduler}}}
	for name, r := range map[string]Result{"full": full, "bare": bare} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate("SchedulerBench", b); err != nil {
			t.Errorf("%s: %v\n%s", name, err, b)
		}
	}
}

// fill sets every field of v to a value that is not zero: numbers 1,
// strings "x", slices one element.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i))
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	}
}
