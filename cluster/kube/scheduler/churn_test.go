package scheduler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// churnAPI is a fake API server for a whole scheduler: nodes, and Jobs
// created with their pods by the test (as the benchmark's Jobs, which the
// Job controller leaves alone: a suspended Job's pods stay bound), the
// Binding subresource applied to the pod (a second binding of a pod is a
// conflict, as in the API server), and a record of every binding and
// every pod deleted.
type churnAPI struct {
	cs       *fake.Clientset
	mu       sync.Mutex
	binds    map[string][]string // pod → nodes bound to, in order
	deleted  []string
	watching map[string]bool // resources with a watch open
}

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

const churnGPUs = 8 // GPUs a node

func newChurnAPI(nodeNames []string) *churnAPI {
	var objs []runtime.Object
	for _, n := range nodeNames {
		objs = append(objs, churnNode(n))
	}
	a := &churnAPI{cs: fake.NewClientset(objs...), binds: map[string][]string{}, watching: map[string]bool{}}
	a.cs.PrependReactor("create", "pods", a.bind)
	a.cs.PrependReactor("delete", "pods", func(act k8stesting.Action) (bool, runtime.Object, error) {
		a.mu.Lock()
		a.deleted = append(a.deleted, act.(k8stesting.DeleteAction).GetName())
		a.mu.Unlock()
		return false, nil, nil
	})
	a.cs.PrependWatchReactor("*", func(act k8stesting.Action) (bool, watch.Interface, error) {
		// The fake's watch replays nothing: objects created between an
		// informer's list and its watch would never be seen.
		a.mu.Lock()
		a.watching[act.GetResource().Resource] = true
		a.mu.Unlock()
		return false, nil, nil
	})
	return a
}

// bind applies a Binding to its pod (the fake clientset holds the lock
// of its reactors throughout, so a read and the update are one step).
func (a *churnAPI) bind(act k8stesting.Action) (bool, runtime.Object, error) {
	if act.GetSubresource() != "binding" {
		return false, nil, nil
	}
	b := act.(k8stesting.CreateAction).GetObject().(*corev1.Binding)
	o, err := a.cs.Tracker().Get(podsGVR, b.Namespace, b.Name)
	if err != nil {
		return true, nil, err
	}
	p := o.(*corev1.Pod).DeepCopy()
	if p.Spec.NodeName != "" {
		return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), b.Name, fmt.Errorf("pod %s is already assigned to node %q", b.Name, p.Spec.NodeName))
	}
	p.Spec.NodeName = b.Target.Name
	for k, v := range b.Annotations {
		// The API server copies a Binding's annotations onto the pod.
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
	if err := a.cs.Tracker().Update(podsGVR, p, b.Namespace); err != nil {
		return true, nil, err
	}
	a.mu.Lock()
	a.binds[b.Name] = append(a.binds[b.Name], b.Target.Name)
	a.mu.Unlock()
	return true, b, nil
}

func (a *churnAPI) watchingAll(resources ...string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range resources {
		if !a.watching[r] {
			return false
		}
	}
	return true
}

// churnNode is a Ready node of 8 V100s.
func churnNode(name string) *corev1.Node {
	res := corev1.ResourceList{jobspec.GPUResource: *resource.NewQuantity(churnGPUs, resource.DecimalSI),
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{nodes.TypeLabel: "v100"}},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy(),
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

// setReady sets a node's Ready condition and the not-ready taint, as the
// node-lifecycle controller does.
func (a *churnAPI) setReady(t *testing.T, name string, ready bool) {
	t.Helper()
	n, err := a.cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions[0].Status = corev1.ConditionTrue
	n.Spec.Taints = nil
	if !ready {
		n.Status.Conditions[0].Status = corev1.ConditionFalse
		n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}
	}
	if _, err := a.cs.CoreV1().Nodes().Update(t.Context(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createJob creates Job name of inlay's queue, a gang of pods pods of
// perPod GPUs each, and its pods.
func (a *churnAPI) createJob(t *testing.T, name string, pods, perPod int) {
	t.Helper()
	n := int32(pods)
	gpu := *resource.NewQuantity(int64(perPod), resource.DecimalSI)
	spec := corev1.PodSpec{SchedulerName: jobspec.SchedulerName, RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "train", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi"), jobspec.GPUResource: gpu},
			Limits:   corev1.ResourceList{jobspec.GPUResource: gpu}}}}}
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("job-" + name),
		Labels:      map[string]string{jobspec.QueueLabel: "q"},
		Annotations: map[string]string{jobspec.TypeAnno: "ResNet-18 (batch size 64)", jobspec.StepsAnno: "1e12"}},
		Spec: batchv1.JobSpec{Parallelism: &n, Completions: &n, Template: corev1.PodTemplateSpec{Spec: spec}}}
	if _, err := a.cs.BatchV1().Jobs("default").Create(t.Context(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	yes := true
	for i := range pods {
		pn := fmt.Sprintf("%s-%d", name, i)
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: pn, UID: types.UID("pod-" + pn),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: j.UID, Controller: &yes}}},
			Spec: *spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if _, err := a.cs.CoreV1().Pods("default").Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// churnState is what the API server holds: pods bound per node (GPUs),
// pods bound and pending, Jobs suspended.
type churnState struct {
	gpusOn             map[string]int
	bound, pending     int
	suspended          []string
	jobPods, jobsBound map[string]int
}

func (a *churnAPI) state(t *testing.T) churnState {
	t.Helper()
	st := churnState{gpusOn: map[string]int{}, jobPods: map[string]int{}, jobsBound: map[string]int{}}
	pods, err := a.cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		k := jobspec.ControllerKey(&p)
		st.jobPods[k]++
		if p.Spec.NodeName == "" {
			st.pending++
			continue
		}
		st.bound++
		st.jobsBound[k]++
		st.gpusOn[p.Spec.NodeName] += int(jobspec.PodRequests(&p.Spec).GPUs)
	}
	jobs, err := a.cs.BatchV1().Jobs("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if suspended(&j) {
			st.suspended = append(st.suspended, j.Name)
		}
	}
	sort.Strings(st.suspended)
	return st
}

// check asserts what holds at every moment: no node over its GPUs, no pod
// bound more than once, none deleted.
func (a *churnAPI) check(t *testing.T, when string) churnState {
	t.Helper()
	st := a.state(t)
	names := slices.Sorted(maps.Keys(st.gpusOn))
	for _, n := range names {
		if st.gpusOn[n] > churnGPUs {
			t.Errorf("%s: node %s holds %d GPUs of %d", when, n, st.gpusOn[n], churnGPUs)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	pods := slices.Sorted(maps.Keys(a.binds))
	for _, p := range pods {
		if len(a.binds[p]) > 1 {
			t.Errorf("%s: pod %s bound %d times: %v", when, p, len(a.binds[p]), a.binds[p])
		}
	}
	if len(a.deleted) > 0 {
		t.Errorf("%s: pods lost (deleted): %v", when, a.deleted)
	}
	return st
}

// waitFor polls cond until it holds; the deadline only bounds a broken
// run (no figure is asserted on time).
func waitFor(t *testing.T, what string, cond func() bool, explain func() string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never %s: %s", what, explain())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNodeChurn runs the whole scheduler on the fake API server: Jobs fill
// half of six nodes; the two nodes that hold the most pods go NotReady
// (their Jobs are moved by the policy and suspended, but nothing deletes
// their pods, as with the benchmark's Jobs that the Job controller leaves
// alone), as many Jobs again arrive, enough for the whole cluster, and the
// nodes come back. Every pod must end bound exactly once, none lost, no
// node over its GPUs, and every Job running: the scheduler must see the
// moved Jobs where their pods still are, and give the other Jobs the
// nodes the policy had moved them to.
func TestNodeChurn(t *testing.T) {
	names := []string{"n0", "n1", "n2", "n3", "n4", "n5"}
	api := newChurnAPI(names)
	table, err := throughput.Gavel()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := registry.New("fifo", registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Client: api.cs, Policy: pol, Table: table, Queue: "q", Speedup: 360 * 20,
		Sched: sched.Config{Round: 360, ResetInterval: -1}, Workers: 4, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, "watching pods, Jobs and nodes", func() bool { return api.watchingAll("pods", "jobs", "nodes") }, func() string { return "" })

	// Jobs of 2 GPUs: one pod of 2, or a gang of two pods of 1.
	jobs := 0
	arrive := func(n int) {
		for range n {
			if jobs%2 == 0 {
				api.createJob(t, "j"+strconv.Itoa(jobs), 1, 2)
			} else {
				api.createJob(t, "j"+strconv.Itoa(jobs), 2, 1)
			}
			jobs++
		}
	}
	explain := func() string {
		st, c := api.state(t), s.Stats()
		return fmt.Sprintf("%d pods bound, %d pending, GPUs per node %v, suspended %v; %d rounds, %d rebuilds, %d binds, %d suspends, %d resumes, %d preemptions",
			st.bound, st.pending, st.gpusOn, st.suspended, c.Rounds, c.Rebuilds, c.Binds, c.Suspends, c.Resumes, c.Preemptions)
	}
	half := len(names) * churnGPUs / 2 / 2
	arrive(half)
	waitFor(t, "all first Jobs bound", func() bool { return api.state(t).pending == 0 }, explain)
	before := api.check(t, "before the churn")

	// The two nodes that hold the most pods go NotReady.
	down := append([]string(nil), names...)
	sort.SliceStable(down, func(i, j int) bool { return before.gpusOn[down[i]] > before.gpusOn[down[j]] })
	down = down[:2]
	if before.gpusOn[down[0]] == 0 || before.gpusOn[down[1]] == 0 {
		t.Fatalf("the churned nodes %v hold no pods: %v", down, before.gpusOn)
	}
	for _, n := range down {
		api.setReady(t, n, false)
	}
	waitFor(t, "the cluster view rebuilt without the nodes", func() bool { return s.Stats().Rebuilds >= 1 }, explain)
	arrive(half)
	rounds := s.Stats().Rounds
	waitFor(t, "ten rounds with the nodes down", func() bool { return s.Stats().Rounds >= rounds+10 }, explain)
	during := api.check(t, "while the nodes are NotReady")
	if during.pending == 0 {
		t.Fatalf("nothing pending while the nodes are down (the cluster is full only with them): %s", explain())
	}

	for _, n := range down {
		api.setReady(t, n, true)
	}
	rebuilds := s.Stats().Rebuilds
	waitFor(t, "every Job running after the nodes returned", func() bool {
		st := api.state(t)
		return st.pending == 0 && len(st.suspended) == 0
	}, explain)
	after := api.check(t, "after the nodes returned")
	if s.Stats().Rebuilds <= rebuilds {
		t.Errorf("the cluster view was not rebuilt when the nodes returned: %+v", s.Stats())
	}
	for k, n := range after.jobPods {
		if after.jobsBound[k] != n {
			t.Errorf("job %s: %d of %d pods bound", k, after.jobsBound[k], n)
		}
	}
	if after.bound != 3*jobs/2 {
		t.Errorf("%d pods bound, want %d", after.bound, 3*jobs/2)
	}
}
