// Package kueue puts Kueue (sigs.k8s.io/kueue), the Kubernetes job-queueing
// controller, on a local control plane beside inlay's scheduler, so that a
// trace can be replayed through it: Kueue admits Jobs by quota, one
// ResourceFlavor per GPU type, and the default kube-scheduler places their
// pods on the nodes of the flavor it chose.
//
// Kueue is heterogeneity-agnostic in the way the comparison needs: a
// ClusterQueue's flavors are tried in their listed order, and a Job goes to
// the first flavor with quota left for all its pods (Kueue's default
// fungibility), whatever its throughput there. Queues lists the cluster's
// GPU types in the cluster file's gpu_types order. There is no preemption (one
// ClusterQueue, no priorities) and no time sharing: an admitted Job runs to
// its end.
package kueue

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/controlplane"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// QueueLabel is the label by which a Job names its LocalQueue.
const QueueLabel = "kueue.x-k8s.io/queue-name"

const group = "kueue.x-k8s.io"

var (
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	flavorGVR = schema.GroupVersionResource{Group: group, Version: "v1beta1", Resource: "resourceflavors"}
	cqGVR     = schema.GroupVersionResource{Group: group, Version: "v1beta1", Resource: "clusterqueues"}
	lqGVR     = schema.GroupVersionResource{Group: group, Version: "v1beta1", Resource: "localqueues"}
)

// Install applies Kueue's CRDs (from make fetch-kueue), waits until the API
// server serves them, creates Kueue's namespace and starts its controller
// manager on the control plane.
func Install(ctx context.Context, cp *controlplane.ControlPlane) error {
	dir, err := cp.KueueCRDs()
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	var names []string
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if _, err := dyn.Resource(crdGVR).Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("kueue: create CRD %s (%s): %w", o.GetName(), f, err)
			}
			names = append(names, o.GetName())
		}
	}
	for _, n := range names {
		if err := waitCondition(ctx, dyn.Resource(crdGVR), n, "Established", "CRD "+n); err != nil {
			return err
		}
	}
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: controlplane.KueueNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kueue: create namespace %s: %w", controlplane.KueueNamespace, err)
	}
	return cp.StartComponent(ctx, "kueue")
}

// readObjects reads the YAML documents of a manifest file.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i, doc := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(doc), "---")) == "" {
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil || m == nil {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// waitCondition polls a cluster-scoped object until its status has the
// condition cond True; what names it in the error.
func waitCondition(ctx context.Context, ri dynamic.ResourceInterface, name, cond, what string) error {
	for {
		o, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == cond && m["status"] == "True" {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kueue: %s not %s: %w", what, cond, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ClusterQueueName is the ClusterQueue that Queues makes for a LocalQueue.
func ClusterQueueName(queue string) string { return "inlay-" + queue }

// FlavorName is the ResourceFlavor of a GPU type.
func FlavorName(gpuType string) string { return nodes.NodeName(gpuType) }

// Objects returns what Queues creates, in creation order: one
// ResourceFlavor per GPU type of the cluster, in declared order (its nodes, by the
// inlay.dev/gpu-type label), a ClusterQueue with one resource group
// covering CPU, memory and GPUs whose nominal quota per flavor is that
// type's servers' total, and the LocalQueue queue in namespace ns.
func Objects(c *chw.Platform, ns, queue string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	var flavors []any
	for _, t := range declared(c) {
		var cpus, gpus int
		var mem float64
		for _, n := range c.Nodes {
			if n.GPU == t {
				cpus += max(n.CPUs, 1)
				mem += max(n.MemoryGiB, 1)
				gpus += n.GPUs
			}
		}
		name := FlavorName(t)
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1beta1", "kind": "ResourceFlavor",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"nodeLabels": map[string]any{nodes.TypeLabel: t}},
		}})
		flavors = append(flavors, map[string]any{"name": name, "resources": []any{
			map[string]any{"name": "cpu", "nominalQuota": strconv.Itoa(cpus)},
			map[string]any{"name": "memory", "nominalQuota": strconv.FormatInt(int64(math.Ceil(mem)), 10) + "Gi"},
			map[string]any{"name": string(jobspec.GPUResource), "nominalQuota": strconv.Itoa(gpus)},
		}})
	}
	out = append(out, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1beta1", "kind": "ClusterQueue",
		"metadata": map[string]any{"name": ClusterQueueName(queue)},
		"spec": map[string]any{
			"namespaceSelector": map[string]any{},
			"queueingStrategy":  "BestEffortFIFO",
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "memory", string(jobspec.GPUResource)},
				"flavors":          flavors,
			}},
		},
	}})
	out = append(out, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1beta1", "kind": "LocalQueue",
		"metadata": map[string]any{"name": queue, "namespace": ns},
		"spec":     map[string]any{"clusterQueue": ClusterQueueName(queue)},
	}})
	return out
}

// declared is the cluster's GPU types that some node holds, in the order
// of the cluster file's gpu_types: the order of Kueue's flavors, which it
// tries first to last (a cluster file lists its best GPUs first, as an
// administrator would list the preferred flavor first).
func declared(c *chw.Platform) []string {
	held := map[string]bool{}
	for _, t := range c.Types() {
		held[t] = true
	}
	var out []string
	for _, g := range c.GPUTypes {
		if held[g.Name] {
			out = append(out, g.Name)
			delete(held, g.Name)
		}
	}
	for _, t := range c.Types() { // types without a gpu_types entry, sorted
		if held[t] {
			out = append(out, t)
		}
	}
	return out
}

// Queues creates Objects(c, ns, queue) (those that exist are left as they
// are) and waits until Kueue reports the ClusterQueue active.
func Queues(ctx context.Context, cfg *rest.Config, c *chw.Platform, ns, queue string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, o := range Objects(c, ns, queue) {
		var ri dynamic.ResourceInterface
		switch o.GetKind() {
		case "ResourceFlavor":
			ri = dyn.Resource(flavorGVR)
		case "ClusterQueue":
			ri = dyn.Resource(cqGVR)
		default:
			ri = dyn.Resource(lqGVR).Namespace(ns)
		}
		if _, err := ri.Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("kueue: create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	name := ClusterQueueName(queue)
	return waitCondition(ctx, dyn.Resource(cqGVR), name, "Active",
		"ClusterQueue "+name+" (is the kueue component running? its log is the control plane's logs/kueue.log)")
}
