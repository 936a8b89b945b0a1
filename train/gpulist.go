package train

import (
	"fmt"
	"strings"
)

// GPUCount is a number of GPUs of one type, as --gpus gives it.
type GPUCount struct {
	Count int
	GPU   GPU
}

// ParseGPUList reads "128xA100-40,128xV100-16": one or more COUNTxTYPE
// entries separated by commas, each type at most once.
func ParseGPUList(s string) ([]GPUCount, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("train: --gpus: empty; want COUNTxTYPE[,COUNTxTYPE…], e.g. 128xA100-40,128xV100-16")
	}
	parts := strings.Split(s, ",")
	if len(parts) > 64 {
		return nil, fmt.Errorf("train: --gpus: %d entries; at most 64 GPU types", len(parts))
	}
	var out []GPUCount
	seen := map[string]bool{}
	total := 0
	for _, part := range parts {
		n, g, err := ParseGPUCount(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if seen[g.Name] {
			return nil, fmt.Errorf("train: --gpus %q: %s is listed twice", s, g.Name)
		}
		seen[g.Name] = true
		total += n
		if n > 1<<20 || total > 1<<20 {
			return nil, fmt.Errorf("train: --gpus %q: more than 2^20 GPUs", s)
		}
		out = append(out, GPUCount{Count: n, GPU: g})
	}
	return out, nil
}

// MixedCluster builds a cluster of the listed GPUs: each type in its own
// servers of perNode GPUs (a type with fewer GPUs gets one smaller
// server), intraGBs inside a server (0: half the type's NVLink total, or
// its PCIe) and netGBs from each server.
func MixedCluster(list []GPUCount, perNode int, intraGBs, netGBs float64) (*Cluster, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("train: no GPUs")
	}
	if perNode <= 0 {
		return nil, fmt.Errorf("train: GPUs per node must be positive")
	}
	c := &Cluster{NetworkGBs: netGBs, NetworkLatencyUs: 5}
	var names []string
	for _, e := range list {
		per := min(perNode, e.Count)
		if e.Count%per != 0 {
			return nil, fmt.Errorf("train: %d %s GPUs do not fill servers of %d", e.Count, e.GPU.Name, per)
		}
		intra := intraGBs
		if intra <= 0 {
			intra = e.GPU.LinkGBs / 2
			if intra <= 0 {
				intra = e.GPU.PCIeGBs()
			}
		}
		kind := "nvlink"
		if e.GPU.LinkGBs <= 0 {
			kind = "pcie"
		}
		c.Groups = append(c.Groups, NodeGroup{GPU: e.GPU, Nodes: e.Count / per, GPUsPerNode: per, IntraGBs: intra, IntraKind: kind})
		names = append(names, fmt.Sprintf("%dx%s", e.Count, e.GPU.Name))
	}
	c.Name = strings.Join(names, ",")
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("train: %v", err)
	}
	return c, nil
}
