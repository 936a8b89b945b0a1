package manifests

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestApply: the manifests apply server-side, twice without harm, and
// the Deployment runs inlay-scheduler's run command under the
// ServiceAccount the roles are bound to.
func TestApply(t *testing.T) {
	cs := fake.NewClientset()
	for range 2 {
		if err := Apply(t.Context(), cs, true); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(t.Context(), "inlay-scheduler", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("inlay-system").Get(t.Context(), "inlay-scheduler", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	d, err := cs.AppsV1().Deployments("inlay-system").Get(t.Context(), "inlay-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "run" || !slices.Contains(c.Args, "--leader-elect") || d.Spec.Template.Spec.ServiceAccountName != "inlay-scheduler" {
		t.Errorf("deployment runs %q as %q", c.Args, d.Spec.Template.Spec.ServiceAccountName)
	}
	if _, err := Deployment(); err != nil {
		t.Error(err)
	}
}
