package jobspec_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
)

// TestPodOwners: the controlling Job's key, ownership by UID, and whether
// the pod has ended.
func TestPodOwners(t *testing.T) {
	yes, no := true, false
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", OwnerReferences: []metav1.OwnerReference{
		{Kind: "Job", Name: "other", UID: "u1", Controller: &no},
		{Kind: "Job", Name: "j", UID: "u2", Controller: &yes},
	}}}
	if k := jobspec.ControllerKey(p); k != "ns/j" {
		t.Errorf("ControllerKey = %q, want ns/j", k)
	}
	if !jobspec.OwnedBy(p, "u1") || !jobspec.OwnedBy(p, "u2") || jobspec.OwnedBy(p, "u3") {
		t.Error("OwnedBy: want u1 and u2, not u3")
	}
	if k := jobspec.ControllerKey(&corev1.Pod{}); k != "" {
		t.Errorf("ControllerKey of a pod with no owner = %q", k)
	}
	for phase, want := range map[corev1.PodPhase]bool{
		corev1.PodPending: true, corev1.PodRunning: true, corev1.PodUnknown: true,
		corev1.PodSucceeded: false, corev1.PodFailed: false,
	} {
		p.Status.Phase = phase
		if got := jobspec.Live(p); got != want {
			t.Errorf("Live(%s) = %v, want %v", phase, got, want)
		}
	}
}
