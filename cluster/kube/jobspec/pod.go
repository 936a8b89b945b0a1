package jobspec

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ControllerKey is namespace/name of the Job that controls a pod ("" if
// none).
func ControllerKey(p *corev1.Pod) string {
	for _, r := range p.OwnerReferences {
		if r.Kind == "Job" && r.Controller != nil && *r.Controller {
			return p.Namespace + "/" + r.Name
		}
	}
	return ""
}

// OwnedBy reports whether the object with uid is among a pod's owners.
func OwnedBy(p *corev1.Pod, uid types.UID) bool {
	for _, r := range p.OwnerReferences {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// Live reports whether a pod has not ended: its phase is neither
// Succeeded nor Failed.
func Live(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}
