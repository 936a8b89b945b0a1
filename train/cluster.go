package train

import (
	"fmt"
	"strings"

	chw "github.com/inlay-dev/inlay/cluster/hw"
)

// NodeGroup is a run of identical servers.
type NodeGroup struct {
	GPU         GPU `json:"gpu"`
	Nodes       int `json:"nodes"`
	GPUsPerNode int `json:"gpus_per_node"`
	// IntraGBs is the GPU-to-GPU bandwidth inside a server, GB/s per GPU
	// one way (NVLink/NVSwitch or PCIe); IntraKind names the link.
	IntraGBs  float64 `json:"intra_gbs"`
	IntraKind string  `json:"intra_kind,omitempty"`
}

// Cluster is the GPUs a plan runs on: server groups in order, and the
// network between servers.
type Cluster struct {
	Name   string      `json:"name"`
	Groups []NodeGroup `json:"groups"`
	// NetworkGBs is each server's bandwidth to the network, GB/s one way
	// (all its rails together); NetworkLatencyUs the latency of one hop.
	NetworkGBs       float64 `json:"network_gbs"`
	NetworkLatencyUs float64 `json:"network_latency_us"`
}

// GPUs is the number of GPUs of type name in the cluster (every type when
// name is empty).
func (c *Cluster) GPUs(name string) int {
	n := 0
	for _, g := range c.Groups {
		if name == "" || g.GPU.Name == name {
			n += g.Nodes * g.GPUsPerNode
		}
	}
	return n
}

// Types lists the cluster's GPU type names in order of first appearance.
func (c *Cluster) Types() []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range c.Groups {
		if !seen[g.GPU.Name] {
			seen[g.GPU.Name] = true
			out = append(out, g.GPU.Name)
		}
	}
	return out
}

// Validate checks the cluster; the error names the group.
func (c *Cluster) Validate() error {
	if len(c.Groups) == 0 {
		return fmt.Errorf("cluster %q has no servers", c.Name)
	}
	for i, g := range c.Groups {
		switch {
		case g.Nodes <= 0 || g.Nodes > 1<<20:
			return fmt.Errorf("cluster %q: group %d: nodes must be in 1..2^20", c.Name, i)
		case g.GPUsPerNode <= 0 || g.GPUsPerNode > 1024:
			return fmt.Errorf("cluster %q: group %d: GPUs per node must be in 1..1024", c.Name, i)
		case !(g.IntraGBs > 0):
			return fmt.Errorf("cluster %q: group %d: intra-node bandwidth must be positive", c.Name, i)
		case !(g.GPU.TensorTFLOPS > 0) || !(g.GPU.MemBandwidthGBs > 0) || !(g.GPU.MemoryGB > 0):
			return fmt.Errorf("cluster %q: group %d: GPU type %q lacks peak, memory or bandwidth", c.Name, i, g.GPU.Name)
		}
	}
	if !(c.NetworkGBs > 0) && (len(c.Groups) > 1 || c.Groups[0].Nodes > 1) {
		return fmt.Errorf("cluster %q: network bandwidth must be positive", c.Name)
	}
	return nil
}

// UniformCluster is gpus GPUs of one type in servers of perNode (the last
// server may hold fewer), intraGBs inside a server and netGBs from each
// server: the --gpus 512xA100-80 form.
func UniformCluster(gpu GPU, gpus, perNode int, intraGBs, netGBs float64) (*Cluster, error) {
	if gpus <= 0 || perNode <= 0 {
		return nil, fmt.Errorf("train: GPUs and GPUs per node must be positive")
	}
	if gpus%perNode != 0 && gpus > perNode {
		return nil, fmt.Errorf("train: %d GPUs do not fill servers of %d", gpus, perNode)
	}
	if perNode > gpus {
		perNode = gpus
	}
	c := &Cluster{Name: fmt.Sprintf("%dx%s", gpus, gpu.Name), NetworkGBs: netGBs, NetworkLatencyUs: 5,
		Groups: []NodeGroup{{GPU: gpu, Nodes: gpus / perNode, GPUsPerNode: perNode, IntraGBs: intraGBs, IntraKind: "nvlink"}}}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("train: %v", err)
	}
	return c, nil
}

// ParseGPUCount reads "512xA100-80" (a count, x, a GPU type or alias).
func ParseGPUCount(s string) (int, GPU, error) {
	n, name, ok := strings.Cut(s, "x")
	if !ok {
		return 0, GPU{}, fmt.Errorf("train: --gpus %q: want COUNTxTYPE, e.g. 512xA100-80", s)
	}
	var count int
	if _, err := fmt.Sscanf(n, "%d", &count); err != nil || count <= 0 || fmt.Sprint(count) != n {
		return 0, GPU{}, fmt.Errorf("train: --gpus %q: %q is not a positive count", s, n)
	}
	g, ok := LookupGPU(name)
	if !ok {
		return 0, GPU{}, fmt.Errorf("train: --gpus %q: unknown GPU type %q (%s)", s, name, strings.Join(GPUNames(), ", "))
	}
	return count, g, nil
}

// FromPlatform turns a cluster platform (cluster/hw) into a training
// cluster. A platform GPU type is the catalogue type of the same name or
// alias when there is one (its datasheet figures and calibration), else a
// type built from the platform's own figures with DefaultEfficiency.
func FromPlatform(p *chw.Platform) (*Cluster, error) {
	c := &Cluster{Name: p.Name, NetworkGBs: p.Network.BandwidthGBs, NetworkLatencyUs: p.Network.LatencyUs}
	if c.NetworkLatencyUs <= 0 {
		c.NetworkLatencyUs = 5
	}
	for _, n := range p.Nodes {
		t, _ := p.GPUType(n.GPU)
		g, ok := LookupGPU(t.Name)
		if !ok {
			g = GPU{Name: t.Name, TensorTFLOPS: t.TensorTFLOPS, FP32TFLOPS: t.FP32TFLOPS, MemoryGB: t.MemoryGiB * (1 << 30) / 1e9,
				MemBandwidthGBs: t.MemBandwidthGBs, PCIeGen: 3, Eff: DefaultEfficiency(), Source: "cluster " + p.Name}
		}
		last := len(c.Groups) - 1
		if last >= 0 && c.Groups[last].GPU.Name == g.Name && c.Groups[last].GPUsPerNode == n.GPUs && c.Groups[last].IntraGBs == n.Intra.BandwidthGBs {
			c.Groups[last].Nodes++
			continue
		}
		c.Groups = append(c.Groups, NodeGroup{GPU: g, Nodes: 1, GPUsPerNode: n.GPUs, IntraGBs: n.Intra.BandwidthGBs, IntraKind: n.Intra.Kind})
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("train: %s: %v", p.Source, err)
	}
	return c, nil
}

// ResolveCluster returns a cluster platform preset or file (cluster/hw's
// YAML) as a training cluster.
func ResolveCluster(nameOrPath string) (*Cluster, error) {
	p, err := chw.Resolve(nameOrPath)
	if err != nil {
		return nil, err
	}
	return FromPlatform(p)
}
