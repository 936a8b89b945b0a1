// Package replay runs a job trace on a Kubernetes cluster of KWOK nodes:
// it creates one batch/v1 Job per trace job at its arrival time, compressed
// by a speedup, and plays the training workload, since KWOK's pods run
// nothing: when all pods of a Job run, it computes when they finish from the
// job's remaining steps and its throughput on the nodes' GPU type (the same
// table the simulator uses) and tells KWOK through the pods' annotation
// inlay.dev/finish-at; when the pods stop before (a preemption, a lost
// node) it records the steps made as the job's checkpoint
// (inlay.dev/steps-done), which a resumed job continues from.
//
// The report has the simulator's JSON shape (cluster/sim.Result), computed
// from the Jobs' annotations as read back from the API server.
package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/kube/scheduler"
	"github.com/inlay-dev/inlay/cluster/kube/vclock"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// Annotations the replayer writes on Jobs besides jobspec's.
const (
	// RunLabel names the replay a Job belongs to.
	RunLabel = "inlay.dev/replay"
	// StartedAnno and FinishedAnno are the wall times the workload first
	// ran and was seen complete.
	StartedAnno  = "inlay.dev/replay-started-at"
	FinishedAnno = "inlay.dev/replay-finished-at"
)

// Config configures a replay.
type Config struct {
	Client  kubernetes.Interface
	Jobs    []job.Job
	Table   *throughput.Table
	Cluster *chw.Platform
	// Speedup compresses time: a trace second lasts 1/Speedup s.
	Speedup float64
	// SchedulerName goes into the pods (inlay, or default-scheduler).
	SchedulerName string
	// Namespace for the Jobs (default "default"); Queue the
	// inlay.dev/queue label (default "default").
	Namespace, Queue string
	// Run names this replay (label inlay.dev/replay); default "replay".
	Run string
	// Labels are put on every Job besides inlay's (Kueue's queue name).
	Labels map[string]string
	// Suspend creates the Jobs suspended, for a queueing controller that
	// admits them by resuming them (Kueue, whose webhook would suspend
	// them on creation).
	Suspend bool
	// Policy names the policy in the report.
	Policy string
	// Timeout bounds the replay in real time (0: none); jobs not finished
	// by then are reported unfinished.
	Timeout  time.Duration
	Progress func(done, total int)
	Log      *slog.Logger
	// RealTimeLatency charges the time between a scheduler's decision and
	// the workload starting or stopping on it at real speed: a second of
	// it lasts one virtual second, as on a real cluster, instead of
	// Speedup. The decision is the Job's inlay.dev/decided-at (written by
	// inlay's scheduler with the suspend or before binding), or for a
	// start without one the first bind seen. The compression then
	// multiplies only the training, which the simulator models, not the
	// control plane's reaction time (the Job controller, the binding,
	// KWOK), which it does not.
	RealTimeLatency bool
	// Clock, when set, is the virtual clock shared with inlay's scheduler
	// in this process (its speedup replaces Speedup): the replay creates
	// the Jobs and ends the runs in its time, and holds it while a Job's
	// creation or completion reaches the API server; the scheduler holds
	// it while a round is carried out. RealTimeLatency is then moot.
	Clock *vclock.Clock
	// CreateParallel is how many Job creations may be in flight (default
	// 1). Under a high time compression arrivals come faster than one
	// request's latency on a loaded API server, and one at a time the
	// trace arrives late (BenchmarkScale uses 16); but arriving on time
	// into a control plane that cannot keep up lengthens every start (on
	// 2 loaded cores, TestReplay's 200 jobs at speedup 1500: JCT ratio
	// 10.2 with 16 against 1.8 with 1, one run each).
	CreateParallel int
	// Timeline, when set, is called with every transition the replay
	// sees (from its workers: it must not block).
	Timeline func(Transition)
}

// Transition is one step of a job's life as the replay saw it.
type Transition struct {
	Job  string
	ID   int
	Kind string // submitted, bound, running, stopped, ended
	// At is the wall time the replay saw it; Decided the scheduler's
	// decision it carries out (zero when unknown); Effective the wall
	// time the workload's clock counts it from (At, or with
	// RealTimeLatency the decision plus the latency at real speed).
	At, Decided, Effective time.Time
}

type run struct {
	pods []types.UID
	// start is when the workload's clock counts the run from; seen when
	// the gang was seen running; decided the decision it carried out.
	start, seen, decided time.Time
	// finishAt is when the run completes if not stopped before.
	finishAt  time.Time
	announced bool // finishAt is on the pods
	// With a clock: finishV is the virtual end; ending is set once the
	// clock reached it (the replay holds the clock until the Job is seen
	// complete).
	clocked, ending bool
	finishV         float64
	names           []string // the pods, for the late announcement
	rate            float64
	gpus            map[string]int // GPU type → GPUs
}

type emu struct {
	cfg   Config
	jobs  batchlisters.JobLister
	pods  corelisters.PodLister
	nodes corelisters.NodeLister
	podIx cache.Indexer
	queue workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	runs  map[string]*run
	done  map[string]float64 // steps done at the last stop
	gpuS  map[string]map[string]float64
	fin   map[string]bool
	endAt map[string]time.Time // when the training ended (before the Job is marked Complete)
	spec  map[string]*job.Job
	// lastSeen is when the job's last run was seen starting, lastEnd
	// where its clock stopped; boundAt the first bind seen since.
	lastSeen, lastEnd, boundAt map[string]time.Time
	holding                    map[string]time.Time // clock holds for ending runs, since
	// moving holds the clock, for a scheduler other than inlay's (which
	// holds it itself), while a job's pods are on their way: being
	// created, bindable but not bound, or bound but not yet running.
	moving map[string]time.Time
	// stuck: jobs whose transition outlasted 30 s; the clock no longer
	// waits for them until they run.
	stuck map[string]bool
}

// foreign reports whether the replay holds the clock for another
// scheduler's transitions.
func (e *emu) foreign() bool {
	return e.cfg.Clock != nil && e.cfg.SchedulerName != jobspec.SchedulerName
}

// setMoving holds or releases the clock for a job's transition (under mu).
func (e *emu) setMoving(name string, on bool) {
	_, held := e.moving[name]
	switch {
	case on && !held && !e.stuck[name]:
		e.cfg.Clock.Hold()
		e.moving[name] = time.Now()
	case !on && held:
		delete(e.moving, name)
		e.cfg.Clock.Release()
	}
}

// inTransit reports whether a Job's pods are on their way to running:
// fewer live pods than its gang (the Job controller creates them), a pod
// that fits a node but is not bound yet (the scheduler has not got to
// it), or one bound and not running yet.
func (e *emu) inTransit(j *batchv1.Job, objs []any) bool {
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return false
	}
	live := 0
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if !jobspec.OwnedBy(p, j.UID) || p.DeletionTimestamp != nil || !jobspec.Live(p) {
			continue
		}
		live++
		if p.Spec.NodeName == "" {
			if e.fitsSomewhere(p) {
				return true
			}
		} else if p.Status.Phase != corev1.PodRunning {
			return true
		}
	}
	return live < jobspec.Gang(j)
}

// fitsSomewhere reports whether a pod's requests fit beside the replay's
// live bound pods on some Ready, schedulable, untainted node.
func (e *emu) fitsSomewhere(p *corev1.Pod) bool {
	used := map[string]jobspec.Requests{}
	for _, o := range e.podIx.List() {
		q := o.(*corev1.Pod)
		if q.Spec.NodeName == "" || !jobspec.Live(q) {
			continue
		}
		u := used[q.Spec.NodeName]
		u.Add(jobspec.PodRequests(&q.Spec))
		used[q.Spec.NodeName] = u
	}
	want := jobspec.PodRequests(&p.Spec)
	list, _ := e.nodes.List(labels.Everything())
	for _, n := range list {
		if !nodes.Ready(n) || n.Spec.Unschedulable || len(n.Spec.Taints) > 0 {
			continue
		}
		u := used[n.Name]
		al := n.Status.Allocatable
		cpu, mem := al[corev1.ResourceCPU], al[corev1.ResourceMemory]
		if u.GPUs+want.GPUs <= int64(nodes.GPUs(n)) && u.MilliCPU+want.MilliCPU <= float64(cpu.MilliValue()) && u.Memory+want.Memory <= mem.Value() {
			return true
		}
	}
	return false
}

// span is the virtual seconds from a to b.
func (e *emu) span(a, b time.Time) float64 {
	if e.cfg.Clock != nil {
		return e.cfg.Clock.At(b) - e.cfg.Clock.At(a)
	}
	return b.Sub(a).Seconds() * e.cfg.Speedup
}

// release ends the clock hold for a job's ending run, if any (under mu).
func (e *emu) release(name string) {
	if _, ok := e.holding[name]; ok {
		delete(e.holding, name)
		e.cfg.Clock.Release()
	}
}

// finisher ends clocked runs when the clock reaches their end: it holds
// the clock and has the sync tell KWOK to complete the pods now. A hold
// not released in 30 s (the API server away) is released here.
func (e *emu) finisher(ctx context.Context) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var due []string
		e.mu.Lock()
		v := e.cfg.Clock.Now()
		for name, r := range e.runs {
			if r.clocked && !r.ending && r.rate > 0 && v >= r.finishV {
				r.ending = true
				r.finishAt = e.cfg.Clock.Wall(r.finishV)
				if _, ok := e.holding[name]; !ok {
					e.cfg.Clock.Hold()
					e.holding[name] = time.Now()
				}
				due = append(due, name)
			}
		}
		for name, since := range e.holding {
			if time.Since(since) > 30*time.Second {
				e.release(name)
			}
		}
		for name, since := range e.moving {
			if time.Since(since) > 30*time.Second {
				e.setMoving(name, false)
				e.stuck[name] = true
			}
		}
		e.mu.Unlock()
		sort.Strings(due)
		for _, name := range due {
			e.queue.Add(name)
		}
	}
}

func (e *emu) note(name, kind string, at, decided, eff time.Time) {
	if e.cfg.Timeline == nil {
		return
	}
	id := -1
	if sp := e.spec[name]; sp != nil {
		id = sp.ID
	}
	e.cfg.Timeline(Transition{Job: name, ID: id, Kind: kind, At: at, Decided: decided, Effective: eff})
}

// charge is when the workload's clock counts a transition seen at now
// that carries out a decision taken at decided (zero: unknown): now,
// or with RealTimeLatency the decision plus the latency at real speed.
func (e *emu) charge(decided, now time.Time) time.Time {
	if !e.cfg.RealTimeLatency || e.cfg.Clock != nil || decided.IsZero() || decided.After(now) {
		return now
	}
	lat := now.Sub(decided)
	return decided.Add(time.Duration(float64(lat) / e.cfg.Speedup))
}

// decidedAt is the time of the latest decision carried out on the Job or
// on its pods: a suspend or resume writes it on the Job, a Binding on the
// pod it binds.
func decidedAt(j *batchv1.Job, pods ...*corev1.Pod) time.Time {
	t, _ := jobspec.ParseTime(j.Annotations[scheduler.DecidedAtAnno])
	for _, p := range pods {
		if u, ok := jobspec.ParseTime(p.Annotations[scheduler.DecidedAtAnno]); ok && u.After(t) {
			t = u
		}
	}
	return t
}

// PerPod is the GPUs of each pod of a job of g GPUs on cluster c: the
// largest divisor of g that fits a server of every GPU type.
func PerPod(g int, c *chw.Platform) int {
	limit := g
	for _, t := range c.Types() {
		limit = min(limit, c.MaxGPUsPerNode(t))
	}
	for k := max(limit, 1); k > 1; k-- {
		if g%k == 0 {
			return k
		}
	}
	return 1
}

// JobName is the Kubernetes name of trace job id in replay run: the run's
// name keeps two replays in one namespace apart.
func JobName(run string, id int) string { return fmt.Sprintf("%s-%05d", run, id) }

// Object builds the Job for a trace job.
func Object(cfg *Config, j *job.Job) *batchv1.Job {
	k := PerPod(j.GPUs, cfg.Cluster)
	pods := int32(j.GPUs / k)
	cpu := j.CPUs * float64(k)
	if cpu <= 0 {
		cpu = 0.1
	}
	mem := j.MemoryGiB * float64(k)
	if mem <= 0 {
		mem = 0.25
	}
	backoff := int32(1000)
	lbl := map[string]string{jobspec.QueueLabel: cfg.Queue, RunLabel: cfg.Run}
	jobLbl := map[string]string{}
	for k, v := range cfg.Labels {
		jobLbl[k] = v
	}
	for k, v := range lbl {
		jobLbl[k] = v
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: JobName(cfg.Run, j.ID), Namespace: cfg.Namespace, Labels: jobLbl,
			Annotations: map[string]string{
				jobspec.TypeAnno: j.Type, jobspec.StepsAnno: strconv.FormatFloat(j.Steps, 'g', -1, 64),
				jobspec.WeightAnno:  strconv.FormatFloat(j.PriorityWeight(), 'g', -1, 64),
				jobspec.ArrivalAnno: strconv.FormatFloat(j.Arrival, 'g', -1, 64), jobspec.TraceIDAnno: strconv.Itoa(j.ID),
			}},
		Spec: batchv1.JobSpec{
			Parallelism: &pods, Completions: &pods, BackoffLimit: &backoff, Suspend: ptr(cfg.Suspend),
			// The pods of a training job end together: the first that
			// succeeds completes the Job (and a preemption never leaves a
			// part of the gang succeeded).
			CompletionMode: ptr(batchv1.IndexedCompletion),
			SuccessPolicy:  &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr(int32(1))}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{
					SchedulerName: cfg.SchedulerName, RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "train", Image: "registry.invalid/inlay/train:v1",
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(cpu*1000), resource.DecimalSI),
								corev1.ResourceMemory: *resource.NewQuantity(int64(mem*(1<<30)), resource.BinarySI),
								jobspec.GPUResource:   *resource.NewQuantity(int64(k), resource.DecimalSI),
							},
							Limits: corev1.ResourceList{jobspec.GPUResource: *resource.NewQuantity(int64(k), resource.DecimalSI)},
						},
					}},
				},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// runSelector selects the objects of run (label RunLabel).
func runSelector(run string) string {
	return labels.SelectorFromSet(labels.Set{RunLabel: run}).String()
}

// runInformers returns a replay's informer factories: fac for the Jobs
// and pods of run (label RunLabel) in namespace ns, nfac for the nodes.
func runInformers(cs kubernetes.Interface, ns, run string) (fac, nfac informers.SharedInformerFactory) {
	sel := runSelector(run)
	fac = informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel }))
	return fac, informers.NewSharedInformerFactory(cs, 0)
}

// startAndSync starts the factories, then waits for their caches to sync
// (or for ctx to end).
func startAndSync(ctx context.Context, facs ...informers.SharedInformerFactory) {
	for _, f := range facs {
		f.Start(ctx.Done())
	}
	for _, f := range facs {
		f.WaitForCacheSync(ctx.Done())
	}
}

// Run replays the trace and returns the report.
func Run(ctx context.Context, cfg Config) (*sim.Result, error) {
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.Queue == "" {
		cfg.Queue = "default"
	}
	if cfg.Run == "" {
		cfg.Run = "replay"
	}
	if cfg.SchedulerName == "" {
		cfg.SchedulerName = jobspec.SchedulerName
	}
	if cfg.Clock != nil {
		cfg.Speedup = cfg.Clock.Speedup()
	}
	if !(cfg.Speedup > 0) || math.IsInf(cfg.Speedup, 0) {
		return nil, fmt.Errorf("replay: speedup must be positive, got %g", cfg.Speedup)
	}
	if len(cfg.Jobs) == 0 {
		return nil, fmt.Errorf("replay: no jobs")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	e := &emu{cfg: cfg, runs: map[string]*run{}, done: map[string]float64{}, gpuS: map[string]map[string]float64{}, fin: map[string]bool{}, endAt: map[string]time.Time{}, spec: map[string]*job.Job{},
		lastSeen: map[string]time.Time{}, lastEnd: map[string]time.Time{}, boundAt: map[string]time.Time{}, holding: map[string]time.Time{}, moving: map[string]time.Time{}, stuck: map[string]bool{}}
	defer func() {
		e.mu.Lock()
		for name := range e.holding {
			e.release(name)
		}
		for name := range e.moving {
			e.setMoving(name, false)
		}
		e.mu.Unlock()
	}()
	fac, nfac := runInformers(cfg.Client, cfg.Namespace, cfg.Run)
	jobInf, podInf := fac.Batch().V1().Jobs(), fac.Core().V1().Pods()
	e.jobs, e.pods, e.nodes = jobInf.Lister(), podInf.Lister(), nfac.Core().V1().Nodes().Lister()
	_ = podInf.Informer().AddIndexers(cache.Indexers{"job": func(o any) ([]string, error) {
		if p, ok := o.(*corev1.Pod); ok {
			if n := p.Labels["batch.kubernetes.io/job-name"]; n != "" {
				return []string{n}, nil
			}
		}
		return nil, nil
	}})
	e.podIx = podInf.Informer().GetIndexer()
	// Retries back off to 5 s at most: the workload's clock does not wait.
	e.queue = workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](20*time.Millisecond, 5*time.Second))
	defer e.queue.ShutDown()
	enq := func(o any) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		switch x := o.(type) {
		case *batchv1.Job:
			e.queue.Add(x.Name)
		case *corev1.Pod:
			if n := x.Labels["batch.kubernetes.io/job-name"]; n != "" {
				e.queue.Add(n)
			}
		}
	}
	h := cache.ResourceEventHandlerFuncs{AddFunc: enq, UpdateFunc: func(_, n any) { enq(n) }, DeleteFunc: enq}
	if _, err := jobInf.Informer().AddEventHandler(h); err != nil {
		return nil, err
	}
	if _, err := podInf.Informer().AddEventHandler(h); err != nil {
		return nil, err
	}
	startAndSync(wctx, fac, nfac)
	for i := range cfg.Jobs {
		e.spec[JobName(cfg.Run, cfg.Jobs[i].ID)] = &cfg.Jobs[i]
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, quit := e.queue.Get()
				if quit {
					return
				}
				if err := e.sync(wctx, key); err != nil {
					if wctx.Err() == nil {
						cfg.Log.Warn("replay: workload sync failed; retrying", "job", key, "err", err)
					}
					e.queue.AddRateLimited(key)
				} else {
					e.queue.Forget(key)
				}
				e.queue.Done(key)
			}
		}()
	}
	if cfg.Clock != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.finisher(wctx)
		}()
	}
	// Create the Jobs at their arrival times.
	start := time.Now()
	var v0 float64
	if cfg.Clock != nil {
		v0 = cfg.Clock.Now()
	}
	t0 := cfg.Jobs[0].Arrival
	createErr := make(chan error, 1)
	go func() {
		// Up to CreateParallel creations in flight.
		sem := make(chan struct{}, max(cfg.CreateParallel, 1))
		var cwg sync.WaitGroup
		var errMu sync.Mutex
		var firstErr error
		failed := func() bool {
			errMu.Lock()
			defer errMu.Unlock()
			return firstErr != nil
		}
		defer func() {
			cwg.Wait()
			createErr <- firstErr
		}()
		for i := range cfg.Jobs {
			j := &cfg.Jobs[i]
			if failed() {
				return
			}
			if cfg.Clock != nil {
				if cfg.Clock.Until(wctx, v0+j.Arrival-t0) != nil {
					return
				}
				// The clock waits for the Job to reach the API server and
				// the informers (the simulator adds it at its arrival).
				cfg.Clock.Hold()
			} else {
				at := start.Add(time.Duration((j.Arrival - t0) / cfg.Speedup * float64(time.Second)))
				select {
				case <-time.After(time.Until(at)):
				case <-wctx.Done():
					return
				}
			}
			select {
			case sem <- struct{}{}:
			case <-wctx.Done():
				if cfg.Clock != nil {
					cfg.Clock.Release()
				}
				return
			}
			cwg.Add(1)
			go func() {
				defer cwg.Done()
				err := e.create(wctx, j)
				if cfg.Clock != nil {
					cfg.Clock.Release()
				}
				<-sem
				if err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
				}
			}()
		}
	}()
	// Wait for every Job to finish.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var runErr error
wait:
	for {
		select {
		case err := <-createErr:
			if err != nil {
				runErr = err
				break wait
			}
			createErr = nil
		case <-wctx.Done():
			break wait
		case <-tick.C:
		}
		e.mu.Lock()
		n := len(e.fin)
		e.mu.Unlock()
		if cfg.Progress != nil {
			cfg.Progress(n, len(cfg.Jobs))
		}
		if n == len(cfg.Jobs) {
			break
		}
	}
	// Let the last annotations land before reading the objects back.
	stop()
	e.queue.ShutDown()
	wg.Wait()
	if runErr != nil {
		return nil, runErr
	}
	rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := cfg.Client.BatchV1().Jobs(cfg.Namespace).List(rctx, metav1.ListOptions{LabelSelector: runSelector(cfg.Run)})
	if err != nil {
		return nil, fmt.Errorf("replay: read the Jobs back: %w", err)
	}
	return Report(cfg, list.Items)
}

// create submits trace job j (retrying while the API server is away) and,
// with a clock, waits until the replay's informer has it.
func (e *emu) create(ctx context.Context, j *job.Job) error {
	cfg := &e.cfg
	obj := Object(cfg, j)
	sub := time.Now()
	obj.Annotations[jobspec.SubmittedAtAnno] = jobspec.FormatTime(sub)
	e.note(obj.Name, "submitted", sub, time.Time{}, sub)
	return submit(ctx, cfg.Client, e.jobs, obj, cfg.Clock != nil)
}

// submit creates a Job, retrying while the API server is away (an
// invalid or forbidden one is an error; an ended ctx is not), and with
// wait, waits until the informer behind jobs has it (at most 5 s).
func submit(ctx context.Context, cs kubernetes.Interface, jobs batchlisters.JobLister, obj *batchv1.Job, wait bool) error {
	for {
		_, err := cs.BatchV1().Jobs(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) {
			return fmt.Errorf("replay: create %s: %w", obj.Name, err)
		}
		time.Sleep(200 * time.Millisecond) // the API server is away: try again
	}
	if wait {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(2 * time.Millisecond) {
			if _, err := jobs.Jobs(obj.Namespace).Get(obj.Name); err == nil {
				break
			}
		}
	}
	return nil
}

// sync plays one Job's workload.
func (e *emu) sync(ctx context.Context, name string) error {
	j, err := e.jobs.Jobs(e.cfg.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	spec := e.spec[name]
	if spec == nil {
		return nil
	}
	e.mu.Lock()
	if e.fin[name] {
		e.mu.Unlock()
		return nil
	}
	r := e.runs[name]
	e.mu.Unlock()
	now := time.Now()
	objs, _ := e.podIx.ByIndex("job", name)
	if r != nil {
		for _, o := range objs {
			if p := o.(*corev1.Pod); jobspec.OwnedBy(p, j.UID) && p.Status.Phase == corev1.PodSucceeded {
				// The training ended (KWOK completed a pod at the run's
				// finish time): the Job controller's bookkeeping after
				// that is not the job's.
				end := now
				if r.finishAt.Before(end) {
					end = r.finishAt
				}
				e.stop(name, r, end, spec, true)
				e.mu.Lock()
				e.endAt[name] = end
				e.mu.Unlock()
				e.note(name, "ended", now, time.Time{}, end)
				r = nil
				break
			}
		}
	}
	if done, _ := jobspec.Done(j); done {
		end := now
		e.mu.Lock()
		if t, ok := e.endAt[name]; ok {
			end = t
		}
		e.mu.Unlock()
		a := map[string]string{FinishedAnno: jobspec.FormatTime(end)}
		if r != nil {
			e.stop(name, r, now, spec, true)
		}
		e.mu.Lock()
		a[jobspec.StepsDoneAnno] = strconv.FormatFloat(spec.Steps, 'f', 1, 64)
		a[jobspec.GPUSecondsAnno] = formatGPUSeconds(e.gpuS[name])
		e.mu.Unlock()
		if err := patchJob(ctx, e.cfg.Client, j, a); err != nil {
			return err
		}
		e.mu.Lock()
		e.fin[name] = true
		if e.cfg.Clock != nil {
			e.release(name)
			if e.foreign() {
				e.setMoving(name, false)
			}
		}
		e.mu.Unlock()
		return nil
	}
	var running []*corev1.Pod
	alive := map[types.UID]bool{}
	bound := false
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if !jobspec.OwnedBy(p, j.UID) {
			continue
		}
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" && jobspec.Live(p) {
			bound = true
		}
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" && e.nodeReady(p.Spec.NodeName) {
			running = append(running, p)
			alive[p.UID] = true
		}
	}
	if r == nil && bound {
		e.mu.Lock()
		_, seen := e.boundAt[name]
		if !seen {
			e.boundAt[name] = now
		}
		e.mu.Unlock()
		if !seen {
			e.note(name, "bound", now, time.Time{}, now)
		}
	} else if r == nil {
		e.mu.Lock()
		delete(e.boundAt, name) // a bind that never ran (preempted first)
		e.mu.Unlock()
	}
	pods := jobspec.Gang(j)
	e.mu.Lock()
	_, ended := e.endAt[name]
	if ended && pods > 0 && len(running) >= pods {
		// The training had ended, but the pod that succeeded was being
		// deleted by a suspension at that moment and the Job controller
		// did not count it: the resumed gang has no steps left.
		delete(e.endAt, name)
		ended = false
	}
	if e.foreign() {
		if r != nil {
			delete(e.stuck, name)
		}
		e.setMoving(name, !ended && r == nil && e.inTransit(j, objs))
	}
	e.mu.Unlock()
	if ended {
		return nil // waiting for the Job controller to mark it Complete
	}
	if r != nil {
		for _, u := range r.pods {
			if !alive[u] {
				// The run ended before finishing: checkpoint. A stop the
				// scheduler decided after this run's start counts from
				// its decision.
				var dec time.Time
				if d := decidedAt(j); d.After(r.decided) && (!r.decided.IsZero() || d.After(r.seen)) {
					dec = d
				}
				end := e.charge(dec, now)
				if end.Before(r.start) {
					end = r.start
				}
				e.stop(name, r, end, spec, false)
				e.note(name, "stopped", now, dec, end)
				e.mu.Lock()
				if e.cfg.Clock != nil {
					e.release(name)
				}
				a := map[string]string{jobspec.StepsDoneAnno: strconv.FormatFloat(e.done[name], 'f', 1, 64), jobspec.GPUSecondsAnno: formatGPUSeconds(e.gpuS[name])}
				e.mu.Unlock()
				if err := patchJob(ctx, e.cfg.Client, j, a); err != nil {
					return err
				}
				r = nil
				break
			}
		}
		if r != nil && (r.announced || (r.clocked && !r.ending)) {
			return nil
		}
	}
	if r != nil {
		// The run started but telling KWOK its end failed (the API
		// server was away): tell it again, with the same end.
		return e.announce(ctx, r, running)
	}
	if pods == 0 || len(running) < pods {
		return nil
	}
	// All pods run: start a run and tell KWOK when it ends. Its clock
	// starts at the decision it carries out (one taken after the last run
	// started, or else the first bind seen), plus the latency at real
	// speed with RealTimeLatency, never before the last run's end.
	e.mu.Lock()
	dec := decidedAt(j, running...)
	if !dec.After(e.lastSeen[name]) {
		dec = e.boundAt[name]
	}
	start := e.charge(dec, now)
	if start.Before(e.lastEnd[name]) {
		start = e.lastEnd[name]
	}
	if start.After(now) {
		start = now
	}
	e.lastSeen[name] = now
	delete(e.boundAt, name)
	e.mu.Unlock()
	e.note(name, "running", now, dec, start)
	rate, gpus := e.rate(spec, running)
	nr := &run{start: start, seen: now, decided: dec, rate: rate, gpus: gpus, finishAt: now.Add(24 * 365 * time.Hour)}
	for _, p := range running {
		nr.pods = append(nr.pods, p.UID)
	}
	e.mu.Lock()
	e.runs[name] = nr
	left := spec.Steps - e.done[name]
	e.mu.Unlock()
	if j.Annotations[StartedAnno] == "" {
		if err := patchJob(ctx, e.cfg.Client, j, map[string]string{StartedAnno: jobspec.FormatTime(start)}); err != nil {
			return err
		}
	}
	if rate <= 0 {
		e.cfg.Log.Warn("replay: job cannot run on its GPUs; it will not finish", "job", name, "gpus", fmt.Sprint(gpus))
		return nil
	}
	if e.cfg.Clock != nil {
		// The finisher ends the run when the clock reaches its end.
		e.mu.Lock()
		nr.clocked = true
		nr.finishV = e.cfg.Clock.At(start) + math.Max(left, 0)/rate
		for _, p := range running {
			nr.names = append(nr.names, p.Name)
		}
		e.mu.Unlock()
		return nil
	}
	at := start.Add(time.Duration(math.Max(left, 0) / rate / e.cfg.Speedup * float64(time.Second)))
	e.mu.Lock()
	nr.finishAt = at
	e.mu.Unlock()
	return e.announce(ctx, nr, running)
}

// announce writes a run's end on its pods, for KWOK's stage.
func (e *emu) announce(ctx context.Context, r *run, running []*corev1.Pod) error {
	e.mu.Lock()
	at := r.finishAt
	e.mu.Unlock()
	names := r.names
	if len(names) == 0 {
		for _, p := range running {
			names = append(names, p.Name)
		}
	}
	for _, n := range names {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{controlplane.FinishAnnotation: jobspec.FormatTime(at)}}})
		if _, err := e.cfg.Client.CoreV1().Pods(e.cfg.Namespace).Patch(ctx, n, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	e.mu.Lock()
	r.announced = true
	e.mu.Unlock()
	return nil
}

func (e *emu) nodeReady(n string) bool {
	node, err := e.nodes.Get(n)
	return err == nil && nodes.Ready(node)
}

// stop ends a run at now: steps and GPU-seconds made.
func (e *emu) stop(name string, r *run, now time.Time, spec *job.Job, finished bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := sched.Stretch{Length: e.span(r.start, now), Rate: r.rate, Remaining: math.Max(spec.Steps-e.done[name], 0), Total: spec.Steps}
	p := sched.Account(st)
	// A finished run held its GPUs until its last step; one stopped
	// early, until now.
	dt := st.Length
	if finished && r.rate > 0 {
		dt = math.Min(dt, p.Ran(st))
	}
	e.done[name] = math.Min(spec.Steps, e.done[name]+p.Steps)
	e.lastEnd[name] = now
	if e.gpuS[name] == nil {
		e.gpuS[name] = map[string]float64{}
	}
	for g, n := range r.gpus {
		e.gpuS[name][g] += dt * float64(n)
	}
	delete(e.runs, name)
}

// rate is the job's steps/s on the pods' nodes: the slowest GPU type's
// (data-parallel steps wait for the slowest worker), spread over servers
// when the pods are on more than one although one server of the type
// could hold the job; a job larger than any server of its type gets the
// table's figure, as the simulator and the mechanism charge it (Gavel's
// convention: they have no consolidated choice).
func (e *emu) rate(spec *job.Job, pods []*corev1.Pod) (float64, map[string]int) {
	row, err := e.cfg.Table.Resolve(spec.Type, spec.GPUs)
	gpus := map[string]int{}
	srv := map[string]bool{}
	rate := math.Inf(1)
	for _, p := range pods {
		srv[p.Spec.NodeName] = true
		g := ""
		if n, err := e.nodes.Get(p.Spec.NodeName); err == nil {
			g = nodes.GPUType(n, e.cfg.Table.GPUs())
		}
		gpus[g] += int(jobspec.PodRequests(&p.Spec).GPUs)
	}
	if err != nil {
		return 0, gpus
	}
	for g := range gpus {
		c := e.cfg.Table.GPUIndex(g)
		if c < 0 {
			return 0, gpus
		}
		r := e.cfg.Table.Alone(row, c)
		if len(srv) > 1 && spec.GPUs <= e.cfg.Cluster.MaxGPUsPerNode(g) {
			r = e.cfg.Table.Spread(row, c)
		}
		rate = math.Min(rate, r)
	}
	if math.IsInf(rate, 1) {
		rate = 0
	}
	return rate, gpus
}

func patchJob(ctx context.Context, cs kubernetes.Interface, j *batchv1.Job, a map[string]string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": a}})
	_, err := cs.BatchV1().Jobs(j.Namespace).Patch(ctx, j.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func formatGPUSeconds(m map[string]float64) string {
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%.1f", k, m[k])
	}
	return b.String()
}

func parseGPUSeconds(s string) map[string]float64 {
	out := map[string]float64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if f, err := strconv.ParseFloat(v, 64); ok && err == nil {
			out[k] += f
		}
	}
	return out
}

// span is the virtual seconds from wall a to wall b: on the clock, or
// compressed by the speedup.
func (cfg *Config) span(a, b time.Time) float64 {
	if cfg.Clock != nil {
		return cfg.Clock.At(b) - cfg.Clock.At(a)
	}
	return b.Sub(a).Seconds() * cfg.Speedup
}

// Report computes the simulator's metrics from the replay's Jobs: times
// in trace seconds, (wall − submission) × speedup after each job's arrival.
func Report(cfg Config, items []batchv1.Job) (*sim.Result, error) {
	res := &sim.Result{Policy: cfg.Policy, Cluster: cfg.Cluster.Name, Utilization: map[string]float64{}, GPUCount: map[string]int{}}
	byID := map[int]*batchv1.Job{}
	for i := range items {
		id, err := strconv.Atoi(items[i].Annotations[jobspec.TraceIDAnno])
		if err == nil {
			byID[id] = &items[i]
		}
	}
	busy := map[string]float64{}
	type iv struct{ a, f float64 }
	var ivs []iv
	for _, j := range cfg.Jobs {
		jr := sim.JobResult{ID: j.ID, Type: j.Type, GPUs: j.GPUs, Arrival: j.Arrival, Start: -1, Finish: -1, JCT: -1}
		if k := byID[j.ID]; k != nil {
			sub, okSub := jobspec.ParseTime(k.Annotations[jobspec.SubmittedAtAnno])
			if st, ok := jobspec.ParseTime(k.Annotations[StartedAnno]); ok && okSub {
				jr.Start = j.Arrival + cfg.span(sub, st)
			}
			if fin, ok := jobspec.ParseTime(k.Annotations[FinishedAnno]); ok && okSub {
				if done, succeeded := jobspec.Done(k); done && succeeded {
					jr.JCT = cfg.span(sub, fin)
					jr.Finish = j.Arrival + jr.JCT
				}
			}
			for g, v := range parseGPUSeconds(k.Annotations[jobspec.GPUSecondsAnno]) {
				busy[g] += v
			}
			if p, err := strconv.Atoi(k.Annotations[jobspec.PreemptionsAnno]); err == nil {
				res.Preemptions += p
			}
		}
		if jr.Finish >= 0 {
			ivs = append(ivs, iv{j.Arrival, jr.Finish})
		} else {
			res.Unfinished++
		}
		res.PerJob = append(res.PerJob, jr)
	}
	res.Window = [2]int{0, len(cfg.Jobs) - 1}
	for _, g := range cfg.Cluster.Types() {
		res.GPUCount[g] = cfg.Cluster.Count(g)
	}
	var jcts, ftfs []float64
	first, last := math.Inf(1), math.Inf(-1)
	for i := range res.PerJob {
		jr := &res.PerJob[i]
		first = math.Min(first, jr.Arrival)
		if jr.Finish < 0 {
			continue
		}
		last = math.Max(last, jr.Finish)
		jcts = append(jcts, jr.JCT)
		// Mean active jobs over the job's life, from the finished jobs'
		// intervals.
		integral := 0.0
		for _, o := range ivs {
			integral += math.Max(0, math.Min(o.f, jr.Finish)-math.Max(o.a, jr.Arrival))
		}
		n := integral / math.Max(jr.JCT, 1e-9)
		j := cfg.Jobs[i]
		row, err := cfg.Table.Resolve(j.Type, j.GPUs)
		if err != nil {
			continue
		}
		var counts []int
		var alone []float64
		for _, g := range cfg.Cluster.Types() {
			if c := cfg.Table.GPUIndex(g); c >= 0 {
				counts = append(counts, cfg.Cluster.Count(g))
				alone = append(alone, cfg.Table.Alone(row, c))
			}
		}
		if iso := sched.IsolatedTime(j.Steps, j.GPUs, n, counts, alone); iso > 0 {
			jr.FTF = jr.JCT / iso
			ftfs = append(ftfs, jr.FTF)
		}
	}
	res.SetJCTs(jcts, ftfs)
	if last > first {
		res.Makespan = (last - first) / 3600
		for g, n := range res.GPUCount {
			res.Utilization[g] = busy[g] / (float64(n) * (last - first))
		}
	}
	return res, nil
}
