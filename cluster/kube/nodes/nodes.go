// Package nodes turns a cluster (cluster/hw) into Kubernetes Node objects
// for KWOK, and reads Nodes back as GPU servers: the accelerator type from
// the label nvidia.com/gpu.product (as NVIDIA's GPU feature discovery sets
// it), the count from the nvidia.com/gpu capacity, CPU and memory from the
// allocatable resources, readiness from the Ready condition, and taints.
package nodes

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Labels and resources read from nodes.
const (
	// ProductLabel names the GPU model (GPU feature discovery's label).
	ProductLabel = "nvidia.com/gpu.product"
	// TypeLabel, when set, names the throughput table's GPU type directly
	// and overrides the product label.
	TypeLabel = "inlay.dev/gpu-type"
	// GPUResource is the extended resource of NVIDIA's device plugin.
	GPUResource corev1.ResourceName = "nvidia.com/gpu"
	// ClusterLabel names the cluster preset a fake node was made from.
	ClusterLabel = "inlay.dev/cluster"
	// KWOKAnnotation marks a node that KWOK manages.
	KWOKAnnotation = "kwok.x-k8s.io/node"
)

var nameRE = regexp.MustCompile(`[^a-z0-9-]+`)

// NodeName is a server's Kubernetes name (a DNS label).
func NodeName(n string) string {
	s := strings.Trim(nameRE.ReplaceAllString(strings.ToLower(n), "-"), "-")
	if s == "" {
		s = "node"
	}
	return s
}

// Product is the nvidia.com/gpu.product value of a GPU type: its
// description, as GPU feature discovery writes products
// ("NVIDIA-V100-16-GB"), or the type's name in capitals.
func Product(g chw.GPUType) string {
	s := g.Description
	if s == "" {
		s = g.Name
	}
	s = strings.Trim(regexp.MustCompile(`[^A-Za-z0-9.]+`).ReplaceAllString(s, "-"), "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-.")
	}
	return s
}

// Objects returns the KWOK Node objects of a cluster, in the cluster's node
// order: allocatable = capacity = the server's GPUs, CPUs, memory and 110
// pods; labels for the product, the GPU count and the cluster.
func Objects(c *chw.Platform) []*corev1.Node {
	out := make([]*corev1.Node, 0, len(c.Nodes))
	for _, n := range c.Nodes {
		gt, _ := c.GPUType(n.GPU)
		res := corev1.ResourceList{
			GPUResource:           *resource.NewQuantity(int64(n.GPUs), resource.DecimalSI),
			corev1.ResourceCPU:    *resource.NewQuantity(int64(max(n.CPUs, 1)), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(max(n.MemoryGiB, 1)*(1<<30)), resource.BinarySI),
			corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
		}
		name := NodeName(n.Name)
		out = append(out, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: name,
				Labels: map[string]string{
					"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok",
					ProductLabel: Product(gt), "nvidia.com/gpu.count": strconv.Itoa(n.GPUs), TypeLabel: n.GPU, ClusterLabel: NodeName(c.Name),
				},
				Annotations: map[string]string{KWOKAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
			},
			Status: corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()},
		})
	}
	return out
}

// Create creates a cluster's fake nodes (an existing node of the same name
// is left as it is) with workers parallel requests, calling progress after
// each.
func Create(ctx context.Context, cs kubernetes.Interface, c *chw.Platform, workers int, progress func(done, total int)) error {
	objs := Objects(c)
	if workers < 1 {
		workers = 1
	}
	errs := make(chan error, len(objs))
	work := make(chan *corev1.Node)
	for w := 0; w < workers; w++ {
		go func() {
			for n := range work {
				_, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					err = nil
				}
				if err != nil {
					err = fmt.Errorf("create node %s: %w", n.Name, err)
				}
				errs <- err
			}
		}()
	}
	go func() {
		defer close(work)
		for _, n := range objs {
			select {
			case work <- n:
			case <-ctx.Done():
				return
			}
		}
	}()
	var first error
	for i := range objs {
		select {
		case err := <-errs:
			if err != nil && first == nil {
				first = err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
		if progress != nil {
			progress(i+1, len(objs))
		}
	}
	return first
}

// WaitReady waits until every node of the cluster reports Ready.
func WaitReady(ctx context.Context, cs kubernetes.Interface, c *chw.Platform, progress func(ready, total int)) error {
	want := map[string]bool{}
	for _, n := range c.Nodes {
		want[NodeName(n.Name)] = true
	}
	for {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		ready := 0
		if err == nil {
			for i := range list.Items {
				if want[list.Items[i].Name] && Ready(&list.Items[i]) {
					ready++
				}
			}
			if progress != nil {
				progress(ready, len(want))
			}
			if ready == len(want) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nodes: %d of %d nodes Ready: %w", ready, len(want), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Ready reports whether a node's Ready condition is True.
func Ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// GPUType returns the throughput table's GPU type of a node: the
// inlay.dev/gpu-type label, else the table type whose name appears as a
// word of the product label ("Tesla-V100-SXM2-16GB" → v100), else "".
func GPUType(n *corev1.Node, types []string) string {
	if t := n.Labels[TypeLabel]; t != "" {
		for _, x := range types {
			if strings.EqualFold(x, t) {
				return x
			}
		}
		return ""
	}
	prod := strings.ToLower(n.Labels[ProductLabel])
	if prod == "" {
		return ""
	}
	words := strings.FieldsFunc(prod, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	// Longest type name first, so that "a100" is not read as "a10".
	sorted := append([]string(nil), types...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	for _, x := range sorted {
		lx := strings.ToLower(x)
		for _, w := range words {
			if w == lx {
				return x
			}
		}
	}
	return ""
}

// GPUs returns a node's allocatable nvidia.com/gpu count.
func GPUs(n *corev1.Node) int {
	q, ok := n.Status.Allocatable[GPUResource]
	if !ok {
		return 0
	}
	return int(q.Value())
}
