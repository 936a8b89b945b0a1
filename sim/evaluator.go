package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// Evaluator scores plans by simulation: Evaluate = Compile +
// MaxSustainableScale. It is safe for concurrent use; subgraph costs (and
// loads and hand-offs) are cached across evaluations per (model, layer-set
// key, processor, backend, dtype), so a search that revisits subgraphs pays
// for each once. The model
// is identified by its layer graph rather than its content hash: one ONNX
// file loaded at two input shapes has one hash but two cost tables.
type Evaluator struct {
	w   *workload.Workload
	pl  *hw.Platform
	est *cachedEstimator
	opt Options
}

var _ plan.Evaluator = (*Evaluator)(nil)

// NewEvaluator returns an evaluator for the workload on the platform. opt
// sets the simulation (seed, horizon); its Scale is ignored and spans are
// not recorded.
func NewEvaluator(w *workload.Workload, pl *hw.Platform, est cost.Estimator, opt Options) *Evaluator {
	opt.NoSpans = true
	return &Evaluator{w: w, pl: pl, est: newCachedEstimator(est), opt: opt}
}

// Evaluate compiles the plan and finds its max sustainable scale. Score.
// Feasible is Scale ≥ 1 (the nominal rates are sustained); Reason says why
// not: the groups that miss even at a tiny rate (Scale 0), or what limits
// the scale below 1.
func (e *Evaluator) Evaluate(ctx context.Context, p *plan.Plan) (plan.Score, error) {
	if err := ctx.Err(); err != nil {
		return plan.Score{}, err
	}
	prog, err := Compile(e.w, e.pl, e.est, p)
	if err != nil {
		return plan.Score{}, err
	}
	s, _, err := SustainContext(ctx, prog, e.opt)
	if err != nil {
		return plan.Score{}, err
	}
	sc := plan.Score{Scale: s.Scale, Feasible: s.Scale >= 1}
	switch {
	case !s.Feasible:
		sc.Reason = s.Limit
	case !sc.Feasible:
		sc.Reason = fmt.Sprintf("sustains only %.3g× the nominal rates: %s", s.Scale, s.Limit)
	}
	return sc, nil
}

// Cached returns the evaluator's caching estimator (for reuse by callers
// that compile plans themselves).
func (e *Evaluator) Cached() cost.Estimator { return e.est }

type costKey struct {
	lg  *graph.LayerGraph
	set string
	cfg hw.Config
}

type costVal struct {
	d   time.Duration
	err error
}

// cachedEstimator memoises Subgraph, Load and HandOff. Transfer is cheap
// and passed through. Load is zero (no contention) when the base has none,
// HandOff likewise. The maps are only looked up, never ranged over.
type cachedEstimator struct {
	base  cost.Estimator
	mu    sync.RWMutex
	m     map[costKey]costVal
	loads map[costKey]loadVal
	hands map[handKey]time.Duration
}

// handKey is a hand-off's: the subgraph's and the processor its
// dependency ran on.
type handKey struct {
	costKey
	from int
}

type loadVal struct {
	l   cost.Load
	err error
}

var _ cost.ContentionEstimator = (*cachedEstimator)(nil)

func (c *cachedEstimator) Load(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (cost.Load, error) {
	ce, ok := c.base.(cost.ContentionEstimator)
	if !ok {
		return cost.Load{}, nil
	}
	v := memo(&c.mu, c.loads, costKey{lg: lg, set: set.Key(), cfg: on}, func() loadVal {
		l, err := ce.Load(lg, set, on)
		return loadVal{l, err}
	})
	return v.l, v.err
}

// memo is m[k] under mu, computed by f (outside the lock) and kept when
// absent.
func memo[K comparable, V any](mu *sync.RWMutex, m map[K]V, k K, f func() V) V {
	mu.RLock()
	v, ok := m[k]
	mu.RUnlock()
	if ok {
		return v
	}
	v = f()
	mu.Lock()
	m[k] = v
	mu.Unlock()
	return v
}

// Uncached returns the estimator the cache memoises (ratebound.Uncacher).
func (c *cachedEstimator) Uncached() cost.Estimator { return c.base }

func newCachedEstimator(base cost.Estimator) *cachedEstimator {
	if c, ok := base.(*cachedEstimator); ok {
		return c
	}
	return &cachedEstimator{base: base, m: map[costKey]costVal{}, loads: map[costKey]loadVal{}, hands: map[handKey]time.Duration{}}
}

func (c *cachedEstimator) Subgraph(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (time.Duration, error) {
	v := memo(&c.mu, c.m, costKey{lg: lg, set: set.Key(), cfg: on}, func() costVal {
		d, err := c.base.Subgraph(lg, set, on)
		return costVal{d, err}
	})
	return v.d, v.err
}

// CrossAfter is the base's (cost.CrossHandOffEstimator; ok false when the
// base has none), not memoised: it is an interpolation, no look-up.
func (c *cachedEstimator) CrossAfter(ran time.Duration) (time.Duration, bool) {
	if ce, ok := c.base.(cost.CrossHandOffEstimator); ok {
		return ce.CrossAfter(ran)
	}
	return 0, false
}

// HandOff is the base's (0 when the base prices none), memoised: a
// profile.Estimator's looks up the subgraph's store key (its boundary
// inputs and their shapes) to tell an in-situ figure, at every cut of
// every compile. cachedEstimator is a cost.HandOffEstimator whatever its
// base, so Compile asks it.
func (c *cachedEstimator) HandOff(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config, from int) time.Duration {
	ho, ok := c.base.(cost.HandOffEstimator)
	if !ok {
		return 0
	}
	return memo(&c.mu, c.hands, handKey{costKey{lg: lg, set: set.Key(), cfg: on}, from}, func() time.Duration {
		return ho.HandOff(lg, set, on, from)
	})
}

func (c *cachedEstimator) Transfer(bytes int64, from, to int) time.Duration {
	return c.base.Transfer(bytes, from, to)
}
