package milp

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/search/space"
	"github.com/inlay-dev/inlay/solver"
)

// Formulation is a workload's planning MILP: which processor runs each
// layer, at the least maximum normalised load.
//
// Costs are lower bounds, so that the optimum bounds every plan:
//   - a layer l on processor p costs lb(l, p), the least over p's
//     configurations in a precision the model allows of the estimator's LayerLowerBound capped by the
//     layer's time alone (ratebound.LayerLowerBounder's contract; FLOPs at peak
//     without one);
//   - every subgraph pays its processor's DispatchLowerBound per request,
//     counted as the larger of the runs on p along the model's longest path
//     (each run is a distinct subgraph) and 1 where the model uses p;
//   - a tensor produced in memory domain D and consumed in E across a
//     shared link costs that link its bytes at the link's rate, and each
//     (model, D, E) with traffic pays the link's latency once (the
//     simulator sends one copy per pair of subgraphs, of all the tensors
//     between them, so at least this much).
//
// Variables: x[m][l][p] ∈ {0,1} (Σ_p = 1; none where p cannot run l),
// r[m][i][p] ≥ x[m][π_i][p] − x[m][π_{i−1}][p] along the longest path π,
// n[m][p] ≥ Σ_i r[m][i][p] and ≥ x[m][l][p] (subgraphs of m on p), y[m][t][D][E] ≥ Σ_{p∈D} x[a][p] +
// Σ_{q∈E} x[b][q] − 1 for each consumer b of tensor t from layer a,
// v[m][D][E] ≥ y, and L ≥
// every processor's busy-seconds per second over its concurrency and every
// shared link's; minimise L. With deadlines, a finish time per (group,
// layer) along the layer graph, models after the models they wait for, and
// every finish within the group's deadline — the critical path at the
// assignment's own lower-bound costs, which no plan meeting deadlines can
// exceed.
//
// Memory: where the platform gives capacities (a processor's memory_mib, a
// domain's capacity_mib), the weights placed within each, at the least
// bytes an allowed data type takes, stay within it.
//
// Symmetry: processors whose lower-bound costs agree on every layer and
// whose dispatch, concurrency, domain and memory agree are
// interchangeable; their loads are ordered (the first carries at least as
// much as the second).
//
// So every plan's assignment is feasible for the MILP at an objective no
// larger than its real LoadLimit load, and the MILP's best bound B gives
// 1/B ≥ the max sustainable rate scale of every plan.
type Formulation struct {
	Model *solver.Model
	// L is the objective variable.
	L solver.Var
	// X[m][l][p] is layer l of model m on p; -1 where p cannot run it.
	X [][][]solver.Var
	// Lower-bound costs in seconds per request, and each model's rate
	// (requests per second at scale 1, summed over its groups).
	LB       [][][]float64
	Dispatch []float64
	Rate     []float64
	// PeakFallback: the estimator has no LayerLowerBound; FLOPs at peak.
	PeakFallback bool
	// Deadlines: the critical-path rows are in.
	Deadlines bool
	// Symmetric lists the processor pairs whose loads are ordered.
	Symmetric [][2]int
	// Memory lists the memory capacities stated (a row each, in MiB).
	Memory []hw.MemoryLimit

	sp       *space.Space
	aux      []auxVar // every other variable, and how to set it from an assignment
	caps     []float64
	loadRows [][]solver.Term // processor and shared-link loads (without L)
	loadName []string
	loadProc []int // the processor of each load row; -1 for a link
}

// LoadRow is one load that L bounds: a processor's or a shared link's.
type LoadRow struct {
	Name  string
	Terms []solver.Term
}

// LoadRows lists the loads that L bounds.
func (f *Formulation) LoadRows() []LoadRow {
	out := make([]LoadRow, len(f.loadRows))
	for i, r := range f.loadRows {
		out[i] = LoadRow{Name: f.loadName[i], Terms: r}
	}
	return out
}

type auxKind int

const (
	auxRun auxKind = iota
	auxCount
	auxPair
	auxLinkPair
	auxFinish
	auxStart
)

type auxVar struct {
	kind auxKind
	v    solver.Var
	m    int
	// auxRun: layer a after layer g on the path, processor p; auxCount:
	// processor p; auxPair: layer a, consumers bs, domains p, q;
	// auxLinkPair: domains p, q;
	// auxFinish: group g, layer a; auxStart: group g.
	a, g, p, q int
	bs         []int
}

// FormulateOptions shape the formulation.
type FormulateOptions struct {
	// Deadlines adds the critical-path rows.
	Deadlines bool
}

// Formulate states the planning MILP of a search space.
func Formulate(sp *space.Space, opt FormulateOptions) (*Formulation, error) {
	pl, est, w := sp.Platform, sp.Cost, sp.W
	P := len(pl.Processors)
	lbr, hasLB := est.(ratebound.LayerLowerBounder)
	f := &Formulation{Model: solver.NewModel(solver.Minimize), PeakFallback: !hasLB, Deadlines: opt.Deadlines, sp: sp}
	m := f.Model
	f.L = m.AddVar(0, solver.Inf, 1)
	f.Dispatch = make([]float64, P)
	if d, ok := est.(ratebound.DispatchLowerBounder); ok && hasLB {
		for p := range P {
			f.Dispatch[p] = d.DispatchLowerBound(p).Seconds()
		}
	}
	f.caps = make([]float64, P)
	for p, pr := range pl.Processors {
		f.caps[p] = float64(max(pr.Concurrency, 1))
	}
	load := make([][]solver.Term, P)
	linkLoad := make([][]solver.Term, len(pl.Links))
	for mi, sm := range sp.Models {
		lg := sm.Layers
		rate := 0.0
		for _, gi := range sm.Groups {
			rate += w.Groups[gi].RateHz()
		}
		f.Rate = append(f.Rate, rate)
		xs := make([][]solver.Var, len(lg.Layers))
		lbs := make([][]float64, len(lg.Layers))
		for l := range lg.Layers {
			xs[l] = make([]solver.Var, P)
			lbs[l] = make([]float64, P)
			one := []solver.Term{}
			for p := range P {
				xs[l][p], lbs[l][p] = -1, math.Inf(1)
				if !sm.CanRun(l, p) {
					continue
				}
				d, err := layerBound(lg, l, w.Models[sm.Index].Configs(pl, p), pl, p, est, lbr)
				if errors.Is(err, cost.ErrUnsupported) {
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("milp: model %q layer %d on %s: %w", sm.Name, l, pl.Processors[p].Name, err)
				}
				lbs[l][p] = d.Seconds()
				xs[l][p] = m.AddBinary(0)
				one = append(one, solver.Term{Var: xs[l][p], Coef: 1})
				if c := rate * lbs[l][p] / f.caps[p]; c != 0 {
					load[p] = append(load[p], solver.Term{Var: xs[l][p], Coef: c})
				}
			}
			if len(one) == 0 {
				return nil, fmt.Errorf("milp: model %q layer %d (%s): no processor of %s can run it", sm.Name, l, lg.Layers[l].Name, pl.Name)
			}
			m.AddRow(1, 1, one...)
		}
		f.X = append(f.X, xs)
		f.LB = append(f.LB, lbs)
		// Dispatch. Along any path of the layer graph a plan visits each of
		// its subgraphs in one run (they are convex: a path that left one
		// and came back would put a layer of another between two of its
		// own), so the runs on p along the model's longest path are distinct
		// subgraphs of p: n[m][p] ≥ Σ_i r[i][p], r[i][p] ≥ x[π_i][p] −
		// x[π_{i−1}][p]; and n[m][p] ≥ x[l][p] for every layer (one
		// subgraph wherever the model runs anything).
		path := longestPath(lg)
		for p := range P {
			if f.Dispatch[p] == 0 {
				continue
			}
			var uses []solver.Var
			for l := range lg.Layers {
				if xs[l][p] >= 0 {
					uses = append(uses, xs[l][p])
				}
			}
			if len(uses) == 0 {
				continue
			}
			n := m.AddVar(0, solver.Inf, 0)
			f.aux = append(f.aux, auxVar{kind: auxCount, v: n, m: mi, p: p})
			for _, x := range uses {
				m.AddRow(0, solver.Inf, solver.Term{Var: n, Coef: 1}, solver.Term{Var: x, Coef: -1})
			}
			runs := []solver.Term{{Var: n, Coef: 1}}
			for i, l := range path {
				if xs[l][p] < 0 {
					continue
				}
				if i == 0 || xs[path[i-1]][p] < 0 {
					runs = append(runs, solver.Term{Var: xs[l][p], Coef: -1})
					continue
				}
				r := m.AddVar(0, 1, 0)
				m.AddRow(0, solver.Inf, solver.Term{Var: r, Coef: 1}, solver.Term{Var: xs[l][p], Coef: -1}, solver.Term{Var: xs[path[i-1]][p], Coef: 1})
				runs = append(runs, solver.Term{Var: r, Coef: -1})
				f.aux = append(f.aux, auxVar{kind: auxRun, v: r, m: mi, a: l, g: path[i-1], p: p})
			}
			m.AddRow(0, solver.Inf, runs...)
			load[p] = append(load[p], solver.Term{Var: n, Coef: rate * f.Dispatch[p] / f.caps[p]})
		}
		// Transfers on shared links.
		if err := f.transfers(mi, sm, rate, linkLoad); err != nil {
			return nil, err
		}
	}
	for p := range P {
		if len(load[p]) == 0 {
			continue
		}
		m.AddRow(0, solver.Inf, append([]solver.Term{{Var: f.L, Coef: 1}}, negate(load[p])...)...)
		f.loadRows = append(f.loadRows, load[p])
		f.loadName = append(f.loadName, pl.Processors[p].Name)
		f.loadProc = append(f.loadProc, p)
	}
	for li, terms := range linkLoad {
		if len(terms) == 0 {
			continue
		}
		m.AddRow(0, solver.Inf, append([]solver.Term{{Var: f.L, Coef: 1}}, negate(terms)...)...)
		f.loadRows = append(f.loadRows, terms)
		f.loadName = append(f.loadName, "link "+pl.Links[li].From+"-"+pl.Links[li].To)
		f.loadProc = append(f.loadProc, -1)
	}
	f.memory()
	f.symmetry(load)
	if opt.Deadlines {
		if err := f.deadlines(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func negate(ts []solver.Term) []solver.Term {
	out := make([]solver.Term, len(ts))
	for i, t := range ts {
		out[i] = solver.Term{Var: t.Var, Coef: -t.Coef}
	}
	return out
}

// layerBound is lb(l, p): the least over p's configurations that the model
// allows (its precisions: workload.Model.Configs) of the layer's lower
// bound, capped by its time alone.
func layerBound(lg *graph.LayerGraph, l int, configs []hw.Config, pl *hw.Platform, p int, est cost.Estimator, lbr ratebound.LayerLowerBounder) (time.Duration, error) {
	best := time.Duration(-1)
	set := graph.LayerSet{l}
	for _, c := range configs {
		alone, err := est.Subgraph(lg, set, c)
		if errors.Is(err, cost.ErrUnsupported) {
			continue
		}
		if err != nil {
			return 0, err
		}
		var lb time.Duration
		if lbr != nil {
			if lb, err = lbr.LayerLowerBound(lg, l, c); err != nil {
				if errors.Is(err, cost.ErrUnsupported) {
					continue
				}
				return 0, err
			}
		} else {
			lb = peakTime(lg.Layers[l].Work.FLOPs, pl.Processors[p], c.DType)
		}
		lb = max(0, min(lb, alone))
		if best < 0 || lb < best {
			best = lb
		}
	}
	if best < 0 {
		return 0, cost.ErrUnsupported
	}
	return best, nil
}

// peakTime is flops at the processor's peak for the dtype (its highest
// peak when it lists none for that dtype), as ratebound.Upper's fallback.
func peakTime(flops int64, pr *hw.Processor, d graph.DType) time.Duration {
	peak, ok := pr.Peak(d)
	if !ok || peak <= 0 {
		peak = pr.DefaultPeak()
	}
	if peak <= 0 || flops <= 0 {
		return 0
	}
	return time.Duration(math.Floor(float64(flops) / peak))
}

// transfers adds the shared-link terms of one model.
func (f *Formulation) transfers(mi int, sm *space.Model, rate float64, linkLoad [][]solver.Term) error {
	pl, est, m := f.sp.Platform, f.sp.Cost, f.Model
	lg := sm.Layers
	// Consumers of each (producer, tensor), in edge order.
	type tensorKey struct {
		from   int
		tensor string
	}
	var keys []tensorKey
	consumers := map[tensorKey][]int{}
	bytes := map[tensorKey]int64{}
	for _, e := range lg.Edges {
		if e.From < 0 || e.To < 0 {
			continue
		}
		k := tensorKey{e.From, e.Tensor}
		if _, ok := consumers[k]; !ok {
			keys = append(keys, k)
		}
		consumers[k] = append(consumers[k], e.To)
		bytes[k] = e.Bytes
	}
	// Transfers depend only on the two memory domains: one indicator per
	// (tensor, source domain, destination domain), on the sums of x over
	// each domain's processors.
	doms := domainsOf(pl)
	inDom := func(l, d int) []solver.Term {
		var ts []solver.Term
		for _, p := range doms[d] {
			if v := f.X[mi][l][p]; v >= 0 {
				ts = append(ts, solver.Term{Var: v, Coef: -1})
			}
		}
		return ts
	}
	for d := range doms {
		for e := range doms {
			if d == e {
				continue
			}
			p, q := doms[d][0], doms[e][0]
			li, ok := pl.Link(p, q)
			if !ok || !pl.Links[li].Shared {
				continue
			}
			// One nanosecond off the latency covers the simulator's rounding.
			latency := max(0, est.Transfer(0, p, q)-time.Nanosecond).Seconds()
			perByte := 0.0
			if t := est.Transfer(1<<30, p, q); t > 0 {
				perByte = math.Max(0, (t-est.Transfer(0, p, q)-time.Nanosecond).Seconds()/float64(1<<30))
			}
			pair := solver.Var(-1)
			for _, k := range keys {
				src := inDom(k.from, d)
				if len(src) == 0 {
					continue
				}
				var bs []int
				for _, b := range consumers[k] {
					if len(inDom(b, e)) > 0 {
						bs = append(bs, b)
					}
				}
				if len(bs) == 0 {
					continue
				}
				y := m.AddVar(0, 1, 0)
				for _, b := range bs {
					m.AddRow(-1, solver.Inf, append(append([]solver.Term{{Var: y, Coef: 1}}, src...), inDom(b, e)...)...)
				}
				f.aux = append(f.aux, auxVar{kind: auxPair, v: y, m: mi, a: k.from, bs: bs, p: d, q: e})
				if c := rate * perByte * float64(bytes[k]) * (1 - 1e-9); c > 0 {
					linkLoad[li] = append(linkLoad[li], solver.Term{Var: y, Coef: c})
				}
				if latency > 0 {
					if pair < 0 {
						pair = m.AddVar(0, 1, 0)
						f.aux = append(f.aux, auxVar{kind: auxLinkPair, v: pair, m: mi, p: d, q: e})
						linkLoad[li] = append(linkLoad[li], solver.Term{Var: pair, Coef: rate * latency * (1 - 1e-9)})
					}
					m.AddRow(0, solver.Inf, solver.Term{Var: pair, Coef: 1}, solver.Term{Var: y, Coef: -1})
				}
			}
		}
	}
	return nil
}

// domainsOf lists the processors of each memory domain (domains in order
// of their first processor).
func domainsOf(pl *hw.Platform) [][]int {
	index := map[string]int{}
	var out [][]int
	for p, pr := range pl.Processors {
		d, ok := index[pr.Domain]
		if !ok {
			d = len(out)
			index[pr.Domain] = d
			out = append(out, nil)
		}
		out[d] = append(out[d], p)
	}
	return out
}

// memory adds a row per memory capacity of the platform
// (hw.Platform.MemoryLimits): the weights of the layers placed on its
// processors, each at the least it takes in a data type the model allows
// there (hw.WeightBytes), within the capacity. Least bytes keep the MILP a
// relaxation: every plan within the capacities is feasible for it.
func (f *Formulation) memory() {
	pl, w := f.sp.Platform, f.sp.W
	limits := pl.MemoryLimits()
	if len(limits) == 0 {
		return
	}
	f.Memory = limits
	least := func(mi, l, p int) float64 {
		sm := f.sp.Models[mi]
		best := int64(-1)
		for _, c := range w.Models[sm.Index].Configs(pl, p) {
			if b := hw.WeightBytes(sm.Layers.Layers[l].Work, c.DType); best < 0 || b < best {
				best = b
			}
		}
		return float64(max(best, 0))
	}
	for _, lim := range limits {
		var terms []solver.Term
		for mi, xs := range f.X {
			for l, row := range xs {
				for _, p := range lim.Procs {
					if v := row[p]; v >= 0 {
						if b := least(mi, l, p); b > 0 {
							terms = append(terms, solver.Term{Var: v, Coef: b / (1 << 20)})
						}
					}
				}
			}
		}
		if len(terms) > 0 {
			f.Model.AddRow(-solver.Inf, float64(lim.Bytes)/(1<<20), terms...)
		}
	}
}

// symmetry orders the loads of interchangeable processors.
func (f *Formulation) symmetry(load [][]solver.Term) {
	pl := f.sp.Platform
	P := len(pl.Processors)
	same := func(p, q int) bool {
		a, b := pl.Processors[p], pl.Processors[q]
		if a.Domain != b.Domain || a.MemoryBytes != b.MemoryBytes || f.caps[p] != f.caps[q] || f.Dispatch[p] != f.Dispatch[q] {
			return false
		}
		for mi := range f.LB {
			for l := range f.LB[mi] {
				if f.LB[mi][l][p] != f.LB[mi][l][q] {
					return false
				}
			}
		}
		return true
	}
	taken := make([]bool, P)
	for p := range P {
		if taken[p] {
			continue
		}
		prev := p
		for q := p + 1; q < P; q++ {
			if taken[q] || !same(p, q) {
				continue
			}
			taken[q] = true
			// load(prev) − load(q) ≥ 0
			terms := append(append([]solver.Term(nil), load[prev]...), negate(load[q])...)
			f.Model.AddRow(0, solver.Inf, terms...)
			f.Symmetric = append(f.Symmetric, [2]int{prev, q})
			prev = q
		}
	}
}

// deadlines adds the critical-path rows.
func (f *Formulation) deadlines() error {
	w, m := f.sp.W, f.Model
	index := map[string]int{}
	for mi, sm := range f.sp.Models {
		index[sm.Name] = mi
	}
	for gi, g := range w.Groups {
		order, err := g.Order()
		if err != nil {
			return fmt.Errorf("milp: %w", err)
		}
		D := g.Deadline.Seconds()
		finish := map[int][]solver.Var{} // model → finish var per layer
		for _, name := range order {
			mi := index[name]
			sm := f.sp.Models[mi]
			lg := sm.Layers
			start := solver.Var(-1)
			if len(g.After[name]) > 0 {
				start = m.AddVar(0, D, 0)
				f.aux = append(f.aux, auxVar{kind: auxStart, v: start, m: mi, g: gi})
				for _, a := range g.After[name] {
					for _, e := range finish[index[a]] {
						m.AddRow(0, solver.Inf, solver.Term{Var: start, Coef: 1}, solver.Term{Var: e, Coef: -1})
					}
				}
			}
			es := make([]solver.Var, len(lg.Layers))
			for l := range lg.Layers {
				es[l] = m.AddVar(0, D, 0)
				f.aux = append(f.aux, auxVar{kind: auxFinish, v: es[l], m: mi, g: gi, a: l})
				own := []solver.Term{{Var: es[l], Coef: 1}}
				for p, x := range f.X[mi][l] {
					if x >= 0 && f.LB[mi][l][p] > 0 {
						own = append(own, solver.Term{Var: x, Coef: -f.LB[mi][l][p]})
					}
				}
				if len(lg.Preds[l]) == 0 {
					if start >= 0 {
						m.AddRow(0, solver.Inf, append(own, solver.Term{Var: start, Coef: -1})...)
					} else {
						m.AddRow(0, solver.Inf, own...)
					}
				}
				for _, pr := range lg.Preds[l] {
					m.AddRow(0, solver.Inf, append(append([]solver.Term(nil), own...), solver.Term{Var: es[pr], Coef: -1})...)
				}
			}
			finish[mi] = es
		}
	}
	return nil
}

// Start returns the MIP start of an assignment: x from it and every other
// variable at its least feasible value. It is infeasible (and CBC ignores
// it) when the assignment's critical path exceeds a deadline.
func (f *Formulation) Start(a *space.Assignment) []float64 {
	x := make([]float64, f.Model.NumVars())
	for mi := range f.X {
		for l, p := range a.Proc[mi] {
			if v := f.X[mi][l][p]; v >= 0 {
				x[v] = 1
			}
		}
	}
	finish := map[[3]int]float64{} // group, model, layer
	domOf := make([]int, len(f.sp.Platform.Processors))
	for d, ps := range domainsOf(f.sp.Platform) {
		for _, p := range ps {
			domOf[p] = d
		}
	}
	for _, av := range f.aux {
		switch av.kind {
		case auxRun:
			if a.Proc[av.m][av.a] == av.p && a.Proc[av.m][av.g] != av.p {
				x[av.v] = 1
			}
		case auxPair: // p, q are domains
			if domOf[a.Proc[av.m][av.a]] == av.p {
				for _, b := range av.bs {
					if domOf[a.Proc[av.m][b]] == av.q {
						x[av.v] = 1
					}
				}
			}
		}
	}
	for _, av := range f.aux { // subgraph counts after runs
		if av.kind != auxCount {
			continue
		}
		path := longestPath(f.sp.Models[av.m].Layers)
		runs, any := 0.0, false
		for i, l := range path {
			if a.Proc[av.m][l] == av.p && (i == 0 || a.Proc[av.m][path[i-1]] != av.p) {
				runs++
			}
		}
		for _, p := range a.Proc[av.m] {
			any = any || p == av.p
		}
		if any {
			runs = math.Max(runs, 1)
		}
		x[av.v] = runs
	}
	for _, av := range f.aux { // link pairs after pairs
		if av.kind != auxLinkPair {
			continue
		}
		for _, bv := range f.aux {
			if bv.kind == auxPair && bv.m == av.m && bv.p == av.p && bv.q == av.q && x[bv.v] == 1 {
				x[av.v] = 1
				break
			}
		}
	}
	// Finish times in creation order: groups in order, models in their
	// dependency order, layers topologically; starts come first.
	for _, av := range f.aux {
		switch av.kind {
		case auxStart:
			s := 0.0
			for _, a := range f.sp.W.Groups[av.g].After[f.sp.Models[av.m].Name] {
				for k, v := range finish {
					if k[0] == av.g && f.sp.Models[k[1]].Name == a {
						s = math.Max(s, v)
					}
				}
			}
			x[av.v] = s
			finish[[3]int{av.g, av.m, -1}] = s
		case auxFinish:
			lg := f.sp.Models[av.m].Layers
			s := finish[[3]int{av.g, av.m, -1}]
			for _, pr := range lg.Preds[av.a] {
				s = math.Max(s, finish[[3]int{av.g, av.m, pr}])
			}
			e := s + f.LB[av.m][av.a][a.Proc[av.m][av.a]]
			x[av.v] = e
			finish[[3]int{av.g, av.m, av.a}] = e
		}
	}
	x[f.L] = f.loadOf(x)
	return x
}

// Load is the objective of an assignment: its maximum normalised load at
// the formulation's lower-bound costs.
func (f *Formulation) Load(a *space.Assignment) float64 { return f.Start(a)[f.L] }

// loadOf is the largest load row at x.
func (f *Formulation) loadOf(x []float64) float64 {
	worst := 0.0
	for _, row := range f.loadRows {
		s := 0.0
		for _, t := range row {
			s += t.Coef * x[t.Var]
		}
		worst = math.Max(worst, s)
	}
	return worst
}

// Assignment reads the processor of each layer from a solution.
func (f *Formulation) Assignment(values []float64) (*space.Assignment, error) {
	a := &space.Assignment{Proc: make([][]int, len(f.X)), Priority: make([]int, len(f.X))}
	for mi, xs := range f.X {
		a.Proc[mi] = make([]int, len(xs))
		for l, row := range xs {
			a.Proc[mi][l] = -1
			for p, v := range row {
				if v >= 0 && values[v] > 0.5 {
					a.Proc[mi][l] = p
				}
			}
			if a.Proc[mi][l] < 0 {
				return nil, fmt.Errorf("milp: solution leaves layer %d of %q unassigned", l, f.sp.Models[mi].Name)
			}
		}
		a.Priority[mi] = mi
	}
	return a, nil
}

// longestPath is a longest path of the layer graph by layer count (ties:
// the lowest predecessor), from a source to a sink. Layer IDs are
// topological.
func longestPath(lg *graph.LayerGraph) []int {
	n := len(lg.Layers)
	if n == 0 {
		return nil
	}
	depth, from := make([]int, n), make([]int, n)
	end := 0
	for l := range n {
		from[l] = -1
		for _, p := range lg.Preds[l] {
			if depth[p]+1 > depth[l] || depth[p]+1 == depth[l] && p < from[l] {
				depth[l], from[l] = depth[p]+1, p
			}
		}
		if depth[l] > depth[end] {
			end = l
		}
	}
	var path []int
	for l := end; l >= 0; l = from[l] {
		path = append(path, l)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}
