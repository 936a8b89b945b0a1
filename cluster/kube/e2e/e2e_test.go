// Package e2e runs inlay's Kubernetes scheduler and replayer against a real
// local control plane (etcd, kube-apiserver, kube-controller-manager, KWOK)
// built by make fetch: a 200-job replay on 50 nodes beside the simulator,
// and the faults (malformed Jobs, forbidden requests, a lost node, a
// restarted scheduler, the API server away for 30 s) with every job
// accounted for.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/manifests"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/kube/replay"
	"github.com/inlay-dev/inlay/cluster/kube/scheduler"
	"github.com/inlay-dev/inlay/cluster/kube/vclock"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/internal/assets"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// kube50 is 50 two-GPU servers of Gavel's three types.
const kube50 = `name: kube-50
description: 50 two-GPU servers of Gavel's three GPU types (the Kubernetes tests)
gpu_types:
  - {name: v100, description: NVIDIA V100 16 GB, memory_gib: 16, tensor_tflops: 125, fp32_tflops: 15.7, mem_bandwidth_gbs: 900, price_per_hour: 2.48}
  - {name: p100, description: NVIDIA P100 16 GB, memory_gib: 16, tensor_tflops: 18.7, fp32_tflops: 9.3, mem_bandwidth_gbs: 732, price_per_hour: 1.46}
  - {name: k80, description: NVIDIA K80, memory_gib: 12, tensor_tflops: 4.37, fp32_tflops: 4.37, mem_bandwidth_gbs: 240, price_per_hour: 0.45}
nodes:
  - {name: v100, gpu: v100, count: 16, gpus: 2, cpus: 16, memory_gib: 122, intra: {kind: pcie, bandwidth_gbs: 16}}
  - {name: p100, gpu: p100, count: 17, gpus: 2, cpus: 12, memory_gib: 224, intra: {kind: pcie, bandwidth_gbs: 16}}
  - {name: k80, gpu: k80, count: 17, gpus: 2, cpus: 8, memory_gib: 122, intra: {kind: pcie, bandwidth_gbs: 16}}
network: {bandwidth_gbs: 1.25, latency_us: 50, racks: 1}
`

type env struct {
	cp    *controlplane.ControlPlane
	cs    *kubernetes.Clientset
	plat  *chw.Platform
	table *throughput.Table
}

var (
	envOnce sync.Once
	shared  *env
	envErr  error
)

// setup starts one control plane with the 50 nodes for the package's tests
// (they run one after another and use their own namespaces and queues).
func setup(t *testing.T) *env {
	t.Helper()
	controlplane.SkipUnlessEnabled(t)
	if _, err := controlplane.Binaries(""); err != nil {
		assets.Missing(t, err.Error())
	}
	envOnce.Do(func() {
		dir, err := os.MkdirTemp("", "inlay-e2e-")
		if err != nil {
			envErr = err
			return
		}
		cp, err := controlplane.Start(context.Background(), controlplane.Options{Dir: dir, KubeScheduler: true})
		if err != nil {
			envErr = err
			return
		}
		e := &env{cp: cp}
		if e.cs, err = cp.Client(500, 1000); err != nil {
			envErr = err
			return
		}
		if e.plat, err = chw.Parse("kube-50", []byte(kube50)); err != nil {
			envErr = err
			return
		}
		if e.table, err = throughput.Gavel(); err != nil {
			envErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err = manifests.Apply(ctx, e.cs, false); err == nil {
			if err = nodes.Create(ctx, e.cs, e.plat, 16, nil); err == nil {
				err = nodes.WaitReady(ctx, e.cs, e.plat, nil)
			}
		}
		envErr = err
		shared = e
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		// The test binary run again as a scheduler process (TestFaults).
		os.Exit(schedulerChild())
	}
	code := m.Run()
	if shared != nil {
		shared.cp.Stop()
		os.RemoveAll(shared.cp.Dir)
	}
	os.Exit(code)
}

// trace draws n jobs with Gavel's distributions and divides their steps by
// shrink (so that a replay of a day of virtual time lasts about a minute).
func trace(t *testing.T, e *env, n int, rate float64, shrink float64, seed uint64) []job.Job {
	jobs, err := job.Generate(job.GenConfig{Jobs: n, Rate: rate, Seed: seed, MultiGPU: true}, e.table)
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs {
		jobs[i].Steps /= shrink
		jobs[i].Duration = 0
	}
	if err := job.Validate("trace", jobs, e.table, e.plat); err != nil {
		t.Fatal(err)
	}
	return jobs
}

// endReplay stops a scheduler that ran beside a replay: the scheduler's
// error fails the test, then the replay's (replayErr) stops it.
func endReplay(t *testing.T, stop context.CancelFunc, done <-chan error, replayErr error) {
	t.Helper()
	stop()
	if err := <-done; err != nil {
		t.Errorf("scheduler: %v", err)
	}
	if replayErr != nil {
		t.Fatal(replayErr)
	}
}

func startScheduler(t *testing.T, ctx context.Context, cs kubernetes.Interface, e *env, pol, queue string, speedup float64) (*scheduler.Scheduler, context.CancelFunc, chan error) {
	t.Helper()
	return startSchedulerAs(t, ctx, cs, e, pol, queue, speedup, "", nil)
}

func startSchedulerAs(t *testing.T, ctx context.Context, cs kubernetes.Interface, e *env, pol, queue string, speedup float64, id string, clock *vclock.Clock) (*scheduler.Scheduler, context.CancelFunc, chan error) {
	t.Helper()
	s, err := newScheduler(cs, e.table, pol, queue, speedup, id, clock, slog.LevelWarn)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(sctx) }()
	return s, cancel, done
}

// newScheduler is the tests' scheduler: policy pol on the Jobs of queue,
// Gavel's round and reset interval, leader election on the lease
// inlay-system/inlay-QUEUE, logging from level (INLAY_E2E_LOG overrides).
func newScheduler(cs kubernetes.Interface, table *throughput.Table, pol, queue string, speedup float64, id string, clock *vclock.Clock, level slog.Level) (*scheduler.Scheduler, error) {
	p, err := registry.New(pol, registry.Options{})
	if err != nil {
		return nil, err
	}
	if v := os.Getenv("INLAY_E2E_LOG"); v != "" {
		// INLAY_E2E_LOG=debug, info, warn or error: the schedulers' log level.
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return nil, fmt.Errorf("INLAY_E2E_LOG: %w", err)
		}
	}
	return scheduler.New(scheduler.Config{Client: cs, Policy: p, Table: table, Speedup: speedup, Queue: queue,
		Sched: sched.Config{Round: 360, ResetInterval: 1920}, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		LeaderElection: true, LeaseNamespace: "inlay-system", LeaseName: "inlay-" + queue, Identity: id, Clock: clock})
}

// cleanRuns deletes the named replays' Jobs (and so their pods) when the
// test ends, whatever its outcome, so that they hold no GPUs in the next.
func cleanRuns(t *testing.T, cs kubernetes.Interface, runs ...string) {
	t.Cleanup(func() {
		bg := metav1.DeletePropagationBackground
		for _, run := range runs {
			_ = cs.BatchV1().Jobs("default").DeleteCollection(context.Background(), metav1.DeleteOptions{PropagationPolicy: &bg},
				metav1.ListOptions{LabelSelector: replay.RunLabel + "=" + run})
		}
	})
}

// account checks that every job of a replay finished exactly once: one
// Job object per trace job, Complete, with exactly its gang's pods
// succeeded, and no pod of it bound twice.
func account(t *testing.T, cs kubernetes.Interface, ns, run string, jobs []job.Job) {
	t.Helper()
	ctx := context.Background()
	list, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: replay.RunLabel + "=" + run})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	complete := map[string]bool{}
	for i := range list.Items {
		j := &list.Items[i]
		seen[j.Name]++
		done, ok := jobspec.Done(j)
		complete[j.Name] = done && ok
		if !done || !ok {
			t.Errorf("%s: not complete (state %q)", j.Name, j.Annotations[jobspec.StateAnno])
		}
		if j.Status.Succeeded < 1 || j.Status.Active != 0 {
			t.Errorf("%s: %d pods succeeded, %d active; want the gang ended by a success", j.Name, j.Status.Succeeded, j.Status.Active)
		}
	}
	// No pod is left behind: every pod of the run has ended or is going.
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: replay.RunLabel + "=" + run})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if complete[p.Labels["batch.kubernetes.io/job-name"]] && p.DeletionTimestamp == nil && (p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending) {
			t.Errorf("pod %s on %q: %s after its Job finished (orphaned)", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
	}
	for _, j := range jobs {
		if seen[replay.JobName(run, j.ID)] != 1 {
			t.Errorf("trace job %d: %d Job objects", j.ID, seen[replay.JobName(run, j.ID)])
		}
	}
}

// dumpRun logs the state of a run's unfinished Jobs and their pods.
func dumpRun(t *testing.T, cs kubernetes.Interface, run string) {
	ctx := context.Background()
	list, err := cs.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{LabelSelector: replay.RunLabel + "=" + run})
	if err != nil {
		t.Log(err)
		return
	}
	pods, _ := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: replay.RunLabel + "=" + run})
	for i := range list.Items {
		j := &list.Items[i]
		if done, _ := jobspec.Done(j); done {
			continue
		}
		var ps []string
		for _, p := range pods.Items {
			if p.Labels["batch.kubernetes.io/job-name"] == j.Name {
				ps = append(ps, fmt.Sprintf("%s on %q %s deleting %v", p.Name, p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp != nil))
			}
		}
		var evs []string
		if el, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + j.Name}); err == nil {
			for _, ev := range el.Items {
				evs = append(evs, fmt.Sprintf("%s %s ×%d: %s", ev.Source.Component, ev.Reason, ev.Count, ev.Message))
			}
		}
		t.Logf("%s: suspend %v, parallelism %d, active %d, annotations %v, conditions %v, pods %v, events %v", j.Name, j.Spec.Suspend != nil && *j.Spec.Suspend,
			*j.Spec.Parallelism, j.Status.Active, j.Annotations, conditions(j), ps, evs)
	}
	// Every bound pod, to see what holds the nodes they wait for.
	if all, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range all.Items {
			if p.Spec.NodeName != "" {
				t.Logf("bound: %s/%s on %s, %s, deleting %v, %d GPUs", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase,
					p.DeletionTimestamp != nil, jobspec.PodRequests(&p.Spec).GPUs)
			}
		}
	}
}

// TestReplay replays 200 jobs on 50 nodes with inlay's scheduler and the
// gavel policy, accounts for every job, and compares the JCT with the
// simulator's on the same trace (the ratio is logged; the figure of docs/results/cluster-kubernetes.md
// is measured by make e2e).
func TestReplay(t *testing.T) {
	e := setup(t)
	cleanRuns(t, e.cs, "replay200")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	jobs := trace(t, e, 200, 40, 20, 1)
	speedup := 1500.0
	if s := os.Getenv("INLAY_E2E_SPEEDUP"); s != "" {
		fmt.Sscan(s, &speedup)
	}
	pol, _ := registry.New("gavel", registry.Options{})
	sr, err := sim.Run(ctx, sim.Config{Sched: sched.Config{Round: 360, ResetInterval: 1920}, Timeline: true}, jobs, e.plat, e.table, pol)
	if err != nil {
		t.Fatal(err)
	}
	// The replay may take twice the simulator's makespan, and five minutes
	// (a loaded machine is slower than the time compression).
	limit := time.Duration(2*sr.Makespan*3600/speedup*float64(time.Second)) + 5*time.Minute
	ctx, cancel = context.WithTimeout(context.Background(), limit+time.Minute)
	defer cancel()
	mode, clock, realTime := clockMode(t, speedup)
	if clock != nil {
		// The clock stands still while rounds are carried out.
		limit += 10 * time.Minute
		cancel()
		ctx, cancel = context.WithTimeout(context.Background(), limit+time.Minute)
		defer cancel()
	}
	s, stop, done := startSchedulerAs(t, ctx, e.cs, e, "gavel", "replay", speedup, "", clock)
	tl := &timeline{}
	wall := time.Now()
	res, err := replay.Run(ctx, replay.Config{Client: e.cs, Jobs: jobs, Table: e.table, Cluster: e.plat, Speedup: speedup,
		Namespace: "default", Queue: "replay", Run: "replay200", Policy: "gavel", Timeout: limit, Progress: progress(t),
		RealTimeLatency: realTime, Clock: clock, Timeline: tl.add})
	elapsed := time.Since(wall)
	endReplay(t, stop, done, err)
	if res.Unfinished != 0 {
		t.Errorf("%d jobs unfinished", res.Unfinished)
	}
	account(t, e.cs, "default", "replay200", jobs)
	t.Logf("avg JCT: replay %.3f h, simulator %.3f h, ratio %.3f (speedup %g, clock %s); makespan %.2f vs %.2f h; preemptions %d vs %d",
		res.AvgJCT, sr.AvgJCT, res.AvgJCT/sr.AvgJCT, speedup, mode, res.Makespan, sr.Makespan, res.Preemptions, sr.Preemptions)
	st := s.Stats()
	held := time.Duration(0)
	if clock != nil {
		held = clock.Held()
	}
	t.Logf("wall %.0f s, clock held %.0f s; scheduler: %d rounds, policy %.1f ms a round (max %.0f ms), %d binds, %d suspends, %d resumes, %d placements no node could hold, %d bound elsewhere than planned, %d cluster-view rebuilds",
		elapsed.Seconds(), held.Seconds(), st.Rounds, float64(st.PolicyTime.Milliseconds())/math.Max(float64(st.Rounds), 1), float64(st.PolicyMax.Milliseconds()), st.Binds, st.Suspends, st.Resumes, st.Waits, st.Refits, st.Rebuilds)
	tl.report(t, speedup, clock, sr)
	// Where the difference comes from: per job, the replay's extra time in
	// real seconds (scheduling latency is paid in real time, and the time
	// compression multiplies it), and the JCT ratio by job length.
	simJCT := map[int]float64{}
	for _, jr := range sr.PerJob {
		simJCT[jr.ID] = jr.JCT
	}
	var extra, short, long []float64
	for _, jr := range res.PerJob {
		if sj := simJCT[jr.ID]; jr.JCT > 0 && sj > 0 {
			extra = append(extra, (jr.JCT-sj)/speedup)
			if sj < 3600 {
				short = append(short, jr.JCT/sj)
			} else {
				long = append(long, jr.JCT/sj)
			}
		}
	}
	t.Logf("per job: replay − simulator median %.2f real s; JCT ratio median %.2f for the %d jobs under an hour in the simulator, %.2f for the %d longer",
		median(extra), median(short), len(short), median(long), len(long))
}

// TestLeaderElection: of two schedulers on one lease only the holder
// schedules; when it stops, the other takes the lease and finishes the
// work.
func TestLeaderElection(t *testing.T) {
	e := setup(t)
	cleanRuns(t, e.cs, "leader-a", "leader-b")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	a, stopA, doneA := startSchedulerAs(t, ctx, e.cs, e, "gavel", "leader", 600, "sched-a", nil)
	time.Sleep(3 * time.Second) // a takes the lease first
	b, stopB, doneB := startSchedulerAs(t, ctx, e.cs, e, "gavel", "leader", 600, "sched-b", nil)
	defer func() {
		stopB()
		<-doneB
	}()
	jobs := trace(t, e, 6, 3600, 100, 5)
	res, err := replay.Run(ctx, replay.Config{Client: e.cs, Jobs: jobs[:3], Table: e.table, Cluster: e.plat, Speedup: 600,
		Namespace: "default", Queue: "leader", Run: "leader-a", Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unfinished != 0 {
		t.Fatalf("%d jobs unfinished under the leader", res.Unfinished)
	}
	if a.Stats().Rounds == 0 || b.Stats().Rounds != 0 {
		t.Errorf("rounds: leader %d, follower %d; want only the leader's", a.Stats().Rounds, b.Stats().Rounds)
	}
	stopA()
	if err := <-doneA; err != nil {
		t.Errorf("leader: %v", err)
	}
	res, err = replay.Run(ctx, replay.Config{Client: e.cs, Jobs: jobs[3:], Table: e.table, Cluster: e.plat, Speedup: 600,
		Namespace: "default", Queue: "leader", Run: "leader-b", Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unfinished != 0 {
		t.Errorf("%d jobs unfinished after the leader left", res.Unfinished)
	}
	if b.Stats().Rounds == 0 {
		t.Error("the second scheduler did not take over")
	}
	l, err := e.cs.CoordinationV1().Leases("inlay-system").Get(ctx, "inlay-leader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "sched-b" {
		t.Errorf("lease holder %v, want sched-b", l.Spec.HolderIdentity)
	}
	account(t, e.cs, "default", "leader-a", jobs[:3])
	account(t, e.cs, "default", "leader-b", jobs[3:])
}

// TestMalformedAndForbidden: a Job with malformed inlay annotations gets a
// Warning Event, state invalid and the condition InlayInvalid (which the
// Job controller's own status updates keep) while good Jobs beside it
// finish; the scheduler's service account cannot do what its ClusterRole
// leaves out.
func TestMalformedAndForbidden(t *testing.T) {
	e := setup(t)
	cleanRuns(t, e.cs, "malformed", "malformed-ok")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Run the scheduler under its own service account.
	cfg, err := clientcmd.BuildConfigFromFlags("", saKubeconfig(t, ctx, e))
	if err != nil {
		t.Fatal(err)
	}
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		do   func() error
	}{
		{"delete a node", func() error { return sa.CoreV1().Nodes().Delete(ctx, nodes.NodeName("v100-0"), metav1.DeleteOptions{}) }},
		{"create a Job", func() error {
			_, err := sa.BatchV1().Jobs("default").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			return err
		}},
		{"read a secret", func() error { _, err := sa.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); return err }},
		{"update a Job", func() error {
			_, err := sa.BatchV1().Jobs("default").Update(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.UpdateOptions{})
			return err
		}},
		{"update a Job's status (it may only patch it)", func() error {
			_, err := sa.BatchV1().Jobs("default").UpdateStatus(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.UpdateOptions{})
			return err
		}},
		{"lease outside its namespace", func() error {
			_, err := sa.CoordinationV1().Leases("default").List(ctx, metav1.ListOptions{})
			return err
		}},
	} {
		if err := c.do(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", c.what, err)
		}
	}
	jobs := trace(t, e, 4, 3600, 200, 7)
	sch, stop, done := startScheduler(t, ctx, sa, e, "gavel", "faults", 600)
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("scheduler: %v", err)
		}
	}()
	cfgR := replay.Config{Client: e.cs, Table: e.table, Cluster: e.plat, Namespace: "default", Queue: "faults", Run: "malformed"}
	// The malformed Job names no scheduler, so the default kube-scheduler
	// binds its pods: they hold GPUs that inlay's policy must not hand to
	// the good Jobs (it once did, and a good Job waited for them).
	bad := replay.Object(&cfgR, &jobs[0])
	bad.Name = "malformed"
	bad.Annotations[jobspec.StepsAnno] = "lots"
	if _, err := e.cs.BatchV1().Jobs("default").Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(ctx, replay.Config{Client: e.cs, Jobs: jobs[1:], Table: e.table, Cluster: e.plat, Speedup: 600,
		Namespace: "default", Queue: "faults", Run: "malformed-ok", Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unfinished != 0 {
		t.Errorf("%d good jobs unfinished beside a malformed one", res.Unfinished)
		st := sch.Stats()
		t.Logf("scheduler: %d rounds, %d binds, %d placements no node could hold, %d rebuilds", st.Rounds, st.Binds, st.Waits, st.Rebuilds)
		dumpRun(t, e.cs, "malformed-ok")
		var buf bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
		for _, g := range strings.Split(buf.String(), "\n\n") {
			if strings.Contains(g, "kube/scheduler") {
				t.Log(g)
			}
		}
	}
	// The state annotation and the condition, written through the
	// service account's jobs/status patch.
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := e.cs.BatchV1().Jobs("default").Get(ctx, "malformed", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c, ok := cond(j, scheduler.InvalidCondition)
		if j.Annotations[jobspec.StateAnno] == jobspec.Invalid && ok {
			if !strings.Contains(j.Annotations[jobspec.ReasonAnno], "inlay.dev/steps") {
				t.Errorf("reason %q does not name the annotation", j.Annotations[jobspec.ReasonAnno])
			}
			if c.Status != corev1.ConditionTrue || c.Reason != "InvalidAnnotation" || !strings.Contains(c.Message, "inlay.dev/steps") {
				t.Errorf("condition %s=%s, reason %q, message %q; want True, InvalidAnnotation, naming inlay.dev/steps", c.Type, c.Status, c.Reason, c.Message)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("malformed Job: state %q, conditions %v; want invalid and %s", j.Annotations[jobspec.StateAnno], conditions(j), scheduler.InvalidCondition)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The Job controller's next status update keeps the condition.
	suspendedKeeps(t, ctx, e.cs, "malformed", scheduler.InvalidCondition)
	evs, err := e.cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=malformed"})
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, ev := range evs.Items {
		if ev.Type == corev1.EventTypeWarning && ev.Reason == "InvalidJob" {
			warned = true
		}
	}
	if !warned {
		t.Error("no Warning Event InvalidJob on the malformed Job")
	}
}

// TestReplayDefaultScheduler (INLAY_E2E_DEFAULT_SCHEDULER=1, make e2e)
// replays TestReplay's trace with the pods given to the default
// kube-scheduler: no policy, no gangs, no preemption. Every trace job is
// accounted for (finished, or counted unfinished when the time the inlay
// replay may take ran out), one Job object each; something finishes; no
// finished job beats its time alone on the fastest GPU type, and no
// run's figures are negative.
func TestReplayDefaultScheduler(t *testing.T) {
	if os.Getenv("INLAY_E2E_DEFAULT_SCHEDULER") != "1" {
		t.Skip("runs under make e2e (INLAY_E2E_DEFAULT_SCHEDULER=1)")
	}
	e := setup(t)
	res, _, jobs := externalReplay(t, e, "kube200", "default-scheduler", 2, nil)
	checkExternalReplay(t, e, "kube200", res, jobs)
}

// checkExternalReplay asserts what a replay under another scheduler must
// show: every trace job once, in the result and as one Job object; some
// finished; none faster than alone on its fastest GPU type.
func checkExternalReplay(t *testing.T, e *env, run string, res *sim.Result, jobs []job.Job) {
	t.Helper()
	if len(res.PerJob) != len(jobs) || res.Jobs+res.Unfinished != len(jobs) {
		t.Errorf("%d per-job results, %d finished + %d unfinished; want %d jobs accounted for", len(res.PerJob), res.Jobs, res.Unfinished, len(jobs))
	}
	if res.Jobs == 0 {
		t.Errorf("no job finished")
	}
	if res.AvgJCT < 0 || res.Makespan < 0 || res.Preemptions < 0 {
		t.Errorf("negative figures: avg JCT %g h, makespan %g h, %d preemptions", res.AvgJCT, res.Makespan, res.Preemptions)
	}
	list, err := e.cs.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{LabelSelector: replay.RunLabel + "=" + run})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, j := range list.Items {
		seen[j.Name]++
	}
	for i, j := range jobs {
		if n := seen[replay.JobName(run, j.ID)]; n != 1 {
			t.Errorf("trace job %d: %d Job objects", j.ID, n)
		}
		jr := res.PerJob[min(i, len(res.PerJob)-1)]
		if jr.ID != j.ID || jr.Finish < 0 {
			continue
		}
		row, err := e.table.Resolve(j.Type, j.GPUs)
		if err != nil {
			t.Fatal(err)
		}
		best := 0.0
		for g := range e.table.GPUs() {
			best = math.Max(best, e.table.Alone(row, g))
		}
		// The replay charges whole seconds of the control plane's
		// latency; 1 % covers the clock's rounding.
		if alone := j.Steps / best; jr.JCT < 0.99*alone {
			t.Errorf("trace job %d finished in %.0f s, faster than alone on its fastest GPU type (%.0f s)", j.ID, jr.JCT, alone)
		}
	}
}

// externalReplay replays TestReplay's trace as run with the pods given to
// the default kube-scheduler (after edit, when set, changes the replay's
// configuration), on the clock INLAY_E2E_LATENCY names, within slack times
// the simulator's gavel makespan (plus 5 minutes, 15 on the lockstep
// clock), logs the replay beside gavel in the simulator and returns both.
func externalReplay(t *testing.T, e *env, run, policy string, slack float64, edit func(*replay.Config)) (res, sr *sim.Result, jobs []job.Job) {
	t.Helper()
	cleanRuns(t, e.cs, run)
	jobs = trace(t, e, 200, 40, 20, 1)
	speedup := 1500.0
	if s := os.Getenv("INLAY_E2E_SPEEDUP"); s != "" {
		fmt.Sscan(s, &speedup)
	}
	pol, _ := registry.New("gavel", registry.Options{})
	sr, err := sim.Run(context.Background(), sim.Config{Sched: sched.Config{Round: 360, ResetInterval: 1920}}, jobs, e.plat, e.table, pol)
	if err != nil {
		t.Fatal(err)
	}
	limit := time.Duration(slack*sr.Makespan*3600/speedup*float64(time.Second)) + 5*time.Minute
	mode, clock, realTime := clockMode(t, speedup)
	if clock != nil {
		limit += 10 * time.Minute
	}
	wall := time.Now()
	cfg := replay.Config{Client: e.cs, Jobs: jobs, Table: e.table, Cluster: e.plat, Speedup: speedup,
		SchedulerName: "default-scheduler", Namespace: "default", Queue: run, Run: run, Policy: policy, Timeout: limit, Progress: progress(t),
		Clock: clock, RealTimeLatency: realTime}
	if edit != nil {
		edit(&cfg)
	}
	res, err = replay.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	held := time.Duration(0)
	if clock != nil {
		held = clock.Held()
	}
	t.Logf("%s: %d of %d jobs finished in %.0f s, clock held %.0f s (speedup %g, clock %s); avg JCT %.3f h, p90 %.3f h, makespan %.2f h; gavel in the simulator %.3f h, p90 %.3f h, makespan %.2f h",
		policy, res.Jobs, len(jobs), time.Since(wall).Seconds(), held.Seconds(), speedup, mode, res.AvgJCT, res.P90JCT, res.Makespan, sr.AvgJCT, sr.P90JCT, sr.Makespan)
	return res, sr, jobs
}

// clockMode reads the replay's clock from INLAY_E2E_LATENCY: real (the
// default: the latency from a decision to the pods charged at real
// speed); lockstep (make e2e: the scheduler and the replayer on one
// virtual clock that stands still while the control plane carries a round
// out, so the control plane's latency costs no virtual time); compressed
// (the latency multiplied by the speedup like the training: the replay
// before either).
func clockMode(t *testing.T, speedup float64) (string, *vclock.Clock, bool) {
	mode := os.Getenv("INLAY_E2E_LATENCY")
	switch mode {
	case "":
		mode = "real"
	case "real", "compressed":
	case "lockstep":
		c, err := vclock.New(speedup)
		if err != nil {
			t.Fatal(err)
		}
		return mode, c, false
	default:
		t.Fatalf("INLAY_E2E_LATENCY=%q: want real, lockstep or compressed", mode)
	}
	return mode, nil, mode == "real"
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	w := append([]float64(nil), v...)
	sort.Float64s(w)
	return w[len(w)/2]
}

// progress logs a replay's finished jobs every 15 s.
func progress(t *testing.T) func(done, total int) {
	last := time.Now()
	return func(done, total int) {
		if time.Since(last) > 15*time.Second {
			last = time.Now()
			t.Logf("%s: %d of %d jobs finished", time.Now().Format("15:04:05"), done, total)
		}
	}
}

// notReady takes a node from KWOK and marks it NotReady, as a node whose
// kubelet stopped would be.
func notReady(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) {
	patch := []byte(`{"metadata":{"annotations":{"kwok.x-k8s.io/node":null}}}`)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].Status = corev1.ConditionFalse
			n.Status.Conditions[i].Reason = "KubeletStopped"
			n.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
	}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func ready(t *testing.T, cs kubernetes.Interface, name string) {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{nodes.KWOKAnnotation: "fake"}}})
	if _, err := cs.CoreV1().Nodes().Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Log(err)
	}
}

// timeline collects a replay's transitions and reports where the time
// between a decision and the workload went.
type timeline struct {
	mu sync.Mutex
	tr []replay.Transition
}

func (tl *timeline) add(x replay.Transition) {
	tl.mu.Lock()
	tl.tr = append(tl.tr, x)
	tl.mu.Unlock()
}

// report logs, in real seconds, the medians and 90th percentiles of the
// latencies from a round's decision to the first pod bound and to the
// gang running, and from a preemption's decision to the pods stopping;
// the runs per job against the simulator's; and the wait from submission
// to the first run against the simulator's (virtual h).
func (tl *timeline) report(t *testing.T, speedup float64, clock *vclock.Clock, sr *sim.Result) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var toBind, toRun, toStop, undecided []float64
	runs := map[int]int{}
	submit, first := map[int]time.Time{}, map[int]time.Time{}
	lastBind := map[int]time.Time{}
	nUndecided := 0
	for _, x := range tl.tr {
		switch x.Kind {
		case "submitted":
			submit[x.ID] = x.At
		case "bound":
			lastBind[x.ID] = x.At
		case "running":
			runs[x.ID]++
			if _, ok := first[x.ID]; !ok {
				first[x.ID] = x.At
			}
			if x.Decided.IsZero() {
				nUndecided++
				continue
			}
			toRun = append(toRun, x.At.Sub(x.Decided).Seconds())
			if b, ok := lastBind[x.ID]; ok && !b.Before(x.Decided) {
				toBind = append(toBind, b.Sub(x.Decided).Seconds())
			}
		case "stopped":
			if !x.Decided.IsZero() {
				toStop = append(toStop, x.At.Sub(x.Decided).Seconds())
			} else {
				undecided = append(undecided, 0)
			}
		}
	}
	q := func(v []float64) string {
		if len(v) == 0 {
			return "none"
		}
		w := append([]float64(nil), v...)
		sort.Float64s(w)
		return fmt.Sprintf("median %.2f, p90 %.2f (n %d)", w[len(w)/2], w[len(w)*9/10], len(w))
	}
	t.Logf("decision → first pod bound: %s", q(toBind))
	t.Logf("decision → gang running: %s; %d starts without a decision seen", q(toRun), nUndecided)
	t.Logf("preemption decision → pods stopped: %s; %d stops without one (lost nodes, or seen late)", q(toStop), len(undecided))
	simRuns := map[int]int{}
	simWait := map[int]float64{}
	for _, jr := range sr.PerJob {
		simRuns[jr.ID] = len(jr.Spans)
		simWait[jr.ID] = jr.Start - jr.Arrival
	}
	var rr, wk, ws []float64
	for id, n := range runs {
		rr = append(rr, float64(n))
		if s, ok := submit[id]; ok {
			v := first[id].Sub(s).Seconds() * speedup
			if clock != nil {
				v = clock.At(first[id]) - clock.At(s)
			}
			wk = append(wk, v/3600)
			ws = append(ws, simWait[id]/3600)
		}
	}
	var sr2 []float64
	for _, n := range simRuns {
		sr2 = append(sr2, float64(n))
	}
	t.Logf("runs per job: replay %s, simulator %s; wait for the first run: replay %s virtual h, simulator %s", q(rr), q(sr2), q(wk), q(ws))
}
