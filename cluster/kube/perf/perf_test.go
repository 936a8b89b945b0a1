package perf

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
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

func benchSmall(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := Bench(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	t.Logf("%s", b)
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs, want inlay's and kube-scheduler's", len(res.Runs))
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
