package ratebound

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/workload"
)

// LayerLowerBounder is the estimator extension Upper relies on. Its
// contract: for every convex layer set S of the model and every
// configuration c, Subgraph(lg, S, c) ≥ Σ_{l ∈ S} LayerLowerBound(lg, l, c).
// The cost model is not additive (a fused subgraph is cheaper than its
// layers run alone, one dispatch overhead per subgraph), so this is a
// layer's most optimistic share of any subgraph — no dispatch overhead, its
// memory traffic fused away — not its time alone. It wraps
// cost.ErrUnsupported where the layer cannot run on c.
type LayerLowerBounder interface {
	LayerLowerBound(lg *graph.LayerGraph, layer int, on hw.Config) (time.Duration, error)
}

// DispatchLowerBounder is an optional extension of LayerLowerBounder: for
// every layer set S on a configuration of processor p,
// Subgraph(lg, S, c) ≥ DispatchLowerBound(p) + Σ_{l ∈ S} LayerLowerBound(lg, l, c)
// (the dispatch overhead every subgraph pays once).
type DispatchLowerBounder interface {
	DispatchLowerBound(proc int) time.Duration
}

// Uncacher is an estimator that memoises another (the simulator's
// evaluation cache): Upper bounds under the estimator it wraps, whose
// lower-bound extensions the cache does not forward.
type Uncacher interface {
	Uncached() cost.Estimator
}

// Bound is a proven upper bound on the max sustainable rate scale of any plan.
type Bound struct {
	// Scale is the bound; 0 when some group cannot meet its deadline at any
	// rate; +Inf when nothing limits it (no work).
	Scale float64
	// Why says which constraint attains it.
	Why string
	// CriticalPaths are the groups' critical-path lower bounds (workload
	// order): the least latency any plan can give one request in isolation.
	CriticalPaths []time.Duration
	// PeakFallback is true when the estimator offers no LayerLowerBound and
	// the per-layer figures are the layer's arithmetic at the configuration's
	// peak: valid only when no estimate beats peak throughput, which nothing
	// checks, so the bound is then an estimate (Proven is false and Why
	// says so).
	PeakFallback bool
}

// Proven reports whether the bound is proven for the estimator it was
// computed under: it is, unless the estimator offers no per-layer lower
// bound (PeakFallback).
func (b Bound) Proven() bool { return !b.PeakFallback }

// Label names the figure for users: "upper bound" when proven, else
// "estimated bound".
func (b Bound) Label() string {
	if b.Proven() {
		return "upper bound"
	}
	return "estimated bound"
}

// peakFallbackNote ends Why when the bound is not proven.
const peakFallbackNote = "; an estimate, not proven: the cost model offers no per-layer lower bound, so layers are taken at their processors' peak, which its figures may beat"

// Upper bounds the max sustainable rate scale of every plan of the
// workload on the platform under the estimator.
//
// Per-layer figures. For each layer l and configuration c (every backend ×
// dtype of every processor), lb(l, c) is the estimator's LayerLowerBound
// when it implements LayerLowerBounder (cost.Analytic and the measured
// profile.Estimator do, each with its proof), else FLOPs(l) / peak(c.DType)
// — which holds only if no estimate beats the processor's peak arithmetic:
// measured figures and calibrated models can, so the result is then
// labelled an estimate (Bound.Proven is false) — and is
// capped by the layer's own time alone, Subgraph(lg, {l}, c). The layer can
// run on processor p when some configuration of p accepts it alone (a
// subgraph containing a layer p cannot run is unsupported too). Let
// m(l) = min over supported c of lb(l, c) and supp(l) the processors that
// can run it. Transfers are taken as free (only loosens the bound).
//
// (a) Deadline. Within a model, a subgraph starts after every subgraph that
// feeds it has finished, and takes at least the sum of its layers' lb; so
// along any path of layers l1 → l2 → ... the last finishes at least Σ m(li)
// after the request arrives. A model listed after others starts only once
// all their subgraphs finished (see Compile). The critical path CP_g of a
// group — the longest such chain through its models in dependency order —
// is therefore a lower bound on every request's latency in every plan, at
// every rate. If CP_g exceeds the group's deadline, every request misses
// and the bound is 0.
//
// (b) Load. At scale s, group g issues s·rate_g requests per second. In any
// plan, layer l of a model of g runs inside a subgraph on some processor in
// supp(l), and contributes at least m(l) to that processor's busy time per
// request. A processor with Concurrency k supplies k busy-seconds per
// second, and a sustainable plan cannot ask for more in the long run (queues
// would grow without bound: LoadLimit). For any processor set S, the layers
// with supp(l) ⊆ S must run on S, so
//
//	s · D(S) ≤ cap(S),  D(S) = Σ_g rate_g Σ_{l of g, supp(l) ⊆ S} m(l),  cap(S) = Σ_{p ∈ S} k_p,
//
// and s ≤ min_S cap(S)/D(S). This is Hall's condition for the fractional
// assignment of layers to processors: with S the whole platform it is the
// total-work bound, with S = {npu} it charges the NPU with the work only it
// can run, and every set in between is checked. With up to 16 processors
// every subset is enumerated (subset sums, O(P·2^P + layers·configs));
// beyond that the whole platform and each distinct supp(l) are used, which
// is still a valid (if looser) bound.
//
// The bound is min over (b), or 0 by (a). MaxSustainableScale never returns
// more: it searches below LoadLimit, which by the argument of (b) applied to
// the plan's actual subgraph durations is at most this bound; and a plan
// infeasible by (a) misses every deadline even at a tiny rate.
func Upper(w *workload.Workload, pl *hw.Platform, est cost.Estimator) (Bound, error) {
	b, err := upperBound(w, pl, est)
	if err == nil && b.PeakFallback {
		b.Why += peakFallbackNote
	}
	return b, err
}

func upperBound(w *workload.Workload, pl *hw.Platform, est cost.Estimator) (Bound, error) {
	if w == nil || pl == nil || est == nil {
		return Bound{}, errors.New("ratebound: Upper needs a workload, a platform and an estimator")
	}
	if c, ok := est.(Uncacher); ok {
		est = c.Uncached()
	}
	lbr, hasLB := est.(LayerLowerBounder)
	b := Bound{PeakFallback: !hasLB}
	bf := &boundFigures{w: w, pl: pl, est: est, lbr: lbr}
	if why, err := bf.collect(); err != nil || why != "" {
		b.Why = why
		return b, err
	}
	if err := bf.criticalPaths(&b); err != nil || b.Why != "" {
		return b, err
	}
	b.Scale = math.Inf(1)
	bf.hallBound(&b)
	bf.fluidBound(&b)
	if math.IsInf(b.Scale, 1) {
		b.Why = "no layer needs processor time"
	}
	return b, nil
}

// layerFig is one layer's figures in Upper's argument.
type layerFig struct {
	min  time.Duration   // m(l): over every processor and config
	per  []time.Duration // per processor: min over its configs, -1 where unsupported
	supp uint64          // bit p: processor p can run it (first 64 processors)
	sset []bool          // same, for any count
}

// boundFigures holds Upper's inputs and the per-layer figures of the
// models the groups run (figs, by model name; names sorted).
type boundFigures struct {
	w     *workload.Workload
	pl    *hw.Platform
	est   cost.Estimator
	lbr   LayerLowerBounder // nil: the peak fallback
	names []string
	figs  map[string][]layerFig
}

// collect computes every layer's figures. why is not "" when some layer
// runs on no processor (the bound is then 0).
func (bf *boundFigures) collect() (why string, err error) {
	models := map[string]bool{}
	for _, g := range bf.w.Groups {
		for _, m := range g.Models {
			models[m] = true
		}
	}
	for m := range models {
		bf.names = append(bf.names, m)
	}
	sort.Strings(bf.names)
	bf.figs = map[string][]layerFig{}
	for _, name := range bf.names {
		wm := bf.w.Model(name)
		if wm == nil || wm.Layers == nil {
			return "", fmt.Errorf("ratebound: model %q is not loaded", name)
		}
		lg := wm.Layers
		fs := make([]layerFig, len(lg.Layers))
		for l := range lg.Layers {
			f, err := bf.layer(name, lg, l)
			if err != nil {
				return "", err
			}
			if f.min < 0 {
				return fmt.Sprintf("layer %d (%s) of model %q runs on no processor of %s",
					l, lg.Layers[l].Name, name, bf.pl.Name), nil
			}
			fs[l] = f
		}
		bf.figs[name] = fs
	}
	return "", nil
}

// layer computes one layer's figures: lb(l, c) on every config, capped by
// the layer's time alone; min −1 when no processor runs it.
func (bf *boundFigures) layer(name string, lg *graph.LayerGraph, l int) (layerFig, error) {
	pl := bf.pl
	nproc := len(pl.Processors)
	f := layerFig{min: -1, sset: make([]bool, nproc), per: make([]time.Duration, nproc)}
	for p := range f.per {
		f.per[p] = -1
	}
	set := graph.LayerSet{l}
	for p := 0; p < nproc; p++ {
		for _, c := range bf.w.Model(name).Configs(pl, p) {
			alone, err := bf.est.Subgraph(lg, set, c)
			if errors.Is(err, cost.ErrUnsupported) {
				continue
			}
			if err != nil {
				return f, fmt.Errorf("ratebound: model %q layer %d on %s: %w", name, l, pl.Processors[p].Name, err)
			}
			var lb time.Duration
			if bf.lbr != nil {
				if lb, err = bf.lbr.LayerLowerBound(lg, l, c); err != nil {
					if errors.Is(err, cost.ErrUnsupported) {
						continue
					}
					return f, fmt.Errorf("ratebound: model %q layer %d on %s: %w", name, l, pl.Processors[p].Name, err)
				}
			} else {
				lb = peakTime(lg.Layers[l].Work.FLOPs, pl.Processors[p], c.DType)
			}
			lb = max(min(lb, alone), 0)
			if f.min < 0 || lb < f.min {
				f.min = lb
			}
			if f.per[p] < 0 || lb < f.per[p] {
				f.per[p] = lb
			}
			f.sset[p] = true
			if p < 64 {
				f.supp |= 1 << p
			}
		}
	}
	return f, nil
}

// criticalPaths is (a): each group's critical path, and b.Why when one
// exceeds its group's deadline (the bound is then 0).
func (bf *boundFigures) criticalPaths(b *Bound) error {
	w := bf.w
	for _, g := range w.Groups {
		order, err := g.Order()
		if err != nil {
			return fmt.Errorf("ratebound: group %q: %w", g.Name, err)
		}
		finish := map[string]time.Duration{}
		var cp time.Duration
		for _, name := range order {
			var start time.Duration
			for _, a := range g.After[name] {
				start = max(start, finish[a])
			}
			lg := w.Model(name).Layers
			fs := bf.figs[name]
			ends := make([]time.Duration, len(lg.Layers))
			var last time.Duration
			for l := range lg.Layers { // IDs are topological
				s := start
				for _, pr := range lg.Preds[l] {
					s = max(s, ends[pr])
				}
				ends[l] = s + fs[l].min
				last = max(last, ends[l])
			}
			finish[name] = last
			cp = max(cp, last)
		}
		b.CriticalPaths = append(b.CriticalPaths, cp)
		if cp > g.Deadline && b.Scale == 0 && b.Why == "" {
			b.Why = fmt.Sprintf("group %q: critical path %v on the fastest processors exceeds its deadline %v", g.Name, cp, g.Deadline)
		}
	}
	return nil
}

// groupRate is a group's nominal rate in requests per second.
func groupRate(g *workload.Group) float64 { return float64(time.Second) / float64(g.Period) }

// hallBound is (b): the load bound on processor sets, lowering b.Scale.
func (bf *boundFigures) hallBound(b *Bound) {
	w, pl := bf.w, bf.pl
	nproc := len(pl.Processors)
	consider := func(in func(p int) bool, demand float64) {
		if demand <= 0 {
			return
		}
		var capacity float64
		for p, pr := range pl.Processors {
			if in(p) {
				capacity += float64(max(pr.Concurrency, 1))
			}
		}
		if s := capacity / demand; s < b.Scale {
			var names []string
			for p, pr := range pl.Processors {
				if in(p) {
					names = append(names, pr.Name)
				}
			}
			b.Scale = s
			b.Why = fmt.Sprintf("processors {%s}: the layers only they can run need %.4g busy-seconds per second at scale 1, capacity %g",
				strings.Join(names, ", "), demand, capacity)
		}
	}
	if nproc <= 16 {
		full := 1 << nproc
		w8 := make([]float64, full)
		for _, g := range w.Groups {
			r := groupRate(g)
			for _, name := range g.Models {
				for _, f := range bf.figs[name] {
					w8[f.supp] += r * f.min.Seconds()
				}
			}
		}
		// Subset sums: D[S] = Σ_{T ⊆ S} w[T].
		for bit := 0; bit < nproc; bit++ {
			for s := 0; s < full; s++ {
				if s&(1<<bit) != 0 {
					w8[s] += w8[s^(1<<bit)]
				}
			}
		}
		for s := 1; s < full; s++ {
			mask := uint64(s)
			consider(func(p int) bool { return mask&(1<<p) != 0 }, w8[s])
		}
		return
	}
	demandOf := func(in func(l layerFig) bool) float64 {
		var d float64
		for _, g := range w.Groups {
			r := groupRate(g)
			for _, name := range g.Models {
				for _, f := range bf.figs[name] {
					if in(f) {
						d += r * f.min.Seconds()
					}
				}
			}
		}
		return d
	}
	consider(func(int) bool { return true }, demandOf(func(layerFig) bool { return true }))
	seen := map[string]bool{}
	for _, name := range bf.names {
		for _, f := range bf.figs[name] {
			key := fmt.Sprint(f.sset)
			if seen[key] {
				continue
			}
			seen[key] = true
			sset := f.sset
			consider(func(p int) bool { return sset[p] }, demandOf(func(o layerFig) bool { return subset(o.sset, sset) }))
		}
	}
}

// fluidBound is (c): the fractional assignment itself, through LP
// duality (dualLoadBound), lowering b.Scale.
func (bf *boundFigures) fluidBound(b *Bound) {
	w, pl := bf.w, bf.pl
	nproc := len(pl.Processors)
	var items [][]float64
	for _, g := range w.Groups {
		r := groupRate(g)
		for _, name := range g.Models {
			for _, f := range bf.figs[name] {
				t := make([]float64, nproc)
				for p, d := range f.per {
					t[p] = math.Inf(1)
					if d >= 0 {
						t[p] = r * d.Seconds()
					}
				}
				items = append(items, t)
			}
		}
	}
	items = append(items, bf.dispatchItems()...)
	caps := make([]float64, nproc)
	for p, pr := range pl.Processors {
		caps[p] = float64(max(pr.Concurrency, 1))
	}
	if load := dualLoadBound(items, caps); load > 0 {
		if s := 1 / load; s < b.Scale {
			b.Scale = s
			b.Why = fmt.Sprintf("fractional assignment of every layer (and one dispatch per model) to the processors that can run it (LP dual): the least possible maximum load is at least %.4g at scale 1", load)
		}
	}
}

// dispatchItems are the fluid problem's dispatch items: every model runs
// at least one subgraph per request, which pays its processor's dispatch
// overhead on top of its layers' bounds — one item per model and request,
// on any processor that runs one of its layers. None unless the estimator
// offers both lower bounds.
func (bf *boundFigures) dispatchItems() [][]float64 {
	dlb, ok := bf.est.(DispatchLowerBounder)
	if !ok || bf.lbr == nil {
		return nil
	}
	nproc := len(bf.pl.Processors)
	var items [][]float64
	for _, g := range bf.w.Groups {
		r := groupRate(g)
		for _, name := range g.Models {
			t := make([]float64, nproc)
			anyCost := false
			for p := range t {
				t[p] = math.Inf(1)
				for _, f := range bf.figs[name] {
					if f.per[p] >= 0 {
						t[p] = r * dlb.DispatchLowerBound(p).Seconds()
						anyCost = anyCost || t[p] > 0
						break
					}
				}
			}
			if anyCost {
				items = append(items, t)
			}
		}
	}
	return items
}

// dualLoadBound returns a lower bound on the least maximum processor load
// (busy-seconds per second over capacity) of any fractional assignment of
// the items to processors; items[i][p] is item i's busy time on processor
// p at scale 1 (+Inf where p cannot run it), caps[p] the processor's
// capacity. Hence 1/result bounds the max sustainable scale.
//
// Proof. The fluid problem is the linear program
//
//	min L  s.t.  Σ_p x_ip = 1 (each item),  Σ_i t_ip x_ip ≤ L·cap_p (each p),  x ≥ 0,
//
// whose dual is max Σ_i min_p λ_p t_ip over λ ≥ 0 with Σ_p λ_p cap_p = 1.
// By weak duality every such λ gives a lower bound on L, so the bound stays
// valid however well λ is optimised (FluidDual); the best value is shaved
// by 1e-9 against rounding. The Hall bound of (b) is the special case
// λ = 1_S / cap(S), and this one is usually much tighter on unlike
// processors.
func dualLoadBound(items [][]float64, caps []float64) float64 {
	d := FluidDual(items, caps, 3000, 0)
	return d.Value * (1 - 1e-9)
}

// Dual is the result of FluidDual.
type Dual struct {
	// Value is the best dual objective found: a lower bound on the least
	// maximum load of any fractional assignment.
	Value float64
	// Weights attain Value: w_p = λ_p·cap_p, on the simplex.
	Weights []float64
	// Snapshots are iterates taken at evenly spread points of the ascent
	// (as many as asked), for planners that want several price vectors.
	Snapshots [][]float64
}

// FluidDual maximises the dual of the fluid load problem (see
// dualLoadBound) by exponentiated (mirror) subgradient ascent on the
// weights w_p = λ_p·cap_p over the simplex, from uniform weights, with step
// 2/√(k+1) on the gradient normalised by its largest entry and weights kept
// above 1e-9; it keeps the best iterate. Deterministic.
// O(iters · items · processors).
func FluidDual(items [][]float64, caps []float64, iters, snapshots int) Dual {
	n := len(caps)
	if n == 0 {
		return Dual{}
	}
	value := func(w []float64, grad []float64) float64 {
		for p := range grad {
			grad[p] = 0
		}
		f := 0.0
		for _, t := range items {
			best, arg := math.Inf(1), -1
			for p, tp := range t {
				if v := w[p] / caps[p] * tp; v < best {
					best, arg = v, p
				}
			}
			if arg < 0 {
				continue // runs nowhere: no constraint
			}
			f += best
			grad[arg] += t[arg] / caps[arg]
		}
		return f
	}
	w := make([]float64, n)
	for p := range w {
		w[p] = 1 / float64(n)
	}
	grad := make([]float64, n)
	d := Dual{Value: math.Inf(-1)}
	for it := 0; it < iters; it++ {
		f := value(w, grad)
		if f > d.Value {
			d.Value, d.Weights = f, append([]float64(nil), w...)
		}
		if snapshots > 0 && it%(iters/snapshots+1) == iters/(2*snapshots) {
			d.Snapshots = append(d.Snapshots, append([]float64(nil), w...))
		}
		gmax := 0.0
		for _, g := range grad {
			gmax = math.Max(gmax, g)
		}
		if gmax <= 0 {
			break
		}
		eta := 2.0 / math.Sqrt(float64(it+1))
		sum := 0.0
		for p := range w {
			w[p] *= math.Exp(eta * (grad[p]/gmax - 1))
			w[p] = math.Max(w[p], 1e-9)
			sum += w[p]
		}
		for p := range w {
			w[p] /= sum
		}
	}
	if math.IsInf(d.Value, -1) {
		d.Value = 0
	}
	return d
}

func subset(a, b []bool) bool {
	for i := range a {
		if a[i] && !b[i] {
			return false
		}
	}
	return true
}

// peakTime is flops at the processor's peak for the dtype (its highest
// peak when it lists none for that dtype); 0 without a peak.
func peakTime(flops int64, pr *hw.Processor, d graph.DType) time.Duration {
	peak, best := 0.0, 0.0
	for _, ds := range pr.DTypes {
		if ds.DType == d {
			peak = ds.PeakGOPS
		}
		best = math.Max(best, ds.PeakGOPS)
	}
	if peak <= 0 {
		peak = best
	}
	if peak <= 0 || flops <= 0 {
		return 0
	}
	return time.Duration(math.Floor(float64(flops) / peak)) // GOPS = ops per ns
}
