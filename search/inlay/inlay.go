// Package inlay is inlay's default planner: price-directed load balancing
// checked by the simulator.
//
// At saturation a good plan keeps every processor busy, so the planner
// works on the fluid view of the workload first (the same one that bounds
// the rate in package sim): each layer has a marginal busy time on each
// processor that can run it, each subgraph pays its processor's dispatch
// overhead, and each cut between memory domains a transfer on a (possibly
// shared) link. The Lagrangian dual of the fluid problem gives a price per
// processor; a Viterbi pass along each model's layers (topological order)
// assigns layers to processors at least priced cost, switching processors
// only where the saving pays the dispatch and transfer. Because prices
// alone leave whole models on one processor (costs are nearly proportional
// across processors, so the dual is degenerate), a block-coordinate descent
// then re-places one model at a time against the others' load, minimising
// the soft maximum of the processor loads over two candidate families: the
// price-directed DPs along a price adjustment trajectory, and "fills" that
// cut the model into consecutive pieces over an ordered sequence of up to
// four processors, each filled to a common level found by bisection.
//
// Every balanced assignment is scored by the simulator (the real fitness:
// max sustainable rate scale), and an iterated local search perturbs the
// best ones (random layer ranges or models moved, priorities swapped) and
// balances again until the budget is spent.
//
// Seeds: every model on its single fastest processor (Best Mapping), a
// greedy longest-processing-time balance of whole models, the assignments
// of the dual prices, and, when given, plans of other planners (HEFT). The
// best seed is scored first, so the result is never worse than it.
package inlay

import (
	"context"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"time"

	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/driver"
	"github.com/inlay-dev/inlay/search/space"
)

// Options tune the search.
type Options struct {
	// Seeds are extra planners whose plans seed the search (e.g. HEFT).
	Seeds []plan.Planner
}

// Planner is the default planner.
type Planner struct{ opt Options }

var _ plan.Planner = (*Planner)(nil)

// New returns the planner.
func New(opt Options) *Planner { return &Planner{opt: opt} }

// Name is "inlay".
func (*Planner) Name() string { return "inlay" }

type search struct {
	sp   *space.Space
	rng  *rand.Rand
	rate []float64 // per model: requests per second at scale 1
	// per processor: 1/concurrency
	inv []float64
	// blocks caches Blocks per model and assignment.
	blocks map[string][]space.Block
	// stop reports whether the budget is spent.
	stop func() bool
}

// state is an assignment with its per-model surrogate figures.
type state struct {
	a      *space.Assignment
	blocks [][]space.Block
	busy   [][]float64 // per model, per processor: seconds of work per request
	cp     []float64   // per model: critical path, seconds
	value  float64
}

// Plan searches until the budget is spent: seeds, price-directed
// balancing from them and from the dual's prices, then iterated local
// search.
func (p *Planner) Plan(ctx context.Context, req *plan.Request, eval plan.Evaluator) (*plan.Plan, error) {
	sp, err := space.New(req)
	if err != nil {
		return nil, err
	}
	d := driver.New(req, eval)
	s := newSearch(sp, req, func() bool { return d.Done(ctx) })
	seeds, pool, err := s.seeds(ctx, d, p.opt.Seeds, req, eval)
	if err != nil {
		return nil, err
	}
	f, err := newPrices(sp, s.rate)
	if err != nil {
		return nil, err
	}
	ws := f.dual(1500)
	workers := max(req.Workers, 1)
	balanced, err := s.balanceAll(ctx, d, f, ws, seeds, workers)
	if err != nil {
		return nil, err
	}
	if err := s.localSearch(ctx, d, f, ws, append(pool, balanced...), workers); err != nil {
		return nil, err
	}
	return d.Result(p.Name())
}

// newSearch is a search of sp for req; stop reports whether the budget is
// spent.
func newSearch(sp *space.Space, req *plan.Request, stop func() bool) *search {
	s := &search{sp: sp, rng: rand.New(rand.NewSource(req.Seed)), blocks: map[string][]space.Block{}, stop: stop}
	for _, m := range sp.Models {
		r := 0.0
		for _, g := range m.Groups {
			r += req.Workload.Groups[g].RateHz()
		}
		s.rate = append(s.rate, r)
	}
	for _, pr := range req.Platform.Processors {
		s.inv = append(s.inv, 1/float64(max(pr.Concurrency, 1)))
	}
	return s
}

// seeds are the starting assignments — Best Mapping, a balanced one, and
// the seed planners' plans — and the pool they make as they are, scored by
// the simulator (cheap, and a plan to return however short the budget).
func (s *search) seeds(ctx context.Context, d *driver.Driver, planners []plan.Planner, req *plan.Request, eval plan.Evaluator) ([]*space.Assignment, []*state, error) {
	seeds := []*space.Assignment{s.bestMap(), s.balanced()}
	for _, sd := range planners {
		if d.Done(ctx) {
			break
		}
		sp2, err := sd.Plan(ctx, req, eval)
		if err != nil {
			continue // a seed planner that fails is no reason to fail
		}
		if a, err := s.sp.FromPlan(sp2); err == nil {
			seeds = append(seeds, a)
		}
	}
	var batch []*state
	for _, a := range seeds {
		st, err := s.eval(a)
		if err != nil {
			return nil, nil, err
		}
		batch = append(batch, st)
	}
	d.Note("seeds")
	pool, err := s.score(ctx, d, batch)
	return seeds, pool, err
}

// balanceAll is price-directed balancing from every seed and from the
// dual's prices ws, at two strengths, scored in batches of workers.
func (s *search) balanceAll(ctx context.Context, d *driver.Driver, f *prices, ws [][]float64, seeds []*space.Assignment, workers int) ([]*state, error) {
	starts := make([]*space.Assignment, 0, len(ws)+len(seeds))
	for _, w := range ws {
		a := s.uniform()
		f.assign(w, 0, a)
		starts = append(starts, a)
	}
	starts = append(starts, seeds...)
	order := s.modelOrder()
	d.Note("balance")
	var pool, batch []*state
	flush := func() error {
		scored, err := s.score(ctx, d, batch)
		pool = append(pool, scored...)
		batch = batch[:0]
		return err
	}
	for _, alpha := range []float64{100, 30} {
		for _, a0 := range starts {
			if s.stop() {
				break
			}
			a := a0.Clone()
			f.balance(a, ws[0], alpha, 30, 20, order, s.stop)
			st, err := s.eval(a)
			if err != nil {
				continue
			}
			batch = append(batch, st)
			if len(batch) >= workers {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return pool, nil
}

// modelOrder is the models' indices in order.
func (s *search) modelOrder() []int {
	order := make([]int, len(s.sp.Models))
	for i := range order {
		order[i] = i
	}
	return order
}

// localSearch is the iterated local search until the budget is spent:
// perturb an elite plan of the pool, balance it again, score a batch of
// workers such plans.
func (s *search) localSearch(ctx context.Context, d *driver.Driver, f *prices, ws [][]float64, pool []*state, workers int) error {
	alphas := []float64{30, 100, 300}
	order := s.modelOrder()
	var batch []*state
	for round := 1; !d.Done(ctx); round++ {
		d.Note("round " + strconv.Itoa(round))
		sort.SliceStable(pool, func(i, j int) bool { return pool[i].value > pool[j].value })
		if len(pool) > 8 {
			pool = pool[:8]
		}
		batch = batch[:0]
		for k := 0; k < workers; k++ {
			src := pool[0]
			if len(pool) > 1 && s.rng.Float64() < 0.3 {
				src = pool[s.rng.Intn(len(pool))]
			}
			a := src.a.Clone()
			s.perturb(a, 1+s.rng.Intn(3))
			s.rng.Shuffle(len(order), func(x, y int) { order[x], order[y] = order[y], order[x] })
			f.balance(a, ws[s.rng.Intn(len(ws))], alphas[s.rng.Intn(len(alphas))], 30, 20, order, s.stop)
			st, err := s.eval(a)
			if err != nil {
				continue
			}
			batch = append(batch, st)
		}
		// An empty batch too: the driver counts it as one with nothing new.
		scored, err := s.score(ctx, d, batch)
		if err != nil {
			return err
		}
		pool = append(pool, scored...)
	}
	return nil
}

// score evaluates states with the simulator and returns those evaluated,
// their value replaced by the simulated scale.
func (s *search) score(ctx context.Context, d *driver.Driver, sts []*state) ([]*state, error) {
	plans := make([]*plan.Plan, len(sts))
	for i, st := range sts {
		p, err := s.sp.Plan("inlay", st.a)
		if err != nil {
			return nil, err
		}
		plans[i] = p
	}
	scores, ok := d.Batch(ctx, plans)
	var out []*state
	for i, st := range sts {
		if ok[i] {
			st.value = scores[i].Scale
			out = append(out, st)
		}
	}
	return out, nil
}

// bestMap puts each whole model on the processor where it runs fastest
// (layers that processor cannot run go to their first feasible one).
func (s *search) bestMap() *space.Assignment {
	a := s.uniform()
	for i := range s.sp.Models {
		best, bestT := -1, math.Inf(1)
		for p := range s.sp.Platform.Processors {
			t := s.wholeTime(i, p)
			if t < bestT {
				best, bestT = p, t
			}
		}
		if best < 0 {
			continue // no processor runs it whole; keep the feasible default
		}
		for l := range a.Proc[i] {
			a.Proc[i][l] = best
		}
	}
	return a
}

// balanced assigns whole models, heaviest first, to the processor that
// minimises the resulting maximum load (LPT).
func (s *search) balanced() *space.Assignment {
	a := s.uniform()
	n := len(s.sp.Models)
	nproc := len(s.sp.Platform.Processors)
	times := make([][]float64, n)
	heavy := make([]float64, n)
	for i := range s.sp.Models {
		times[i] = make([]float64, nproc)
		heavy[i] = math.Inf(1)
		for p := 0; p < nproc; p++ {
			times[i][p] = s.wholeTime(i, p) * s.rate[i] * s.inv[p]
			heavy[i] = math.Min(heavy[i], times[i][p])
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return heavy[order[x]] > heavy[order[y]] })
	load := make([]float64, nproc)
	for _, i := range order {
		best, bestL := 0, math.Inf(1)
		for p := 0; p < nproc; p++ {
			if l := load[p] + times[i][p]; l < bestL {
				best, bestL = p, l
			}
		}
		load[best] += times[i][best]
		for l := range a.Proc[i] {
			a.Proc[i][l] = best
		}
	}
	return a
}

// uniform is every layer on its first feasible processor, priorities by
// group deadline (tightest first), then model order.
func (s *search) uniform() *space.Assignment {
	n := len(s.sp.Models)
	a := &space.Assignment{Proc: make([][]int, n), Priority: make([]int, n)}
	for i, m := range s.sp.Models {
		a.Proc[i] = make([]int, len(m.Feasible))
		for l, f := range m.Feasible {
			a.Proc[i][l] = f[0]
		}
	}
	deadline := make([]time.Duration, n)
	for i, m := range s.sp.Models {
		deadline[i] = time.Duration(math.MaxInt64)
		for _, g := range m.Groups {
			if dl := s.sp.W.Groups[g].Deadline; dl < deadline[i] {
				deadline[i] = dl
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return deadline[order[x]] < deadline[order[y]] })
	for rank, i := range order {
		a.Priority[i] = rank
	}
	return a
}

// wholeTime is the model's time as one subgraph per feasible run on p
// (seconds; +Inf when it fails).
func (s *search) wholeTime(i, p int) float64 {
	m := s.sp.Models[i]
	procOf := make([]int, len(m.Feasible))
	for l := range procOf {
		procOf[l] = p
	}
	blocks, err := s.sp.Blocks(m, procOf)
	if err != nil {
		return math.Inf(1)
	}
	t := 0.0
	for _, b := range blocks {
		t += b.Dur.Seconds()
	}
	return t
}

// eval computes the surrogate figures of an assignment.
func (s *search) eval(a *space.Assignment) (*state, error) {
	st := &state{a: a, blocks: make([][]space.Block, len(s.sp.Models)), busy: make([][]float64, len(s.sp.Models)), cp: make([]float64, len(s.sp.Models))}
	for i := range s.sp.Models {
		if err := s.evalModel(st, i); err != nil {
			return nil, err
		}
	}
	st.value = s.value(st)
	return st, nil
}

func (s *search) evalModel(st *state, i int) error {
	m := s.sp.Models[i]
	key := blockKey(i, st.a.Proc[i])
	blocks, hit := s.blocks[key]
	if !hit {
		var err error
		if blocks, err = s.sp.Blocks(m, st.a.Proc[i]); err != nil {
			return err
		}
		s.blocks[key] = blocks
	}
	// Blocks may have moved infeasible layers; record the effective assignment.
	for _, b := range blocks {
		for _, l := range b.Layers {
			st.a.Proc[i][l] = b.Proc
		}
	}
	busy := make([]float64, len(s.sp.Platform.Processors))
	owner := make([]int, len(m.Layers.Layers))
	for bi, b := range blocks {
		busy[b.Proc] += b.Dur.Seconds()
		for _, l := range b.Layers {
			owner[l] = bi
		}
	}
	// Critical path over blocks (listed in a topological order).
	finish := make([]float64, len(blocks))
	start := make([]float64, len(blocks))
	cp := 0.0
	for bi, b := range blocks {
		finish[bi] = start[bi] + b.Dur.Seconds()
		for _, e := range m.Layers.Edges {
			if owner[e.From] != bi || owner[e.To] == bi {
				continue
			}
			to := owner[e.To]
			tr := s.sp.Cost.Transfer(e.Bytes, b.Proc, blocks[to].Proc).Seconds()
			if f := finish[bi] + tr; f > start[to] {
				start[to] = f
			}
		}
		cp = math.Max(cp, finish[bi])
	}
	st.blocks[i], st.busy[i], st.cp[i] = blocks, busy, cp
	return nil
}

// value is the surrogate: the throughput scale 1/max load, or, when a
// group's critical path exceeds its deadline, minus the worst ratio.
func (s *search) value(st *state) float64 {
	worst := 0.0
	for _, g := range s.sp.W.Groups {
		ratio := s.groupCP(st, g.Name) / g.Deadline.Seconds()
		worst = math.Max(worst, ratio)
	}
	if worst > 1 {
		return -worst
	}
	maxLoad := 0.0
	for p := range s.sp.Platform.Processors {
		load := 0.0
		for i := range s.sp.Models {
			load += s.rate[i] * st.busy[i][p]
		}
		maxLoad = math.Max(maxLoad, load*s.inv[p])
	}
	if maxLoad == 0 {
		return math.Inf(1)
	}
	// A small latency term breaks ties towards shorter critical paths.
	return (1 / maxLoad) * (1 - 0.05*worst)
}

// groupCP is a group's critical path: models chained by their `after`
// dependencies, each taking its own critical path.
func (s *search) groupCP(st *state, group string) float64 {
	g := s.sp.W.Group(group)
	order, err := g.Order()
	if err != nil {
		order = g.Models
	}
	finish := map[string]float64{}
	cp := 0.0
	for _, name := range order {
		start := 0.0
		for _, dep := range g.After[name] {
			start = math.Max(start, finish[dep])
		}
		i := s.modelIndex(name)
		if i < 0 {
			continue
		}
		finish[name] = start + st.cp[i]
		cp = math.Max(cp, finish[name])
	}
	return cp
}

func (s *search) modelIndex(name string) int {
	for i, m := range s.sp.Models {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// perturb applies k random moves and sometimes swaps two priorities.
func (s *search) perturb(a *space.Assignment, k int) {
	nproc := len(s.sp.Platform.Processors)
	for ; k > 0; k-- {
		i := s.rng.Intn(len(s.sp.Models))
		m := s.sp.Models[i]
		n := len(m.Feasible)
		lo := s.rng.Intn(n)
		hi := lo + 1 + s.rng.Intn(n-lo)
		if s.rng.Float64() < 0.3 {
			lo, hi = 0, n
		}
		q := s.rng.Intn(nproc)
		for l := lo; l < hi; l++ {
			if m.CanRun(l, q) {
				a.Proc[i][l] = q
			}
		}
	}
	if len(a.Priority) > 1 && s.rng.Float64() < 0.3 {
		x, y := s.rng.Intn(len(a.Priority)), s.rng.Intn(len(a.Priority))
		a.Priority[x], a.Priority[y] = a.Priority[y], a.Priority[x]
	}
}

// blockKey identifies a model's assignment (one byte per layer: processor
// IDs are small).
func blockKey(model int, proc []int) string {
	b := make([]byte, 0, len(proc)+2)
	b = append(b, byte(model), byte(model>>8))
	for _, p := range proc {
		b = append(b, byte(p))
	}
	return string(b)
}
