package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/perf"
	"github.com/inlay-dev/inlay/cluster/kube/scheduler"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/spf13/cobra"
)

// benchFlags are bench's flags.
type benchFlags struct {
	cfg         perf.Config
	clusterName string
	prof        profiles
	asJSON      bool
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench --nodes N --pods P [--rate R] [--json]",
		Short: "Measure inlay's scheduler beside kube-scheduler at scale, the way scheduler_perf does",
		Long: `bench starts a local control plane (make fetch-k8s: etcd, kube-apiserver,
the controller manager with its node-lifecycle controller off, and
kube-scheduler), creates N nodes as plain API objects (Ready, GPU capacity
and type labels; no kubelet and no lease, so they cost nothing while
idle), then, for inlay's scheduler and for kube-scheduler in turn, creates
P one-GPU pods at R pods/s (0: all at once) and reads from a pod informer
when each is bound. Pods are created directly (the schedulers' own
throughput; each inlay pod belongs to a Job that the Job controller
leaves alone), or with --jobs as batch/v1 Jobs through the Job controller
(the end-to-end figure). inlay's scheduler runs as its own process
(inlay-scheduler run), so its CPU time and peak memory are its own.
With --jobs, --schedulers may add kueue: Kueue (make fetch-kueue) admits
the Jobs, created suspended in its LocalQueue with a quota of the
cluster's GPUs, and kube-scheduler places their pods.

Reported per scheduler: pods bound per second (sustained, from the 10th
to the 90th percentile binding), p50/p99 time from creation to binding,
inlay's round times (median, p99), the scheduler's CPU seconds and peak
memory, the API server's, etcd's and the controller manager's CPU
seconds, and the checks: every pod bound once or pending, none lost, no
node over its GPUs. --churn S sets that share of the nodes NotReady once
a third of the pods are created, and Ready again --churn-for later; the
pods bound to them meanwhile and the time to bind on them again after
are reported. --cpuprofile writes a pprof CPU profile of inlay's
scheduler process, --memprofile its heap as it stops.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.cfg.Nodes, "nodes", 1000, "nodes, made as plain API objects")
	fl.StringVar(&f.clusterName, "cluster", "", "cluster preset or YAML file whose servers the nodes copy in turn (default: 8 V100s a server)")
	fl.IntVar(&f.cfg.Pods, "pods", 10000, "pods of one GPU each, per scheduler")
	fl.Float64Var(&f.cfg.Rate, "rate", 0, "pods created per second (0: all at once)")
	fl.IntVar(&f.cfg.Creators, "creators", 16, "parallel creating requests")
	fl.BoolVar(&f.cfg.Jobs, "jobs", false, "create batch/v1 Jobs through the Job controller (end to end) instead of pods directly")
	fl.Float64Var(&f.cfg.Churn, "churn", 0, "share of the nodes set NotReady during the run, and Ready again (e.g. 0.05)")
	fl.DurationVar(&f.cfg.ChurnFor, "churn-for", 10*time.Second, "how long the churned nodes stay NotReady")
	fl.StringSliceVar(&f.cfg.Schedulers, "schedulers", []string{perf.Inlay, perf.KubeScheduler}, "schedulers measured, in order: inlay, kube-scheduler, and with --jobs kueue (Kueue admits the Jobs, kube-scheduler places their pods; make fetch-kueue)")
	fl.StringVar(&f.cfg.Policy, "policy", "fifo", "inlay's policy")
	fl.Float64Var(&f.cfg.Round, "round", 360, "inlay's round in virtual seconds")
	fl.Float64Var(&f.cfg.Speedup, "speedup", 360, "virtual seconds per real second (360 with --round 360: a round a second)")
	fl.Float64Var(&f.cfg.QPS, "qps", 1000, "inlay's client requests per second (kube-scheduler runs at 1000 here)")
	fl.IntVar(&f.cfg.Workers, "workers", 32, "inlay's parallel reconcilers (each binds a gang)")
	fl.Float64Var(&f.cfg.PublishRate, "publish-rate", 50, "inlay's writes a second that only publish Jobs' state")
	fl.DurationVar(&f.cfg.Timeout, "timeout", 10*time.Minute, "per scheduler; pods not bound by then count as pending")
	fl.StringVar(&f.cfg.Dir, "dir", "", "the control plane's folder (default: a temporary one, removed after)")
	fl.StringVar(&f.prof.cpu, "cpuprofile", "", "write a pprof CPU profile of inlay's scheduler process to this file")
	fl.StringVar(&f.prof.heap, "memprofile", "", "write a pprof heap profile of inlay's scheduler process, taken as it stops (everything still cached), to this file")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	return cmd
}

// runBench runs the bench and prints its result.
func runBench(cmd *cobra.Command, f *benchFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.clusterName != "" {
		p, err := chw.Resolve(f.clusterName)
		if err != nil {
			return err
		}
		f.cfg.Cluster = p
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	f.cfg.Inlay = processRunner(exe, f.prof, cmd.ErrOrStderr())
	res, err := perf.Bench(ctx, f.cfg)
	if err != nil {
		return err
	}
	if f.asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printBench(cmd.OutOrStdout(), res)
	return nil
}

// processRunner runs inlay's scheduler as a process of this binary
// (inlay-scheduler run), stopped with SIGTERM; it reads the figures the
// process writes when it stops.
func processRunner(exe string, prof profiles, logTo io.Writer) perf.InlayRunner {
	return func(ctx context.Context, kubeconfig, queue string, cfg *perf.Config) (func() (*perf.SchedulerStats, error), error) {
		dir, err := os.MkdirTemp("", "inlay-bench-")
		if err != nil {
			return nil, err
		}
		stats := filepath.Join(dir, "stats.json")
		args := []string{"run", "--kubeconfig", kubeconfig, "--queue", queue, "--namespace", queue, "--policy", cfg.Policy,
			"--round", strconv.FormatFloat(cfg.Round, 'g', -1, 64), "--reset", "-1", "--speedup", strconv.FormatFloat(cfg.Speedup, 'g', -1, 64),
			"--qps", strconv.FormatFloat(cfg.QPS, 'g', -1, 64), "--workers", strconv.Itoa(cfg.Workers),
			"--publish-rate", strconv.FormatFloat(cfg.PublishRate, 'g', -1, 64), "--stats", stats}
		args = append(args, prof.args()...)
		p := exec.Command(exe, args...)
		p.Stderr = logTo
		if err := p.Start(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		return func() (*perf.SchedulerStats, error) {
			defer os.RemoveAll(dir)
			_ = p.Process.Signal(syscall.SIGTERM)
			werr := p.Wait()
			data, err := os.ReadFile(stats)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("inlay-scheduler run: %w", werr), err)
			}
			var st perf.SchedulerStats
			if err := json.Unmarshal(data, &st); err != nil {
				return nil, fmt.Errorf("%s: %w", stats, err)
			}
			return &st, nil
		}, nil
	}
}

// writeStats writes a stopped scheduler's figures, with this process's
// CPU time and peak memory.
func writeStats(path string, s *scheduler.Scheduler) error {
	st := perf.StatsOf(s)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		st.CPUSeconds = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		st.PeakBytes = ru.Maxrss << 10 // kB on Linux
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// profiles are the pprof files a scheduler process writes.
type profiles struct{ cpu, heap string }

// args passes them on to inlay-scheduler run.
func (p profiles) args() []string {
	var a []string
	if p.cpu != "" {
		a = append(a, "--cpuprofile", p.cpu)
	}
	if p.heap != "" {
		a = append(a, "--memprofile", p.heap)
	}
	return a
}

// start starts the CPU profile; the returned stop ends it and writes the
// heap profile (after a collection, so it shows what is live).
func (p profiles) start() (stop func() error, err error) {
	var f *os.File
	if p.cpu != "" {
		if f, err = os.Create(p.cpu); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile %s: %w", p.cpu, err)
		}
	}
	return func() error {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
		if p.heap == "" {
			return nil
		}
		h, err := os.Create(p.heap)
		if err != nil {
			return err
		}
		runtime.GC()
		return errors.Join(pprof.WriteHeapProfile(h), h.Close())
	}, nil
}

func printBench(w io.Writer, r *perf.Result) {
	fmt.Fprintf(w, "%d nodes × %d GPUs, %d pods (%s, rate %g/s, churn %g), inlay policy %s\n", r.Nodes, r.GPUsPerNode, r.Pods, r.Mode, r.Rate, r.Churn, r.Policy)
	tb := textfmt.Table{Header: []string{"scheduler", "bound", "pods/s", "p50 bind", "p99 bind", "round p50", "round p99", "CPU s", "peak MiB", "apiserver CPU s", "etcd CPU s", "twice", "lost", "over"}}
	for _, x := range r.Runs {
		round50, round99 := "-", "-"
		if x.Rounds > 0 {
			round50, round99 = fmt.Sprintf("%.3f s", x.RoundP50Seconds), fmt.Sprintf("%.3f s", x.RoundP99Seconds)
		}
		tb.Add(x.Scheduler, fmt.Sprintf("%d/%d", x.Bound, x.Pods), fmt.Sprintf("%.1f", x.PodsPerSecond), fmt.Sprintf("%.2f s", x.P50BindSeconds), fmt.Sprintf("%.2f s", x.P99BindSeconds),
			round50, round99, fmt.Sprintf("%.1f", x.SchedulerCPUSeconds), fmt.Sprintf("%.0f", float64(x.SchedulerPeakBytes)/(1<<20)),
			fmt.Sprintf("%.1f", x.APIServerCPUSeconds), fmt.Sprintf("%.1f", x.EtcdCPUSeconds), strconv.Itoa(x.BoundTwice), strconv.Itoa(x.Lost), strconv.Itoa(x.Overcommitted))
	}
	tb.WriteTo(w) //nolint:errcheck
	for _, x := range r.Runs {
		if x.QueueCPUSeconds > 0 {
			fmt.Fprintf(w, "%s: Kueue's controller manager %.1f CPU s, peak %.0f MiB (the row's CPU and memory are kube-scheduler's, which places the pods it admits)\n",
				x.Scheduler, x.QueueCPUSeconds, float64(x.QueuePeakBytes)/(1<<20))
		}
		if x.ChurnNodes > 0 {
			fmt.Fprintf(w, "%s churn: %d nodes NotReady and back; %d pods bound to them meanwhile; first bound on them %.2f s after they returned (-1: none); %d pods bound after they returned, the last %.2f s after\n",
				x.Scheduler, x.ChurnNodes, x.BoundToNotReady, x.ChurnRecoverySeconds, x.ChurnBoundAfter, x.ChurnSettleSeconds)
		}
	}
}
