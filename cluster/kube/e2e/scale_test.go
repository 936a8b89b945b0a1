package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
		cp, err := controlplane.Start(context.Background(), controlplane.Options{Dir: dir, NodeMonitorGracePeriod: 5 * time.Minute,
			NodeLeaseDuration: time.Duration(envInt("INLAY_SCALE_LEASE_S", 40)) * time.Second})
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
		ready := time.Since(t0)
		cpuReady := cpuTimes(b, cp)
		// The nodes' upkeep (KWOK's leases, the node controller) while
		// nothing else runs.
		idle := 20 * time.Second
		time.Sleep(idle)
		cpuIdle := cpuTimes(b, cp)
		nn := float64(len(plat.Nodes))
		b.Logf("%d nodes Ready in %.1f s; CPU to create them and make them Ready: %s; idle upkeep over %v: %s",
			len(plat.Nodes), ready.Seconds(), cpuReady.String(), idle, cpuIdle.minus(cpuReady).String())
		b.ReportMetric(cpuReady.total().Seconds()*1000/nn, "cp-cpu-ms/node-created")
		b.ReportMetric(cpuIdle.minus(cpuReady).total().Seconds()*1000/nn/idle.Minutes(), "cp-cpu-ms/node/min-idle")
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
			Queue: "scale", Run: "scale", Policy: pol, Timeout: time.Duration(envInt("INLAY_SCALE_TIMEOUT_MIN", 25)) * time.Minute,
			Progress: benchProgress(b, s), CreateParallel: 16})
		wall := time.Since(start).Seconds()
		cpuRun := cpuTimes(b, cp).minus(cpuIdle)
		b.Logf("CPU over the replay: %s", cpuRun.String())
		b.ReportMetric(cpuRun.total().Seconds()*1000/float64(len(jobs)), "cp-cpu-ms/job")
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

// cpu is CPU time per process: the control plane's components, and
// "test" for this process (the scheduler and the replayer).
type cpu map[string]time.Duration

func cpuTimes(b *testing.B, cp *controlplane.ControlPlane) cpu {
	m, err := cp.CPUTimes()
	if err != nil {
		b.Fatal(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		m["test"] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return cpu(m)
}

func (c cpu) minus(o cpu) cpu {
	out := cpu{}
	for k, v := range c {
		out[k] = v - o[k]
	}
	return out
}

// total is the control plane's CPU time (this process left out).
func (c cpu) total() time.Duration {
	var t time.Duration
	for k, v := range c {
		if k != "test" {
			t += v
		}
	}
	return t
}

func (c cpu) String() string {
	keys := slices.Sorted(maps.Keys(c))
	var sb strings.Builder
	for i, k := range keys {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s %.1f s", k, c[k].Seconds())
	}
	return sb.String()
}

// benchProgress logs a replay's finished jobs and the scheduler's binds
// and rounds every 30 s.
func benchProgress(b *testing.B, s *scheduler.Scheduler) func(done, total int) {
	last := time.Now()
	return func(done, total int) {
		if time.Since(last) > 30*time.Second {
			last = time.Now()
			st := s.Stats()
			b.Logf("%s: %d of %d jobs finished; %d binds, %d rounds, policy max %v, %d active at most", time.Now().Format("15:04:05"), done, total, st.Binds, st.Rounds, st.PolicyMax, st.MaxActive)
		}
	}
}
