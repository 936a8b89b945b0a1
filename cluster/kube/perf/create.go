package perf

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/kueue"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// createNodes creates the cluster's nodes as plain API objects: Ready,
// with GPU capacity and type labels, and no KWOK annotation (nothing keeps
// them alive, and nothing needs to with the node-lifecycle controller off).
func createNodes(ctx context.Context, cs kubernetes.Interface, plat *chw.Platform, workers int) error {
	objs := nodes.Objects(plat)
	now := metav1.Now()
	return parallel(ctx, len(objs), workers, func(i int) error {
		n := objs[i]
		delete(n.Annotations, nodes.KWOKAnnotation)
		n.Labels["type"] = "bench"
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "Bench",
			LastHeartbeatTime: now, LastTransitionTime: now}}
		_, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
		// The API server taints a new node not-ready until the
		// node-lifecycle controller, off here, sees it Ready.
		if err := setReady(ctx, cs, n.Name, true); err != nil {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
		return nil
	}, nil)
}

// parallel runs f(0..n-1) on workers goroutines, each call after wait(i)
// when wait is set; the first error ends it.
func parallel(ctx context.Context, n, workers int, f func(i int) error, wait func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					cancel(err)
				}
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if wait != nil {
			if err := wait(i); err != nil {
				cancel(err)
				break
			}
		}
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

func createNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// deleteAll removes a run's Jobs and pods at once (no kubelet confirms a
// bound pod's end, so pods go with a grace period of zero) and waits
// until the pods are gone, so that the next run finds the nodes empty.
func deleteAll(ctx context.Context, cs kubernetes.Interface, ns string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	zero := int64(0)
	bg := metav1.DeletePropagationBackground
	_ = cs.BatchV1().Jobs(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &bg}, metav1.ListOptions{})
	for ctx.Err() == nil {
		_ = cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil && len(l.Items) == 0 {
			return
		}
		time.Sleep(time.Second)
	}
}

// benchJobType is the throughput table's job type of the benchmark's
// jobs, and benchSteps their steps (more than any run lasts).
const (
	benchJobType = "ResNet-18 (batch size 64)"
	benchSteps   = 1e12
	// managedBy keeps the Job controller away from the Jobs of the pods
	// created directly.
	managedBy = "inlay.dev/perf"
)

// podSpec is a benchmark pod's spec: one GPU, a little CPU and memory.
func podSpec(scheduler string) corev1.PodSpec {
	gpu := *resource.NewQuantity(podGPUs, resource.DecimalSI)
	return corev1.PodSpec{SchedulerName: scheduler, RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "train", Image: "registry.invalid/inlay/train:v1",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi"), jobspec.GPUResource: gpu},
				Limits:   corev1.ResourceList{jobspec.GPUResource: gpu},
			}}}}
}

// job is the Job of benchmark job i for inlay's queue (ns); direct: the
// Job controller leaves it alone and the benchmark makes its pod.
func job(ns, name string, sched string, direct bool) *batchv1.Job {
	one := int32(1)
	backoff := int32(0)
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{jobspec.QueueLabel: ns},
			Annotations: map[string]string{jobspec.TypeAnno: benchJobType, jobspec.StepsAnno: strconv.FormatFloat(benchSteps, 'g', -1, 64)}},
		Spec: batchv1.JobSpec{Parallelism: &one, Completions: &one, BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "bench"}}, Spec: podSpec(sched)}},
	}
	if direct {
		mb := managedBy
		j.Spec.ManagedBy = &mb
	}
	return j
}

// createWork creates the run's pods (or Jobs) at the configured rate,
// starting the churn once a third are created.
func createWork(ctx context.Context, cfg *Config, cs kubernetes.Interface, ns, name string, plat *chw.Platform, w *watcher, churn *churner) error {
	sched := schedulerName(name)
	start := time.Now()
	var churnOnce sync.Once
	wait := func(i int) error {
		if i == cfg.Pods/3 && churn.enabled() {
			churnOnce.Do(func() { churn.start(ctx, cfg.ChurnFor) })
		}
		if cfg.Rate <= 0 {
			return nil
		}
		d := time.Until(start.Add(time.Duration(float64(i) / cfg.Rate * float64(time.Second))))
		if d <= 0 {
			return nil
		}
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return parallel(ctx, cfg.Pods, cfg.Creators, func(i int) error {
		return createOne(ctx, cfg, cs, ns, name, sched, i, w)
	}, wait)
}

// createOne creates work item i: a Job through the Job controller, a pod
// alone (kube-scheduler), or a Job the controller leaves alone and its pod
// (inlay, whose unit is a Job).
func createOne(ctx context.Context, cfg *Config, cs kubernetes.Interface, ns, name, sched string, i int, w *watcher) error {
	itemName := fmt.Sprintf("w-%06d", i)
	t := time.Now()
	if cfg.Jobs {
		j := job(ns, itemName, sched, false)
		if name == Kueue {
			// Suspended in Kueue's LocalQueue, as its webhook would make
			// it (the webhook is not registered here: controlplane/kueue.go).
			yes := true
			j.Labels = map[string]string{kueue.QueueLabel: kueueQueue}
			j.Spec.Suspend = &yes
		}
		w.sent(itemName, t)
		_, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{})
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: itemName, Labels: map[string]string{"app": "bench"}}, Spec: podSpec(sched)}
	if name == Inlay {
		j, err := cs.BatchV1().Jobs(ns).Create(ctx, job(ns, itemName, sched, true), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		yes := true
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID, Controller: &yes}}
		t = time.Now()
	}
	w.sent(itemName, t)
	_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}
