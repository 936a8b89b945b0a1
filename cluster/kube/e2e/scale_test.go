package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
	"github.com/inlay-dev/inlay/cluster/kube/manifests"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/kube/replay"
	"github.com/inlay-dev/inlay/cluster/kube/scheduler"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkScale replays a trace on INLAY_SCALE_NODES KWOK nodes of 8 GPUs
// (default 1,000) with INLAY_SCALE_JOBS jobs (default 10,000) under
// INLAY_SCALE_POLICY (default fifo) on its own control plane, and reports
// pods bound per second, the policy's time per round (mean and largest),
// the scheduler's API requests per second, its heap, and the most active
// jobs a round saw. The node controller's grace is 5 minutes: on a
// loaded machine KWOK renews 1,000 nodes' leases more slowly than the
// tests' 20 s, and nodes went Unknown (NotReady) while they were created.
func BenchmarkScale(b *testing.B) {
	controlplane.SkipUnlessEnabled(b)
	if _, err := controlplane.Binaries(""); err != nil {
		b.Skip(err)
	}
	n := envInt("INLAY_SCALE_NODES", 1000)
	njobs := envInt("INLAY_SCALE_JOBS", 10000)
	pol := os.Getenv("INLAY_SCALE_POLICY")
	if pol == "" {
		pol = "fifo"
	}
	speedup := float64(envInt("INLAY_SCALE_SPEEDUP", 3600))
	yaml := fmt.Sprintf(`name: kwok-%d
gpu_types:
  - {name: v100, description: NVIDIA V100 16 GB, memory_gib: 16, tensor_tflops: 125, fp32_tflops: 15.7, mem_bandwidth_gbs: 900, price_per_hour: 2.48}
  - {name: p100, description: NVIDIA P100 16 GB, memory_gib: 16, tensor_tflops: 18.7, fp32_tflops: 9.3, mem_bandwidth_gbs: 732, price_per_hour: 1.46}
  - {name: k80, description: NVIDIA K80, memory_gib: 12, tensor_tflops: 4.37, fp32_tflops: 4.37, mem_bandwidth_gbs: 240, price_per_hour: 0.45}
nodes:
  - {name: v100, gpu: v100, count: %d, gpus: 8, cpus: 64, memory_gib: 488, intra: {kind: nvlink, bandwidth_gbs: 150}}
  - {name: p100, gpu: p100, count: %d, gpus: 8, cpus: 64, memory_gib: 488, intra: {kind: pcie, bandwidth_gbs: 16}}
  - {name: k80, gpu: k80, count: %d, gpus: 8, cpus: 64, memory_gib: 488, intra: {kind: pcie, bandwidth_gbs: 16}}
network: {bandwidth_gbs: 1.25, latency_us: 50, racks: 1}
`, n, n/3+n%3, n/3, n/3)
	plat, err := chw.Parse("scale", []byte(yaml))
	if err != nil {
		b.Fatal(err)
	}
	table, _ := throughput.Gavel()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		cp, err := controlplane.Start(context.Background(), controlplane.Options{Dir: dir, NodeMonitorGracePeriod: 5 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		cs, _ := cp.Client(1000, 2000)
		ctx := context.Background()
		t0 := time.Now()
		if err := manifests.Apply(ctx, cs, false); err != nil {
			b.Fatal(err)
		}
		if err := nodes.Create(ctx, cs, plat, 32, nil); err != nil {
			b.Fatal(err)
		}
		if err := nodes.WaitReady(ctx, cs, plat, nil); err != nil {
			b.Fatal(err)
		}
		b.Logf("%d nodes Ready in %.1f s", len(plat.Nodes), time.Since(t0).Seconds())
		jobs, err := job.Generate(job.GenConfig{Jobs: njobs, Rate: float64(njobs) / 4, Seed: 11, MultiGPU: true}, table)
		if err != nil {
			b.Fatal(err)
		}
		for k := range jobs {
			jobs[k].Steps /= 20
		}
		p, _ := registry.New(pol, registry.Options{})
		s, err := scheduler.New(scheduler.Config{Client: cs, Policy: p, Table: table, Speedup: speedup, Queue: "scale", Workers: 32,
			Sched: sched.Config{Round: 360, ResetInterval: 1920}, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		if err != nil {
			b.Fatal(err)
		}
		sctx, stop := context.WithCancel(ctx)
		go s.Run(sctx) //nolint:errcheck
		var peak uint64
		memDone := make(chan struct{})
		go func() {
			var ms runtime.MemStats
			for {
				select {
				case <-memDone:
					return
				case <-time.After(500 * time.Millisecond):
				}
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
		}()
		start := time.Now()
		res, err := replay.Run(ctx, replay.Config{Client: cs, Jobs: jobs, Table: table, Cluster: plat, Speedup: speedup,
			Queue: "scale", Run: "scale", Policy: pol, Timeout: 25 * time.Minute})
		wall := time.Since(start).Seconds()
		stop()
		close(memDone)
		if err != nil {
			b.Fatal(err)
		}
		st := s.Stats()
		b.ReportMetric(float64(st.Binds)/wall, "pods-bound/s")
		if st.Rounds > 0 {
			b.ReportMetric(st.PolicyTime.Seconds()/float64(st.Rounds)*1000, "policy-ms/round")
		}
		b.ReportMetric(st.PolicyMax.Seconds()*1000, "policy-max-ms")
		b.ReportMetric(float64(s.Requests())/wall, "scheduler-requests/s")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(st.MaxActive), "max-active-jobs")
		b.Logf("%d jobs: %d finished, %d unfinished in %.0f s; %d binds, %d rounds", len(jobs), res.Jobs, res.Unfinished, wall, st.Binds, st.Rounds)
		cp.Stop()
	}
}
