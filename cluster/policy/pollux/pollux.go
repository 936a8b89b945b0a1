// Package pollux is Pollux's policy (OSDI 2021) on a heterogeneous
// cluster: a genetic algorithm searches allocations (a GPU count and type
// per job) for the most fitness, the generalised mean with p = −1 of
// every job's speedup: its goodput on the allocation, discounted by the
// restart factor when the allocation changes, over its goodput on a fair
// share of the cluster (GPUs over jobs). Each job's batch size is the one
// with the most goodput on its allocation. Pollux does not model GPU
// types: a job's goodput on every type is estimated with the model of the
// type it last ran on, so types are only pools of capacity to it.
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
	Seed                    uint64
	rounds                  uint64
}

// New is Pollux with p = −1, 50 candidates and 40 generations per round.
func New(seed uint64) *Policy { return &Policy{P: -1, Population: 50, Generations: 40, Seed: seed} }

func (p *Policy) Name() string { return "pollux" }
func (p *Policy) Mixed() bool  { return false }

// gene is one job's allocation: type and GPUs (0: none).
type gene struct{ t, n int }

type evaluator struct {
	s     *adapt.State
	p     *Policy
	fair  []float64
	cache []map[gene][2]float64 // job → gene → (batch, discounted goodput)
	know  []goodput.Knowledge
}

func (e *evaluator) goodput(j int, g gene) (batch, gp float64) {
	if g.n == 0 {
		return 0, 0
	}
	if c, ok := e.cache[j][g]; ok {
		return c[0], c[1]
	}
	v := &e.s.Jobs[j]
	a := e.s.Single(g.t, g.n)
	batch, gp = e.s.Estimate(v, a, e.know[j])
	if len(v.Alloc) > 0 && !v.Alloc.Equal(a) {
		gp *= adapt.RestartFactor(e.s.Now-v.Arrival, v.Restarts, v.Model.Restart)
	}
	e.cache[j][g] = [2]float64{batch, gp}
	return batch, gp
}

func (e *evaluator) fitness(x []gene) float64 {
	sum := 0.0
	for j, g := range x {
		_, gp := e.goodput(j, g)
		sp := gp / e.fair[j]
		if !(sp > 0) {
			sp = 1e-4 // Pollux's gain of a job without GPUs
		}
		sum += math.Pow(sp, e.p.P)
	}
	return math.Pow(sum/float64(len(x)), 1/e.p.P)
}

// Allocate runs the genetic search.
func (p *Policy) Allocate(ctx context.Context, s *adapt.State) ([]adapt.Decision, error) {
	p.rounds++
	rng := rand.New(rand.NewPCG(p.Seed, p.rounds))
	T := len(s.Cluster.Types)
	J := len(s.Jobs)
	e := &evaluator{s: s, p: p, fair: make([]float64, J), cache: make([]map[gene][2]float64, J), know: make([]goodput.Knowledge, J)}
	fairN := max(1, min(s.Cluster.Total()/max(J, 1), adapt.MaxJobGPUs))
	counts := make([][]int, T)
	for t := range T {
		counts[t] = s.Cluster.Configs(t)
	}
	for j := range s.Jobs {
		v := &s.Jobs[j]
		e.cache[j] = map[gene][2]float64{}
		ref := v.LastType
		if ref < 0 {
			for t := range T { // never ran: the first type it runs on
				if v.Model.Fits[t] != nil {
					ref = t
					break
				}
			}
		}
		e.know[j] = goodput.Knowledge{Agnostic: ref}
		n := fairN
		if v.Kind == adapt.Rigid {
			n = v.GPUs
		}
		_, e.fair[j] = s.Estimate(v, s.Single(ref, min(n, s.Cluster.GPUs(ref))), e.know[j])
		if !(e.fair[j] > 0) {
			e.fair[j] = 1
		}
	}
	valid := func(j int, g gene) bool {
		v := &s.Jobs[j]
		if g.n == 0 {
			return true
		}
		if v.Model.Fits[g.t] == nil || g.n > s.Cluster.GPUs(g.t) {
			return false
		}
		return v.Kind != adapt.Rigid || g.n == v.GPUs
	}
	random := func(j int) gene {
		v := &s.Jobs[j]
		for range 8 {
			t := rng.IntN(T)
			n := counts[t][rng.IntN(len(counts[t]))]
			if v.Kind == adapt.Rigid {
				n = v.GPUs
			}
			if g := (gene{t, n}); valid(j, g) {
				return g
			}
		}
		return gene{}
	}
	repair := func(x []gene) {
		used := make([]int, T)
		for _, g := range x {
			used[g.t] += g.n
		}
		for t := range T {
			for used[t] > s.Cluster.GPUs(t) {
				// shrink a random job of the type: halve it, or drop it
				var on []int
				for j, g := range x {
					if g.n > 0 && g.t == t {
						on = append(on, j)
					}
				}
				j := on[rng.IntN(len(on))]
				g := x[j]
				next := gene{}
				if s.Jobs[j].Kind != adapt.Rigid {
					for _, c := range counts[t] {
						if c < g.n && c > next.n && c <= g.n/2+1 {
							next = gene{t, c}
						}
					}
				}
				used[t] -= g.n - next.n
				x[j] = next
			}
		}
	}
	pop := make([][]gene, 0, p.Population)
	cur := make([]gene, J)
	for j := range s.Jobs {
		if a := s.Jobs[j].Alloc; len(a) == 1 {
			cur[j] = gene{a[0].Type, a[0].GPUs}
		}
	}
	// Fill free GPUs with new jobs at one GPU (their requested count if rigid).
	seedAlloc := append([]gene(nil), cur...)
	for j := range seedAlloc {
		if seedAlloc[j].n == 0 {
			seedAlloc[j] = random(j)
		}
	}
	repair(seedAlloc)
	pop = append(pop, cur, seedAlloc)
	for len(pop) < p.Population {
		x := append([]gene(nil), seedAlloc...)
		for j := range x {
			if rng.Float64() < 0.5 {
				x[j] = random(j)
			}
		}
		repair(x)
		pop = append(pop, x)
	}
	fit := make([]float64, len(pop))
	for i := range pop {
		fit[i] = e.fitness(pop[i])
	}
	for range p.Generations {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		idx := make([]int, len(pop))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return fit[idx[a]] > fit[idx[b]] })
		elite := len(pop) / 2
		next := make([][]gene, 0, len(pop))
		nfit := make([]float64, 0, len(pop))
		for _, i := range idx[:elite] {
			next = append(next, pop[i])
			nfit = append(nfit, fit[i])
		}
		for len(next) < p.Population {
			a, b := pop[idx[rng.IntN(elite)]], pop[idx[rng.IntN(elite)]]
			child := make([]gene, J)
			for j := range child {
				if rng.IntN(2) == 0 {
					child[j] = a[j]
				} else {
					child[j] = b[j]
				}
				if rng.Float64() < 1/float64(J)+0.05 {
					switch r := rng.IntN(3); {
					case r == 0:
						child[j] = random(j)
					case r == 1 && s.Jobs[j].Kind != adapt.Rigid && child[j].n > 0:
						// double the job within its type
						t := child[j].t
						for _, c := range counts[t] {
							if c > child[j].n {
								child[j] = gene{t, c}
								break
							}
						}
					default:
						child[j] = gene{}
					}
				}
			}
			repair(child)
			next = append(next, child)
			nfit = append(nfit, e.fitness(child))
		}
		pop, fit = next, nfit
	}
	best := 0
	for i := range pop {
		if fit[i] > fit[best] {
			best = i
		}
	}
	out := make([]adapt.Decision, J)
	for j, g := range pop[best] {
		if g.n > 0 {
			b, _ := e.goodput(j, g)
			out[j] = adapt.Decision{Alloc: s.Single(g.t, g.n), Batch: b}
		}
	}
	return out, nil
}
