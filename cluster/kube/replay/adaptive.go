package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/kube/vclock"
)

// AdaptiveConfig configures a replay of adaptive jobs (package adapt)
// under inlay's scheduler running an adaptive policy
// (scheduler.Adaptive), on the lockstep clock.
type AdaptiveConfig struct {
	Client kubernetes.Interface
	// Jobs in arrival order; each one's model is named by Model.Name.
	Jobs []adapt.Job
	// Types are the GPU types in the order of the models' fits.
	Types []string
	Split goodput.Split
	// Clock is the virtual clock shared with the scheduler (required).
	Clock *vclock.Clock
	// Namespace (default "default"), Queue (the inlay.dev/queue label,
	// default "default"), Run (the inlay.dev/replay label, default
	// "adaptive").
	Namespace, Queue, Run string
	// Tolerate, when set, is a taint key the pods tolerate (the nodes of
	// the replay's cluster carry it, so that no other scheduler uses them).
	Tolerate string
	// Timeout bounds the replay in real time (0: none).
	Timeout  time.Duration
	Progress func(done, total int)
	Log      *slog.Logger
}

// AdaptiveObject is the Job of adaptive job j: an Indexed Job of
// j.GPUs pods of one GPU each, its model, kind and batch size in
// annotations; its container reads the batch size its Binding gave the
// pod from the pod's annotation (the downward API) as BATCH_SIZE.
func AdaptiveObject(cfg *AdaptiveConfig, j *adapt.Job) *batchv1.Job {
	n := int32(max(j.GPUs, 1))
	lbl := map[string]string{jobspec.QueueLabel: cfg.Queue, RunLabel: cfg.Run}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi"),
		jobspec.GPUResource: *resource.NewQuantity(1, resource.DecimalSI)}
	var tol []corev1.Toleration
	if cfg.Tolerate != "" {
		tol = []corev1.Toleration{{Key: cfg.Tolerate, Operator: corev1.TolerationOpExists}}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: JobName(cfg.Run, j.ID), Namespace: cfg.Namespace, Labels: lbl,
			Annotations: map[string]string{
				jobspec.ModelAnno: j.Model.Name, jobspec.KindAnno: j.Kind.String(),
				jobspec.BatchSizeAnno: strconv.FormatFloat(j.Batch, 'g', -1, 64),
				jobspec.ArrivalAnno:   strconv.FormatFloat(j.Arrival, 'g', -1, 64), jobspec.TraceIDAnno: strconv.Itoa(j.ID),
			}},
		Spec: batchv1.JobSpec{
			Parallelism: &n, Completions: &n, BackoffLimit: ptr(int32(1000)),
			CompletionMode: ptr(batchv1.IndexedCompletion),
			SuccessPolicy:  &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr(int32(1))}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{
					SchedulerName: jobspec.SchedulerName, RestartPolicy: corev1.RestartPolicyNever, Tolerations: tol,
					Containers: []corev1.Container{{
						Name: "train", Image: "registry.invalid/inlay/train:v1",
						Env: []corev1.EnvVar{{Name: "BATCH_SIZE", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + jobspec.BatchSizeAnno + "']"}}}},
						Resources: corev1.ResourceRequirements{Requests: res, Limits: corev1.ResourceList{jobspec.GPUResource: res[jobspec.GPUResource]}},
					}},
				},
			},
		},
	}
}

// AdaptiveResult is an adaptive replay's outcome, in the simulator's terms
// (adapt.Result): JCTs in virtual seconds from each Job's creation to the
// end of its training.
type AdaptiveResult struct {
	Jobs           []adapt.JobResult
	AvgJCT         float64 // hours
	RestartsPerJob float64
	Unfinished     int
}

// ajob is one job's workload in the adaptive replay.
type ajob struct {
	spec    *adapt.Job
	name    string
	created bool
	arrival float64 // virtual
	p       float64
	// The current run: its gang's pods (uid@node), allocation, batch,
	// restart delay left and the virtual time it is accounted to.
	key      string
	alloc    goodput.Alloc
	batch    float64
	delay    float64
	at       float64
	running  bool
	ran      bool
	restarts int
	gpuSec   float64
	done     bool
	finish   float64
	// holding: the clock is held from the training's end until the Job
	// is seen complete; pods the ones told to finish.
	holding bool
	heldAt  time.Time
	told    bool
	pods    []string
}

// RunAdaptive replays adaptive jobs: it creates each Job at its arrival
// on the clock and plays its training on KWOK's pods. While a Job's whole
// gang runs, the job trains at its goodput (adapt.Train) on the GPU types
// and servers its pods are bound to, at the sum of the pods' batch sizes
// (jobspec.BatchSizeAnno), after the model's restart delay whenever the
// gang changed; when it reaches its target the pods are told to finish
// (KWOK completes them) and the clock waits for the Job's completion.
func RunAdaptive(ctx context.Context, cfg AdaptiveConfig) (*AdaptiveResult, error) {
	if cfg.Clock == nil {
		return nil, fmt.Errorf("replay: an adaptive replay needs the lockstep clock")
	}
	if len(cfg.Jobs) == 0 {
		return nil, fmt.Errorf("replay: no jobs")
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.Queue == "" {
		cfg.Queue = "default"
	}
	if cfg.Run == "" {
		cfg.Run = "adaptive"
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	fac, nfac := runInformers(cfg.Client, cfg.Namespace, cfg.Run)
	jobs, pods, nodeL := fac.Batch().V1().Jobs().Lister(), fac.Core().V1().Pods().Lister(), nfac.Core().V1().Nodes().Lister()
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	startAndSync(wctx, fac, nfac)
	clock := cfg.Clock
	js := make([]*ajob, len(cfg.Jobs))
	for i := range cfg.Jobs {
		js[i] = &ajob{spec: &cfg.Jobs[i], name: JobName(cfg.Run, cfg.Jobs[i].ID)}
	}
	defer func() {
		for _, a := range js {
			if a.holding {
				clock.Release()
			}
		}
	}()
	v0, t0 := clock.Now(), cfg.Jobs[0].Arrival
	next, left := 0, len(js)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for left > 0 {
		select {
		case <-wctx.Done():
			return adaptiveResult(js), fmt.Errorf("replay: %d of %d adaptive jobs unfinished: %w", left, len(js), wctx.Err())
		case <-tick.C:
		}
		// Arrivals due: created with the clock held, as the simulator
		// adds a job at its arrival.
		for next < len(js) && clock.Now() >= v0+js[next].spec.Arrival-t0 {
			a := js[next]
			clock.Hold()
			a.arrival = v0 + a.spec.Arrival - t0
			obj := AdaptiveObject(&cfg, a.spec)
			// Queued now, at its arrival on the held clock: the policy
			// sees the arrival the simulator gives it, not the round
			// that first saw the Job.
			obj.Annotations[jobspec.QueuedAtAnno] = jobspec.FormatTime(clock.Wall(a.arrival))
			err := submit(wctx, cfg.Client, jobs, obj, true)
			clock.Release()
			if err != nil {
				return nil, err
			}
			a.created, a.at = true, a.arrival
			next++
		}
		now := clock.Now()
		for _, a := range js {
			if !a.created || (a.done && !a.holding) {
				continue
			}
			j, err := jobs.Jobs(cfg.Namespace).Get(a.name)
			if err != nil {
				continue
			}
			if a.done {
				if done, _ := jobspec.Done(j); done || time.Since(a.heldAt) > 30*time.Second {
					a.holding = false
					clock.Release()
					left--
					if cfg.Progress != nil {
						cfg.Progress(len(js)-left, len(js))
					}
				} else if !a.told {
					a.told = tellFinish(wctx, cfg.Client, cfg.Namespace, a.pods) == nil
				}
				continue
			}
			key, alloc, batch, names := gang(j, pods, nodeL, cfg.Types)
			a.advance(now, cfg.Split)
			if a.done {
				a.holding, a.heldAt, a.pods = true, time.Now(), names
				clock.Hold()
				a.told = tellFinish(wctx, cfg.Client, cfg.Namespace, names) == nil
				continue
			}
			switch {
			case key == "":
				a.running = false
			case !a.running || key != a.key:
				if a.ran {
					a.restarts++
				}
				a.running, a.ran, a.key, a.alloc, a.batch = true, true, key, alloc, batch
				a.delay, a.at = a.spec.Model.Restart, now
			case batch != a.batch:
				a.batch = batch
			}
		}
	}
	return adaptiveResult(js), nil
}

// advance trains the current run up to virtual time now.
func (a *ajob) advance(now float64, split goodput.Split) {
	if !a.running || now <= a.at {
		a.at = math.Max(a.at, now)
		return
	}
	from := a.at
	wait := math.Min(a.delay, now-from)
	a.delay -= wait
	p, end, done := adapt.Train(a.spec.Model, a.alloc, a.batch, a.p, from+wait, now, split)
	a.gpuSec += float64(a.alloc.GPUs()) * (end - from)
	a.p, a.at = p, now
	if done {
		a.done, a.finish, a.running = true, end, false
	}
}

// gang is a Job's running gang: every pod of Gang(j) bound, Running and
// not terminating, as "uid@node,…", its allocation by GPU type and its
// batch size (the pods' shares summed); key is "" while it does not run.
func gang(j *batchv1.Job, pods corelisters.PodLister, nodeL corelisters.NodeLister, types []string) (key string, alloc goodput.Alloc, batch float64, names []string) {
	list, _ := pods.Pods(j.Namespace).List(labels.SelectorFromSet(labels.Set{"batch.kubernetes.io/job-name": j.Name}))
	want := jobspec.Gang(j)
	if want == 0 || (j.Spec.Suspend != nil && *j.Spec.Suspend) {
		return "", nil, 0, nil
	}
	var ids []string
	count := map[int]int{}
	onNodes := map[int]map[string]bool{}
	for _, p := range list {
		if !jobspec.OwnedBy(p, j.UID) || p.DeletionTimestamp != nil || p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			continue
		}
		n, err := nodeL.Get(p.Spec.NodeName)
		if err != nil || !nodes.Ready(n) {
			continue
		}
		t := slices.Index(types, nodes.GPUType(n, types))
		b, err := strconv.ParseFloat(p.Annotations[jobspec.BatchSizeAnno], 64)
		if t < 0 || err != nil {
			continue
		}
		ids = append(ids, string(p.UID)+"@"+p.Spec.NodeName)
		names = append(names, p.Name)
		batch += b
		count[t]++
		if onNodes[t] == nil {
			onNodes[t] = map[string]bool{}
		}
		onNodes[t][p.Spec.NodeName] = true
	}
	if len(ids) < want {
		return "", nil, 0, nil
	}
	sort.Strings(ids)
	for t := range types {
		if count[t] > 0 {
			alloc = append(alloc, goodput.Part{Type: t, GPUs: count[t], Nodes: len(onNodes[t])})
		}
	}
	return strings.Join(ids, ","), alloc, batch, names
}

// tellFinish has KWOK complete the pods now.
func tellFinish(ctx context.Context, cs kubernetes.Interface, ns string, names []string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{controlplane.FinishAnnotation: jobspec.FormatTime(time.Now())}}})
	for _, n := range names {
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, n, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func adaptiveResult(js []*ajob) *AdaptiveResult {
	r := &AdaptiveResult{}
	n := 0
	for _, a := range js {
		if !a.done {
			r.Unfinished++
			continue
		}
		n++
		jr := adapt.JobResult{Name: a.name, JCT: a.finish - a.arrival, Restarts: a.restarts, GPUSeconds: a.gpuSec}
		r.Jobs = append(r.Jobs, jr)
	}
	for _, jr := range r.Jobs {
		r.AvgJCT += jr.JCT / 3600 / float64(n)
		r.RestartsPerJob += float64(jr.Restarts) / float64(n)
	}
	return r
}
