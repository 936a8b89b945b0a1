// Package hw describes GPU clusters: GPU types (memory, peak speed, memory
// bandwidth, price), servers (nodes) that hold GPUs of one type with their
// CPU cores, memory and intra-node link, and the network between servers.
// Presets are embedded YAML files; Load and Parse read user files with
// one-line errors that name the file, the line and the field.
//
// The package holds no scheduling logic and estimates no time; the
// throughput and policy packages read it.
package hw

import (
	"fmt"
	"sort"

	"github.com/inlay-dev/inlay/internal/stats"
)

// GPUType is one kind of accelerator. Figures are per GPU.
type GPUType struct {
	// Name is the key used in throughput tables and jobs ("v100", "h100").
	Name        string
	Description string
	MemoryGiB   float64
	// TensorTFLOPS is the dense half-precision (FP16/BF16) tensor peak;
	// FP32TFLOPS the single-precision peak.
	TensorTFLOPS    float64
	FP32TFLOPS      float64
	MemBandwidthGBs float64
	// PricePerHour is the on-demand cloud price of one GPU, in dollars
	// (0: unknown); the minimum-cost policy uses it.
	PricePerHour float64
}

// Link is a node's GPU-to-GPU interconnect.
type Link struct {
	Kind         string // "nvlink", "pcie"
	BandwidthGBs float64
}

// Network is the inter-node network: every server has BandwidthGBs to its
// rack switch; racks are joined by RackBandwidthGBs per server (0: the same
// as BandwidthGBs, a non-blocking fabric).
type Network struct {
	BandwidthGBs     float64
	LatencyUs        float64
	Racks            int
	RackBandwidthGBs float64
}

// Node is one server.
type Node struct {
	Name      string
	GPU       string // a GPUType name
	GPUs      int
	CPUs      int
	MemoryGiB float64
	Intra     Link
	Rack      int
}

// Platform is a cluster: GPU types, servers in ID order, and the network.
type Platform struct {
	Name        string
	Description string
	GPUTypes    []GPUType
	Nodes       []Node
	Network     Network
	// Source is the file (or "preset NAME") the platform came from.
	Source string
}

// GPUType returns the type called name.
func (p *Platform) GPUType(name string) (GPUType, bool) {
	for _, g := range p.GPUTypes {
		if g.Name == name {
			return g, true
		}
	}
	return GPUType{}, false
}

// Types returns the names of the GPU types that some node holds, sorted.
func (p *Platform) Types() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range p.Nodes {
		if !seen[n.GPU] {
			seen[n.GPU] = true
			out = append(out, n.GPU)
		}
	}
	sort.Strings(out)
	return out
}

// Count returns how many GPUs of type name the cluster holds.
func (p *Platform) Count(name string) int {
	c := 0
	for _, n := range p.Nodes {
		if n.GPU == name {
			c += n.GPUs
		}
	}
	return c
}

// TotalGPUs is the number of GPUs of every type.
func (p *Platform) TotalGPUs() int {
	return stats.SumBy(p.Nodes, func(n Node) int { return n.GPUs })
}

// MaxGPUsPerNode returns the largest GPU count of one server of type name.
func (p *Platform) MaxGPUsPerNode(name string) int {
	m := 0
	for _, n := range p.Nodes {
		if n.GPU == name && n.GPUs > m {
			m = n.GPUs
		}
	}
	return m
}

// Summary is one line: name, GPUs by type and servers.
func (p *Platform) Summary() string {
	s := ""
	for i, t := range p.Types() {
		if i > 0 {
			s += " + "
		}
		s += fmt.Sprintf("%d %s", p.Count(t), t)
	}
	return fmt.Sprintf("%s: %s GPUs on %d servers", p.Name, s, len(p.Nodes))
}
