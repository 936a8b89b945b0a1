package throughput

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/zoo"
)

// Profile is what the estimator needs of a model: per training sample, the
// forward multiply-accumulates and the activation bytes the forward pass
// writes (kept for the backward pass), the trainable parameters, and the
// number of kernels a forward pass launches.
type Profile struct {
	Name        string
	MACs        float64 // forward, per sample
	ActBytes    float64 // forward activations written, per sample
	Params      float64
	Kernels     int
	Description string
}

// FromGraph profiles a model built by inlay (a zoo network or an imported
// ONNX file) from its inferred work: the batch-1 graph's MACs, output bytes,
// parameters and node count.
func FromGraph(name string, m *graph.Model) Profile {
	w := m.Totals()
	return Profile{Name: name, MACs: float64(w.MACs), ActBytes: float64(w.BytesOut), Params: float64(zoo.TrainableParams(m)), Kernels: len(m.Nodes),
		Description: "inferred from the graph's work"}
}

// Families are the built-in profiles of Gavel's distributed job types, from
// the published architectures of the models Gavel trains (its
// workloads/pytorch directory):
//
//   - ResNet-18 on CIFAR-10 (32×32 inputs; the widely used CIFAR layout:
//     3×3 stem, four stages of two basic blocks at 64-512 channels): 0.56 G
//     MACs, 11.2 M parameters, about 1.5 M activation elements a sample;
//   - ResNet-50 on ImageNet (224×224): taken from inlay's zoo graph;
//   - Transformer base on WMT16 en-de (Vaswani et al.: 6+6 layers, d_model
//     512, 8 heads, FFN 2048; about 30 tokens a side, a 32k shared vocabulary
//     projection): about 2 × 44 M non-embedding parameters × 60 tokens plus
//     the 30 × 512 × 32k output projection = 3.1 G MACs, 61 M parameters;
//   - LM: the PyTorch word-language-model LSTM on Wikitext-2 (2 layers, 200
//     units, 35-token sequences, 33,278-word vocabulary): the decoder's 35 ×
//     200 × 33,278 = 233 M MACs dominate, 14 M parameters.
func Families() (map[string]Profile, error) {
	r50, err := zoo.Build("resnet50")
	if err != nil {
		return nil, err
	}
	return map[string]Profile{
		"ResNet-18":   {Name: "ResNet-18", MACs: 0.56e9, ActBytes: 4 * 1.5e6, Params: 11.2e6, Kernels: 60, Description: "CIFAR-10 ResNet-18"},
		"ResNet-50":   FromGraph("ResNet-50", r50),
		"Transformer": {Name: "Transformer", MACs: 3.1e9, ActBytes: 4 * 60 * 512 * 6 * 12, Params: 61e6, Kernels: 400, Description: "Transformer base, WMT16 en-de"},
		"LM":          {Name: "LM", MACs: 0.255e9, ActBytes: 4 * 35 * (2*200*6 + 33278), Params: 14e6, Kernels: 35 * 2 * 6, Description: "2-layer LSTM word LM, Wikitext-2"},
	}, nil
}

// Model is the estimator's device model. Its constants are not fitted to
// any measurement: compute runs at ComputeEff of the FP32 peak for large
// kernels, halving at HalfKernelFLOPs per kernel; memory traffic at MemEff
// of the bandwidth; each kernel launch costs LaunchUs; backward costs twice
// the forward; the optimizer (Adam-like) reads and writes 16 bytes per
// parameter; all-reduce is a ring over the slowest link the job's GPUs use.
type Model struct {
	ComputeEff, MemEff, HalfKernelFLOPs, LaunchUs float64
}

// DefaultModel is the estimator's default.
var DefaultModel = Model{ComputeEff: 0.7, MemEff: 0.7, HalfKernelFLOPs: 50e6, LaunchUs: 8}

// Step is the time of one training step of batch b per GPU on g, over s
// GPUs whose all-reduce runs at linkGBs (0: one GPU), in seconds; ok is
// false when the job does not fit the GPU's memory.
func (md Model) Step(p Profile, b int, g hw.GPUType, s int, linkGBs, latencyUs float64) (float64, bool) {
	fb := float64(b)
	flops := 3 * 2 * p.MACs * fb
	perKernel := flops / float64(3*max(p.Kernels, 1))
	eff := md.ComputeEff * perKernel / (perKernel + md.HalfKernelFLOPs)
	compute := flops / (g.FP32TFLOPS * 1e12 * eff)
	bytes := 3*p.ActBytes*fb + 16*p.Params
	memory := bytes / (g.MemBandwidthGBs * 1e9 * md.MemEff)
	t := math.Max(compute, memory) + float64(3*p.Kernels)*md.LaunchUs*1e-6
	footprint := 16*p.Params + p.ActBytes*fb
	if footprint > 0.9*g.MemoryGiB*(1<<30) {
		return 0, false
	}
	if s > 1 && linkGBs > 0 {
		fs := float64(s)
		t += 2*(fs-1)/fs*4*p.Params/(linkGBs*1e9) + 2*(fs-1)*latencyUs*1e-6
	}
	return t, true
}

var batchRE = regexp.MustCompile(`^(.+) \(batch size (\d+)\)$`)

// ParseJobType splits "MODEL (batch size B)".
func ParseJobType(t string) (model string, batch int, ok bool) {
	m := batchRE.FindStringSubmatch(t)
	if m == nil {
		return "", 0, false
	}
	b, err := strconv.Atoi(m[2])
	if err != nil || b < 1 || b > 1<<20 {
		return "", 0, false
	}
	return m[1], b, true
}

// Estimate builds a table for the cluster's GPU types from the cost model:
// every key of keys whose model has a profile (families, or "zoo:NAME"
// built on demand), alone on one server and spread over servers (all-reduce
// over the network). No pair figures: estimated tables do not share GPUs.
func Estimate(c *hw.Platform, keys []Key, profiles map[string]Profile, md Model) (*Table, error) {
	types := c.Types()
	t := New("estimate", types)
	sorted := append([]Key(nil), keys...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].JobType != sorted[j].JobType {
			return sorted[i].JobType < sorted[j].JobType
		}
		return sorted[i].Scale < sorted[j].Scale
	})
	for _, k := range sorted {
		model, b, ok := ParseJobType(k.JobType)
		if !ok {
			return nil, fmt.Errorf("cluster/throughput: cannot estimate %q: want \"MODEL (batch size B)\"", k.JobType)
		}
		p, ok := profiles[model]
		if !ok && strings.HasPrefix(model, "zoo:") {
			m, err := zoo.Build(strings.TrimPrefix(model, "zoo:"))
			if err != nil {
				return nil, fmt.Errorf("cluster/throughput: cannot estimate %q: %v", k.JobType, err)
			}
			p = FromGraph(model, m)
			profiles[model] = p
			ok = true
		}
		if !ok {
			names := slices.Sorted(maps.Keys(profiles))
			return nil, fmt.Errorf("cluster/throughput: cannot estimate %q: no profile of %q (profiles: %s, or zoo:NAME)", k.JobType, model, strings.Join(names, ", "))
		}
		t.Add(k)
		for _, name := range types {
			g, _ := c.GPUType(name)
			intra := 0.0
			for _, n := range c.Nodes {
				if n.GPU == name {
					intra = n.Intra.BandwidthGBs
					break
				}
			}
			if k.Scale > 1 && k.Scale <= c.MaxGPUsPerNode(name) {
				if st, ok := md.Step(p, b, g, k.Scale, intra, 5); ok {
					t.SetAlone(k, name, 1/st)
				}
			} else if k.Scale == 1 {
				if st, ok := md.Step(p, b, g, 1, 0, 0); ok {
					t.SetAlone(k, name, 1/st)
				}
			}
			if k.Scale > 1 {
				if st, ok := md.Step(p, b, g, k.Scale, c.Network.BandwidthGBs, c.Network.LatencyUs); ok {
					t.SetSpread(k, name, 1/st)
					if k.Scale > c.MaxGPUsPerNode(name) {
						// Larger than a server: always spread.
						t.SetAlone(k, name, 1/st)
					}
				}
			}
		}
	}
	return t, nil
}
