package cost

import (
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

// LayerLowerBound is the least time layer contributes to any subgraph that
// contains it on the config, so that for every layer set S,
// Subgraph(lg, S, on) ≥ Σ_{l ∈ S} LayerLowerBound(lg, l, on). Package sim's
// UpperBound relies on it. It is the layer's roofline term with only the
// DRAM traffic no subgraph can avoid — its weights, graph inputs and
// outputs, and tensors too large for on-chip memory; not its weights on a
// processor that prefetches them — its requantisation passes, and its kernel launch
// when no subgraph can fuse it away; the dispatch overhead, paid once per
// subgraph, is left out. Errors as Subgraph (ErrUnsupported where the
// processor cannot run the layer).
func (a *Analytic) LayerLowerBound(lg *graph.LayerGraph, layer int, on hw.Config) (time.Duration, error) {
	set := graph.LayerSet{layer}
	if err := a.p.CheckConfig(on); err != nil {
		return 0, fmt.Errorf("cost: %w", err)
	}
	if layer < 0 || layer >= len(lg.Layers) {
		return 0, fmt.Errorf("cost: layer %d out of range (model has %d layers)", layer, len(lg.Layers))
	}
	if err := a.supported(lg, set, on.Proc); err != nil {
		return 0, err
	}
	t := a.table(lg, on)
	onChip := t.onChip
	l := &t.layers[layer]
	mem := t.nsFor(l.weights)
	if t.prefetch {
		mem = 0 // the weight stream bounds the subgraph, not the layer
	}
	boundary := 0.0  // graph inputs and outputs cross every subgraph's boundary
	internal := true // every input may come from inside the subgraph
	for _, in := range l.ins {
		if in.from < 0 {
			boundary += in.bytes * t.nsPerBoundaryByte
		}
		if in.from < 0 || in.bytes > onChip {
			mem += t.nsFor(in.bytes)
			internal = false
		}
	}
	for _, out := range l.outs {
		if out.external {
			boundary += out.bytes * t.nsPerBoundaryByte
		}
		if out.external || out.bytes > onChip {
			mem += t.nsFor(out.bytes)
		}
	}
	ns := math.Max(l.compute, mem) + l.requant + boundary
	if !(l.fusable && internal && len(l.ins) > 0) {
		_, layerOverhead := a.overheads(on)
		ns += layerOverhead
	}
	// Rounded down: the sum of the bounds is an integer no larger than the
	// subgraph's unrounded time, hence no larger than its rounded time.
	return time.Duration(math.Floor(ns)), nil
}

// DispatchLowerBound is the least time every subgraph on processor proc
// costs beyond the sum of its layers' LayerLowerBound: the dispatch
// overhead it pays once. So for every layer set S on a configuration of
// proc, Subgraph(lg, S, on) ≥ DispatchLowerBound(proc) + Σ_{l ∈ S}
// LayerLowerBound(lg, l, on). Package sim's UpperBound charges it once per
// model and request, since every model runs at least one subgraph.
func (a *Analytic) DispatchLowerBound(proc int) time.Duration {
	if proc < 0 || proc >= len(a.p.Processors) {
		return 0
	}
	// The least over the processor's data types (each may have its own).
	least := math.Inf(1)
	for _, ds := range a.p.Processors[proc].DTypes {
		dispatch, _ := a.overheads(hw.Config{Proc: proc, DType: ds.DType})
		least = math.Min(least, dispatch)
	}
	if math.IsInf(least, 1) {
		return 0
	}
	return time.Duration(math.Floor(least))
}
