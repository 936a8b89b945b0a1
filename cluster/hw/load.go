package hw

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/inlay-dev/inlay/cluster/internal/yamlerr"
	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/internal/loadfile"
	"github.com/inlay-dev/inlay/internal/yamlpath"
)

// The YAML schema of a cluster file:
//
//	name: my-cluster                  # required
//	description: one line
//	gpu_types:                        # every type a node names
//	  - name: v100                    # unique; the key in throughput tables
//	    description: NVIDIA V100 SXM2 16 GB
//	    memory_gib: 16
//	    tensor_tflops: 125            # dense FP16 tensor peak
//	    fp32_tflops: 15.7
//	    mem_bandwidth_gbs: 900
//	    price_per_hour: 2.48          # optional, dollars per GPU-hour
//	nodes:                            # groups of identical servers
//	  - name: v100                    # servers are called v100-0, v100-1, ...
//	    gpu: v100
//	    count: 9                      # servers in the group (default 1)
//	    gpus: 4                       # GPUs per server
//	    cpus: 32
//	    memory_gib: 244
//	    intra: {kind: nvlink, bandwidth_gbs: 300}
//	network: {bandwidth_gbs: 1.25, latency_us: 50, racks: 1, rack_bandwidth_gbs: 1.25}
//
// Servers are spread over the racks round robin in file order.
type rawPlatform struct {
	Name        string       `yaml:"name"`
	Description string       `yaml:"description,omitempty"`
	GPUTypes    []rawGPUType `yaml:"gpu_types"`
	Nodes       []rawNode    `yaml:"nodes"`
	Network     rawNetwork   `yaml:"network"`
}

type rawGPUType struct {
	Name            string  `yaml:"name"`
	Description     string  `yaml:"description,omitempty"`
	MemoryGiB       float64 `yaml:"memory_gib"`
	TensorTFLOPS    float64 `yaml:"tensor_tflops"`
	FP32TFLOPS      float64 `yaml:"fp32_tflops"`
	MemBandwidthGBs float64 `yaml:"mem_bandwidth_gbs"`
	PricePerHour    float64 `yaml:"price_per_hour,omitempty"`
}

type rawLink struct {
	Kind         string  `yaml:"kind"`
	BandwidthGBs float64 `yaml:"bandwidth_gbs"`
}

type rawNode struct {
	Name      string  `yaml:"name"`
	GPU       string  `yaml:"gpu"`
	Count     *int    `yaml:"count,omitempty"`
	GPUs      int     `yaml:"gpus"`
	CPUs      int     `yaml:"cpus"`
	MemoryGiB float64 `yaml:"memory_gib"`
	Intra     rawLink `yaml:"intra"`
}

type rawNetwork struct {
	BandwidthGBs     float64 `yaml:"bandwidth_gbs"`
	LatencyUs        float64 `yaml:"latency_us,omitempty"`
	Racks            int     `yaml:"racks,omitempty"`
	RackBandwidthGBs float64 `yaml:"rack_bandwidth_gbs,omitempty"`
}

// maxServers bounds a file's server count, so that a typo cannot make
// Parse allocate without limit.
const maxServers = 100000

// Load reads a cluster from a YAML file.
func Load(path string) (*Platform, error) {
	return loadfile.Read("cluster/hw", path, Parse)
}

// Parse reads a cluster from YAML bytes; file names the source in errors.
// Unknown fields are errors; every error is one line "cluster/hw: FILE:LINE:
// FIELD: what".
func Parse(file string, data []byte) (*Platform, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, decodeError(file, err)
	}
	var raw rawPlatform
	if err := yamlpath.DecodeStrict(data, &raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("cluster/hw: %s: empty cluster file", file)
		}
		return nil, decodeError(file, err)
	}
	p, path, msg := raw.build()
	if msg != "" {
		return nil, fmt.Errorf("cluster/hw: %s:%d: %s: %s", file, yamlpath.Line(&root, path), yamlpath.String(path), msg)
	}
	p.Source = file
	return p, nil
}

func decodeError(file string, err error) error {
	line, msg := yamlerr.Split(err)
	if line == "" {
		return fmt.Errorf("cluster/hw: %s: %s", file, msg)
	}
	return fmt.Errorf("cluster/hw: %s:%s: %s", file, line, msg)
}

// build turns the raw file into a platform, or names the first bad field.
func (r *rawPlatform) build() (*Platform, []any, string) {
	if r.Name == "" {
		return nil, []any{"name"}, "is required"
	}
	if msg := errline.BadName(r.Name); msg != "" {
		return nil, []any{"name"}, msg
	}
	p := &Platform{Name: r.Name, Description: r.Description}
	types := map[string]bool{}
	for i, g := range r.GPUTypes {
		at := func(f string) []any { return []any{"gpu_types", i, f} }
		switch {
		case g.Name == "":
			return nil, at("name"), "is required"
		case errline.BadName(g.Name) != "":
			return nil, at("name"), errline.BadName(g.Name)
		case types[g.Name]:
			return nil, at("name"), fmt.Sprintf("duplicate GPU type %q", g.Name)
		case !(g.MemoryGiB > 0):
			return nil, at("memory_gib"), "must be positive"
		case !(g.TensorTFLOPS > 0):
			return nil, at("tensor_tflops"), "must be positive"
		case !(g.FP32TFLOPS > 0):
			return nil, at("fp32_tflops"), "must be positive"
		case !(g.MemBandwidthGBs > 0):
			return nil, at("mem_bandwidth_gbs"), "must be positive"
		case !(g.PricePerHour >= 0):
			return nil, at("price_per_hour"), "must not be negative"
		}
		types[g.Name] = true
		p.GPUTypes = append(p.GPUTypes, GPUType(g))
	}
	if len(r.Nodes) == 0 {
		return nil, []any{"nodes"}, "at least one node group is required"
	}
	racks := r.Network.Racks
	if racks == 0 {
		racks = 1
	}
	switch {
	case !(r.Network.BandwidthGBs > 0):
		return nil, []any{"network", "bandwidth_gbs"}, "must be positive"
	case !(r.Network.LatencyUs >= 0):
		return nil, []any{"network", "latency_us"}, "must not be negative"
	case racks < 0:
		return nil, []any{"network", "racks"}, "must be positive"
	case !(r.Network.RackBandwidthGBs >= 0):
		return nil, []any{"network", "rack_bandwidth_gbs"}, "must not be negative"
	}
	p.Network = Network{BandwidthGBs: r.Network.BandwidthGBs, LatencyUs: r.Network.LatencyUs, Racks: racks, RackBandwidthGBs: r.Network.RackBandwidthGBs}
	if p.Network.RackBandwidthGBs == 0 {
		p.Network.RackBandwidthGBs = p.Network.BandwidthGBs
	}
	groups := map[string]bool{}
	for i, n := range r.Nodes {
		at := func(f ...any) []any { return append([]any{"nodes", i}, f...) }
		count := 1
		if n.Count != nil {
			count = *n.Count
		}
		switch {
		case n.Name == "":
			return nil, at("name"), "is required"
		case errline.BadName(n.Name) != "":
			return nil, at("name"), errline.BadName(n.Name)
		case groups[n.Name]:
			return nil, at("name"), fmt.Sprintf("duplicate node group %q", n.Name)
		case !types[n.GPU]:
			return nil, at("gpu"), fmt.Sprintf("unknown GPU type %q (gpu_types: %s)", n.GPU, errline.QuoteAll(slices.Sorted(maps.Keys(types))))
		case count < 1:
			return nil, at("count"), "must be at least 1"
		case len(p.Nodes)+count > maxServers:
			return nil, at("count"), fmt.Sprintf("more than %d servers in all", maxServers)
		case n.GPUs < 1 || n.GPUs > 64:
			return nil, at("gpus"), "must be between 1 and 64"
		case n.CPUs < 0:
			return nil, at("cpus"), "must not be negative"
		case !(n.MemoryGiB >= 0):
			return nil, at("memory_gib"), "must not be negative"
		case n.Intra.Kind != "" && n.Intra.Kind != "nvlink" && n.Intra.Kind != "pcie":
			return nil, at("intra", "kind"), fmt.Sprintf("unknown link %q (nvlink, pcie)", n.Intra.Kind)
		case n.GPUs > 1 && !(n.Intra.BandwidthGBs > 0):
			return nil, at("intra", "bandwidth_gbs"), "must be positive on a server with several GPUs"
		case !(n.Intra.BandwidthGBs >= 0):
			return nil, at("intra", "bandwidth_gbs"), "must not be negative"
		}
		groups[n.Name] = true
		for k := 0; k < count; k++ {
			p.Nodes = append(p.Nodes, Node{
				Name: fmt.Sprintf("%s-%d", n.Name, k), GPU: n.GPU, GPUs: n.GPUs, CPUs: n.CPUs,
				MemoryGiB: n.MemoryGiB, Intra: Link(n.Intra), Rack: len(p.Nodes) % racks,
			})
		}
	}
	return p, nil, ""
}
