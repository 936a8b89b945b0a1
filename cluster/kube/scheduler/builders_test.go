package scheduler

import (
	"io"
	"log/slog"
	"testing"

	"golang.org/x/time/rate"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
)

// Builders that make the reconcile tests' inputs readable, the way
// kube-scheduler's MakePod().Node(...).Obj() does.

type jobBuilder struct{ j *batchv1.Job }

// makeJob is a Job of inlay's queue in namespace default with UID
// job-<name>, one pod of 2 GPUs.
func makeJob(name string) *jobBuilder {
	one := int32(1)
	return &jobBuilder{&batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("job-" + name),
			Labels: map[string]string{jobspec.QueueLabel: "q"}, Annotations: map[string]string{}},
		Spec: batchv1.JobSpec{Parallelism: &one, Completions: &one},
	}}
}

func (b *jobBuilder) gang(n int32) *jobBuilder {
	b.j.Spec.Parallelism, b.j.Spec.Completions = &n, &n
	return b
}

func (b *jobBuilder) suspended() *jobBuilder {
	yes := true
	b.j.Spec.Suspend = &yes
	return b
}

func (b *jobBuilder) anno(k, v string) *jobBuilder {
	b.j.Annotations[k] = v
	return b
}

func (b *jobBuilder) complete() *jobBuilder {
	b.j.Status.Conditions = append(b.j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})
	return b
}

func (b *jobBuilder) obj() *batchv1.Job { return b.j }

type podBuilder struct{ p *corev1.Pod }

// makePod is job's pod name asking for 2 GPUs, pending and unbound.
func makePod(job, name string) *podBuilder { return &podBuilder{gpuPod(job, name)} }

func (b *podBuilder) on(node string) *podBuilder {
	b.p.Spec.NodeName = node
	return b
}

func (b *podBuilder) running() *podBuilder {
	b.p.Status.Phase = corev1.PodRunning
	return b
}

func (b *podBuilder) terminating() *podBuilder {
	now := metav1.Now()
	b.p.DeletionTimestamp = &now
	return b
}

func (b *podBuilder) obj() *corev1.Pod { return b.p }

// makeNode is a Ready node with gpus GPUs.
func makeNode(name string, gpus int64) *corev1.Node {
	q := *resource.NewQuantity(gpus, resource.DecimalSI)
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		Capacity:   corev1.ResourceList{jobspec.GPUResource: q},
		Allocatable: corev1.ResourceList{jobspec.GPUResource: q, corev1.ResourceCPU: resource.MustParse("16"),
			corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")},
	}}
}

// reconcileFixture is a scheduler whose caches and fake clientset both
// hold objs, with the round's state for every Job among them (running on
// no slots until the test says otherwise).
type reconcileFixture struct {
	s                    *Scheduler
	cs                   *fake.Clientset
	jobIx, podIx, nodeIx cache.Indexer
	rec                  *record.FakeRecorder
	// before is the actions that the last refresh forgot.
	before []k8stesting.Action
}

func newReconcileFixture(t *testing.T, objs ...runtime.Object) *reconcileFixture {
	t.Helper()
	f := &reconcileFixture{cs: fake.NewClientset(objs...), rec: record.NewFakeRecorder(100),
		jobIx:  cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		podIx:  cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers()),
		nodeIx: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	f.s = &Scheduler{cs: f.cs, log: slog.New(slog.NewTextHandler(io.Discard, nil)), rec: f.rec,
		jobs: batchlisters.NewJobLister(f.jobIx), pods: corelisters.NewPodLister(f.podIx), nodes: corelisters.NewNodeLister(f.nodeIx), podIx: f.podIx,
		st: map[string]*jobState{}, assumed: map[types.UID]assumedPod{}, pubLimit: rate.NewLimiter(rate.Inf, 1),
		pubBusy: rate.NewLimiter(rate.Inf, 1)}
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *batchv1.Job:
			err = f.jobIx.Add(o)
			f.s.st[o.Namespace+"/"+o.Name] = &jobState{key: o.Namespace + "/" + o.Name, ns: o.Namespace, name: o.Name, uid: o.UID, gpu: -1}
		case *corev1.Pod:
			err = f.podIx.Add(o)
		case *corev1.Node:
			err = f.nodeIx.Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// refresh copies the Job as the fake API server holds it into the cache,
// as the informer would, and forgets the actions so far.
func (f *reconcileFixture) refresh(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	j, err := f.cs.BatchV1().Jobs(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.jobIx.Update(j); err != nil {
		t.Fatal(err)
	}
	f.before = f.cs.Actions()
	f.cs.ClearActions()
	return j
}

// writes lists the fake clientset's writes as verb resource/subresource.
func (f *reconcileFixture) writes() []string {
	var out []string
	for _, a := range f.cs.Actions() {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		r := a.GetResource().Resource
		if a.GetSubresource() != "" {
			r += "/" + a.GetSubresource()
		}
		out = append(out, a.GetVerb()+" "+r)
	}
	return out
}

// events drains the recorder's events.
func (f *reconcileFixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}
