// Package perf measures a Kubernetes scheduler at scale the way
// kube-scheduler's scheduler_perf does: nodes created as plain API objects
// (Ready, GPU capacity and type labels; no kubelet, no lease, and the
// controller manager's node-lifecycle controller off, so they stay Ready),
// then pods created at a given rate or all at once, and the time from each
// pod's creation to its binding read from a pod informer. inlay's scheduler
// and kube-scheduler run on the same control plane, on the same nodes and
// the same pods (only their schedulerName differs), one after the other in
// one run, so their figures are a ratio measured together.
//
// Pods come directly (the schedulers' own throughput; each inlay pod is
// owned by a Job that the Job controller leaves alone, spec.managedBy) or
// as batch/v1 Jobs through the Job controller (the end-to-end figure). A
// churn phase sets a share of the nodes NotReady (condition and taint, as
// the node-lifecycle controller would) and back during the run. At the end
// every pod must be bound exactly once or still pending, none lost, and no
// node over its GPUs.
package perf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"sort"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/kueue"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// Scheduler names of Config.Schedulers.
const (
	Inlay         = "inlay"
	KubeScheduler = "kube-scheduler"
	// Kueue admits Jobs (created suspended in its LocalQueue, quota per
	// GPU type: kueue.Objects) and kube-scheduler places their pods; with
	// Config.Jobs only (Kueue works on Jobs). Needs make fetch-kueue.
	Kueue = "kueue"
)

// Config configures a benchmark.
type Config struct {
	// Nodes is the number of nodes (default 1000), each a copy of the
	// Cluster's servers in turn (default: one server of 8 V100s).
	Nodes   int
	Cluster *chw.Platform
	// Pods is the number of pods (default 10,000), each asking for one GPU
	// of the first server's type.
	Pods int
	// Rate is pods created per second; 0 creates them as fast as Creators
	// clients go (all at once).
	Rate float64
	// Creators is the number of parallel creating requests (default 16).
	Creators int
	// Jobs creates batch/v1 Jobs of one pod through the Job controller (the
	// end-to-end figure) instead of pods directly.
	Jobs bool
	// Churn is the share of nodes set NotReady once a third of the pods
	// are created, and Ready again ChurnFor later (default 10 s); 0: none.
	Churn    float64
	ChurnFor time.Duration
	// Schedulers are measured in this order (default inlay, then
	// kube-scheduler; with Jobs, kueue may follow).
	Schedulers []string
	// Inlay runs inlay's scheduler (given the admin kubeconfig, the queue
	// to serve and the run's stats file); Start keeps it in this process
	// when nil.
	Inlay InlayRunner
	// Policy, Round and Speedup configure inlay's scheduler (defaults fifo,
	// 360 virtual seconds, 360: a round a second); QPS is its client's
	// request rate (default 1000, kube-scheduler's here).
	Policy  string
	Round   float64
	Speedup float64
	QPS     float64
	// Workers is inlay's scheduler's parallel reconcilers (default 32):
	// each binds a gang, so they bound how many bindings are in flight
	// within the client's rate.
	Workers int
	// PublishRate bounds inlay's scheduler's writes that only publish
	// Jobs' state (default 50 a second; scheduler.Config.PublishRate).
	PublishRate float64
	// Timeout bounds each scheduler's run (default 10 minutes); pods not
	// bound by then count as pending.
	Timeout time.Duration
	// Dir is the control plane's folder (default: a new temporary one).
	Dir string
	Log *slog.Logger
}

// InlayRunner starts inlay's scheduler serving queue with the kubeconfig;
// stop ends it and returns its figures.
type InlayRunner func(ctx context.Context, kubeconfig, queue string, cfg *Config) (stop func() (*SchedulerStats, error), err error)

// SchedulerStats are what inlay's scheduler reports of itself.
type SchedulerStats struct {
	// RoundSeconds is each round's time in the scheduler.
	RoundSeconds []float64 `json:"round_seconds"`
	MaxActive    int       `json:"max_active"`
	Binds        int64     `json:"binds"`
	Requests     int64     `json:"requests"`
	// CPUSeconds and PeakBytes (peak resident memory) of its process; 0
	// when it runs inside the benchmark's.
	CPUSeconds float64 `json:"cpu_seconds"`
	PeakBytes  int64   `json:"peak_bytes"`
}

// Run is one scheduler's figures.
type Run struct {
	Scheduler string `json:"scheduler"`
	Pods      int    `json:"pods"`
	Bound     int    `json:"bound"`
	Pending   int    `json:"pending"`
	// BoundTwice counts pods whose node changed, or Jobs with more pods
	// bound than their gang; Lost pods created and gone (or Jobs with no
	// pod); Overcommitted nodes with more GPUs bound than they have.
	BoundTwice    int `json:"bound_twice"`
	Lost          int `json:"lost"`
	Overcommitted int `json:"overcommitted_nodes"`
	// PodsPerSecond is the sustained binding rate over the middle of the
	// run (from the 10th to the 90th percentile binding).
	PodsPerSecond  float64 `json:"pods_per_second"`
	P50BindSeconds float64 `json:"p50_bind_seconds"`
	P99BindSeconds float64 `json:"p99_bind_seconds"`
	// WallSeconds is from the first creation to the last binding.
	WallSeconds float64 `json:"wall_seconds"`
	// Round figures (inlay only): its rounds' median and p99 time, the
	// most active jobs a round saw.
	Rounds          int     `json:"rounds,omitempty"`
	RoundP50Seconds float64 `json:"round_p50_seconds,omitempty"`
	RoundP99Seconds float64 `json:"round_p99_seconds,omitempty"`
	MaxActive       int     `json:"max_active,omitempty"`
	Requests        int64   `json:"requests,omitempty"`
	// CPU seconds over the run: the scheduler's, the API server's, etcd's
	// and the controller manager's; the scheduler's peak resident memory.
	SchedulerCPUSeconds float64 `json:"scheduler_cpu_seconds"`
	SchedulerPeakBytes  int64   `json:"scheduler_peak_bytes"`
	// Kueue's run: its controller manager's CPU seconds and peak resident
	// memory (the scheduler's figures above are kube-scheduler's, which
	// places the pods Kueue admits).
	QueueCPUSeconds      float64 `json:"kueue_cpu_seconds,omitempty"`
	QueuePeakBytes       int64   `json:"kueue_peak_bytes,omitempty"`
	APIServerCPUSeconds  float64 `json:"apiserver_cpu_seconds"`
	EtcdCPUSeconds       float64 `json:"etcd_cpu_seconds"`
	ControllerCPUSeconds float64 `json:"controller_manager_cpu_seconds"`
	// Churn: nodes set NotReady and back; pods bound to them while they
	// were NotReady (a binding decided before may land just after); the
	// time from their return to the first pod bound on one of them (-1:
	// none was, e.g. nothing was pending).
	ChurnNodes           int     `json:"churn_nodes,omitempty"`
	BoundToNotReady      int     `json:"bound_to_not_ready,omitempty"`
	ChurnRecoverySeconds float64 `json:"churn_recovery_seconds,omitempty"`
	// ChurnBoundAfter is the pods bound after the nodes returned (on any
	// node), and ChurnSettleSeconds the time from their return to the
	// last of those bindings: how long the cluster took to bind what
	// waited for them (0: nothing did).
	ChurnBoundAfter    int     `json:"churn_bound_after,omitempty"`
	ChurnSettleSeconds float64 `json:"churn_settle_seconds,omitempty"`
}

// Result is a benchmark's outcome: the configuration, each scheduler's
// run, and the headline figures (inlay's, and kube-scheduler's rate).
type Result struct {
	Nodes       int     `json:"nodes"`
	GPUsPerNode int     `json:"gpus_per_node"`
	Pods        int     `json:"pods"`
	Rate        float64 `json:"rate"`
	Mode        string  `json:"mode"` // pods or jobs
	Policy      string  `json:"policy"`
	Churn       float64 `json:"churn"`
	Runs        []Run   `json:"runs"`

	PodsPerSecond              float64 `json:"pods_per_second"`
	KubeSchedulerPodsPerSecond float64 `json:"kube_scheduler_pods_per_second"`
	P99BindSeconds             float64 `json:"p99_bind_seconds"`
	KubeSchedulerP99Seconds    float64 `json:"kube_scheduler_p99_bind_seconds"`
	RoundP99Seconds            float64 `json:"round_p99_seconds"`
	SchedulerPeakBytes         int64   `json:"scheduler_peak_bytes"`
	// Kueue's run, when measured (--jobs --schedulers …,kueue).
	KueuePodsPerSecond float64 `json:"kueue_pods_per_second,omitempty"`
	KueueP99Seconds    float64 `json:"kueue_p99_bind_seconds,omitempty"`
}

func (c *Config) fill() error {
	if c.Nodes == 0 {
		c.Nodes = 1000
	}
	if c.Pods == 0 {
		c.Pods = 10000
	}
	if c.Creators <= 0 {
		c.Creators = 16
	}
	if c.ChurnFor <= 0 {
		c.ChurnFor = 10 * time.Second
	}
	if len(c.Schedulers) == 0 {
		c.Schedulers = []string{Inlay, KubeScheduler}
	}
	if c.Policy == "" {
		c.Policy = "fifo"
	}
	if c.Round == 0 {
		c.Round = 360
	}
	if c.Speedup == 0 {
		c.Speedup = 360
	}
	if c.QPS == 0 {
		c.QPS = 1000
	}
	if c.Workers <= 0 {
		c.Workers = 32
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if c.Cluster == nil {
		p, err := chw.Preset("gavel-108")
		if err != nil {
			return err
		}
		g, _ := p.GPUType("v100")
		c.Cluster = &chw.Platform{Name: "bench", GPUTypes: []chw.GPUType{g},
			Nodes: []chw.Node{{Name: "server", GPU: "v100", GPUs: 8, CPUs: 64, MemoryGiB: 512}}}
	}
	switch {
	case c.Nodes < 1 || c.Nodes > 100000:
		return fmt.Errorf("perf: --nodes must be between 1 and 100000, got %d", c.Nodes)
	case c.Pods < 1 || c.Pods > 1000000:
		return fmt.Errorf("perf: --pods must be between 1 and 1000000, got %d", c.Pods)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("perf: --rate must be a non-negative number of pods per second, got %g", c.Rate)
	case c.Churn < 0 || c.Churn > 0.5 || math.IsNaN(c.Churn):
		return fmt.Errorf("perf: --churn must be a share of the nodes between 0 and 0.5, got %g", c.Churn)
	case len(c.Cluster.Nodes) == 0:
		return fmt.Errorf("perf: cluster %s has no servers", c.Cluster.Name)
	}
	for _, s := range c.Schedulers {
		switch {
		case s != Inlay && s != KubeScheduler && s != Kueue:
			return fmt.Errorf("perf: unknown scheduler %q (%s, %s, %s)", s, Inlay, KubeScheduler, Kueue)
		case s == Kueue && !c.Jobs:
			return fmt.Errorf("perf: %s admits Jobs: measure it with --jobs", Kueue)
		}
	}
	return nil
}

// platform is the benchmark's cluster: Nodes servers, the template's in
// turn, named node-00000 on.
func (c *Config) platform() *chw.Platform {
	p := &chw.Platform{Name: c.Cluster.Name, GPUTypes: c.Cluster.GPUTypes, Network: c.Cluster.Network, Source: c.Cluster.Source}
	for i := range c.Nodes {
		n := c.Cluster.Nodes[i%len(c.Cluster.Nodes)]
		n.Name = fmt.Sprintf("node-%05d", i)
		p.Nodes = append(p.Nodes, n)
	}
	return p
}

// Bench starts a control plane, creates the nodes and measures each
// scheduler in turn.
func Bench(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: cfg.Dir, KubeScheduler: true, NoNodeLifecycle: true})
	if err != nil {
		return nil, err
	}
	defer func() {
		cp.Stop()
		if cfg.Dir == "" {
			os.RemoveAll(cp.Dir)
		}
	}()
	cs, err := cp.Client(float32(4*cfg.QPS), int(8*cfg.QPS))
	if err != nil {
		return nil, err
	}
	plat := cfg.platform()
	if err := createNodes(ctx, cs, plat, cfg.Creators); err != nil {
		return nil, err
	}
	if slices.Contains(cfg.Schedulers, Kueue) {
		if err := kueue.Install(ctx, cp); err != nil {
			return nil, err
		}
	}
	res := &Result{Nodes: cfg.Nodes, GPUsPerNode: plat.Nodes[0].GPUs, Pods: cfg.Pods, Rate: cfg.Rate, Mode: "pods", Policy: cfg.Policy, Churn: cfg.Churn}
	if cfg.Jobs {
		res.Mode = "jobs"
	}
	for _, name := range cfg.Schedulers {
		r, err := runOne(ctx, &cfg, cp, cs, plat, name)
		if err != nil {
			return nil, fmt.Errorf("perf: %s: %w", name, err)
		}
		res.Runs = append(res.Runs, *r)
		switch name {
		case Inlay:
			res.PodsPerSecond, res.P99BindSeconds, res.RoundP99Seconds, res.SchedulerPeakBytes = r.PodsPerSecond, r.P99BindSeconds, r.RoundP99Seconds, r.SchedulerPeakBytes
		case KubeScheduler:
			res.KubeSchedulerPodsPerSecond, res.KubeSchedulerP99Seconds = r.PodsPerSecond, r.P99BindSeconds
		case Kueue:
			res.KueuePodsPerSecond, res.KueueP99Seconds = r.PodsPerSecond, r.P99BindSeconds
		}
	}
	return res, nil
}

// runOne measures one scheduler: its pods in a namespace of their own,
// deleted afterwards so that the next scheduler finds the nodes empty.
func runOne(ctx context.Context, cfg *Config, cp *controlplane.ControlPlane, cs kubernetes.Interface, plat *chw.Platform, name string) (*Run, error) {
	ns := "bench-" + name
	if err := createNamespace(ctx, cs, ns); err != nil {
		return nil, err
	}
	defer deleteAll(context.WithoutCancel(ctx), cs, ns)
	if name == Kueue {
		if err := kueue.Queues(ctx, cp.Config, plat, ns, kueueQueue); err != nil {
			return nil, err
		}
	}
	w, err := watchPods(ctx, cs, ns)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	before, err := cp.CPUTimes()
	if err != nil {
		return nil, err
	}
	var stopInlay func() (*SchedulerStats, error)
	if name == Inlay {
		run := cfg.Inlay
		if run == nil {
			run = inProcess
		}
		if stopInlay, err = run(ctx, cp.Kubeconfig, ns, cfg); err != nil {
			return nil, err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	churn := &churner{cs: cs, w: w}
	if cfg.Churn > 0 {
		churn.pick(plat, cfg.Churn)
	}
	createErr := make(chan error, 1)
	go func() {
		createErr <- createWork(rctx, cfg, cs, ns, name, plat, w, churn)
	}()
	err = <-createErr
	if err == nil {
		err = churn.wait(rctx)
	}
	if err == nil {
		// Pods beyond the cluster's GPUs stay pending.
		w.waitBound(rctx, min(cfg.Pods, plat.TotalGPUs()/podGPUs))
	}
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	var st *SchedulerStats
	if stopInlay != nil {
		var serr error
		st, serr = stopInlay()
		err = errors.Join(err, serr)
	}
	if err != nil {
		return nil, err
	}
	after, err := cp.CPUTimes()
	if err != nil {
		return nil, err
	}
	r := w.figures(cfg, name, plat)
	r.APIServerCPUSeconds = (after["kube-apiserver"] - before["kube-apiserver"]).Seconds()
	r.EtcdCPUSeconds = (after["etcd"] - before["etcd"]).Seconds()
	r.ControllerCPUSeconds = (after["kube-controller-manager"] - before["kube-controller-manager"]).Seconds()
	churn.figures(r)
	switch {
	case st != nil:
		r.SchedulerCPUSeconds, r.SchedulerPeakBytes = st.CPUSeconds, st.PeakBytes
		r.Rounds, r.MaxActive, r.Requests = len(st.RoundSeconds), st.MaxActive, st.Requests
		sorted := append([]float64(nil), st.RoundSeconds...)
		sort.Float64s(sorted)
		r.RoundP50Seconds, r.RoundP99Seconds = quantile(sorted, 0.5), quantile(sorted, 0.99)
	case name == KubeScheduler || name == Kueue:
		r.SchedulerCPUSeconds = (after["kube-scheduler"] - before["kube-scheduler"]).Seconds()
		r.SchedulerPeakBytes, _ = cp.PeakBytes("kube-scheduler")
	}
	if name == Kueue {
		r.QueueCPUSeconds = (after["kueue"] - before["kueue"]).Seconds()
		r.QueuePeakBytes, _ = cp.PeakBytes("kueue")
	}
	return r, nil
}

// quantile of sorted v, the nearest rank at or above q.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)]
}

// kueueQueue is the LocalQueue of Kueue's run (in its namespace).
const kueueQueue = "bench"

// podGPUs is a benchmark pod's GPUs.
const podGPUs = 1

// gpuType is the pods' GPU type: the first server's.
func gpuType(plat *chw.Platform) string { return plat.Nodes[0].GPU }

// schedulerName is the pods' spec.schedulerName for a scheduler.
func schedulerName(name string) string {
	if name == Inlay {
		return jobspec.SchedulerName
	}
	return corev1.DefaultSchedulerName
}

// overcommitted counts nodes whose bound pods hold more GPUs than they
// have.
func overcommitted(plat *chw.Platform, gpus map[string]int) int {
	n := 0
	for _, node := range plat.Nodes {
		if gpus[nodes.NodeName(node.Name)] > node.GPUs {
			n++
		}
	}
	return n
}
