package kueue

import (
	"os"
	"path/filepath"
	"testing"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const twoTypes = `name: two
gpu_types:
  - {name: v100, memory_gib: 16, tensor_tflops: 125, fp32_tflops: 15.7, mem_bandwidth_gbs: 900}
  - {name: k80, memory_gib: 12, tensor_tflops: 4.37, fp32_tflops: 4.37, mem_bandwidth_gbs: 240}
nodes:
  - {name: v, gpu: v100, count: 3, gpus: 4, cpus: 16, memory_gib: 100.5, intra: {kind: nvlink, bandwidth_gbs: 150}}
  - {name: k, gpu: k80, count: 2, gpus: 2, cpus: 8, memory_gib: 64, intra: {kind: pcie, bandwidth_gbs: 16}}
network: {bandwidth_gbs: 1.25, latency_us: 50, racks: 1}
`

// TestObjects: a flavor per GPU type selecting its nodes, in the
// cluster's type order, with each type's totals as nominal quota, then the
// ClusterQueue and the LocalQueue.
func TestObjects(t *testing.T) {
	c, err := chw.Parse("two.yaml", []byte(twoTypes))
	if err != nil {
		t.Fatal(err)
	}
	objs := Objects(c, "team", "q")
	kinds := []string{"ResourceFlavor", "ResourceFlavor", "ClusterQueue", "LocalQueue"}
	if len(objs) != len(kinds) {
		t.Fatalf("%d objects, want %d", len(objs), len(kinds))
	}
	for i, k := range kinds {
		if objs[i].GetKind() != k {
			t.Errorf("object %d: %s, want %s", i, objs[i].GetKind(), k)
		}
	}
	for i, typ := range []string{"v100", "k80"} {
		sel, _, _ := unstructured.NestedStringMap(objs[i].Object, "spec", "nodeLabels")
		if objs[i].GetName() != FlavorName(typ) || sel[nodes.TypeLabel] != typ {
			t.Errorf("flavor %d: %s selecting %v, want %s selecting %s=%s", i, objs[i].GetName(), sel, FlavorName(typ), nodes.TypeLabel, typ)
		}
	}
	groups, _, _ := unstructured.NestedSlice(objs[2].Object, "spec", "resourceGroups")
	if len(groups) != 1 {
		t.Fatalf("%d resource groups, want 1", len(groups))
	}
	flavors, _, _ := unstructured.NestedSlice(groups[0].(map[string]any), "flavors")
	want := []map[string]string{
		{"cpu": "48", "memory": "302Gi", "nvidia.com/gpu": "12"},
		{"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": "4"},
	}
	if len(flavors) != len(want) {
		t.Fatalf("%d flavors in the ClusterQueue, want %d", len(flavors), len(want))
	}
	for i, f := range flavors {
		res, _, _ := unstructured.NestedSlice(f.(map[string]any), "resources")
		got := map[string]string{}
		for _, r := range res {
			m := r.(map[string]any)
			got[m["name"].(string)] = m["nominalQuota"].(string)
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("flavor %d %s quota %q, want %q", i, k, got[k], v)
			}
		}
	}
	if objs[3].GetNamespace() != "team" || objs[3].GetName() != "q" {
		t.Errorf("LocalQueue %s/%s, want team/q", objs[3].GetNamespace(), objs[3].GetName())
	}
	if cq, _, _ := unstructured.NestedString(objs[3].Object, "spec", "clusterQueue"); cq != ClusterQueueName("q") {
		t.Errorf("LocalQueue points to %q, want %q", cq, ClusterQueueName("q"))
	}
}

// TestReadObjects: the documents of a multi-document manifest, empty ones
// skipped, and a broken one named.
func TestReadObjects(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(good, []byte("---\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n\n---\napiVersion: v1\nkind: B\nmetadata: {name: b}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, err := readObjects(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetName() != "a" || objs[1].GetName() != "b" {
		t.Fatalf("read %d objects %v, want a and b", len(objs), objs)
	}
	bad := filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(bad, []byte("kind: A\n  : [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readObjects(bad); err == nil {
		t.Fatal("a broken manifest read without an error")
	}
}
