package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
)

// TestForeignGPUs: the cluster view leaves to the policy only the GPUs of
// inlay's own pods of valid Jobs it serves; every other live pod on a node
// holds its GPUs against the policy, as fits (the binding's check) sees
// them. A Job of inlay's queue whose pods another scheduler bound (so
// invalid) once made the two disagree, and a job waited for GPUs the
// policy thought free.
func TestForeignGPUs(t *testing.T) {
	yes := true
	pod := func(name, job string, uid types.UID, sched string, gpus int64, phase corev1.PodPhase) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PodSpec{NodeName: "n1", SchedulerName: sched, Containers: []corev1.Container{{Name: "c",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					jobspec.GPUResource: *resource.NewQuantity(gpus, resource.DecimalSI)}}}}},
			Status: corev1.PodStatus{Phase: phase},
		}
		if job != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: job, UID: uid, Controller: &yes}}
		}
		return p
	}
	s := &Scheduler{podIx: cache.NewIndexer(cache.MetaNamespaceKeyFunc, podIndexers()), st: map[string]*jobState{
		"default/good":    {key: "default/good", uid: "u-good"},
		"default/invalid": {key: "default/invalid", uid: "u-bad", invalid: "annotation inlay.dev/steps: \"lots\" is not a positive number"},
	}}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want int // foreign GPUs on n1 after adding the pod
	}{
		{"inlay's pod of a valid Job it serves", pod("good-0", "good", "u-good", jobspec.SchedulerName, 2, corev1.PodRunning), 0},
		{"the same Job's pod bound by another scheduler", pod("good-1", "good", "u-good", "default-scheduler", 1, corev1.PodRunning), 1},
		{"an invalid Job's pod", pod("invalid-0", "invalid", "u-bad", jobspec.SchedulerName, 2, corev1.PodRunning), 3},
		{"an older Job of the same name", pod("good-old", "good", "u-old", jobspec.SchedulerName, 1, corev1.PodPending), 4},
		{"a pod no Job controls", pod("bare", "", "", "default-scheduler", 1, corev1.PodRunning), 5},
		{"a Job of another queue", pod("other-0", "other", "u-other", jobspec.SchedulerName, 1, corev1.PodRunning), 6},
		{"a pod that has ended", pod("ended", "other", "u-other", jobspec.SchedulerName, 4, corev1.PodSucceeded), 6},
	} {
		if err := s.podIx.Add(c.pod); err != nil {
			t.Fatal(err)
		}
		if got := s.foreignGPUs("n1"); got != c.want {
			t.Errorf("after %s: %d foreign GPUs, want %d", c.name, got, c.want)
		}
	}
	if got := s.foreignGPUs("n2"); got != 0 {
		t.Errorf("empty node: %d foreign GPUs", got)
	}
}
