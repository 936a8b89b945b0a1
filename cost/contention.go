package cost

import (
	"math"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

// The contention model. Processors that share a resource (hw.Shared: a
// last-level cache or a memory channel) slow each other's subgraphs down
// while both run. A subgraph v running beside the set C of subgraphs on
// other processors takes
//
//	T_v · Slowdown,  Slowdown = 1 + min(MaxSlowdown − 1, k_v · Σ_r min(1, Σ_{c ∈ C on r} u_c,r))
//
// where r ranges over the resources v's processor shares, and a neighbour
// c's use of r is
//
//	memory channel:  u_c,r = (DRAMBytes_c / T_c) / Bandwidth_r   (its share of the channel)
//	cache:           u_c,r = min(1, WorkingSet_c / Size_r)         (its share of the cache)
//
// k_v (Load.Sensitivity) is how much v suffers per unit of neighbour load:
// measured for a subgraph by inlay profile --corun (the slope of its
// slowdown against a streaming kernel's measured bandwidth on the
// neighbouring cores, which the co-run measurements show to be close to
// linear until the channel saturates), else the configuration's fitted
// sensitivity times v's own memory intensity (its DRAM bandwidth over its
// processor's), so that compute-bound subgraphs suffer little. The form is
// bounded twice: each resource's load saturates at 1 (a channel cannot be
// more than full), and the slowdown at MaxSlowdown. It is 1 when v runs
// alone or shares nothing, and it only lengthens durations, so bounds
// proven on uncontended figures stay bounds.

// MaxSlowdown bounds the contention slowdown: no subgraph runs more than
// this factor slower beside its neighbours.
const MaxSlowdown = 3.0

// Load is what one run of a subgraph does to the shared resources and how
// much it suffers from them.
type Load struct {
	// DRAMBytes is the memory traffic of one run (bytes).
	DRAMBytes float64
	// WorkingSet is the data one run touches (bytes): its weights plus
	// its largest layer's activations.
	WorkingSet float64
	// Sensitivity is k ≥ 0: the slowdown per unit of neighbour load.
	Sensitivity float64
}

// ContentionEstimator is an Estimator that also knows subgraphs' loads on
// shared resources. The simulator stretches overlapping subgraphs when
// its estimator is one (and the platform lists shared resources).
type ContentionEstimator interface {
	Estimator
	// Load is the subgraph's load on the config; errors as Subgraph.
	Load(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (Load, error)
}

var _ ContentionEstimator = (*Analytic)(nil)

// Use is a subgraph's share of resource r while it runs for d (u_c,r of
// the model), in [0, 1].
func (l Load) Use(d time.Duration, r *hw.Shared) float64 {
	switch r.Kind {
	case hw.SharedMemory:
		if d <= 0 || r.BandwidthGBs <= 0 {
			return 0
		}
		return math.Min(1, l.DRAMBytes/float64(d)/r.BandwidthGBs) // bytes per ns = GB/s
	case hw.SharedCache:
		if r.SizeBytes <= 0 {
			return 0
		}
		return math.Min(1, l.WorkingSet/float64(r.SizeBytes))
	}
	return 0
}

// Slowdown is the model's factor for sensitivity k under the summed
// per-resource loads (each clamped to 1 here): 1 + min(MaxSlowdown − 1,
// k · Σ min(1, load)).
func Slowdown(k float64, loads ...float64) float64 {
	var sum float64
	for _, x := range loads {
		sum += math.Min(1, math.Max(0, x))
	}
	return 1 + math.Min(MaxSlowdown-1, math.Max(0, k)*sum)
}

// Load returns the analytic load: the DRAM bytes of the roofline (after the
// subgraph's on-chip savings), the weights plus the largest layer's
// activations, and the processor's ContentionSensitivity times the
// subgraph's memory intensity (DRAM bytes per predicted second over the
// processor's bandwidth, at most 1).
func (a *Analytic) Load(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (Load, error) {
	d, err := a.Subgraph(lg, set, on)
	if err != nil || len(set) == 0 {
		return Load{}, err
	}
	t := a.table(lg, on)
	var layers []LayerTime
	a.sum(lg, set, on, &layers)
	var l Load
	var weights, act float64
	for _, lt := range layers {
		l.DRAMBytes += float64(lt.Bytes)
		lc := &t.layers[lt.Layer]
		weights += lc.weights
		var a float64
		for _, in := range lc.ins {
			a += in.bytes
		}
		for _, o := range lc.outs {
			a += o.bytes
		}
		act = math.Max(act, a)
	}
	l.WorkingSet = weights + act
	pr := a.p.Processors[on.Proc]
	l.Sensitivity = pr.ContentionSensitivity * Intensity(l.DRAMBytes, d, pr.MemBandwidthGBs)
	return l, nil
}

// Intensity is a subgraph's memory intensity: bytes moved over its
// duration against a bandwidth in GB/s, in [0, 1].
func Intensity(bytes float64, d time.Duration, bandwidthGBs float64) float64 {
	if d <= 0 || bandwidthGBs <= 0 {
		return 0
	}
	return math.Min(1, bytes/float64(d)/bandwidthGBs)
}
