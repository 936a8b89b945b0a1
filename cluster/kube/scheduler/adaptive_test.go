package scheduler

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
)

// TestAdaptiveSyncSteps runs the reconcile steps of an adaptive decision
// on the fake clientset: a new GPU count suspends the Job, patches
// parallelism and completions together once its pods are gone, and then
// resumes it; each pod's Binding carries its node's batch size; a batch
// size that changes while the pods stay is patched onto them.
func TestAdaptiveSyncSteps(t *testing.T) {
	wants := func(pods int, slots []string, batchOn map[string]string) func(*jobState) {
		return func(st *jobState) {
			st.run, st.slots, st.decidedAt = true, slots, time.Unix(100, 0)
			st.ad = &adaptJob{pods: pods, batchOn: batchOn}
		}
	}
	runSyncCases(t, []syncCase{
		{
			name:   "a new GPU count: the running Job is suspended first",
			objs:   []runtime.Object{makeJob("a").gang(2).obj(), makePod("a", "a-0").on("n1").running().obj(), makePod("a", "a-1").on("n1").running().obj(), makeNode("n1", 8)},
			state:  wants(3, []string{"n1", "n1", "n1"}, map[string]string{"n1": "32"}),
			writes: []string{"patch jobs"},
			again:  200 * time.Millisecond,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if !suspended(j) || *j.Spec.Parallelism != 2 || j.Annotations[DecidedAtAnno] == "" {
					t.Errorf("suspended %v, parallelism %d, annotations %v", suspended(j), *j.Spec.Parallelism, j.Annotations)
				}
			},
		},
		{
			name:  "suspended, its old pods still going: nothing patched yet",
			objs:  []runtime.Object{makeJob("a").gang(2).suspended().obj(), makePod("a", "a-0").on("n1").terminating().obj(), makeNode("n1", 8)},
			state: wants(3, []string{"n1", "n1", "n1"}, map[string]string{"n1": "32"}),
			again: 200 * time.Millisecond,
		},
		{
			name:   "suspended, no pods left: parallelism and completions patched together, still suspended",
			objs:   []runtime.Object{makeJob("a").gang(2).suspended().obj(), makeNode("n1", 8)},
			state:  wants(3, []string{"n1", "n1", "n1"}, map[string]string{"n1": "32"}),
			writes: []string{"patch jobs"},
			again:  200 * time.Millisecond,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if !suspended(j) || *j.Spec.Parallelism != 3 || *j.Spec.Completions != 3 {
					t.Errorf("suspended %v, parallelism %d, completions %d", suspended(j), *j.Spec.Parallelism, *j.Spec.Completions)
				}
			},
		},
		{
			name:   "the count right: the suspended Job is resumed",
			objs:   []runtime.Object{makeJob("a").gang(3).suspended().obj(), makeNode("n1", 8)},
			state:  wants(3, []string{"n1", "n1", "n1"}, map[string]string{"n1": "32"}),
			writes: []string{"patch jobs"},
			again:  time.Second,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if suspended(j) {
					t.Error("still suspended")
				}
			},
		},
		{
			name: "a mixed-type gang: each Binding carries its node's batch size",
			objs: []runtime.Object{makeJob("a").gang(3).obj(), makePod("a", "a-0").obj(), makePod("a", "a-1").obj(), makePod("a", "a-2").obj(),
				makeNode("a100-0", 16), makeNode("t4-0", 8)},
			state:  wants(3, []string{"a100-0", "a100-0", "t4-0"}, map[string]string{"a100-0": "48", "t4-0": "24"}),
			writes: []string{"create pods/binding", "create pods/binding", "create pods/binding"},
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				var got []string
				for _, a := range f.before {
					if c, ok := a.(k8stesting.CreateAction); ok && a.GetSubresource() == "binding" {
						b := c.GetObject().(*corev1.Binding)
						got = append(got, b.Name+"→"+b.Target.Name+"@"+b.Annotations[jobspec.BatchSizeAnno])
						if b.Annotations[DecidedAtAnno] == "" {
							t.Errorf("binding %s without the decision's time", b.Name)
						}
					}
				}
				if want := []string{"a-0→a100-0@48", "a-1→a100-0@48", "a-2→t4-0@24"}; !slices.Equal(got, want) {
					t.Errorf("bindings %v, want %v", got, want)
				}
			},
		},
		{
			name: "the batch size changes, the pods stay: patched onto them",
			objs: []runtime.Object{makeJob("a").gang(2).obj(), withAnno(makePod("a", "a-0").on("n1").running().obj(), jobspec.BatchSizeAnno, "64"),
				withAnno(makePod("a", "a-1").on("n1").running().obj(), jobspec.BatchSizeAnno, "128"), makeNode("n1", 8)},
			state:  wants(2, []string{"n1", "n1"}, map[string]string{"n1": "128"}),
			writes: []string{"patch pods", "patch jobs/status"},
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				p, err := f.cs.CoreV1().Pods("default").Get(t.Context(), "a-0", metav1.GetOptions{})
				if err != nil || p.Annotations[jobspec.BatchSizeAnno] != "128" {
					t.Errorf("pod a-0: %v %v", p.Annotations, err)
				}
			},
		},
	})
}

func withAnno(p *corev1.Pod, k, v string) *corev1.Pod {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
	return p
}
