package controlplane_test

import (
	"context"
	"testing"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestControlPlane starts the real control plane, creates a preset's fake
// GPU nodes, waits for KWOK to make them Ready, reads them back as GPU
// servers, and stops everything.
func TestControlPlane(t *testing.T) {
	c := controlplane.ForTest(t, controlplane.Options{})
	cs, err := c.Client(100, 200)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "34" {
		t.Errorf("server version %s.%s (%s), want 1.34", v.Major, v.Minor, v.GitVersion)
	}
	p, err := chw.Preset("gavel-108-servers")
	if err != nil {
		t.Fatal(err)
	}
	if err := nodes.Create(ctx, cs, p, 8, nil); err != nil {
		t.Fatal(err)
	}
	if err := nodes.WaitReady(ctx, cs, p, nil); err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != len(p.Nodes) {
		t.Fatalf("%d nodes, want %d", len(list.Items), len(p.Nodes))
	}
	count := map[string]int{}
	for i := range list.Items {
		n := &list.Items[i]
		count[nodes.GPUType(n, p.Types())] += nodes.GPUs(n)
	}
	for _, g := range p.Types() {
		if count[g] != p.Count(g) {
			t.Errorf("%s: %d GPUs read back, want %d", g, count[g], p.Count(g))
		}
	}
	if count[""] != 0 {
		t.Errorf("%d GPUs of no known type", count[""])
	}
}
