package profile

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

// layerLowerBounder is the lower-bound half of package sim's
// LayerLowerBounder contract, which the base estimator must offer for the
// Estimator to offer it (*cost.Analytic does).
type layerLowerBounder interface {
	LayerLowerBound(lg *graph.LayerGraph, layer int, on hw.Config) (time.Duration, error)
}

// figureClass groups the measured figures one lower-bound table reads:
// one model on one processor class, backend and dtype.
type figureClass struct{ model, proc, backend, dtype string }

// measuredFigure is one figure the Estimator answers with.
type measuredFigure struct {
	key Key
	d   time.Duration
}

// lbKey names one lower-bound table.
type lbKey struct {
	lg *graph.LayerGraph
	on hw.Config
}

// lbTable is a model's layer lower bounds on one config; unsupported
// layers are −1.
type lbTable struct {
	lb  []time.Duration
	err error
}

// LayerLowerBound is the least time the layer contributes to any subgraph
// that contains it on the config, under this estimator: for every layer
// set S that Subgraph answers for, Subgraph(lg, S, on) ≥
// Σ_{l ∈ S} LayerLowerBound(lg, l, on) (package sim's LayerLowerBounder
// contract, on which its proven upper bound rests). Errors wrap
// cost.ErrUnsupported where the layer cannot run on the config, and say so
// when the base estimator offers no lower bound.
//
// Proof. Let a(l) be the base model's own lower bound, scaled by the least
// factor the cold correction may apply to a fallback figure (ColdFit's
// lower clamp, when the estimator applies one; else 1), rounded down. The
// bound returned is
//
//	lb(l) = min( a(l), min over measured S ∋ l of ⌊m(S)·a(l) / Σ_{k∈S} a(k)⌋ )
//
// where m(S) is the figure Subgraph answers for S with (its profiler,
// cold or in-situ figure). For a measured S, Σ_{l∈S} lb(l) ≤
// Σ_{l∈S} m(S)·a(l)/Σ_{k∈S} a(k) = m(S). For any other S, Subgraph
// answers with the base figure times the cold factor c ≥ the clamp, so
// Σ lb(l) ≤ Σ a(l) ≤ clamp · base(S) ≤ c·base(S), and, the left side being
// an integer, it stays below the rounded figure. Measurements may be far
// faster than the model (a core that beats its preset's peak, a fitted
// peak_scale): they then lower the bound of their layers, and the bound
// stays valid whatever the measurements and the calibration say.
func (e *Estimator) LayerLowerBound(lg *graph.LayerGraph, layer int, on hw.Config) (time.Duration, error) {
	if layer < 0 || layer >= len(lg.Layers) {
		return 0, fmt.Errorf("profile: layer %d out of range (model has %d layers)", layer, len(lg.Layers))
	}
	t := e.lowerBounds(lg, on)
	if t.err != nil {
		return 0, t.err
	}
	if t.lb[layer] < 0 {
		_, err := e.baseLB(lg, layer, on)
		return 0, err
	}
	return t.lb[layer], nil
}

func (e *Estimator) baseLB(lg *graph.LayerGraph, layer int, on hw.Config) (time.Duration, error) {
	lbr, ok := e.base.(layerLowerBounder)
	if !ok {
		return 0, fmt.Errorf("profile: the base estimator (%T) offers no layer lower bound", e.base)
	}
	return lbr.LayerLowerBound(lg, layer, on)
}

// lowerBounds computes (once per model and config) every layer's bound.
func (e *Estimator) lowerBounds(lg *graph.LayerGraph, on hw.Config) *lbTable {
	k := lbKey{lg, on}
	e.lbMu.Lock()
	t, ok := e.lbs[k]
	e.lbMu.Unlock()
	if ok {
		return t
	}
	t = e.computeLowerBounds(lg, on)
	e.lbMu.Lock()
	if e.lbs == nil {
		e.lbs = map[lbKey]*lbTable{}
	}
	e.lbs[k] = t
	e.lbMu.Unlock()
	return t
}

func (e *Estimator) computeLowerBounds(lg *graph.LayerGraph, on hw.Config) *lbTable {
	clamp := 1.0
	if e.coldFit != nil && on.Proc >= 0 && on.Proc < len(e.coldFit) && e.coldFit[on.Proc].Samples > 0 {
		clamp = min(minColdFactor, 1)
	}
	a := make([]time.Duration, len(lg.Layers))
	for l := range lg.Layers {
		d, err := e.baseLB(lg, l, on)
		switch {
		case errors.Is(err, cost.ErrUnsupported):
			a[l] = -1
		case err != nil:
			return &lbTable{err: err}
		default:
			a[l] = time.Duration(math.Floor(float64(max(d, 0)) * clamp))
		}
	}
	lb := append([]time.Duration(nil), a...)
	if e.pl == nil || on.Proc < 0 || on.Proc >= len(e.pl.Processors) {
		return &lbTable{lb: lb}
	}
	class := figureClass{ModelID(lg.Model), e.pl.Processors[e.twins[on.Proc]].Name, on.Backend, on.DType.String()}
	for _, f := range e.byClass[class] {
		set, err := graph.ParseLayerSet(f.key.Layers)
		if err != nil || len(set) == 0 || set[len(set)-1] >= len(lg.Layers) {
			continue
		}
		if k, err := e.Key(lg, set, on); err != nil || k != f.key {
			continue // another shape of the model: not what Subgraph answers here
		}
		var sum float64
		supported := true
		for _, l := range set {
			if a[l] < 0 {
				supported = false
				break
			}
			sum += float64(a[l])
		}
		if !supported || sum <= 0 {
			continue // Subgraph refuses the set, or every bound is 0 already
		}
		for _, l := range set {
			share := time.Duration(math.Floor(float64(f.d) * float64(a[l]) / sum))
			lb[l] = min(lb[l], share)
		}
	}
	return &lbTable{lb: lb}
}
