package scheduler

import (
	"io"
	"log/slog"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
)

// reserveFixture is a scheduler over hand-filled caches: node n1 and n2
// with 2 GPUs each, and Jobs a and b that the round runs on n1.
func reserveFixture(t *testing.T) (*Scheduler, cache.Indexer) {
	t.Helper()
	nodeIx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	podIx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers())
	for _, name := range []string{"n1", "n2"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Capacity:   corev1.ResourceList{jobspec.GPUResource: resource.MustParse("2")},
			Allocatable: corev1.ResourceList{jobspec.GPUResource: resource.MustParse("2"), corev1.ResourceCPU: resource.MustParse("16"),
				corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")},
		}}
		if err := nodeIx.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	s := &Scheduler{log: slog.New(slog.NewTextHandler(io.Discard, nil)), nodes: corelisters.NewNodeLister(nodeIx), pods: corelisters.NewPodLister(podIx), podIx: podIx,
		st: map[string]*jobState{}, assumed: map[types.UID]assumedPod{}}
	for _, j := range []string{"a", "b"} {
		s.st["default/"+j] = &jobState{key: "default/" + j, ns: "default", name: j, uid: types.UID("job-" + j), run: true, slots: []string{"n1"}}
	}
	return s, podIx
}

func gpuPod(job, name string) *corev1.Pod {
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("pod-" + name),
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: job, UID: types.UID("job-" + job), Controller: &yes}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "train", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{jobspec.GPUResource: resource.MustParse("2")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func (s *Scheduler) want(key string) desired {
	st := s.st[key]
	return desired{known: true, run: st.run, uid: st.uid, slots: append([]string(nil), st.slots...)}
}

// TestReserve: a gang whose Binding is in flight holds its node until the
// informer shows it bound (and then counts from the cache) or the binding
// is withdrawn, so that two workers never bind two gangs to the same GPUs;
// and a worker does not bind a gang that a round since has preempted.
func TestReserve(t *testing.T) {
	s, podIx := reserveFixture(t)
	pa, pb := gpuPod("a", "a-0"), gpuPod("b", "b-0")
	for _, p := range []*corev1.Pod{pa, pb} {
		if err := podIx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	da, db := s.want("default/a"), s.want("default/b")
	if ok, _ := s.reserve("default/a", da, []*corev1.Pod{pa}, []string{"n1"}); !ok {
		t.Fatal("a: not reserved on an empty node")
	}
	// a's Binding is in flight; the informer still shows a-0 unbound.
	if ok, again := s.reserve("default/b", db, []*corev1.Pod{pb}, []string{"n1"}); ok || again == 0 {
		t.Fatalf("b: reserved (%v, %v) on n1 beside a's binding in flight", ok, again)
	}
	// a's worker again before the informer showed the binding (an event
	// of the Job's own): a-0 is not bound a second time, anywhere.
	if ok, again := s.reserve("default/a", da, []*corev1.Pod{pa}, []string{"n2"}); ok || again == 0 {
		t.Fatalf("a: a-0 reserved again (%v, %v) while its binding is in flight", ok, again)
	}
	// A failed binding that was not made after all expires.
	a := s.assumed[pa.UID]
	a.expires = time.Now().Add(-time.Second)
	s.assumed[pa.UID] = a
	if ok, _ := s.reserve("default/b", s.want("default/b"), []*corev1.Pod{pb}, []string{"n1"}); !ok {
		t.Fatal("b: not reserved on n1 after a's failed binding expired")
	}
	s.unassume([]*corev1.Pod{pb})
	if ok, _ := s.reserve("default/a", da, []*corev1.Pod{pa}, []string{"n1"}); !ok {
		t.Fatal("a: not reserved again after its failed binding expired")
	}
	// The informer catches up: a-0 is bound, counted from the cache, and
	// its assumption forgotten.
	bound := pa.DeepCopy()
	bound.Spec.NodeName = "n1"
	if err := podIx.Update(bound); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.reserve("default/b", db, []*corev1.Pod{pb}, []string{"n1"}); ok {
		t.Fatal("b: reserved on n1 beside a's bound pod")
	}
	if len(s.assumed) != 0 {
		t.Errorf("%d assumptions left after the informer showed the binding", len(s.assumed))
	}
	// a's pod ends: n1 is free for b.
	done := bound.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	if err := podIx.Update(done); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.reserve("default/b", db, []*corev1.Pod{pb}, []string{"n1"}); !ok {
		t.Fatal("b: not reserved on n1 after a's pod ended")
	}
	// A withdrawn reservation frees the node.
	s.unassume([]*corev1.Pod{pb})
	pc := gpuPod("a", "a-1")
	if err := podIx.Add(pc); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.reserve("default/a", da, []*corev1.Pod{pc}, []string{"n1"}); !ok {
		t.Fatal("a: not reserved on n1 after b's reservation was withdrawn")
	}
	s.unassume([]*corev1.Pod{pc})
	// A round preempted b after its worker's snapshot: nothing is bound.
	s.st["default/b"].run, s.st["default/b"].slots = false, nil
	if ok, again := s.reserve("default/b", db, []*corev1.Pod{pb}, []string{"n1"}); ok || again != 0 {
		t.Errorf("b: reserved (%v, %v) after a round preempted it", ok, again)
	}
	// Moved to n2 since: the old slots are not bound either.
	s.st["default/b"].run, s.st["default/b"].slots = true, []string{"n2"}
	if ok, _ := s.reserve("default/b", db, []*corev1.Pod{pb}, []string{"n1"}); ok {
		t.Error("b: reserved on n1 after a round moved it to n2")
	}
	if ok, _ := s.reserve("default/b", s.want("default/b"), []*corev1.Pod{pb}, []string{"n2"}); !ok {
		t.Error("b: not reserved on n2, where the round put it")
	}
}

// TestTrimObject: the informers' transform drops managed fields and what
// the scheduler never reads, keeps what it does (a pod's requests summed
// as jobspec.PodRequests counts them, its node, phase and tolerations; a
// Job's gang, suspension, annotations and status), and passes what is not
// an object (a deletion's tombstone) through.
func TestTrimObject(t *testing.T) {
	trimObject := newTrimmer().object
	p := makePod("a", "a-0").obj()
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	p.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: "{}", "keep": "1"}
	p.Spec.NodeName, p.Spec.SchedulerName = "n1", jobspec.SchedulerName
	p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	gpu := func(n string, q string) corev1.ResourceList {
		return corev1.ResourceList{jobspec.GPUResource: resource.MustParse(n), corev1.ResourceCPU: resource.MustParse(q), corev1.ResourceMemory: resource.MustParse("1Gi")}
	}
	p.Spec.Containers = []corev1.Container{
		{Name: "train", Image: "x", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}, Resources: corev1.ResourceRequirements{Limits: gpu("2", "1500m")}},
		{Name: "side", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}},
	}
	p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: gpu("1", "4")}}}
	p.Spec.Volumes = []corev1.Volume{{Name: "v"}}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady}}}
	want := jobspec.PodRequests(&p.Spec)
	out, err := trimObject(p)
	q := out.(*corev1.Pod)
	if err != nil || q.ManagedFields != nil || q.Name != "a-0" || q.Annotations["keep"] != "1" || len(q.Annotations) != 1 {
		t.Errorf("pod: %v, %+v", err, out)
	}
	if got := jobspec.PodRequests(&q.Spec); got != want || want.GPUs != 2 || want.MilliCPU != 4000 {
		t.Errorf("pod requests %+v after trimming, %+v before", got, want)
	}
	if q.Spec.NodeName != "n1" || q.Spec.SchedulerName != jobspec.SchedulerName || len(q.Spec.Tolerations) != 1 || q.Status.Phase != corev1.PodRunning {
		t.Errorf("pod lost what the scheduler reads: %+v", q)
	}
	if q.Spec.Volumes != nil || q.Spec.InitContainers != nil || len(q.Spec.Containers) != 1 || q.Spec.Containers[0].Env != nil || q.Status.Conditions != nil {
		t.Errorf("pod kept what the scheduler never reads: %+v", q)
	}
	again, _ := trimObject(q.DeepCopy())
	if got := jobspec.PodRequests(&again.(*corev1.Pod).Spec); got != want {
		t.Errorf("trimming twice: requests %+v, want %+v", got, want)
	}
	if &again.(*corev1.Pod).Spec.Containers[0] != &q.Spec.Containers[0] {
		t.Error("two pods of one shape do not share their container")
	}

	par, suspend := int32(3), true
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default", Annotations: map[string]string{jobspec.TypeAnno: "resnet50", jobspec.StepsAnno: "100"}},
		Spec: batchv1.JobSpec{Parallelism: &par, Completions: &par, Suspend: &suspend, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: p.DeepCopy().Spec}},
		Status: batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}}}
	out, _ = trimObject(j)
	k := out.(*batchv1.Job)
	if jobspec.Gang(k) != 2 || !suspended(k) || k.Annotations[jobspec.TypeAnno] != "resnet50" || len(k.Status.Conditions) != 1 ||
		jobspec.PodRequests(&k.Spec.Template.Spec) != want || k.Spec.Template.Spec.SchedulerName != jobspec.SchedulerName {
		t.Errorf("job lost what the scheduler reads: %+v", k)
	}
	if k.Spec.Selector != nil || k.Spec.Template.Labels != nil {
		t.Errorf("job kept what the scheduler never reads: %+v", k)
	}

	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"x": "y"}},
		Status: corev1.NodeStatus{Allocatable: gpu("8", "64"), Images: []corev1.ContainerImage{{Names: []string{"big"}}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	out, _ = trimObject(n)
	if m := out.(*corev1.Node); m.Status.Images != nil || len(m.Status.Allocatable) != 3 || len(m.Status.Conditions) != 1 || m.Labels["x"] != "y" {
		t.Errorf("node: %+v", m)
	}

	tomb := cache.DeletedFinalStateUnknown{Key: "default/a-0", Obj: p}
	if out, err := trimObject(tomb); err != nil || out != any(tomb) {
		t.Errorf("tombstone: %v, %+v", err, out)
	}
}
