package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/inlay-dev/inlay/internal/errline"
)

// SailorInfo is what a Sailor plan file says besides the plan: the
// cluster it names and, where the file records a run, its measurement.
type SailorInfo struct {
	// Nodes is N, the servers the plan uses.
	Nodes int `json:"nodes"`
	// GPUsPerNode is Sailor's GPUs per server of each type used.
	GPUsPerNode map[string]int `json:"gpus_per_node"`
	// MeasuredIterationS and MeasuredPeakMemoryBytes are the file's
	// "real" and "max_mem" (0 when absent).
	MeasuredIterationS      float64 `json:"measured_iteration_s,omitempty"`
	MeasuredPeakMemoryBytes float64 `json:"measured_peak_memory_bytes,omitempty"`
}

// sailorLink is Sailor's network model for one GPU type at the GPUs per
// server its configuration gives: the highest measured bandwidth (max_bw)
// of sailor/providers/intra_node_bandwidths.json and of
// multizone_bandwidths_het.json (same zone, same type), GB/s.
type sailorLink struct {
	gpu         string // the catalogue's type
	gpusPerNode int    // Planner/simulations/configs/basic_cluster_config.json
	intraGBs    float64
	netGBs      float64
}

// sailorLinks are Sailor's GPU names (eth-easl/sailor @ cf2c8e3). Its
// RTX-2080 is configured with 11 GiB, an RTX 2080 Ti's memory, so it maps
// to RTX-2080Ti. A100-80 has no inter-node entry; it takes A100-40's.
var sailorLinks = map[string]sailorLink{
	"A100-40":   {"A100-40", 4, 243.2, 6.036},
	"A100-80":   {"A100-80", 4, 243.2, 6.036},
	"V100-16":   {"V100-16", 4, 68.17, 5.787},
	"GH-96":     {"GH200-96", 4, 250.6, 92.55},
	"Titan-RTX": {"Titan-RTX", 8, 24.30, 2.858},
	"RTX-2080":  {"RTX-2080Ti", 8, 24.55, 2.858},
	"RTX-3090":  {"RTX-3090", 8, 5.327, 0.1149},
}

// sailorGPU maps a Sailor GPU name to the catalogue type.
func sailorGPU(name string) (GPU, sailorLink, bool) {
	l, ok := sailorLinks[name]
	if !ok {
		return GPU{}, sailorLink{}, false
	}
	g, ok := LookupGPU(l.gpu)
	return g, l, ok
}

type sailorFile struct {
	Pipelines []sailorPipeline `json:"pipeline_list"`
	MBS       *int             `json:"mbs"`
	GBS       *int             `json:"gbs"`
	Real      float64          `json:"real"`
	MaxMem    float64          `json:"max_mem"`
	N         int              `json:"N"`
	Zone      string           `json:"zone"`
	RedGrads  float64          `json:"red_grads"`
}

type sailorPipeline struct {
	NumStages     int                 `json:"num_stages"`
	LayersPerStep [][]int             `json:"layers_per_stage"`
	TMPPerStage   [][]json.RawMessage `json:"tmp_per_stage"`
	DP            []int               `json:"dp"`
}

// ParseSailorPlan reads Sailor's plan_config_*.json. Sailor numbers the
// embedding as layer 0 and the final norm and head as layer L+1, so a
// model of L layers has L+2 Sailor layers; each stage lists its ids. Every
// pipeline of the file contributes its dp replicas, and the global batch
// is split evenly over all replicas. Sailor's runs are FP32 (no --fp16 or
// --bf16 in its launch scripts; TF32 matrix products) with DeepSpeed's
// pipeline engine: 1F1B, no recomputation, activations sent partitioned
// over the tensor-parallel ranks, gradients reduced after the backward
// pass.
func ParseSailorPlan(file string, data []byte, m *Model) (*Plan, *SailorInfo, error) {
	fail := func(format string, a ...any) (*Plan, *SailorInfo, error) {
		return nil, nil, fmt.Errorf("train: %s: %s", file, fmt.Sprintf(format, a...))
	}
	var f sailorFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return fail("%s", errline.JSON(data, err))
	}
	if len(f.Pipelines) == 0 {
		return fail("pipeline_list: no pipeline")
	}
	if f.MBS == nil || *f.MBS <= 0 {
		return fail("mbs: must be a positive integer")
	}
	if f.GBS == nil || *f.GBS <= 0 {
		return fail("gbs: must be a positive integer")
	}
	if f.N < 0 || f.N > 1<<20 || math.IsNaN(f.Real) || f.Real < 0 || f.MaxMem < 0 {
		return fail("N, real and max_mem must not be negative")
	}
	p := &Plan{MicroBatch: *f.MBS, GlobalBatch: *f.GBS, Schedule: Schedule{Kind: "1f1b"}, Recompute: "none", Precision: "tf32", DPAlgorithm: "ring", BucketMB: 500}
	info := &SailorInfo{Nodes: f.N, GPUsPerNode: map[string]int{}, MeasuredIterationS: f.Real, MeasuredPeakMemoryBytes: f.MaxMem}
	for pi, pl := range f.Pipelines {
		at := fmt.Sprintf("pipeline_list[%d]", pi)
		if pl.NumStages <= 0 || pl.NumStages != len(pl.LayersPerStep) || pl.NumStages != len(pl.TMPPerStage) || pl.NumStages != len(pl.DP) {
			return fail("%s: num_stages %d does not match layers_per_stage (%d), tmp_per_stage (%d) and dp (%d)", at, pl.NumStages, len(pl.LayersPerStep), len(pl.TMPPerStage), len(pl.DP))
		}
		stages, err := sailorStages(pl.LayersPerStep, m)
		if err != nil {
			return fail("%s.layers_per_stage%s", at, err)
		}
		if pi == 0 {
			p.Stages = stages
		} else if fmt.Sprint(stages) != fmt.Sprint(p.Stages) {
			return fail("%s.layers_per_stage: pipelines must split the layers alike", at)
		}
		dp := pl.DP[0]
		if dp <= 0 || dp > 1<<16 {
			return fail("%s.dp[0]: %d must be in 1..65536", at, dp)
		}
		reps := make([]Replica, dp)
		for s := range pl.TMPPerStage {
			if pl.DP[s] != dp {
				return fail("%s.dp[%d]: %d, but stage 0 has %d replicas", at, s, pl.DP[s], dp)
			}
			if len(pl.TMPPerStage[s]) != dp {
				return fail("%s.tmp_per_stage[%d]: %d replicas, dp says %d", at, s, len(pl.TMPPerStage[s]), dp)
			}
			for r, raw := range pl.TMPPerStage[s] {
				where := fmt.Sprintf("%s.tmp_per_stage[%d][%d]", at, s, r)
				gpu, perNode, tp, err := sailorPlacement(raw)
				if err != nil {
					return fail("%s: %v", where, err)
				}
				g, link, ok := sailorGPU(gpu)
				if !ok {
					return fail("%s: unknown GPU type %q (Sailor's: %s)", where, gpu, strings.Join(slices.Sorted(maps.Keys(sailorLinks)), ", "))
				}
				if perNode <= 0 || perNode > 1024 {
					return fail("%s: GPUs per node %d must be in 1..1024", where, perNode)
				}
				if tp > perNode {
					return fail("%s: tp %d is more than the %d GPUs of a node", where, tp, perNode)
				}
				if old, ok := info.GPUsPerNode[g.Name]; ok && old != perNode {
					return fail("%s: %s has %d GPUs per node here and %d elsewhere", where, gpu, perNode, old)
				}
				_ = link
				info.GPUsPerNode[g.Name] = perNode
				reps[r].Stages = append(reps[r].Stages, Placement{GPU: g.Name, TP: tp})
			}
		}
		p.Replicas = append(p.Replicas, reps...)
	}
	dp := len(p.Replicas)
	if p.GlobalBatch%dp != 0 {
		return fail("gbs: %d is not a multiple of the %d replicas", p.GlobalBatch, dp)
	}
	for i := range p.Replicas {
		p.Replicas[i].Batch = p.GlobalBatch / dp
	}
	if err := p.Check(m); err != nil {
		return fail("%v", err)
	}
	if f.N > 0 {
		need := 0
		for name, per := range info.GPUsPerNode {
			n := 0
			for _, r := range p.Replicas {
				for _, s := range r.Stages {
					if s.GPU == name {
						n += s.TP
					}
				}
			}
			need += (n + per - 1) / per
		}
		if need != f.N {
			return fail("N: %d nodes, but the stages' GPUs fill %d", f.N, need)
		}
	}
	return p, info, nil
}

// sailorStages turns Sailor's layer ids per stage into transformer layer
// ranges; the error names the place (after "layers_per_stage").
func sailorStages(ids [][]int, m *Model) ([]LayerRange, error) {
	total := m.Layers + 2
	seen := make([]int, total)
	for i := range seen {
		seen[i] = -1
	}
	out := make([]LayerRange, len(ids))
	for s, list := range ids {
		if len(list) == 0 {
			return nil, fmt.Errorf("[%d]: empty stage", s)
		}
		lo, hi := math.MaxInt, -1
		for _, id := range list {
			switch {
			case id < 0 || id >= total:
				return nil, fmt.Errorf("[%d]: layer %d is outside 0..%d (the model has %d layers with the embedding and head)", s, id, total-1, total)
			case seen[id] >= 0:
				return nil, fmt.Errorf("[%d]: layer %d is covered twice (also in stage %d)", s, id, seen[id])
			}
			seen[id] = s
			lo, hi = min(lo, id), max(hi, id)
		}
		if hi-lo+1 != len(list) {
			return nil, fmt.Errorf("[%d]: layers %d-%d are not contiguous", s, lo, hi)
		}
		out[s] = LayerRange{First: lo - 1, Last: hi - 1}
	}
	for id, s := range seen {
		if s < 0 {
			return nil, fmt.Errorf(": layer %d is not covered", id)
		}
	}
	if out[0].First != -1 {
		return nil, fmt.Errorf("[0]: the first stage must hold layer 0 (the embedding)")
	}
	out[0].First = 0
	last := len(out) - 1
	if out[last].Last != m.Layers {
		return nil, fmt.Errorf("[%d]: the last stage must hold layer %d (the head)", last, total-1)
	}
	out[last].Last = m.Layers - 1
	for s := range out {
		if out[s].Last < out[s].First {
			return nil, fmt.Errorf("[%d]: a stage with no transformer layer", s)
		}
	}
	return out, nil
}

// sailorPlacement reads [[[gpu_type, gpus_per_node, zone]], tp].
func sailorPlacement(raw json.RawMessage) (gpu string, perNode, tp int, err error) {
	var outer []json.RawMessage
	if err := json.Unmarshal(raw, &outer); err != nil || len(outer) != 2 {
		return "", 0, 0, fmt.Errorf("want [[[gpu_type, gpus_per_node, zone]], tp]")
	}
	if err := json.Unmarshal(outer[1], &tp); err != nil || tp <= 0 {
		return "", 0, 0, fmt.Errorf("tp must be a positive integer")
	}
	var nodes [][]json.RawMessage
	if err := json.Unmarshal(outer[0], &nodes); err != nil || len(nodes) == 0 || len(nodes[0]) < 2 {
		return "", 0, 0, fmt.Errorf("want [[[gpu_type, gpus_per_node, zone]], tp]")
	}
	for i, n := range nodes {
		var g string
		var per int
		if len(n) < 2 || json.Unmarshal(n[0], &g) != nil || json.Unmarshal(n[1], &per) != nil {
			return "", 0, 0, fmt.Errorf("[0][%d]: want [gpu_type, gpus_per_node, zone]", i)
		}
		if i > 0 && (g != gpu || per != perNode) {
			return "", 0, 0, fmt.Errorf("[0][%d]: one stage replica on unlike servers", i)
		}
		gpu, perNode = g, per
	}
	return gpu, perNode, tp, nil
}

// SailorCluster is the cluster a Sailor plan names: for each GPU type it
// uses, as many servers as its GPUs fill at Sailor's GPUs per server, with
// Sailor's measured intra-node and network bandwidth (sailorLinks).
func SailorCluster(p *Plan, info *SailorInfo) (*Cluster, error) {
	c := &Cluster{Name: "sailor", NetworkLatencyUs: 5}
	count := map[string]int{}
	var order []string
	for _, r := range p.Replicas {
		for _, s := range r.Stages {
			if _, ok := count[s.GPU]; !ok {
				order = append(order, s.GPU)
			}
			count[s.GPU] += s.TP
		}
	}
	for _, name := range order {
		var link sailorLink
		for _, l := range slices.Sorted(maps.Keys(sailorLinks)) {
			if sailorLinks[l].gpu == name {
				link = sailorLinks[l]
				break
			}
		}
		g, _ := LookupGPU(name)
		per := info.GPUsPerNode[name]
		if per == 0 {
			per = link.gpusPerNode
		}
		if c.NetworkGBs == 0 || link.netGBs < c.NetworkGBs {
			c.NetworkGBs = link.netGBs
		}
		c.Groups = append(c.Groups, NodeGroup{GPU: g, Nodes: (count[name] + per - 1) / per, GPUsPerNode: per, IntraGBs: link.intraGBs, IntraKind: "sailor"})
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("train: %v", err)
	}
	return c, nil
}

// SailorGPU maps Sailor's GPU name to the catalogue's type, with Sailor's
// GPUs per server and its measured intra-node and network bandwidth (GB/s).
func SailorGPU(name string) (g GPU, gpusPerNode int, intraGBs, netGBs float64, ok bool) {
	g, l, ok := sailorGPU(name)
	return g, l.gpusPerNode, l.intraGBs, l.netGBs, ok
}

// SailorName is Sailor's name for a catalogue GPU type and its GPUs per
// server in Sailor's cluster configuration, or false.
func SailorName(gpu string) (name string, gpusPerNode int, ok bool) {
	for _, n := range slices.Sorted(maps.Keys(sailorLinks)) {
		if sailorLinks[n].gpu == gpu {
			return n, sailorLinks[n].gpusPerNode, true
		}
	}
	return "", 0, false
}
