package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/inlay-dev/inlay/cluster/adapt"
	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/kueue"
	"github.com/inlay-dev/inlay/cluster/kube/manifests"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/kube/replay"
	"github.com/inlay-dev/inlay/cluster/kube/scheduler"
	"github.com/inlay-dev/inlay/cluster/kube/vclock"
	"github.com/inlay-dev/inlay/cluster/planned"
	"github.com/inlay-dev/inlay/cluster/policy/adaptreg"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// kueueQueue is the LocalQueue that inlay-scheduler up --kueue makes and
// inlay-scheduler replay --scheduler kueue submits to.
const kueueQueue = "kueue"

func newUpCmd() *cobra.Command {
	var clusterName, dir string
	var kubeSched, withKueue bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "up --cluster C --dir D",
		Short: "Start a local Kubernetes control plane with the cluster's GPU servers as KWOK nodes",
		Long: `up starts etcd, kube-apiserver, kube-controller-manager, the default
kube-scheduler and KWOK on the loopback interface, with fresh certificates,
tokens and etcd data in D, creates one KWOK node per server of the cluster
(labels nvidia.com/gpu.product and inlay.dev/gpu-type, capacity
nvidia.com/gpu), installs the inlay scheduler's RBAC, writes D/kubeconfig,
prints its path and returns once every node is Ready. The processes keep
running; inlay-scheduler down --dir D stops them. The binaries come from
make fetch (scripts/k8s.sh). --kueue also installs Kueue (make
fetch-kueue: its CRDs and controller manager) with one ResourceFlavor per
GPU type, a ClusterQueue holding the cluster's GPUs, CPUs and memory, and
the LocalQueue default/kueue, for inlay-scheduler replay --scheduler kueue.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("--dir is required (the control plane's folder)")
			}
			p, err := chw.Resolve(clusterName)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			cp, err := controlplane.Start(ctx, controlplane.Options{Dir: dir, KubeScheduler: kubeSched, Timeout: timeout, Detach: true})
			if err != nil {
				return err
			}
			ok := false
			defer func() {
				if !ok {
					cp.Stop()
				}
			}()
			cs, err := cp.Client(200, 400)
			if err != nil {
				return err
			}
			if err := manifests.Apply(ctx, cs, false); err != nil {
				return fmt.Errorf("install the inlay scheduler's RBAC: %w", err)
			}
			bar := newProgress(cmd.ErrOrStderr(), "creating nodes", len(p.Nodes))
			if err := nodes.Create(ctx, cs, p, 16, func(d, _ int) { bar.set(d) }); err != nil {
				return err
			}
			wctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			bar = newProgress(cmd.ErrOrStderr(), "waiting for Ready", len(p.Nodes))
			if err := nodes.WaitReady(wctx, cs, p, func(r, _ int) { bar.set(r) }); err != nil {
				return err
			}
			if withKueue {
				if err := kueue.Install(wctx, cp); err != nil {
					return err
				}
				if err := kueue.Queues(wctx, cp.Config, p, "default", kueueQueue); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "kueue: running, LocalQueue default/%s (ClusterQueue %s, one flavor per GPU type)\n", kueueQueue, kueue.ClusterQueueName(kueueQueue))
			}
			ok = true
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d nodes Ready; stop with inlay-scheduler down --dir %s\n", p.Summary(), len(p.Nodes), dir)
			fmt.Fprintln(cmd.OutOrStdout(), cp.Kubeconfig)
			return nil
		},
	}
	cmd.Flags().StringVar(&clusterName, "cluster", "gavel-108", "cluster preset or YAML file whose servers become KWOK nodes")
	cmd.Flags().StringVar(&dir, "dir", "", "the control plane's folder (certificates, etcd data, logs, kubeconfig)")
	cmd.Flags().BoolVar(&kubeSched, "kube-scheduler", true, "also run the default kube-scheduler (for replays with --scheduler default-scheduler or kueue)")
	cmd.Flags().BoolVar(&withKueue, "kueue", false, "also install and run Kueue (make fetch-kueue) with LocalQueue default/"+kueueQueue+" (for replays with --scheduler kueue)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the control plane and the nodes")
	return cmd
}

func newDownCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "down --dir D",
		Short: "Stop the local control plane that inlay-scheduler up started in D",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("--dir is required")
			}
			if err := controlplane.StopDir(dir); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "stopped the control plane in %s\n", dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the folder given to inlay-scheduler up")
	return cmd
}

// kubeClient reads a kubeconfig (empty: in-cluster, then $KUBECONFIG).
func kubeClient(path string, qps float32, burst int) (*kubernetes.Clientset, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", path, err)
	}
	cfg.QPS, cfg.Burst = qps, burst
	return kubernetes.NewForConfig(cfg)
}

type kubeSchedFlags struct {
	kubeconfig, policy, tp, queue, ns, leaseNS, placement string
	round, reset, speedup                                 float64
	seed                                                  uint64
	leader                                                bool
	qps, publishRate                                      float64
	workers                                               int
	tolerate                                              []string
	// adaptive runs an adaptive policy (cluster/policy/adaptreg) on the
	// models of Sia's benchmark in siaDir.
	adaptive, mixed bool
	siaDir          string
}

func (f *kubeSchedFlags) add(cmd *cobra.Command, withKubeconfig bool) {
	fl := cmd.Flags()
	if withKubeconfig {
		fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG)")
	}
	fl.StringVar(&f.policy, "policy", "gavel", "policy (inlay cluster policies lists them; space-sharing ones cannot run on Kubernetes)")
	fl.StringVar(&f.tp, "throughputs", "", throughput.FileFlagHelp)
	fl.Float64Var(&f.round, "round", 360, "round length in (virtual) seconds")
	fl.Float64Var(&f.reset, "reset", 1920, "least (virtual) seconds between allocation recomputations (-1: every event)")
	fl.StringVar(&f.placement, "placement", "consolidated", "multi-GPU placement: consolidated or spread")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the policies' draws")
	fl.StringVar(&f.queue, "queue", "default", "the inlay.dev/queue label value served")
	fl.Float64Var(&f.qps, "qps", 200, "API requests per second the scheduler may make (burst twice that)")
	fl.IntVar(&f.workers, "workers", 8, "Jobs reconciled in parallel")
	fl.Float64Var(&f.publishRate, "publish-rate", 50, "writes a second that only publish Jobs' state (annotations, condition); bindings, suspends and resumes never wait for them")
	fl.StringSliceVar(&f.tolerate, "tolerate-taint", nil, "taint keys that do not keep a node out of the policy's cluster")
	fl.BoolVar(&f.adaptive, "adaptive", false, "run an adaptive policy (inlay, sia, pollux, gavel-tj: inlay cluster bench's) on Jobs described by inlay.dev/model, inlay.dev/kind and inlay.dev/batch-size; it changes their GPU counts and batch sizes")
	fl.BoolVar(&f.mixed, "mixed", false, "with --adaptive: let the policy give a job GPUs of several types at once (mixed-type gangs)")
	fl.StringVar(&f.siaDir, "sia", sia.DefaultDir, "with --adaptive: folder of Sia's benchmark, whose models and GPU types (cluster.json) the policy uses")
}

func (f *kubeSchedFlags) config(cs kubernetes.Interface, speedup float64, log *slog.Logger) (scheduler.Config, error) {
	if f.adaptive {
		return f.adaptiveConfig(cs, speedup, log)
	}
	t, err := throughput.Load(f.tp)
	if err != nil {
		return scheduler.Config{}, err
	}
	pol, err := registry.New(f.policy, registry.Options{Seed: f.seed})
	if err != nil {
		return scheduler.Config{}, err
	}
	return scheduler.Config{Client: cs, Policy: pol, Table: t, Speedup: speedup, Queue: f.queue, Namespace: f.ns,
		Sched:   sched.Config{Round: f.round, ResetInterval: f.reset, Placement: sched.Placement(f.placement), Seed: f.seed},
		Workers: f.workers, PublishRate: f.publishRate, TolerateTaints: f.tolerate, LeaderElection: f.leader, LeaseNamespace: f.leaseNS, Log: log}, nil
}

// adaptiveConfig is --adaptive's configuration: the adaptive policy
// --policy on the models and GPU types of Sia's benchmark (--sia).
func (f *kubeSchedFlags) adaptiveConfig(cs kubernetes.Interface, speedup float64, log *slog.Logger) (scheduler.Config, error) {
	fac, err := adaptreg.Lookup(f.policy)
	if err != nil {
		return scheduler.Config{}, err
	}
	b, err := sia.Load(f.siaDir)
	if err != nil {
		return scheduler.Config{}, err
	}
	models, err := adapt.Models(b, b.Cluster)
	if err != nil {
		return scheduler.Config{}, err
	}
	var types []string
	for _, t := range adapt.FromSia(b.Cluster).Types {
		types = append(types, t.Name)
	}
	return scheduler.Config{Client: cs, Speedup: speedup, Queue: f.queue, Namespace: f.ns, Sched: sched.Config{Round: f.round},
		Adaptive: &scheduler.Adaptive{Policy: fac.New(adaptreg.Options{Seed: f.seed}), Models: models, Types: types, Mixed: f.mixed},
		Workers:  f.workers, PublishRate: f.publishRate, TolerateTaints: f.tolerate, LeaderElection: f.leader, LeaseNamespace: f.leaseNS, Log: log}, nil
}

func newRunCmd() *cobra.Command {
	var f kubeSchedFlags
	var statsPath string
	var prof profiles
	cmd := &cobra.Command{
		Use:   "run --kubeconfig FILE --policy P",
		Short: "Schedule training Jobs on Kubernetes with a cluster policy (the simulator's mechanism, in real time)",
		Long: `scheduler serves the batch/v1 Jobs labelled inlay.dev/queue=QUEUE whose pods
name schedulerName: inlay. Annotations inlay.dev/job-type (a throughput
table job type) and inlay.dev/steps (total steps) describe the job; its GPUs
are parallelism × each pod's nvidia.com/gpu limit, and parallelism must
equal completions (gang scheduling).

Every round (--round virtual seconds, divided by --speedup) it runs the
same mechanism and policy as inlay cluster simulate, binds all pods of a
chosen job to nodes of the chosen GPU type (label nvidia.com/gpu.product or
inlay.dev/gpu-type, count from the nvidia.com/gpu capacity) through the
Binding subresource, and preempts by suspending Jobs (spec.suspend),
resuming them when they run again. Decisions are Events on the Jobs; state
is in annotations inlay.dev/state, allocated, rounds, preemptions,
steps-estimated, and in the Job's status conditions InlayScheduled (True
while allocated; False, reason Queued, Preempted or Finished) and
InlayInvalid (malformed annotations). inlay-scheduler manifests prints
the RBAC and the Deployment that run it in a cluster.

--adaptive runs an adaptive policy (--policy inlay, sia, pollux or
gavel-tj, as inlay cluster bench; --round 60 as they do) on Jobs described
by inlay.dev/model (a model of Sia's benchmark, --sia), inlay.dev/kind
(adaptive, scale-gpus, rigid) and inlay.dev/batch-size: Indexed Jobs of
one GPU a pod on nodes whose inlay.dev/gpu-type is one of the benchmark's
types. Each round is the simulator's; a new GPU count suspends the Job,
patches parallelism and completions, and resumes it; each pod's Binding
carries its batch size in the annotation inlay.dev/batch-size, which the
pod reads through the downward API.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cs, err := kubeClient(f.kubeconfig, float32(f.qps), int(2*f.qps))
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			cfg, err := f.config(cs, f.speedup, log)
			if err != nil {
				return err
			}
			s, err := scheduler.New(cfg)
			if err != nil {
				return err
			}
			stopProf, err := prof.start()
			if err != nil {
				return err
			}
			err = errors.Join(s.Run(ctx), stopProf())
			if statsPath != "" {
				err = errors.Join(err, writeStats(statsPath, s))
			}
			return err
		},
	}
	f.add(cmd, true)
	fl := cmd.Flags()
	fl.Float64Var(&f.speedup, "speedup", 1, "virtual seconds per real second (replays compress time; 1 on a real cluster)")
	fl.StringVar(&f.ns, "namespace", "", "serve Jobs of this namespace only (default: all)")
	fl.BoolVar(&f.leader, "leader-elect", false, "run only while holding the leader lease (for replicas)")
	fl.StringVar(&f.leaseNS, "lease-namespace", "inlay-system", "namespace of the leader lease")
	fl.StringVar(&statsPath, "stats", "", "when it stops, write its figures (rounds' times, binds, requests, CPU seconds, peak memory) as JSON to this file")
	fl.StringVar(&prof.cpu, "cpuprofile", "", "write a CPU profile (pprof) of the whole run to this file")
	fl.StringVar(&prof.heap, "memprofile", "", "when it stops, write a heap profile (pprof, what is live then) to this file")
	return cmd
}

func newManifestsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "manifests",
		Short: "Print the scheduler's namespace, ServiceAccount, roles and Deployment (kubectl apply --server-side -f -)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(manifests.Scheduler)
			return err
		},
	}
}

// replayFlags are replay's flags.
type replayFlags struct {
	kubeSchedFlags
	cluster, scheduler, run, latency string
	json, compare, withScheduler     bool
	timeout                          time.Duration
}

func newReplayCmd() *cobra.Command {
	f := replayFlags{latency: "real"}
	cmd := &cobra.Command{
		Use:   "replay JOBS --kubeconfig FILE --speedup X",
		Short: "Replay a job trace on Kubernetes (KWOK nodes) and report it as inlay cluster simulate does",
		Long: `replay creates one Job per trace job at its arrival time, compressed by
--speedup, and plays the training workload on KWOK's pods: when all pods of
a Job run, their finish time follows from the job's remaining steps and its
throughput on the nodes' GPU type (inlay.dev/finish-at, which KWOK's stage
honours); a preempted job checkpoints its steps (inlay.dev/steps-done) and
resumes from them. The report, read back from the Jobs, has the fields of
inlay cluster simulate --json.

--with-scheduler runs inlay's scheduler in this process (otherwise run
inlay-scheduler run with the same --speedup). --scheduler
default-scheduler gives the pods to the default kube-scheduler instead;
--scheduler kueue creates the Jobs suspended in Kueue's LocalQueue
default/kueue (inlay-scheduler up --kueue), which admits them by quota per
GPU type, and kube-scheduler places their pods.
--compare also simulates the trace and prints both, with the JCT ratio.
--cluster must be the cluster the nodes were made from (inlay-scheduler up).

--latency says what the control plane's reaction time (a round's decision
to the pods running or gone: the Job controller, the binding, KWOK) costs
in trace time, which the simulator does not model: real (default) charges
it at real speed, one trace second per second, as on a real cluster;
lockstep runs the scheduler (--with-scheduler, or the default
kube-scheduler) and the replayer on one virtual clock that stands still
while a round is carried out, so it costs nothing however loaded the
machine is (the fidelity check; slower in real time); compressed
multiplies it by --speedup like the training.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd, &f, args[0])
		},
	}
	f.add(cmd, true)
	fl := cmd.Flags()
	fl.Float64Var(&f.speedup, "speedup", 0, "trace seconds per real second (required)")
	fl.StringVar(&f.cluster, "cluster", "gavel-108", "the cluster the KWOK nodes were made from")
	fl.StringVar(&f.scheduler, "scheduler", jobspec.SchedulerName, "who schedules: inlay, default-scheduler (kube-scheduler), or kueue (Kueue's LocalQueue default/"+kueueQueue+" from inlay-scheduler up --kueue, then kube-scheduler)")
	fl.StringVar(&f.run, "run", "replay", "name of this replay (label inlay.dev/replay on its Jobs)")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON object (inlay cluster simulate's fields)")
	fl.BoolVar(&f.compare, "compare", false, "also simulate the trace and print both")
	fl.BoolVar(&f.withScheduler, "with-scheduler", false, "run inlay's scheduler in this process")
	fl.DurationVar(&f.timeout, "timeout", 0, "give up after this long (real time); unfinished jobs are reported")
	fl.StringVar(&f.latency, "latency", f.latency, "what the control plane's reaction time costs in trace time: real, lockstep or compressed (see above)")
	_ = cmd.MarkFlagRequired("speedup")
	return cmd
}

// runReplay replays the trace file on the cluster the kubeconfig names.
func runReplay(cmd *cobra.Command, f *replayFlags, trace string) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	if !(f.speedup > 0) {
		return fmt.Errorf("--speedup must be positive")
	}
	t, c, jobs, err := f.load(trace)
	if err != nil {
		return err
	}
	cs, err := kubeClient(f.kubeconfig, float32(f.qps), int(2*f.qps))
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	clock, err := f.clock()
	if err != nil {
		return err
	}
	podSched, labels, suspend, policyName, err := f.podScheduler()
	if err != nil {
		return err
	}
	var sch *scheduler.Scheduler
	if f.withScheduler {
		if sch, err = f.startScheduler(ctx, cs, clock, log); err != nil {
			return err
		}
	}
	bar := newProgress(cmd.ErrOrStderr(), "replaying", len(jobs))
	startWall := time.Now()
	res, err := replay.Run(ctx, replay.Config{Client: cs, Jobs: jobs, Table: t, Cluster: c, Speedup: f.speedup,
		SchedulerName: podSched, Labels: labels, Suspend: suspend, Queue: f.queue, Run: f.run, Policy: policyName, Timeout: f.timeout,
		Progress: func(d, _ int) { bar.set(d) }, Log: log, Clock: clock, RealTimeLatency: f.latency == "real"})
	if err != nil {
		return err
	}
	wall := time.Since(startWall)
	if sch != nil {
		st := sch.Stats()
		res.Rounds, res.Recomputes = int(st.Rounds), int(st.Recomputes)
	}
	var simRes *sim.Result
	if f.compare {
		if simRes, err = f.simulate(ctx, jobs, c, t); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if f.json {
		o := sim.NewOutcome(res, wall)
		o.Speedup, o.SimAvgJCT = f.speedup, simAvg(simRes)
		return json.NewEncoder(out).Encode(o)
	}
	printReplay(out, res, simRes, wall, f.speedup)
	return nil
}

// load reads the throughput table, the cluster and the trace, with the
// trace's planned jobs filled in, and checks them.
func (f *replayFlags) load(trace string) (*throughput.Table, *chw.Platform, []job.Job, error) {
	t, err := throughput.Load(f.tp)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := chw.Resolve(f.cluster)
	if err != nil {
		return nil, nil, nil, err
	}
	jobs, err := job.Load(trace)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := planned.Fill(trace, t, c, jobs); err != nil {
		return nil, nil, nil, err
	}
	if err := job.Validate(trace, jobs, t, c); err != nil {
		return nil, nil, nil, err
	}
	return t, c, jobs, nil
}

// simulate runs the trace in the cluster simulator with the scheduler's
// policy and round (--compare).
func (f *replayFlags) simulate(ctx context.Context, jobs []job.Job, c *chw.Platform, t *throughput.Table) (*sim.Result, error) {
	pol, err := registry.New(f.policy, registry.Options{Seed: f.seed})
	if err != nil {
		return nil, err
	}
	return sim.Run(ctx, sim.Config{Sched: sched.Config{Round: f.round, ResetInterval: f.reset, Placement: sched.Placement(f.placement), Seed: f.seed}}, jobs, c, t, pol)
}

// clock is --latency's virtual clock (nil: real time).
func (f *replayFlags) clock() (*vclock.Clock, error) {
	switch f.latency {
	case "real", "compressed":
		return nil, nil
	case "lockstep":
		if !f.withScheduler && f.scheduler == jobspec.SchedulerName {
			return nil, fmt.Errorf("--latency lockstep needs the scheduler in this process (--with-scheduler) or --scheduler default-scheduler")
		}
		return vclock.New(f.speedup)
	}
	return nil, fmt.Errorf("--latency %q: want real, lockstep or compressed", f.latency)
}

// podScheduler is who places the replay's pods under --scheduler: the
// pods' schedulerName, the Jobs' labels, whether they are created
// suspended, and the name the report gives the policy.
func (f *replayFlags) podScheduler() (podSched string, labels map[string]string, suspend bool, policy string, err error) {
	switch f.scheduler {
	case jobspec.SchedulerName:
		return f.scheduler, nil, false, f.policy, nil
	case "default-scheduler":
		return f.scheduler, nil, false, f.scheduler, nil
	case "kueue":
		// Kueue admits the suspended Jobs of its LocalQueue; the default
		// kube-scheduler places their pods.
		return "default-scheduler", map[string]string{kueue.QueueLabel: kueueQueue}, true, f.scheduler, nil
	}
	return "", nil, false, "", fmt.Errorf("--scheduler %q: want %s, default-scheduler or kueue", f.scheduler, jobspec.SchedulerName)
}

// startScheduler runs inlay's scheduler in this process (--with-scheduler)
// until ctx ends.
func (f *replayFlags) startScheduler(ctx context.Context, cs kubernetes.Interface, clock *vclock.Clock, log *slog.Logger) (*scheduler.Scheduler, error) {
	if f.scheduler != jobspec.SchedulerName {
		return nil, fmt.Errorf("--with-scheduler runs inlay's scheduler; it cannot go with --scheduler %s", f.scheduler)
	}
	if f.adaptive {
		return nil, fmt.Errorf("--adaptive: replay replays a job trace of the throughput table; adaptive jobs are replayed by the e2e test TestAdaptiveReplay (cluster/kube/e2e)")
	}
	cfg, err := f.config(cs, f.speedup, log)
	if err != nil {
		return nil, err
	}
	cfg.Clock = clock
	sch, err := scheduler.New(cfg)
	if err != nil {
		return nil, err
	}
	go func() {
		if err := sch.Run(ctx); err != nil {
			log.Error("scheduler", "err", err)
		}
	}()
	return sch, nil
}

func simAvg(r *sim.Result) float64 {
	if r == nil {
		return 0
	}
	return r.AvgJCT
}

func printReplay(w io.Writer, r, s *sim.Result, wall time.Duration, speedup float64) {
	fmt.Fprintf(w, "%s on %s (Kubernetes, speedup %g): %d jobs finished", r.Policy, r.Cluster, speedup, r.Jobs)
	if r.Unfinished > 0 {
		fmt.Fprintf(w, ", %d unfinished", r.Unfinished)
	}
	fmt.Fprintf(w, "; %d preemptions, %.1f s\n", r.Preemptions, wall.Seconds())
	hdr := []string{"metric", "replay"}
	if s != nil {
		hdr = append(hdr, "simulator", "replay/sim")
	}
	tb := textfmt.Table{Header: hdr}
	row := func(name string, a, b float64, unit string) {
		cells := []string{name, fmt.Sprintf("%.2f%s", a, unit)}
		if s != nil {
			ratio := "-"
			if b > 0 {
				ratio = fmt.Sprintf("%.3f", a/b)
			}
			cells = append(cells, fmt.Sprintf("%.2f%s", b, unit), ratio)
		}
		tb.Add(cells...)
	}
	var sv sim.Result
	if s != nil {
		sv = *s
	}
	row("avg JCT", r.AvgJCT, sv.AvgJCT, " h")
	row("p50 JCT", r.P50JCT, sv.P50JCT, " h")
	row("p90 JCT", r.P90JCT, sv.P90JCT, " h")
	row("makespan", r.Makespan, sv.Makespan, " h")
	row("avg FTF ρ", r.AvgFTF, sv.AvgFTF, "")
	for _, g := range slices.Sorted(maps.Keys(r.Utilization)) {
		row("utilisation "+g, 100*r.Utilization[g], 100*sv.Utilization[g], " %")
	}
	tb.WriteTo(w) //nolint:errcheck
}
