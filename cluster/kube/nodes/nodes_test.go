package nodes_test

import (
	"testing"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGPUType(t *testing.T) {
	types := []string{"a10", "a100", "k80", "v100"}
	for _, c := range []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{nodes.ProductLabel: "Tesla-V100-SXM2-16GB"}, "v100"},
		{map[string]string{nodes.ProductLabel: "NVIDIA-A100-SXM4-80GB"}, "a100"},
		{map[string]string{nodes.ProductLabel: "NVIDIA-A10"}, "a10"},
		{map[string]string{nodes.ProductLabel: "NVIDIA-H100-80GB-HBM3"}, ""},
		{map[string]string{nodes.ProductLabel: "Tesla-V100", nodes.TypeLabel: "K80"}, "k80"},
		{map[string]string{nodes.TypeLabel: "t4"}, ""},
		{nil, ""},
	} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: c.labels}}
		if got := nodes.GPUType(n, types); got != c.want {
			t.Errorf("%v: %q, want %q", c.labels, got, c.want)
		}
	}
}

func TestObjects(t *testing.T) {
	p, err := chw.Preset("modern-mix")
	if err != nil {
		t.Fatal(err)
	}
	objs := nodes.Objects(p)
	if len(objs) != len(p.Nodes) {
		t.Fatalf("%d objects for %d servers", len(objs), len(p.Nodes))
	}
	gpus := map[string]int{}
	for i, n := range objs {
		if n.Annotations[nodes.KWOKAnnotation] != "fake" {
			t.Errorf("%s: not marked for KWOK", n.Name)
		}
		g := nodes.GPUType(n, p.Types())
		if g != p.Nodes[i].GPU {
			t.Errorf("%s: read back as %q, made from %q (product %q)", n.Name, g, p.Nodes[i].GPU, n.Labels[nodes.ProductLabel])
		}
		gpus[g] += nodes.GPUs(n)
	}
	for _, g := range p.Types() {
		if gpus[g] != p.Count(g) {
			t.Errorf("%s: %d GPUs, want %d", g, gpus[g], p.Count(g))
		}
	}
}
