// Package scheduler is inlay's scheduler for deep-learning training Jobs on
// Kubernetes. It drives the same round-based mechanism (cluster/sched) and
// policies as `inlay cluster simulate`, in real time:
//
//   - Every round (the mechanism's round length, in virtual seconds,
//     divided by the speedup), it accounts the round that ended (steps made
//     at each job's rate on its GPU type, or the progress the workload
//     reported in inlay.dev/steps-done), adds the Jobs that arrived, drops
//     the ones that finished, and asks the mechanism for the next round.
//   - The round's decisions become desired states, one per Job; workers
//     reconcile each Job toward it through a rate-limited work queue:
//     binding all its pods at once through the Binding subresource (a gang:
//     all or none), suspending it (spec.suspend) when it is preempted or
//     moved and resuming it when it runs again, so a Job keeps its identity
//     across rounds.
//   - Every decision is an Event on the Job, and its state is in the Job's
//     annotations (package jobspec) and in its status conditions
//     InlayScheduled and, for malformed annotations, InlayInvalid.
//
// Nodes are read as GPU servers (package nodes): only Ready, schedulable
// nodes of a known GPU type, without taints the scheduler is not told to
// tolerate, enter the cluster the policy sees; a pod is bound only where
// its requests fit beside every pod already there (KWOK enforces nothing)
// and it tolerates the node's taints, and beside the pods whose binding
// this scheduler has sent but its informer not yet shown. State lives in
// the API server: a restarted scheduler rebuilds it from the Jobs'
// annotations and the pods' bindings (a gang left half-bound by a
// scheduler killed in its bindings is completed or suspended like any
// other whose pods sit where the round does not want them).
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/inlay-dev/inlay/cluster/adapt"
	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/kube/vclock"
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// Config configures a scheduler.
type Config struct {
	Client kubernetes.Interface
	Policy policy.Policy
	Table  *throughput.Table
	// Sched is the mechanism's configuration; its Round is in virtual
	// seconds.
	Sched sched.Config
	// Speedup is how many virtual seconds pass in one real second (1 on a
	// real cluster; a replay compresses time).
	Speedup float64
	// Queue is the inlay.dev/queue label value served ("" : any).
	Queue string
	// Namespace limits the Jobs served ("" : all namespaces).
	Namespace string
	// TolerateTaints are taint keys that do not keep a node out of the
	// cluster the policy sees (pods must still tolerate them to be bound
	// there).
	TolerateTaints []string
	// Workers reconcile Jobs in parallel (default 8).
	Workers int
	// StatusEvery is how many rounds pass between progress annotations of
	// a running Job (default 5; state changes are written at once).
	StatusEvery int
	// StatusInterval is the least wall time between two progress
	// annotations of a Job (default 10 s): under a time compression a
	// round lasts a fraction of a second, and thousands of running Jobs
	// patched every few rounds would flood the API server.
	StatusInterval time.Duration
	// StatusRate bounds the progress annotations of running Jobs to about
	// this many writes a second in all (default 20): with thousands of
	// Jobs running, each Job's interval grows beyond StatusInterval to
	// running Jobs / StatusRate seconds, so progress never crowds out
	// bindings in the client's rate limit.
	StatusRate float64
	// PublishRate bounds the writes that only publish a Job's state (its
	// inlay.dev annotations and the InlayScheduled condition, one request
	// a Job) to this many a second, with a second's worth at once
	// (default 50). The writes that carry a decision (bindings, suspend
	// and resume) never wait for it, and while gangs are being bound (a
	// Binding sent in the last second) publications go at a tenth of it:
	// under a burst of thousands of Jobs the gangs are bound at the rate
	// the API server allows and their state is published behind them, the
	// latest state of each Job once.
	PublishRate float64
	// LeaderElection, when set, runs the scheduler only while it holds the
	// lease LeaseNamespace/LeaseName.
	LeaderElection bool
	LeaseNamespace string
	LeaseName      string
	Identity       string
	Log            *slog.Logger
	// Clock, when set, is a replay's virtual clock (shared with the
	// replayer in one process; its speedup replaces Speedup): the
	// scheduler holds it from each round's start until the round's
	// decisions are carried out, or SettleTimeout (default 30 s) has
	// passed, so that the control plane's latency costs no virtual time.
	Clock         *vclock.Clock
	SettleTimeout time.Duration
	// Adaptive, when set, runs an adaptive policy in place of Policy and
	// Table (see Adaptive); Sched.Round is its round length.
	Adaptive *Adaptive
}

// Stats are the scheduler's counters.
type Stats struct {
	Rounds, Recomputes, Preemptions, Binds, Suspends, Resumes int64
	// Fallbacks counts allocations for which the policy's LP failed and
	// it returned its cheaper allocation (policy.Allocation.Fallback).
	Fallbacks int64
	// Waits counts placements the mechanism made that no nodes could
	// hold (a pod's GPUs on one node); Rebuilds the mechanism's rebuilds
	// on a changed cluster view (nodes NotReady, gone or back).
	Waits, Rebuilds int64
	// Refits counts placements bound on other nodes than the mechanism's
	// servers (they had no room for whole pods); the mechanism is told
	// where the job went.
	Refits int64
	// PolicyTime is the total time spent in the mechanism's Plan;
	// PolicyMax the longest round.
	PolicyTime, PolicyMax time.Duration
	// MaxActive is the most active jobs a round saw.
	MaxActive int
	// RoundTimes is each round's time in the scheduler (accounting, the
	// cluster view, the policy and the assignments), in order; the last
	// maxRoundTimes rounds are kept.
	RoundTimes []time.Duration
}

// maxRoundTimes bounds Stats.RoundTimes.
const maxRoundTimes = 1 << 16

type jobState struct {
	key, ns, name string
	uid           types.UID
	id            int
	spec          jobspec.Spec
	invalid       string
	queuedAt      time.Time
	added         bool
	done          bool
	finishedSeen  time.Time
	// desired state of this round
	run       bool
	gpu       int // column
	slots     []string
	moved     bool
	placed    *sched.Placed
	since     time.Time // when all pods were bound this run
	rounds    int
	preempt   int
	est       float64
	started   time.Time
	lastPub   int
	lastPubAt time.Time
	state     string // last state written
	// decidedAt is the wall time of the round that last started, stopped
	// or moved the job (written as DecidedAtAnno with the change).
	decidedAt time.Time
	// ad is the job's state under an adaptive policy (nil otherwise);
	// alloc names its allocation.
	ad    *adaptJob
	alloc string
}

// DecidedAtAnno is the wall time (RFC 3339, nanoseconds) of the round
// whose decision the Job's last start, stop or move carries out. The
// scheduler writes it in the same request as the change: on the Job with
// its spec.suspend patch, and on each pod with its Binding (the API server
// copies a Binding's annotations onto the pod), so a workload can tell the
// decision from the moment its pods run or stop: the replayer charges that
// latency at real speed.
const DecidedAtAnno = "inlay.dev/decided-at"

// Scheduler is inlay's Kubernetes scheduler.
type Scheduler struct {
	cfg   Config
	cs    kubernetes.Interface
	log   *slog.Logger
	jobs  batchlisters.JobLister
	pods  corelisters.PodLister
	nodes corelisters.NodeLister
	podIx cache.Indexer
	queue workqueue.TypedRateLimitingInterface[string]
	rec   record.EventRecorder
	kick  chan struct{}

	term   sync.Mutex // held by a term of run
	mu     sync.Mutex
	st     map[string]*jobState
	byID   map[int]*jobState
	nextID int
	mech   *sched.Mechanism
	// amech and aview are the adaptive mechanism and its cluster view
	// (Config.Adaptive).
	amech     *adapt.Mechanism
	aview     *adaptView
	plat      *chw.Platform
	nodeNames []string
	nodeIdx   map[string]int
	sig       string
	epoch     time.Time
	lastPlanV float64
	idle      bool
	round     int
	running   int // Jobs the last round runs
	stats     Stats
	requests  atomic.Int64
	// pubLimit is the publication budget (Config.PublishRate);
	// metaNotViaStatus is set once the API server has dropped annotations
	// sent through the jobs/status subresource, and they go apart after.
	pubLimit         *rate.Limiter
	metaNotViaStatus atomic.Bool
	// pubBusy is the publication budget while gangs are being bound;
	// lastBind the Unix nanoseconds of the last Binding sent.
	pubBusy  *rate.Limiter
	lastBind atomic.Int64
	// assumed holds the pods whose Binding is sent (or about to be) but
	// whose binding the informer has not shown yet: they hold their
	// node's resources for fits (under mu), as kube-scheduler's assumed
	// pods do.
	assumed map[types.UID]assumedPod
	// assumedOn indexes assumed by node, so that a fit reads its node's
	// assumptions only.
	assumedOn map[string]map[types.UID]struct{}
}

// assumedPod is a pod bound, or being bound, to node, not yet seen so.
// A binding that failed may still have been made (a timeout, a lost
// response): its pod stays assumed until expires (zero: until the informer
// shows it bound, or it is gone).
type assumedPod struct {
	ns, name, node string
	req            jobspec.Requests
	expires        time.Time
}

// New checks the configuration and returns a scheduler.
func New(cfg Config) (*Scheduler, error) {
	if a := cfg.Adaptive; a != nil {
		if cfg.Client == nil || a.Policy == nil || len(a.Models) == 0 || len(a.Types) == 0 {
			return nil, errors.New("cluster/kube/scheduler: client, adaptive policy, models and GPU types are required")
		}
		if a.Mixed && !a.Policy.Mixed() {
			return nil, fmt.Errorf("cluster/kube/scheduler: policy %s cannot give mixed-type gangs", a.Policy.Name())
		}
	} else if cfg.Client == nil || cfg.Policy == nil || cfg.Table == nil {
		return nil, errors.New("cluster/kube/scheduler: client, policy and throughput table are required")
	}
	if cfg.Adaptive == nil && cfg.Policy.Traits().SpaceSharing {
		return nil, fmt.Errorf("cluster/kube/scheduler: policy %s shares GPUs between jobs, which Kubernetes' device plugin cannot do; choose a policy without space sharing", cfg.Policy.Name())
	}
	if cfg.Clock != nil {
		cfg.Speedup = cfg.Clock.Speedup()
	}
	if cfg.SettleTimeout <= 0 {
		cfg.SettleTimeout = 30 * time.Second
	}
	if cfg.Speedup == 0 {
		cfg.Speedup = 1
	}
	if !(cfg.Speedup > 0) || math.IsInf(cfg.Speedup, 0) {
		return nil, fmt.Errorf("cluster/kube/scheduler: speedup must be positive, got %g", cfg.Speedup)
	}
	if cfg.Sched.Round == 0 {
		cfg.Sched.Round = 360
	}
	if !(cfg.Sched.Round > 0) {
		return nil, fmt.Errorf("cluster/kube/scheduler: round must be positive, got %g", cfg.Sched.Round)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.StatusEvery <= 0 {
		cfg.StatusEvery = 5
	}
	if cfg.StatusInterval <= 0 {
		cfg.StatusInterval = 10 * time.Second
	}
	if !(cfg.StatusRate > 0) {
		cfg.StatusRate = 20
	}
	if !(cfg.PublishRate > 0) {
		cfg.PublishRate = 50
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.LeaseName == "" {
		cfg.LeaseName = "inlay-scheduler"
	}
	if cfg.LeaseNamespace == "" {
		cfg.LeaseNamespace = "kube-system"
	}
	if cfg.Identity == "" {
		h, _ := os.Hostname()
		cfg.Identity = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	return &Scheduler{cfg: cfg, cs: cfg.Client, log: cfg.Log, st: map[string]*jobState{}, byID: map[int]*jobState{},
		assumed: map[types.UID]assumedPod{}, assumedOn: map[string]map[types.UID]struct{}{}, kick: make(chan struct{}, 1),
		pubLimit: rate.NewLimiter(rate.Limit(cfg.PublishRate), max(int(cfg.PublishRate), 1)),
		pubBusy:  rate.NewLimiter(rate.Limit(cfg.PublishRate/10), 1)}, nil
}

// A trimmer drops what the scheduler never reads from the objects its
// informers cache, so that 30,000 Jobs and pods fit its memory (the
// scheduler only ever patches, binds and deletes; it never writes a
// cached object back, so nothing dropped here can be lost):
//   - every object: the managed fields (server-side apply's record of who
//     set what, often the larger part of a small object; kube-scheduler
//     drops them too) and kubectl's last-applied configuration;
//   - pods: the spec but for the node, the scheduler's name, the
//     tolerations and the resource requests (its containers become one
//     that requests their sum, as jobspec.PodRequests counts them); the
//     status but for the phase;
//   - Jobs: the pod template's metadata and its spec as for pods, the
//     selector;
//   - nodes: the images, volumes and addresses of the status.
//
// One trimmer serves a term's informer factories: its containers are
// shared by the pods and Jobs of the caches they fill.
type trimmer struct {
	mu     sync.Mutex
	shapes map[jobspec.Requests][]corev1.Container
}

func newTrimmer() *trimmer { return &trimmer{shapes: map[jobspec.Requests][]corev1.Container{}} }

func (t *trimmer) object(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
		delete(a.GetAnnotations(), corev1.LastAppliedConfigAnnotation)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		t.podSpec(&o.Spec)
		o.Status = corev1.PodStatus{Phase: o.Status.Phase}
	case *batchv1.Job:
		o.Spec.Selector = nil
		o.Spec.Template.ObjectMeta = metav1.ObjectMeta{}
		t.podSpec(&o.Spec.Template.Spec)
	case *corev1.Node:
		st := &o.Status
		st.Images, st.VolumesInUse, st.VolumesAttached, st.Addresses = nil, nil, nil, nil
		st.NodeInfo, st.DaemonEndpoints, st.Config = corev1.NodeSystemInfo{}, corev1.NodeDaemonEndpoints{}, nil
	}
	return obj, nil
}

// podSpec keeps of a pod's spec what the scheduler reads.
func (t *trimmer) podSpec(ps *corev1.PodSpec) {
	*ps = corev1.PodSpec{NodeName: ps.NodeName, SchedulerName: ps.SchedulerName, Tolerations: ps.Tolerations,
		Containers: t.requestsOnly(jobspec.PodRequests(ps))}
}

// requestsOnly is the one container that stands for a pod's containers in
// the cache: it requests their sum. Pods of a cluster ask for a handful of
// shapes, so each shape's container is made once and shared by every
// pod's cached copy (which nothing writes: an informer's objects are read
// only), up to maxShapes shapes.
func (t *trimmer) requestsOnly(r jobspec.Requests) []corev1.Container {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.shapes[r]; ok {
		return c
	}
	c := []corev1.Container{{Name: "requests", Resources: corev1.ResourceRequirements{Requests: r.List()}}}
	if len(t.shapes) < maxShapes {
		t.shapes[r] = c
	}
	return c
}

const maxShapes = 4096

// policyName names the policy the scheduler runs.
func (s *Scheduler) policyName() string {
	if s.cfg.Adaptive != nil {
		return s.cfg.Adaptive.Policy.Name()
	}
	return s.cfg.Policy.Name()
}

// Stats returns a copy of the counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.RoundTimes = slices.Clone(st.RoundTimes)
	return st
}

// Requests is the number of API requests the scheduler made (reads from
// its caches excluded).
func (s *Scheduler) Requests() int64 { return s.requests.Load() }

// Run runs until ctx ends. With leader election it schedules only while it
// holds the lease; when it loses the lease (the API server away longer
// than the renew deadline, or another replica took it) it stops
// scheduling, and campaigns again with its state rebuilt from the API
// server when it wins.
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.cfg.LeaderElection {
		return s.run(ctx)
	}
	errc := make(chan error, 1)
	for {
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: s.cfg.LeaseNamespace, Name: s.cfg.LeaseName},
			Client:     s.cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: s.cfg.Identity},
		}
		lctx, lcancel := context.WithCancel(ctx)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			ReleaseOnCancel: true, Name: s.cfg.LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(tctx context.Context) {
					// A term ends with its context (the lease lost);
					// a failure of its own ends the campaign too,
					// rather than holding the lease doing nothing.
					if err := s.run(tctx); err != nil && tctx.Err() == nil {
						select {
						case errc <- err:
						default:
						}
						lcancel()
					}
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			lcancel()
			return err
		}
		s.log.Info("waiting for the leader lease", "lease", s.cfg.LeaseNamespace+"/"+s.cfg.LeaseName, "identity", s.cfg.Identity)
		le.Run(lctx)
		lcancel()
		// le.Run returns without waiting for the term it started: wait
		// for it here (run holds term throughout).
		s.term.Lock()
		s.term.Unlock()
		select {
		case err := <-errc:
			return err
		default:
		}
		if ctx.Err() != nil {
			return nil
		}
		s.log.Warn("lost the leader lease; campaigning again", "lease", s.cfg.LeaseNamespace+"/"+s.cfg.LeaseName)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

func (s *Scheduler) jobSelector() labels.Selector {
	if s.cfg.Queue == "" {
		sel, _ := labels.Parse(jobspec.QueueLabel)
		return sel
	}
	return labels.SelectorFromSet(labels.Set{jobspec.QueueLabel: s.cfg.Queue})
}

const podsByNode = "node"
const podsByJob = "job"

// podIndexers index pods by the node they are bound to and by the Job
// that controls them.
func podIndexers() cache.Indexers {
	return cache.Indexers{
		podsByNode: func(o any) ([]string, error) {
			if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				return []string{p.Spec.NodeName}, nil
			}
			return nil, nil
		},
		podsByJob: func(o any) ([]string, error) {
			if p, ok := o.(*corev1.Pod); ok {
				if k := jobspec.ControllerKey(p); k != "" {
					return []string{k}, nil
				}
			}
			return nil, nil
		},
	}
}

func (s *Scheduler) run(ctx context.Context) error {
	// One term at a time: the leader elector does not wait for the term
	// it started when it loses the lease, and the next term resets the
	// state that the last one's workers may still use.
	s.term.Lock()
	defer s.term.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A new term starts from the API server's state alone.
	s.mu.Lock()
	s.st, s.byID, s.mech, s.sig, s.idle = map[string]*jobState{}, map[int]*jobState{}, nil, "", false
	s.amech, s.aview = nil, nil
	s.assumed, s.assumedOn = map[types.UID]assumedPod{}, map[string]map[types.UID]struct{}{}
	s.mu.Unlock()
	trim := newTrimmer()
	fac := informers.NewSharedInformerFactoryWithOptions(s.cs, 0, informers.WithTransform(trim.object))
	jobFac := informers.NewSharedInformerFactoryWithOptions(s.cs, 0, informers.WithNamespace(s.cfg.Namespace), informers.WithTransform(trim.object),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = s.jobSelector().String() }))
	jobInf := jobFac.Batch().V1().Jobs()
	podInf := fac.Core().V1().Pods()
	nodeInf := fac.Core().V1().Nodes()
	if err := podInf.Informer().AddIndexers(podIndexers()); err != nil {
		return err
	}
	s.jobs, s.pods, s.nodes = jobInf.Lister(), podInf.Lister(), nodeInf.Lister()
	s.podIx = podInf.Informer().GetIndexer()
	s.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 30*time.Second),
		), workqueue.TypedRateLimitingQueueConfig[string]{Name: "inlay-jobs"})
	defer s.queue.ShutDown()
	bc := record.NewBroadcaster(record.WithContext(ctx))
	bc.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: s.cs.CoreV1().Events("")})
	defer bc.Shutdown()
	s.rec = bc.NewRecorder(scheme.Scheme, corev1.EventSource{Component: jobspec.SchedulerName})

	enqueueJob := func(o any) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		if j, ok := o.(*batchv1.Job); ok {
			s.queue.Add(j.Namespace + "/" + j.Name)
			if done, _ := jobspec.Done(j); done {
				s.mu.Lock()
				if st := s.st[j.Namespace+"/"+j.Name]; st != nil && st.finishedSeen.IsZero() {
					st.finishedSeen = time.Now()
				}
				s.mu.Unlock()
			}
			s.poke(false)
		}
	}
	enqueuePod := func(o any) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		if p, ok := o.(*corev1.Pod); ok {
			for _, r := range p.OwnerReferences {
				if r.Kind == "Job" {
					s.queue.Add(p.Namespace + "/" + r.Name)
				}
			}
		}
	}
	if _, err := jobInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueJob, UpdateFunc: func(_, n any) { enqueueJob(n) }, DeleteFunc: enqueueJob,
	}); err != nil {
		return err
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueuePod, UpdateFunc: func(_, n any) { enqueuePod(n) }, DeleteFunc: enqueuePod,
	}); err != nil {
		return err
	}
	fac.Start(ctx.Done())
	jobFac.Start(ctx.Done())
	for t, ok := range fac.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("cluster/kube/scheduler: %v cache did not sync", t)
		}
	}
	for t, ok := range jobFac.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("cluster/kube/scheduler: %v cache did not sync", t)
		}
	}
	s.restore()
	var wg sync.WaitGroup
	for w := 0; w < s.cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s.work(ctx) {
			}
		}()
	}
	s.log.Info("inlay scheduler running", "policy", s.policyName(), "round_s", s.cfg.Sched.Round, "speedup", s.cfg.Speedup, "queue", s.cfg.Queue)
	period := time.Duration(s.cfg.Sched.Round / s.cfg.Speedup * float64(time.Second))
	timer := time.NewTimer(0)
	defer timer.Stop()
	next := time.Now()
	nextV := math.Inf(-1)
	clock := s.cfg.Clock
	for {
		select {
		case <-ctx.Done():
			s.queue.ShutDown()
			wg.Wait()
			return nil
		case <-timer.C:
			if clock != nil && clock.Now() < nextV {
				// Someone held the clock: the round is not due yet.
				timer.Reset(max(time.Until(clock.Wall(nextV)), time.Millisecond))
				continue
			}
		case <-s.kick:
			// An arrival on an idle cluster starts a round at once (as the
			// simulator jumps to the next arrival).
			s.mu.Lock()
			idle := s.idle
			s.mu.Unlock()
			if !idle {
				continue
			}
		}
		if clock != nil {
			clock.Hold()
		}
		start := time.Now()
		round := s.doRound
		if s.cfg.Adaptive != nil {
			round = s.doAdaptRound
		}
		if err := round(ctx, start); err != nil {
			s.log.Error("round failed", "err", err)
		}
		if clock != nil {
			s.settle(ctx)
			clock.Release()
			nextV = clock.At(start) + s.cfg.Sched.Round
			timer.Reset(max(time.Until(clock.Wall(nextV)), time.Millisecond))
			continue
		}
		next = start.Add(period)
		timer.Reset(time.Until(next))
	}
}

// settle waits until the round's decisions are carried out (every job
// that runs has its gang running, every other has no pod bound), at most
// SettleTimeout.
func (s *Scheduler) settle(ctx context.Context) {
	deadline := time.Now().Add(s.cfg.SettleTimeout)
	for {
		if s.settled() {
			return
		}
		if time.Now().After(deadline) {
			s.log.Warn("round not carried out in time; the clock runs on", "timeout", s.cfg.SettleTimeout)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (s *Scheduler) settled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.st {
		if st.done || st.invalid != "" || !st.added {
			continue
		}
		if st.run && st.since.IsZero() {
			return false
		}
		if st.run && st.ad != nil && !s.batchSettled(st) {
			return false
		}
		if !st.run && len(s.boundNodes(st)) > 0 {
			return false
		}
	}
	return true
}

// poke asks for a round when the cluster is idle.
func (s *Scheduler) poke(bool) {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Scheduler) virtual(t time.Time) float64 {
	if s.cfg.Clock != nil {
		return s.cfg.Clock.At(t) - s.cfg.Clock.At(s.epoch)
	}
	return t.Sub(s.epoch).Seconds() * s.cfg.Speedup
}

// restore rebuilds the state from the API server: Jobs in queue order
// (inlay.dev/queued-at, then creation), their annotations, and the nodes
// their pods are bound to.
func (s *Scheduler) restore() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch = time.Now()
	list, _ := s.jobs.List(s.jobSelector())
	for _, j := range list {
		if t, ok := jobspec.ParseTime(j.Annotations[jobspec.QueuedAtAnno]); ok && t.Before(s.epoch) {
			s.epoch = t
		}
	}
	s.syncJobs(time.Now())
	for _, st := range s.sortedStates() {
		if st.done || st.invalid != "" {
			continue
		}
		bound := s.boundNodes(st)
		j, err := s.jobs.Jobs(st.ns).Get(st.name)
		if err == nil && len(bound) > 0 && len(bound) == jobspec.Gang(j) {
			st.run, st.slots = true, bound
			st.since = time.Now()
		}
	}
}

func (s *Scheduler) sortedStates() []*jobState {
	out := make([]*jobState, 0, len(s.st))
	for _, st := range s.st {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// syncJobs adds new Jobs, marks finished and deleted ones (under mu).
func (s *Scheduler) syncJobs(now time.Time) {
	list, _ := s.jobs.List(s.jobSelector())
	// Queue order, each Job's time read once (thousands of Jobs a round).
	at := make(map[*batchv1.Job]time.Time, len(list))
	for _, j := range list {
		at[j] = queuedAt(j)
	}
	sort.Slice(list, func(i, k int) bool {
		a, b := at[list[i]], at[list[k]]
		if !a.Equal(b) {
			return a.Before(b)
		}
		if list[i].Namespace != list[k].Namespace {
			return list[i].Namespace < list[k].Namespace
		}
		return list[i].Name < list[k].Name
	})
	seen := make(map[string]bool, len(list))
	for _, j := range list {
		key := j.Namespace + "/" + j.Name
		seen[key] = true
		st := s.st[key]
		if st != nil && st.uid != j.UID {
			s.drop(st)
			st = nil
		}
		if st == nil {
			st = &jobState{key: key, ns: j.Namespace, name: j.Name, uid: j.UID, id: s.nextID, gpu: -1}
			s.nextID++
			s.st[key] = st
			s.byID[st.id] = st
			st.queuedAt = now
			if t, ok := jobspec.ParseTime(j.Annotations[jobspec.QueuedAtAnno]); ok {
				st.queuedAt = t
			}
			st.rounds, _ = strconv.Atoi(j.Annotations[jobspec.RoundsAnno])
			st.preempt, _ = strconv.Atoi(j.Annotations[jobspec.PreemptionsAnno])
			st.state = j.Annotations[jobspec.StateAnno]
			if t, ok := jobspec.ParseTime(j.Annotations[jobspec.StartedAtAnno]); ok {
				st.started = t
			}
			var spec jobspec.Spec
			var err error
			if s.cfg.Adaptive != nil {
				err = s.parseAdaptive(st, j)
				spec = st.spec
			} else {
				spec, err = jobspec.Parse(j, s.cfg.Table)
			}
			if err != nil {
				st.invalid = err.Error()
				s.rec.Eventf(j, corev1.EventTypeWarning, "InvalidJob", "inlay cannot schedule this Job: %s", st.invalid)
				s.log.Warn("invalid job", "job", key, "reason", st.invalid)
			} else {
				st.spec = spec
			}
			s.queue.Add(key)
		}
		if done, _ := jobspec.Done(j); done && !st.done {
			st.done = true
			if st.finishedSeen.IsZero() {
				st.finishedSeen = now
			}
			if st.added && s.mech != nil {
				s.mech.Remove(st.id)
			}
			st.added = false
			st.run, st.slots = false, nil
			s.queue.Add(key)
		}
		if !st.done && st.invalid == "" && !st.added && s.mech != nil {
			s.addToMech(st, j)
		}
	}
	for key, st := range s.st {
		if !seen[key] {
			s.drop(st)
		}
	}
}

func queuedAt(j *batchv1.Job) time.Time {
	if t, ok := jobspec.ParseTime(j.Annotations[jobspec.QueuedAtAnno]); ok {
		return t
	}
	return j.CreationTimestamp.Time
}

func (s *Scheduler) drop(st *jobState) {
	if st.added && s.mech != nil {
		s.mech.Remove(st.id)
	}
	delete(s.st, st.key)
	delete(s.byID, st.id)
}

// reported returns the workload's reported steps (ok false when absent).
func reported(j *batchv1.Job) (float64, bool) {
	v, err := strconv.ParseFloat(j.Annotations[jobspec.StepsDoneAnno], 64)
	return v, err == nil && v >= 0
}

func (s *Scheduler) addToMech(st *jobState, j *batchv1.Job) {
	done, _ := reported(j)
	if e, err := strconv.ParseFloat(j.Annotations[jobspec.EstimateAnno], 64); err == nil && e > done {
		done = e
	}
	st.est = done
	rem := math.Max(st.spec.Steps-done, estimateReserve*st.spec.Steps)
	s.mech.Add(policy.Job{ID: st.id, Row: st.spec.Row, GPUs: st.spec.GPUs, Weight: st.spec.Weight,
		Arrival: s.virtual(st.queuedAt), Steps: st.spec.Steps, Remaining: rem, Attained: 0,
		CPUs: st.spec.CPUs, MemoryGiB: st.spec.MemoryGiB, Chunk: st.spec.PerPod})
	st.added = true
}

// boundNodes lists the nodes of a Job's live bound pods, sorted.
func (s *Scheduler) boundNodes(st *jobState) []string {
	objs, _ := s.podIx.ByIndex(podsByJob, st.key)
	var out []string
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if p.Spec.NodeName != "" && jobspec.Live(p) && p.DeletionTimestamp == nil && jobspec.OwnedBy(p, st.uid) {
			out = append(out, p.Spec.NodeName)
		}
	}
	sort.Strings(out)
	return out
}

// usable reports whether a node enters the policy's cluster.
func (s *Scheduler) usable(n *corev1.Node) bool {
	if n.Spec.Unschedulable || !nodes.Ready(n) || n.DeletionTimestamp != nil {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		ok := false
		for _, k := range s.cfg.TolerateTaints {
			if t.Key == k {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// foreignGPUs is the GPUs that live pods the policy does not account for
// hold on a node (under mu): pods of Jobs this scheduler does not serve
// (another queue, no Job), pods another scheduler bound, and pods of Jobs
// it refused as invalid. A Job that carries inlay's queue label but whose
// pods name another scheduler is invalid, and its pods, bound by that
// scheduler, hold GPUs that the policy must not hand out again.
func (s *Scheduler) foreignGPUs(node string) int {
	objs, _ := s.podIx.ByIndex(podsByNode, node)
	n := 0
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if !jobspec.Live(p) {
			continue
		}
		if s.accounted(p) {
			continue
		}
		n += int(jobspec.PodRequests(&p.Spec).GPUs)
	}
	return n
}

// accounted reports whether a pod is one the policy's mechanism accounts
// for: inlay's pod of a valid Job this scheduler serves (under mu). Its
// GPUs are the mechanism's to give; pods of a job that has just stopped or
// finished still hold them until they end, which the binding waits for
// (fits), without the cluster view changing.
func (s *Scheduler) accounted(p *corev1.Pod) bool {
	if p.Spec.SchedulerName != jobspec.SchedulerName {
		return false
	}
	k := jobspec.ControllerKey(p)
	if k == "" {
		return false
	}
	st := s.st[k]
	return st != nil && jobspec.OwnedBy(p, st.uid) && st.invalid == ""
}

// clusterView builds the platform the policy sees from the usable nodes;
// it rebuilds the mechanism when the view changed, carrying the active
// jobs' progress and last placements over.
func (s *Scheduler) clusterView(now time.Time) error {
	list, _ := s.nodes.List(labels.Everything())
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	p := &chw.Platform{Name: "kubernetes", Source: "the API server's nodes"}
	types := s.cfg.Table.GPUs()
	seen := map[string]bool{}
	var names []string
	var sig strings.Builder
	for _, n := range list {
		if !s.usable(n) {
			continue
		}
		g := nodes.GPUType(n, types)
		count := nodes.GPUs(n) - s.foreignGPUs(n.Name)
		if g == "" || count <= 0 {
			continue
		}
		if !seen[g] {
			seen[g] = true
			p.GPUTypes = append(p.GPUTypes, gpuType(g))
		}
		cpu := n.Status.Allocatable[corev1.ResourceCPU]
		mem := n.Status.Allocatable[corev1.ResourceMemory]
		p.Nodes = append(p.Nodes, chw.Node{Name: n.Name, GPU: g, GPUs: count, CPUs: int(cpu.Value()), MemoryGiB: float64(mem.Value()) / (1 << 30)})
		names = append(names, n.Name)
		fmt.Fprintf(&sig, "%s/%s/%d;", n.Name, g, count)
	}
	if sig.String() == s.sig && s.mech != nil {
		return nil
	}
	mech, err := sched.New(s.cfg.Sched, s.cfg.Policy, p, s.cfg.Table)
	if err != nil {
		return err
	}
	old := s.mech
	s.mech, s.plat, s.nodeNames, s.sig = mech, p, names, sig.String()
	s.nodeIdx = map[string]int{}
	for i, n := range names {
		s.nodeIdx[n] = i
	}
	if old != nil {
		s.stats.Rebuilds++
		s.log.Info("cluster changed; mechanism rebuilt", "nodes", len(names))
	}
	for _, st := range s.sortedStates() {
		if st.done || st.invalid != "" {
			continue
		}
		j, err := s.jobs.Jobs(st.ns).Get(st.name)
		if err != nil {
			continue
		}
		var attained float64
		if old != nil && st.added {
			if oj := old.Job(st.id); oj != nil {
				attained = oj.Attained
				st.est = math.Max(st.est, oj.Steps-oj.Remaining)
			}
		}
		st.added = false
		s.addToMechAt(st, j, attained)
		s.restoreRunning(st, j)
	}
	_ = now
	return nil
}

// restoreRunning tells a rebuilt mechanism where a job runs (under mu): a
// job whose whole gang is bound to nodes of the view runs there, whatever
// the last round decided (a move it ordered may not have happened: the
// pods of a Job suspended off a node that went NotReady stay bound there
// until something deletes them, and are there when the node returns); a
// job the last round runs whose gang is not all bound yet keeps that
// round's nodes while they are still usable. The job's slots and column
// follow, so that the round keeps it in place or counts its move.
func (s *Scheduler) restoreRunning(st *jobState, j *batchv1.Job) {
	if on, col, ok := s.gangNodes(st, j); ok {
		srv, _ := s.servers(st, on)
		s.mech.Restore(st.id, col, srv)
		if st.run && !slices.Equal(on, st.slots) {
			st.slots, st.gpu = on, col
			if s.queue != nil {
				s.queue.Add(st.key)
			}
		}
		return
	}
	if st.run && len(st.slots) > 0 {
		if srv, ok := s.servers(st, st.slots); ok {
			s.mech.Restore(st.id, s.cfg.Table.GPUIndex(s.plat.Nodes[srv[len(srv)-1]].GPU), srv)
		}
	}
}

// gangNodes is where a Job's gang is bound (one node a pod, sorted) and
// the column of those nodes' GPU type, when every pod of the gang is bound
// (live, not terminating) to a node of the cluster view, all of one GPU
// type; ok is false otherwise (under mu).
func (s *Scheduler) gangNodes(st *jobState, j *batchv1.Job) (on []string, col int, ok bool) {
	on = s.boundNodes(st)
	if len(on) == 0 || len(on) != jobspec.Gang(j) {
		return nil, -1, false
	}
	col = -1
	for _, n := range on {
		i, in := s.nodeIdx[n]
		if !in {
			return nil, -1, false
		}
		g := s.cfg.Table.GPUIndex(s.plat.Nodes[i].GPU)
		if g < 0 || (col >= 0 && g != col) {
			return nil, -1, false
		}
		col = g
	}
	return on, col, true
}

func (s *Scheduler) addToMechAt(st *jobState, j *batchv1.Job, attained float64) {
	s.addToMech(st, j)
	if mj := s.mech.Job(st.id); mj != nil {
		mj.Attained = attained
		mj.Remaining = math.Max(st.spec.Steps-st.est, estimateReserve*st.spec.Steps)
	}
}

var gpuTypes sync.Map // name → chw.GPUType, from the presets

func gpuType(name string) chw.GPUType {
	// Peak figures order the mechanism's GPU types fastest first; the
	// presets know them, a bare name gets none (ties keep table order).
	// The presets are parsed once per name, not every round.
	if g, ok := gpuTypes.Load(name); ok {
		return g.(chw.GPUType)
	}
	g := chw.GPUType{Name: name}
	for _, pn := range chw.Presets() {
		if p, err := chw.Preset(pn); err == nil {
			if t, ok := p.GPUType(name); ok {
				g = t
				break
			}
		}
	}
	gpuTypes.Store(name, g)
	return g
}

// doRound accounts the round that ended and plans the next one.
func (s *Scheduler) doRound(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.timeRound(time.Now())
	vnow := s.virtual(now)
	s.round++
	// Account the round that ended.
	if s.mech != nil {
		for _, st := range s.sortedStates() {
			if !st.added {
				continue
			}
			if st.placed == nil {
				if j, err := s.jobs.Jobs(st.ns).Get(st.name); err == nil && !st.run {
					if r, ok := reported(j); ok {
						// A stopped job's checkpoint is the truth.
						st.est = r
						mj := s.mech.Job(st.id)
						mj.Remaining = math.Max(st.spec.Steps-r, estimateReserve*st.spec.Steps)
					}
				}
				continue
			}
			p := *st.placed
			ran := 0.0
			if !st.since.IsZero() {
				// A job that finished within the round ran until then,
				// not to its end (as the simulator charges it): the time
				// received sets the policy's priorities.
				end := vnow
				if !st.finishedSeen.IsZero() {
					end = math.Min(end, s.virtual(st.finishedSeen))
				}
				ran = math.Max(0, end-math.Max(s.lastPlanV, s.virtual(st.since)))
			}
			mj := s.mech.Job(st.id)
			// The Job's completion, not this estimate, finishes it.
			steps := sched.Account(sched.Stretch{Length: ran, Rate: p.Rate[0], Remaining: mj.Remaining, Total: mj.Steps, Reserve: estimateReserve}).Steps
			s.mech.Done(p, ran, [2]float64{steps, 0})
			st.est += steps
			if j, err := s.jobs.Jobs(st.ns).Get(st.name); err == nil {
				if r, ok := reported(j); ok && !st.run {
					// A stopped job's checkpoint is the truth.
					st.est = r
					mj.Remaining = math.Max(st.spec.Steps-r, estimateReserve*st.spec.Steps)
				}
			}
		}
	}
	if err := s.clusterView(now); err != nil {
		return err
	}
	s.syncJobs(now)
	s.lastPlanV = vnow
	for _, st := range s.st {
		st.placed = nil
	}
	if s.mech.Active() == 0 {
		s.idle = true
		return nil
	}
	s.idle = false
	t0 := time.Now()
	r, err := s.mech.Plan(ctx, vnow)
	dt := time.Since(t0)
	s.stats.Rounds++
	s.stats.PolicyTime += dt
	s.stats.PolicyMax = max(s.stats.PolicyMax, dt)
	s.stats.MaxActive = max(s.stats.MaxActive, s.mech.Active())
	if err != nil {
		return err
	}
	if r.Recomputed {
		s.stats.Recomputes++
	}
	if r.Fallback != "" {
		s.stats.Fallbacks++
		s.log.Warn("policy fell back to its cheaper allocation", "why", r.Fallback)
	}
	// Free GPUs per node for this round's assignments.
	free := map[string]int{}
	for i, n := range s.plat.Nodes {
		free[s.nodeNames[i]] = n.GPUs
	}
	want := map[int]sched.Placed{}
	for _, p := range r.Placed {
		want[p.A] = p
	}
	s.running = len(r.Placed)
	// Jobs that keep their nodes first, then the rest, in ID order.
	order := s.sortedStates()
	sort.SliceStable(order, func(i, j int) bool { return s.keeps(order[i], want) && !s.keeps(order[j], want) })
	for _, st := range order {
		if !st.added {
			continue
		}
		p, ok := want[st.id]
		wasRunning := st.run
		if !ok {
			if wasRunning {
				st.preempt++
				s.stats.Preemptions++
				st.decidedAt = now
				s.event(st, corev1.EventTypeNormal, "Preempted", "round %d: preempted by policy %s", s.round, s.cfg.Policy.Name())
			}
			st.run, st.slots, st.since = false, nil, time.Time{}
			if wasRunning {
				s.queue.Add(st.key)
			}
			continue
		}
		slots := s.slots(st, p, free)
		if slots == nil {
			s.stats.Waits++
			if wasRunning {
				st.preempt++
				s.stats.Preemptions++
				st.decidedAt = now
			}
			st.run, st.slots, st.since = false, nil, time.Time{}
			s.event(st, corev1.EventTypeNormal, "Waiting", "round %d: allocated %s but no nodes fit its pods of %d GPUs", s.round, s.cfg.Table.GPUs()[p.GPU], st.spec.PerPod)
			if wasRunning {
				s.queue.Add(st.key)
			}
			continue
		}
		if srv, _ := s.servers(st, slots); !sameServers(srv, p.Servers) {
			// Bound elsewhere than the mechanism put it: tell it, so that
			// its next rounds keep the job where it runs and do not give
			// those nodes to others.
			s.stats.Refits++
			s.mech.Restore(st.id, p.GPU, srv)
			p.Servers = srv
		}
		pp := p
		st.placed = &pp
		same := wasRunning && slices.Equal(slots, st.slots)
		if wasRunning && !same {
			st.preempt++
			s.stats.Preemptions++
			s.event(st, corev1.EventTypeNormal, "Moved", "round %d: moved to %s on %s", s.round, s.cfg.Table.GPUs()[p.GPU], strings.Join(uniq(slots), ","))
			st.since = time.Time{}
			st.decidedAt = now
		}
		if !wasRunning {
			s.event(st, corev1.EventTypeNormal, "Allocated", "round %d: %d GPUs of %s on %s", s.round, st.spec.GPUs, s.cfg.Table.GPUs()[p.GPU], strings.Join(uniq(slots), ","))
			st.since = time.Time{}
			st.decidedAt = now
		}
		st.run, st.slots, st.gpu = true, slots, p.GPU
		st.rounds++
		// A job kept where it runs needs its worker only for progress.
		if !same || s.publishDue(st, now) {
			s.queue.Add(st.key)
		}
	}
	return nil
}

// timeRound records a round's time in the scheduler, from start (under
// mu).
func (s *Scheduler) timeRound(start time.Time) {
	if len(s.stats.RoundTimes) == maxRoundTimes {
		s.stats.RoundTimes = s.stats.RoundTimes[1:]
	}
	s.stats.RoundTimes = append(s.stats.RoundTimes, time.Since(start))
}

// estimateReserve is the share of a Job's steps that the scheduler's own
// estimate leaves undone: only the Job's completion finishes it.
const estimateReserve = 1e-6

// publishDue reports whether a running Job's progress annotations are
// due: StatusEvery rounds and StatusInterval since the last (under mu).
func (s *Scheduler) publishDue(st *jobState, now time.Time) bool {
	every := max(s.cfg.StatusInterval, time.Duration(float64(s.running)/s.cfg.StatusRate*float64(time.Second)))
	return s.round-st.lastPub >= s.cfg.StatusEvery && now.Sub(st.lastPubAt) >= every
}

func (s *Scheduler) keeps(st *jobState, want map[int]sched.Placed) bool {
	p, ok := want[st.id]
	return ok && st.run && p.GPU == st.gpu
}

// slots turns a placement into one node per pod: the mechanism's servers
// grouped by node when each holds whole pods and has room, else the nodes
// of the column with the most room, first fit.
func (s *Scheduler) slots(st *jobState, p sched.Placed, free map[string]int) []string {
	k := st.spec.PerPod
	take := func(cands []string) []string {
		var out []string
		got := map[string]int{}
		for _, n := range cands {
			for len(out) < st.spec.Pods && free[n]-got[n] >= k {
				out = append(out, n)
				got[n] += k
			}
		}
		if len(out) < st.spec.Pods {
			return nil
		}
		for n, g := range got {
			free[n] -= g
		}
		sort.Strings(out)
		return out
	}
	// Keep the current nodes when the mechanism kept the job in place.
	if st.run && p.GPU == st.gpu && !p.Moved[0] {
		if out := take(uniq(st.slots)); out != nil && slices.Equal(out, st.slots) {
			return out
		}
	}
	var mine []string
	for _, i := range p.Servers {
		mine = append(mine, s.nodeNames[i])
	}
	if out := take(uniq(mine)); out != nil {
		return out
	}
	var col []string
	for i, n := range s.plat.Nodes {
		if s.cfg.Table.GPUIndex(n.GPU) == p.GPU {
			col = append(col, s.nodeNames[i])
		}
	}
	sort.SliceStable(col, func(i, j int) bool { return free[col[i]] > free[col[j]] })
	return take(col)
}

// servers is the mechanism's servers (node indices, one a GPU) of a job
// whose pods sit on slots, one node a pod; ok false when a node is not in
// the cluster view.
func (s *Scheduler) servers(st *jobState, slots []string) ([]int, bool) {
	srv := make([]int, 0, len(slots)*st.spec.PerPod)
	for _, n := range slots {
		i, in := s.nodeIdx[n]
		if !in {
			return nil, false
		}
		for range st.spec.PerPod {
			srv = append(srv, i)
		}
	}
	return srv, true
}

// sameServers reports whether two lists of servers hold the same GPUs, in
// any order.
func sameServers(a, b []int) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func uniq(a []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range a {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func (s *Scheduler) event(st *jobState, typ, reason, format string, args ...any) {
	ref := &corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: st.ns, Name: st.name, UID: st.uid}
	s.rec.Eventf(ref, typ, reason, format, args...)
}
