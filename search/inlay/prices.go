package inlay

import (
	"errors"
	"github.com/inlay-dev/inlay/ratebound"
	"math"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/search/space"
)

// layerLowerBounder is the estimator extension that gives a layer's
// marginal share of a subgraph (package cost's Analytic has it; sim's
// upper bound uses the same figures).
type layerLowerBounder interface {
	LayerLowerBound(lg *graph.LayerGraph, layer int, on hw.Config) (time.Duration, error)
}

// prices is the fluid view of the workload that price-directed seeding
// works on: per layer and processor the layer's marginal busy time inside a
// subgraph, per processor its dispatch overhead, per model the bytes a cut
// between consecutive layers (in ID order, a topological order) carries.
//
// Resources are the processors followed by the platform's shared links
// (contended servers, capacity 1 each); a price vector has one entry per
// resource.
type prices struct {
	sp    *space.Space
	rate  []float64     // per model: requests per second at scale 1
	cost  [][][]float64 // model, layer, processor: seconds; +Inf where it cannot run
	disp  []float64     // per processor: dispatch overhead, seconds
	caps  []float64     // per resource
	cut   [][]int64     // model, position k (1..n-1): bytes on edges from layers < k to layers ≥ k
	link  [][]int       // processor pair → resource index of its shared link, -1 when none
	nproc int
	seqs  [][]int // processor sequences fill tries
	// prefix[model][p][k]: load on p of the model's layers < k that p can run.
	prefix [][][]float64
}

func newPrices(sp *space.Space, rate []float64) (*prices, error) {
	pl := sp.Platform
	nproc := len(pl.Processors)
	f := &prices{sp: sp, rate: rate, nproc: nproc, seqs: sequences(nproc, min(nproc, maxSeq))}
	for _, pr := range pl.Processors {
		f.disp = append(f.disp, pr.DispatchOverhead.Seconds())
		f.caps = append(f.caps, float64(max(pr.Concurrency, 1)))
	}
	linkRes := map[int]int{}
	var linkIDs []int
	for i, l := range pl.Links {
		if l.Shared {
			linkRes[i] = nproc + len(linkIDs)
			linkIDs = append(linkIDs, i)
			f.caps = append(f.caps, 1)
		}
	}
	f.link = make([][]int, nproc)
	for a := range f.link {
		f.link[a] = make([]int, nproc)
		for b := range f.link[a] {
			f.link[a][b] = -1
			if i, ok := pl.Link(a, b); ok {
				if r, shared := linkRes[i]; shared {
					f.link[a][b] = r
				}
			}
		}
	}
	lbr, hasLB := sp.Cost.(layerLowerBounder)
	for _, m := range sp.Models {
		lg := m.Layers
		n := len(lg.Layers)
		c := make([][]float64, n)
		for l := 0; l < n; l++ {
			c[l] = make([]float64, nproc)
			for p := range c[l] {
				c[l][p] = math.Inf(1)
			}
			for _, p := range m.Feasible[l] {
				best := math.Inf(1)
				for _, cfg := range sp.W.Models[m.Index].Configs(pl, p) {
					var d time.Duration
					var err error
					if hasLB {
						d, err = lbr.LayerLowerBound(lg, l, cfg)
					} else {
						d, err = sp.Cost.Subgraph(lg, graph.LayerSet{l}, cfg)
						d -= pl.Processors[p].DispatchOverhead
					}
					if errors.Is(err, cost.ErrUnsupported) {
						continue
					}
					if err != nil {
						return nil, err
					}
					best = math.Min(best, math.Max(d.Seconds(), 0))
				}
				c[l][p] = best
			}
		}
		f.cost = append(f.cost, c)
		pre := make([][]float64, nproc)
		for p := range pre {
			pre[p] = make([]float64, n+1)
			for l := 0; l < n; l++ {
				t := c[l][p]
				if math.IsInf(t, 1) {
					t = 0
				}
				pre[p][l+1] = pre[p][l] + rate[len(f.cost)-1]*t/f.caps[p]
			}
		}
		f.prefix = append(f.prefix, pre)
		// Cut bytes by a difference array over positions.
		diff := make([]int64, n+1)
		for _, e := range lg.Edges {
			if e.From < e.To {
				diff[e.From+1] += e.Bytes
				diff[e.To+1] -= e.Bytes
			}
		}
		cut := make([]int64, n)
		var run int64
		for k := 1; k < n; k++ {
			run += diff[k]
			cut[k] = run
		}
		f.cut = append(f.cut, cut)
	}
	return f, nil
}

// dual maximises the fluid problem's Lagrangian dual (ratebound.FluidDual, as
// sim's upper bound does, here on the planner's own marginal costs) and
// returns the best weights found (w_p = λ_p·cap_p on the simplex) followed
// by four iterates of the trajectory.
func (f *prices) dual(iters int) [][]float64 {
	nres := len(f.caps)
	var items [][]float64
	for i, c := range f.cost {
		for _, t := range c {
			item := make([]float64, nres)
			for p := range item {
				item[p] = math.Inf(1)
				if p < f.nproc {
					item[p] = f.rate[i] * t[p]
				}
			}
			items = append(items, item)
		}
	}
	d := ratebound.FluidDual(items, f.caps, iters, 4)
	if d.Weights == nil {
		d.Weights = make([]float64, nres)
		for p := range d.Weights {
			d.Weights[p] = 1 / float64(nres)
		}
	}
	return append([][]float64{d.Weights}, d.Snapshots...)
}

// assign is the price-directed assignment of every model: per model a
// Viterbi pass along the layers in ID order that minimises the priced busy
// time, where starting a new subgraph costs its processor's dispatch
// overhead and a change of memory domain the priced transfer of the cut's
// bytes on a shared link. Latency enters through mu: each second of a
// model's critical path (its layers' times plus transfers) is charged mu
// times the model's rate share.
func (f *prices) assign(w []float64, mu float64, a *space.Assignment) {
	for i := range f.cost {
		f.assignModel(i, w, mu, a.Proc[i])
	}
}

func (f *prices) assignModel(i int, w []float64, mu float64, out []int) {
	c := f.cost[i]
	n := len(c)
	P := f.nproc
	r := f.rate[i]
	lam := make([]float64, len(w))
	for p := range w {
		lam[p] = w[p] / f.caps[p]
	}
	pl := f.sp.Platform
	// dp[p]: least cost of layers 0..l with layer l on p; from[l][p]: p's predecessor.
	dp := make([]float64, P)
	next := make([]float64, P)
	from := make([][]int8, n)
	for p := 0; p < P; p++ {
		dp[p] = r*(lam[p]*(c[0][p]+f.disp[p])) + mu*(c[0][p]+f.disp[p])
	}
	from[0] = make([]int8, P)
	for l := 1; l < n; l++ {
		from[l] = make([]int8, P)
		bytes := f.cut[i][l]
		for p := 0; p < P; p++ {
			step := r*lam[p]*c[l][p] + mu*c[l][p]
			if math.IsInf(step, 1) {
				next[p] = math.Inf(1)
				from[l][p] = int8(p)
				continue
			}
			best, arg := dp[p], p
			for q := 0; q < P; q++ {
				if q == p || math.IsInf(dp[q], 1) {
					continue
				}
				sw := r*lam[p]*f.disp[p] + mu*f.disp[p]
				if _, ok := pl.Link(q, p); ok {
					tr := f.sp.Cost.Transfer(bytes, q, p).Seconds()
					sw += mu * tr
					if res := f.link[q][p]; res >= 0 {
						sw += r * lam[res] * tr
					}
				}
				if v := dp[q] + sw; v < best {
					best, arg = v, q
				}
			}
			next[p] = best + step
			from[l][p] = int8(arg)
		}
		dp, next = next, dp
	}
	best := 0
	for p := 1; p < P; p++ {
		if dp[p] < dp[best] {
			best = p
		}
	}
	for l := n - 1; l >= 0; l-- {
		out[l] = best
		best = int(from[l][best])
	}
}

// modelLoad returns the predicted load (busy seconds per second at scale
// 1 over capacity) that model i puts on each resource with the per-layer
// assignment proc: its layers' marginal times, a dispatch overhead per run
// of consecutive layers on one processor, and the transfers at the runs'
// boundaries on shared links.
func (f *prices) modelLoad(i int, proc []int, out []float64) {
	for p := range out {
		out[p] = 0
	}
	r := f.rate[i]
	c := f.cost[i]
	for l, p := range proc {
		out[p] += r * c[l][p]
		if l == 0 || proc[l-1] != p {
			out[p] += r * f.disp[p]
			if l > 0 {
				if res := f.link[proc[l-1]][p]; res >= 0 {
					out[res] += r * f.sp.Cost.Transfer(f.cut[i][l], proc[l-1], p).Seconds()
				}
			}
		}
	}
	for p := range out {
		out[p] /= f.caps[p]
	}
}

// softMax is the log-sum-exp of loads at sharpness alpha (≥ the max load,
// within log(len)/alpha of it), the smooth objective balancing minimises.
func softMax(loads []float64, alpha float64) float64 {
	m := math.Inf(-1)
	for _, x := range loads {
		m = math.Max(m, x)
	}
	sum := 0.0
	for _, x := range loads {
		sum += math.Exp(alpha * (x - m))
	}
	return m + math.Log(sum)/alpha
}

// balance is block-coordinate descent on the soft maximum of the resource
// loads: each model in turn is reassigned by price-directed DPs against the
// load of the others, the prices following the soft maximum's gradient
// (a few damped steps), and the best reassignment is kept when it lowers
// the soft maximum. Sweeps repeat until one improves nothing or maxSweeps
// is reached. order gives the models' visiting order. a is changed in place;
// the result is the predicted max load.
func (f *prices) balance(a *space.Assignment, w0 []float64, alpha float64, maxSweeps, inner int, order []int, stop func() bool) float64 {
	nres := len(f.caps)
	n := len(f.cost)
	x := make([][]float64, n)
	total := make([]float64, nres)
	for i := 0; i < n; i++ {
		m := f.sp.Models[i]
		for l, p := range a.Proc[i] {
			if !m.CanRun(l, p) {
				a.Proc[i][l] = m.Feasible[l][0]
			}
		}
		x[i] = make([]float64, nres)
		f.modelLoad(i, a.Proc[i], x[i])
		for p, v := range x[i] {
			total[p] += v
		}
	}
	maxOf := func(v []float64) float64 {
		m := 0.0
		for _, e := range v {
			m = math.Max(m, e)
		}
		return m
	}
	ref := maxOf(total)
	if ref <= 0 {
		return 0
	}
	al := alpha / ref
	back := make([]float64, nres)
	cand := make([]float64, nres)
	y := make([]float64, nres)
	w := make([]float64, nres)
	proc := make([]int, 0, 64)
	var bestProc []int
	for sweep := 0; sweep < maxSweeps; sweep++ {
		if stop != nil && stop() {
			break
		}
		improved := false
		start := maxOf(total)
		for _, i := range order {
			for p := range back {
				back[p] = total[p] - x[i][p]
				cand[p] = total[p]
			}
			bestV := softMax(cand, al)
			bestProc = bestProc[:0]
			found := false
			copy(w, w0)
			eta := 1.0
			for k := 0; k < inner; k++ {
				proc = append(proc[:0], a.Proc[i]...)
				f.assignModel(i, w, 0, proc)
				f.modelLoad(i, proc, y)
				for p := range cand {
					cand[p] = back[p] + y[p]
				}
				if v := softMax(cand, al); v < bestV*(1-1e-9) {
					bestV, bestProc, found = v, append(bestProc[:0], proc...), true
				}
				mx := maxOf(cand)
				mean := 0.0
				for _, c := range cand {
					mean += c
				}
				mean /= float64(nres)
				for p := range w {
					w[p] *= math.Exp(eta * (cand[p] - mean) / mx)
					w[p] = math.Max(w[p], 1e-12)
				}
				eta *= 0.85
			}
			// Fills, ranked on their pieces' loads (prefix sums); the best
			// is then placed and scored exactly.
			bestFill, bestFillV := -1, math.Inf(1)
			var bestEnds [maxSeq]int
			for si, seq := range f.seqs {
				ends := f.fill(i, seq, back)
				f.piecesLoad(i, seq, ends[:len(seq)], y)
				for p := range cand {
					cand[p] = back[p] + y[p]
				}
				if v := softMax(cand, al); v < bestFillV {
					bestFill, bestFillV, bestEnds = si, v, ends
				}
			}
			if bestFill >= 0 {
				proc = append(proc[:0], a.Proc[i]...)
				f.place(i, f.seqs[bestFill], bestEnds[:len(f.seqs[bestFill])], proc)
				f.modelLoad(i, proc, y)
				for p := range cand {
					cand[p] = back[p] + y[p]
				}
				if v := softMax(cand, al); v < bestV*(1-1e-9) {
					bestV, bestProc, found = v, append(bestProc[:0], proc...), true
				}
			}
			if found {
				copy(a.Proc[i], bestProc)
				f.modelLoad(i, a.Proc[i], x[i])
				for p := range total {
					total[p] = back[p] + x[i][p]
				}
				improved = true
			}
		}
		// Stop when a sweep gains less than 0.1 % on the max load.
		if !improved || maxOf(total) > start*(1-1e-3) {
			break
		}
	}
	return maxOf(total)
}

// sequences lists the ordered processor sequences that fill tries: every
// ordering of every non-empty subset of at most maxLen processors.
func sequences(nproc, maxLen int) [][]int {
	var out [][]int
	var rec func(cur []int, used uint64)
	rec = func(cur []int, used uint64) {
		if len(cur) > 0 {
			out = append(out, append([]int(nil), cur...))
		}
		if len(cur) == maxLen {
			return
		}
		for p := 0; p < nproc; p++ {
			if used&(1<<p) == 0 {
				rec(append(cur, p), used|1<<p)
			}
		}
	}
	rec(nil, 0)
	return out
}

// maxSeq bounds the processors of one fill sequence.
const maxSeq = 4

// fill cuts model i into consecutive pieces on the processors of seq, in
// that order, filling each up to a common level T over the background
// loads back before moving to the next; T is the least level (by
// bisection) at which the last processor is not filled beyond it. It
// returns where each piece ends (layers [ends[j-1], ends[j]) go to seq[j]).
// Layers a processor cannot run count nothing here (place moves them).
// O(|seq|·log n) per bisection step on the prefix sums.
func (f *prices) fill(i int, seq []int, back []float64) [maxSeq]int {
	pre := f.prefix[i]
	n := len(f.cost[i])
	r := f.rate[i]
	var ends [maxSeq]int
	// try places the pieces at level T; it returns the last one's excess over T.
	try := func(T float64) float64 {
		at := 0
		for j, p := range seq {
			base := back[p] + r*f.disp[p]/f.caps[p] - pre[p][at]
			if j == len(seq)-1 {
				ends[j] = n
				return base + pre[p][n] - T
			}
			// The largest end e ≥ at with base + pre[p][e] ≤ T.
			e := at + sort.Search(n-at+1, func(k int) bool { return base+pre[p][at+k] > T }) - 1
			if e < at {
				e = at
			}
			ends[j] = e
			at = e
		}
		return 0
	}
	hi := 0.0
	for _, p := range seq {
		hi = math.Max(hi, back[p]+r*f.disp[p]/f.caps[p]+pre[p][n])
	}
	lo := 0.0
	for it := 0; it < 30 && hi-lo > 1e-3*hi; it++ {
		mid := (lo + hi) / 2
		if try(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	try(hi)
	return ends
}

// piecesLoad is the load of a fill's pieces (see modelLoad), from the
// prefix sums: layers the piece's processor cannot run are not counted.
func (f *prices) piecesLoad(i int, seq []int, ends []int, out []float64) {
	for p := range out {
		out[p] = 0
	}
	r := f.rate[i]
	pre := f.prefix[i]
	at, last := 0, -1
	for j, p := range seq {
		if ends[j] <= at {
			continue
		}
		out[p] += pre[p][ends[j]] - pre[p][at] + r*f.disp[p]/f.caps[p]
		if last >= 0 {
			if res := f.link[last][p]; res >= 0 {
				out[res] += r * f.sp.Cost.Transfer(f.cut[i][at], last, p).Seconds() / f.caps[res]
			}
		}
		at, last = ends[j], p
	}
}

// place writes a fill's pieces into proc; a layer its piece's processor
// cannot run goes to its first feasible one.
func (f *prices) place(i int, seq []int, ends []int, proc []int) {
	m := f.sp.Models[i]
	at := 0
	for j, p := range seq {
		for l := at; l < ends[j]; l++ {
			if m.CanRun(l, p) {
				proc[l] = p
			} else {
				proc[l] = m.Feasible[l][0]
			}
		}
		at = ends[j]
	}
}
