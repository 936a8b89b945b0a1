package cost

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

// Terms are a layer set's figures on one configuration that do not depend
// on the efficiency factors: per layer its work by operator class, the
// bytes it moves through DRAM, the bytes of its data-movement operators
// and requantisation passes, and whether it pays a launch. Time then
// prices them with any factors in O(layers) without rebuilding the
// estimator's tables: what a fit that tries thousands of factor sets over
// whole networks needs. Time equals Analytic.Subgraph with the same factors
// (NewCalibrated) up to rounding, for factors without a cache or boundary
// term and an on-chip size equal to the one the terms were built with.
type Terms struct {
	layers   []termLayer
	prefetch bool
	intCfg   bool
	peak     float64 // GOPS
	bw       float64 // GB/s
	dispatch float64 // ns, the processor's
	layerNs  float64 // ns, the processor's
}

type termLayer struct {
	work                  []classWork
	mem, weights          float64 // bytes
	moveBytes, requantOut float64 // bytes
	overhead              bool
}

type classWork struct {
	class   int     // index in OpClasses
	flops   float64 // channel-padded FLOPs
	anchors float64 // channel-padded count of anchors (HalfFLOPs each)
}

// ErrTermsUnsupported says that Terms cannot stand for Subgraph on that
// input (a quantized model in an integer configuration, whose float
// layers run at another data type's fitted peak).
var ErrTermsUnsupported = errors.New("cost: terms do not cover a quantized model in an integer configuration")

// Terms returns the set's terms on a configuration, with onChipBytes the
// size of a tensor that stays on chip between two layers (0: the
// processor's). Errors as Subgraph.
func (a *Analytic) Terms(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config, onChipBytes int64) (*Terms, error) {
	if _, err := a.Subgraph(lg, set, on); err != nil {
		return nil, err
	}
	m := lg.Model
	pr := a.p.Processors[on.Proc]
	peak, _ := pr.Peak(on.DType)
	t := &Terms{prefetch: pr.WeightPrefetch, intCfg: !on.DType.IsFloat(), peak: peak, bw: pr.MemBandwidthGBs,
		dispatch: float64(pr.DispatchOverhead), layerNs: float64(pr.LayerOverhead)}
	for _, l := range lg.Layers {
		if l.Precision != graph.Undefined && t.intCfg {
			return nil, ErrTermsUnsupported
		}
	}
	onChip := float64(pr.OnChipBytes)
	if onChipBytes > 0 {
		onChip = float64(onChipBytes)
	}
	// The estimator's own per-layer table, built with unit factors, gives
	// the bytes, edges and fusability; the work by class comes from the
	// nodes as build prices them.
	unit := Efficiency{Compute: map[OpClass]float64{Other: 1}, Memory: 1}
	base := newAnalytic(a.p, make([]Efficiency, len(a.p.Processors)))
	base.eff[on.Proc] = unit
	tab := base.table(lg, on)
	tensorBytes := func(name string) float64 { return scaledBytes(m, name, on.DType) }
	var epilogue map[int]bool
	if t.intCfg {
		epilogue = epilogues(lg)
	}
	for _, id := range set {
		l := lg.Layers[id]
		lc := &tab.layers[id]
		tl := termLayer{weights: lc.weights}
		internal := true
		for _, in := range lc.ins {
			if in.from >= 0 && in.bytes <= onChip && set.Contains(in.from) {
				continue
			}
			internal = false
			tl.mem += in.bytes
		}
		for _, out := range lc.outs {
			if !out.external && out.bytes <= onChip && containsAll(set, out.consumers) {
				continue
			}
			tl.mem += out.bytes
		}
		tl.overhead = !(lc.fusable && internal && len(lc.ins) > 0)
		byClass := map[OpClass]*classWork{}
		for _, nid := range l.Nodes {
			n := m.Nodes[nid]
			if t.intCfg && needsRequant(m, n, epilogue) {
				for _, o := range n.Outputs {
					tl.requantOut += tensorBytes(o)
				}
			}
			if MovesData(n.Op) {
				for _, o := range n.Outputs {
					tl.moveBytes += tensorBytes(o)
				}
			}
			if n.Work.FLOPs <= 0 {
				continue
			}
			c := Classify(m, n)
			w := byClass[c]
			if w == nil {
				w = &classWork{class: classIndex(c)}
				byClass[c] = w
			}
			pad := channelPadding(m, n, pr.ChannelAlign)
			w.flops += float64(n.Work.FLOPs) * pad
			if graph.IsAnchor(n) {
				w.anchors += pad
			}
		}
		for _, c := range OpClasses { // a fixed order
			if w := byClass[c]; w != nil {
				tl.work = append(tl.work, *w)
			}
		}
		t.layers = append(t.layers, tl)
	}
	return t, nil
}

// Time prices the terms with factors e (which must be valid; their cache,
// boundary and on-chip figures are not used).
func (t *Terms) Time(e Efficiency) time.Duration {
	nsPerFLOP := 1 / (t.peak * nonZero(e.PeakScale))
	nsPerByte := 1 / (t.bw * nonZero(e.BandwidthScale) * e.Memory)
	dispatch, layerNs := t.dispatch, t.layerNs
	if e.DispatchOverhead > 0 {
		dispatch = float64(e.DispatchOverhead)
	}
	if e.LayerOverhead > 0 {
		layerNs = float64(e.LayerOverhead)
	}
	var frac [16]float64
	for i, c := range OpClasses {
		frac[i] = e.Of(c)
	}
	ns, weightNs := 0.0, 0.0
	for i := range t.layers {
		l := &t.layers[i]
		compute := 0.0
		for _, w := range l.work {
			compute += (w.flops + w.anchors*e.HalfFLOPs) * nsPerFLOP / frac[w.class]
		}
		if e.MoveGBs > 0 {
			compute += l.moveBytes / e.MoveGBs
		}
		mem := l.mem * nsPerByte
		if t.prefetch {
			weightNs += l.weights * nsPerByte
		} else {
			mem += l.weights * nsPerByte
		}
		ns += math.Max(compute, mem)
		if t.intCfg && e.RequantGBs > 0 {
			ns += l.requantOut / e.RequantGBs
		}
		if l.overhead {
			ns += layerNs
		}
	}
	return time.Duration(dispatch + math.Max(ns, weightNs) + 0.5)
}

// Layers is the number of layers the terms cover.
func (t *Terms) Layers() int { return len(t.layers) }

func classIndex(c OpClass) int {
	for i, x := range OpClasses {
		if x == c {
			return i
		}
	}
	panic(fmt.Sprintf("cost: unknown class %q", c))
}
