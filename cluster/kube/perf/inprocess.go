package perf

import (
	"context"
	"io"
	"log/slog"

	"github.com/inlay-dev/inlay/cluster/kube/scheduler"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// SchedulerConfig is the configuration of inlay's scheduler that a
// benchmark runs: queue served, policy, round, speedup, client rate.
func SchedulerConfig(cs kubernetes.Interface, queue string, cfg *Config, log *slog.Logger) (scheduler.Config, error) {
	t, err := throughput.Gavel()
	if err != nil {
		return scheduler.Config{}, err
	}
	pol, err := registry.New(cfg.Policy, registry.Options{})
	if err != nil {
		return scheduler.Config{}, err
	}
	return scheduler.Config{Client: cs, Policy: pol, Table: t, Speedup: cfg.Speedup, Queue: queue, Namespace: queue,
		Sched: sched.Config{Round: cfg.Round, ResetInterval: -1}, Workers: cfg.Workers, PublishRate: cfg.PublishRate, Log: log}, nil
}

// StatsOf turns a scheduler's counters into the benchmark's figures.
func StatsOf(s *scheduler.Scheduler) *SchedulerStats {
	st := s.Stats()
	out := &SchedulerStats{MaxActive: st.MaxActive, Binds: st.Binds, Requests: s.Requests()}
	for _, d := range st.RoundTimes {
		out.RoundSeconds = append(out.RoundSeconds, d.Seconds())
	}
	return out
}

// inProcess runs inlay's scheduler in the benchmark's process (its CPU
// and memory are not told apart from the benchmark's, and are left out).
func inProcess(ctx context.Context, kubeconfig, queue string, cfg *Config) (func() (*SchedulerStats, error), error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = float32(cfg.QPS), int(2*cfg.QPS)
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	sc, err := SchedulerConfig(cs, queue, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, err
	}
	s, err := scheduler.New(sc)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(sctx) }()
	return func() (*SchedulerStats, error) {
		cancel()
		err := <-done
		return StatsOf(s), err
	}, nil
}
