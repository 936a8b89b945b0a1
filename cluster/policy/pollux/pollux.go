// Package pollux is Pollux's policy (OSDI 2021) on a heterogeneous
// cluster as Sia's artifact runs it for its baseline (siasosp23/artifacts,
// sia-simulator: multi_simulator_unaware.py --policy=pollux, pollux_unaware.py
// and cluster_unaware.py).
//
// Pollux does not know GPU types. It sees the cluster as virtual nodes of
// the smallest server's GPU count (a server of 8 GPUs is two virtual nodes
// of 4 when the smallest has 4) and searches, with a genetic algorithm,
// how many replicas each job runs on each virtual node. The fitness is the
// generalised mean with p = −1 of every job's speedup: its goodput on its
// replicas and virtual nodes, discounted by Pollux's restart factor (a
// fixed 30 s delay) when its placement changes, over its goodput on a
// fair share (the GPUs over the jobs). A job's goodput on any type is
// estimated with the model of the type it last ran on. The search keeps
// at most one distributed job on a virtual node, at most a job's replica
// cap (twice the most GPUs it has run on, at least one, and at most the
// smallest type's GPUs; the job's own count for a rigid job) and
// at most 16 virtual nodes a job, and fills capacity in order of least
// attained service. The artifact's simulator then runs each job on the
// type that holds most of its replicas (ties to the faster type) and drops
// the rest, which idle that round: types are capacity Pollux cannot tell
// apart, and an allocation that straddles them loses GPUs. A rigid job
// runs its whole count on its majority type where that type still has the
// room (largest jobs first), as the artifact's repair for fixed-size jobs
// does, else not at all.
//
// The artifact runs NSGA-II with a second objective (cluster utility) but
// takes the candidate with the best mean; here each generation keeps the
// best 100 of parents and children by that mean alone.
//
// The search is seeded per round from the state (a fixed-seed PCG
// stream), so the policy is deterministic.
package pollux

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
)

// Policy is Pollux.
type Policy struct {
	P                       float64
	Population, Generations int
	// Delay is the restart delay Pollux's restart factor assumes.
	Delay  float64
	Seed   uint64
	rounds uint64
	// place is each running job's placement on the virtual nodes (the
	// rows of the last chosen state), by job ID.
	place map[int][]int
	// prev is the last round's population, by job ID.
	prev []map[int][]int
	// ran is the most GPUs each job has run on (Pollux explores at most
	// twice what it has profiled).
	ran map[int]int
}

// New is Pollux as Sia's artifact runs it: p = −1, NSGA-II's 100
// candidates for 100 generations, a 30 s restart delay.
func New(seed uint64) *Policy {
	return &Policy{P: -1, Population: 100, Generations: 100, Delay: 30, Seed: seed}
}

func (p *Policy) Name() string { return "pollux" }
func (p *Policy) Mixed() bool  { return false }

// vnodes is the cluster as Pollux sees it.
type vnodes struct {
	size int   // GPUs a virtual node
	typ  []int // virtual node → GPU type
	node []int // virtual node → server (numbered over the cluster)
}

func layout(c *adapt.Cluster) vnodes {
	size := math.MaxInt
	for _, t := range c.Types {
		if t.Nodes > 0 && t.PerNode > 0 {
			size = min(size, t.PerNode)
		}
	}
	var v vnodes
	v.size = size
	server := 0
	for t, ty := range c.Types {
		for range ty.Nodes {
			for range ty.PerNode / size {
				v.typ = append(v.typ, t)
				v.node = append(v.node, server)
			}
			server++
		}
	}
	return v
}

// full is every virtual node's GPUs, all free.
func (v vnodes) full() []int {
	free := make([]int, len(v.typ))
	for i := range free {
		free[i] = v.size
	}
	return free
}

// search is one round's genetic search.
type search struct {
	s      *adapt.State
	p      *Policy
	v      vnodes
	rng    *rand.Rand
	J, V   int
	order  []int // jobs by least attained service, then arrival
	maxRep []int // replica cap a job
	minRep []int // rigid: its GPUs, else 0
	ref    []int // type whose model estimates the job
	fair   []float64
	factor []float64 // restart factor if the placement changes
	base   []int     // J × V: the current placement
	cache  []map[[2]int]float64
}

func (e *search) goodput(j, reps, nodes int) float64 {
	if reps == 0 {
		return 0
	}
	k := [2]int{reps, nodes}
	if g, ok := e.cache[j][k]; ok {
		return g
	}
	v := &e.s.Jobs[j]
	a := goodput.Alloc{{Type: e.ref[j], GPUs: reps, Nodes: min(nodes, reps)}}
	_, g := e.s.Estimate(v, a, goodput.Knowledge{Agnostic: e.ref[j]})
	e.cache[j][k] = g
	return g
}

// row is job j's replicas per virtual node in state x.
func (e *search) row(x []int, j int) []int { return x[j*e.V : (j+1)*e.V] }

func (e *search) fitness(x []int) float64 {
	sum := 0.0
	for j := range e.J {
		r := e.row(x, j)
		reps, nodes, diff := 0, 0, false
		for i, n := range r {
			reps += n
			if n > 0 {
				nodes++
			}
			diff = diff || n != e.base[j*e.V+i]
		}
		sp := e.goodput(j, reps, nodes) / e.fair[j]
		if diff {
			sp *= e.factor[j]
		}
		sum += math.Pow(sp+1e-3, e.p.P)
	}
	return math.Pow(sum/float64(e.J), 1/e.p.P)
}

// repair makes x feasible as pollux_unaware.py's _repair does.
func (e *search) repair(x []int) {
	J, V := e.J, e.V
	// at most one distributed job a virtual node (the first in order)
	taken := make([]bool, V)
	for _, j := range e.order {
		r := e.row(x, j)
		nodes := 0
		for _, n := range r {
			if n > 0 {
				nodes++
			}
		}
		if nodes <= 1 {
			continue
		}
		for i, n := range r {
			if n == 0 {
				continue
			}
			if taken[i] {
				r[i] = 0
			}
			taken[i] = true
		}
	}
	// at most the replica cap and 16 virtual nodes a job, in a random
	// order of its virtual nodes (drawn only where the caps bite)
	var on []int
	for j := range J {
		r := e.row(x, j)
		on = on[:0]
		reps := 0
		for i, n := range r {
			if n > 0 {
				on = append(on, i)
				reps += n
			}
		}
		if reps <= e.maxRep[j] && len(on) <= 16 {
			continue
		}
		e.rng.Shuffle(len(on), func(a, b int) { on[a], on[b] = on[b], on[a] })
		left, nodes := e.maxRep[j], 0
		for _, i := range on {
			if nodes == 16 || left == 0 {
				r[i] = 0
				continue
			}
			r[i] = min(r[i], left)
			left -= r[i]
			nodes++
		}
	}
	// capacity, filled in order of least attained service
	free := e.v.full()
	for _, j := range e.order {
		r := e.row(x, j)
		for i, n := range r {
			r[i] = min(n, free[i])
			free[i] -= r[i]
		}
	}
	// a rigid job runs on its whole count or not at all
	for j := range J {
		if e.minRep[j] == 0 {
			continue
		}
		r := e.row(x, j)
		reps := 0
		for _, n := range r {
			reps += n
		}
		if reps < e.minRep[j] {
			clear(r)
		}
	}
}

// mutate is pollux_unaware.py's _mutation.
func (e *search) mutate(x []int) {
	J := e.J
	for j := range J {
		r := e.row(x, j)
		if e.rng.Float64() < 0.1 { // back to the current placement
			copy(r, e.row(e.base, j))
		}
		if e.rng.Float64() < 0.1 { // zero some elements
			for i := range r {
				if e.rng.Float64() < 0.1 {
					r[i] = 0
				}
			}
		}
	}
	// raise some elements: a free virtual node with probability 1/(free
	// ones), one the job is on with 1/(its ones), to a count between the
	// current and the cap
	free := e.v.full()
	for j := range J {
		for i, n := range e.row(x, j) {
			free[i] -= n
		}
	}
	nfree := 0
	for _, f := range free {
		if f > 0 {
			nfree++
		}
	}
	// The free virtual nodes a job is not on are raised with probability
	// p1 each: rather than a draw for each, draw how many to pass over
	// before the next one raised (geometric), across all jobs.
	p1 := 1 / float64(max(nfree, 1))
	skip := e.geometric(p1)
	for j := range J {
		r := e.row(x, j)
		on := 0
		for i, n := range r {
			if n > 0 && free[i] > 0 {
				on++
			}
		}
		for i, n := range r {
			if free[i] <= 0 || e.maxRep[j] < n {
				continue
			}
			raise := false
			if n > 0 {
				p2 := 1 / float64(max(on, 1))
				raise = e.rng.Float64() < p1+p2-p1*p2
			} else if skip > 0 {
				skip--
			} else {
				raise, skip = true, e.geometric(p1)
			}
			if raise {
				r[i] = n + e.rng.IntN(e.maxRep[j]-n+1)
			}
		}
	}
}

// geometric is how many Bernoulli(p) trials fail before one succeeds.
func (e *search) geometric(p float64) int {
	if p >= 1 {
		return 0
	}
	return int(math.Log(1-e.rng.Float64()) / math.Log(1-p))
}

// crossover is a single point over jobs.
func (e *search) crossover(a, b []int) []int {
	pt := e.rng.IntN(e.J + 1)
	child := make([]int, len(a))
	copy(child[:pt*e.V], a[:pt*e.V])
	copy(child[pt*e.V:], b[pt*e.V:])
	return child
}

// newSearch sets up one round's search: the virtual nodes, each job's
// caps, reference type, fair-share goodput, restart factor and current
// placement, and the order of least attained service. ran is the most
// GPUs each active job has run on, this round included.
func (p *Policy) newSearch(s *adapt.State) (e *search, ran map[int]int) {
	J := len(s.Jobs)
	if p.place == nil {
		p.place, p.ran = map[int][]int{}, map[int]int{}
	}
	e = &search{s: s, p: p, v: layout(s.Cluster), rng: rand.New(rand.NewPCG(p.Seed, p.rounds)), J: J}
	e.V = len(e.v.typ)
	T := len(s.Cluster.Types)
	capAll := math.MaxInt
	for t := range T {
		if n := s.Cluster.GPUs(t); n > 0 {
			capAll = min(capAll, n)
		}
	}
	e.order = make([]int, J)
	e.maxRep, e.minRep, e.ref = make([]int, J), make([]int, J), make([]int, J)
	e.fair, e.factor = make([]float64, J), make([]float64, J)
	e.cache = make([]map[[2]int]float64, J)
	e.base = make([]int, J*e.V)
	fairN := max(1, int(math.Ceil(float64(s.Cluster.Total())/float64(J))))
	ran = make(map[int]int, J) // the active jobs' entries of p.ran
	for j := range s.Jobs {
		v := &s.Jobs[j]
		e.order[j] = j
		e.cache[j] = map[[2]int]float64{}
		ref := v.LastType
		if ref < 0 {
			for t := range T { // never ran: the first type it runs on
				if v.Model.Fits[t] != nil {
					ref = t
					break
				}
			}
		}
		e.ref[j] = ref
		ran[v.ID] = max(p.ran[v.ID], v.Alloc.GPUs())
		e.maxRep[j] = min(capAll, adapt.MaxJobGPUs, max(2*ran[v.ID], 1))
		if v.Kind == adapt.Rigid {
			e.maxRep[j], e.minRep[j] = v.GPUs, v.GPUs
		}
		n := min(fairN, e.maxRep[j])
		if v.Kind == adapt.Rigid {
			n = v.GPUs
		}
		_, e.fair[j] = s.Estimate(v, s.Single(ref, min(n, s.Cluster.GPUs(ref))), goodput.Knowledge{Agnostic: ref})
		if !(e.fair[j] > 0) {
			e.fair[j] = 1
		}
		e.factor[j] = adapt.RestartFactor(s.Now-v.Arrival, v.Restarts, p.Delay)
		if len(v.Alloc) > 0 {
			if r, ok := p.place[v.ID]; ok && len(r) == e.V {
				copy(e.row(e.base, j), r)
			}
		}
	}
	sort.SliceStable(e.order, func(a, b int) bool {
		x, y := &s.Jobs[e.order[a]], &s.Jobs[e.order[b]]
		if x.Attained != y.Attained {
			return x.Attained < y.Attained
		}
		return x.Arrival < y.Arrival
	})
	return e, ran
}

// Allocate runs the genetic search and drops each job's replicas off its
// majority type.
func (p *Policy) Allocate(ctx context.Context, s *adapt.State) ([]adapt.Decision, error) {
	p.rounds++
	J := len(s.Jobs)
	out := make([]adapt.Decision, J)
	if J == 0 {
		return out, nil
	}
	e, ran := p.newSearch(s)
	// The first population: the current placement and last round's
	// candidates (their rows for the jobs still here).
	pop := [][]int{append([]int(nil), e.base...)}
	for _, prev := range p.prev {
		x := make([]int, J*e.V)
		for j := range s.Jobs {
			if r, ok := prev[s.Jobs[j].ID]; ok && len(r) == e.V {
				copy(e.row(x, j), r)
			}
		}
		e.repair(x)
		pop = append(pop, x)
	}
	fit := make([]float64, len(pop))
	for i := range pop {
		fit[i] = e.fitness(pop[i])
	}
	idx := make([]int, 0, 2*p.Population)
	for range p.Generations {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for range p.Population {
			a, b := pop[e.rng.IntN(len(pop))], pop[e.rng.IntN(len(pop))]
			child := e.crossover(a, b)
			e.mutate(child)
			e.repair(child)
			pop = append(pop, child)
			fit = append(fit, e.fitness(child))
		}
		// elitist survival: the best Population of parents and children
		idx = idx[:0]
		for i := range pop {
			idx = append(idx, i)
		}
		sort.SliceStable(idx, func(a, b int) bool { return fit[idx[a]] > fit[idx[b]] })
		keep := min(len(idx), p.Population)
		np, nf := make([][]int, keep), make([]float64, keep)
		for k, i := range idx[:keep] {
			np[k], nf[k] = pop[i], fit[i]
		}
		pop, fit = np, nf
	}
	p.prev = p.prev[:0]
	for _, x := range pop {
		m := make(map[int][]int, J)
		for j := range s.Jobs {
			m[s.Jobs[j].ID] = append([]int(nil), e.row(x, j)...)
		}
		p.prev = append(p.prev, m)
	}
	best := pop[0] // sorted by fitness
	place := make(map[int][]int, J)
	free := make([]int, len(s.Cluster.Types))
	for t := range free {
		free[t] = s.Cluster.GPUs(t)
	}
	type fixed struct{ j, keep int }
	var rigid []fixed
	for j := range s.Jobs {
		v := &s.Jobs[j]
		keep, kept := e.majority(j, e.row(best, j))
		if keep < 0 {
			continue
		}
		place[v.ID] = kept
		if v.Kind == adapt.Rigid {
			rigid = append(rigid, fixed{j, keep})
			continue
		}
		n, servers := 0, map[int]bool{}
		for i, k := range kept {
			if k > 0 {
				n += k
				servers[e.v.node[i]] = true
			}
		}
		a := goodput.Alloc{{Type: keep, GPUs: n, Nodes: len(servers)}}
		b, _ := s.Estimate(v, a, goodput.Knowledge{Agnostic: e.ref[j]})
		out[j] = adapt.Decision{Alloc: a, Batch: b}
		free[keep] -= n
	}
	// Fixed-size jobs as the artifact's repair for them
	// (repair_allocations_mip_fix): on their majority type, the largest
	// first, each its whole count where the type still has it, else none.
	sort.SliceStable(rigid, func(a, b int) bool { return s.Jobs[rigid[a].j].GPUs > s.Jobs[rigid[b].j].GPUs })
	for _, r := range rigid {
		v := &s.Jobs[r.j]
		if free[r.keep] < v.GPUs {
			delete(place, v.ID)
			continue
		}
		free[r.keep] -= v.GPUs
		out[r.j] = adapt.Decision{Alloc: s.Single(r.keep, v.GPUs), Batch: v.Batch}
	}
	p.place, p.ran = place, ran
	return out, nil
}

// majority is the type holding most of job j's replicas r (ties to the
// faster type; -1: none it runs on) and the replicas on it per virtual
// node: the artifact's simulator runs those and drops the rest.
func (e *search) majority(j int, r []int) (int, []int) {
	v := &e.s.Jobs[j]
	byType := make([]int, len(e.s.Cluster.Types))
	for i, n := range r {
		byType[e.v.typ[i]] += n
	}
	keep := -1
	for t, n := range byType {
		if n == 0 || v.Model.Fits[t] == nil {
			continue
		}
		if keep < 0 || n > byType[keep] || n == byType[keep] && faster(e.s, v, t, keep) {
			keep = t
		}
	}
	if keep < 0 {
		return -1, nil
	}
	kept := make([]int, e.V)
	for i, n := range r {
		if e.v.typ[i] == keep {
			kept[i] = n
		}
	}
	return keep, kept
}

// faster reports whether job v runs faster on one GPU of type a than of b
// (the artifact breaks a tie towards the more powerful type).
func faster(s *adapt.State, v *adapt.View, a, b int) bool {
	_, ga := s.Estimate(v, s.Single(a, 1), goodput.Truth)
	_, gb := s.Estimate(v, s.Single(b, 1), goodput.Truth)
	return ga > gb
}
