package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/solver"
)

// tieBreak is the weight of the sum of the normalised throughputs beside a
// min-max objective, per job.
const tieBreak = 1e-3

// Variant is what every formulation here comes in: heterogeneity-agnostic
// (every throughput taken as 1) or aware, with or without space sharing,
// solved with Cfg. The policies embed it for their traits, their names and
// their LP.
type Variant struct {
	Cfg                    Config
	Agnostic, SpaceSharing bool
}

// Traits are the variant's.
func (v Variant) Traits() policy.Traits {
	return policy.Traits{Agnostic: v.Agnostic, SpaceSharing: v.SpaceSharing}
}

// name picks the agnostic, the aware or the space-sharing name.
func (v Variant) name(agnostic, aware, sharing string) string {
	switch {
	case v.Agnostic:
		return agnostic
	case v.SpaceSharing:
		return sharing
	}
	return aware
}

// lp starts the variant's LP (maximised) over s.
func (v Variant) lp(s *policy.State) *lp {
	b := newLP(s, solver.Maximize, v.Agnostic, v.SpaceSharing, v.Cfg.PairsPerJob, v.Cfg.Interior)
	b.noTieBreak = v.Cfg.Interior
	return b
}

// maxMinRows adds t and, per job, Σ coef_m·throughput_m − t ≥ 0, with the
// tie-break on the throughputs; it returns t.
func (b *lp) maxMinRows(coef []float64) solver.Var {
	t := b.model.AddVar(0, solver.Inf, 1)
	eps := tieBreak / float64(max(len(coef), 1))
	if b.noTieBreak {
		eps = 0
	}
	for m := range b.s.Jobs {
		terms := b.throughputTerms(m, coef[m])
		if len(terms) == 0 {
			continue
		}
		for _, tm := range terms {
			b.model.SetObj(tm.Var, b.model.Obj(tm.Var)+eps*tm.Coef)
		}
		b.model.AddRow(0, solver.Inf, append(terms, solver.Term{Var: t, Coef: -1})...)
	}
	return t
}

// MaxMin is Gavel's heterogeneity-aware LAS: maximise the least normalised
// throughput, each job's throughput normalised by what it would get from
// the agnostic equal share (without space sharing) or by the sum of its
// throughputs over the types (with it, as Gavel's packed LP does), times
// its scale factor over its weight.
type MaxMin struct{ Variant }

func (p *MaxMin) Name() string { return p.name("gavel-agnostic", "gavel", "gavel-ss") }

func (p *MaxMin) Allocate(ctx context.Context, s *policy.State) (*policy.Allocation, error) {
	if a := noGPUs(s, p.Name()); a != nil {
		return a, nil
	}
	b := p.lp(s)
	coef := make([]float64, len(s.Jobs))
	if p.SpaceSharing {
		for m := range s.Jobs {
			sum := 0.0
			for g, c := range s.C.Count {
				if c > 0 {
					sum += s.Alone(&s.Jobs[m], g)
				}
			}
			coef[m] = float64(s.Jobs[m].GPUs) / (s.Jobs[m].Weight * math.Max(sum, 1e-12))
		}
	} else {
		iso := policy.IsolatedThroughput(s, policy.EqualShare(s))
		for m := range s.Jobs {
			coef[m] = float64(s.Jobs[m].GPUs) / (s.Jobs[m].Weight * math.Max(iso[m], 1e-12))
		}
	}
	b.maxMinRows(coef)
	return b.runOrFallback(ctx, &p.Cfg, p.Name())
}

// Makespan minimises the time until every active job is done: maximise the
// least throughput_m / remaining_m (Gavel's MinTotalDuration). Agnostic
// takes every throughput as 1.
type Makespan struct{ Variant }

func (p *Makespan) Name() string { return p.name("makespan", "gavel-makespan", "gavel-makespan-ss") }

func (p *Makespan) Allocate(ctx context.Context, s *policy.State) (*policy.Allocation, error) {
	if a := noGPUs(s, p.Name()); a != nil {
		return a, nil
	}
	b := p.lp(s)
	// Scale rows so that t is about 1: by the longest best-case time.
	horizon := 0.0
	for m := range s.Jobs {
		best := 0.0
		for g := range s.C.Count {
			best = math.Max(best, b.tp[m][g])
		}
		if best > 0 {
			horizon = math.Max(horizon, s.Jobs[m].Remaining/best)
		}
	}
	coef := make([]float64, len(s.Jobs))
	for m := range s.Jobs {
		coef[m] = horizon / math.Max(s.Jobs[m].Remaining, 1e-9)
	}
	b.maxMinRows(coef)
	return b.runOrFallback(ctx, &p.Cfg, p.Name())
}

// FTF is finish-time fairness (Themis's ρ, Gavel's formulation): minimise
// the largest ρ_m = (t_m + R_m/throughput_m(X)) / (t_m + R_m/iso_m), with t_m
// the time since arrival, R_m the remaining steps and iso_m the throughput
// under the agnostic equal share. ρ is quasi-convex in X: the policy
// bisects on ρ, each step an LP that maximises λ with throughput_m(X) ≥
// λ·R_m/(ρ·E_m − t_m) (feasible iff λ ≥ 1). ρ = 1 is always feasible (the
// equal share itself), so the search runs on [lower bound, 1].
type FTF struct {
	Variant
	// Steps of the bisection (0: 8).
	Steps int
}

func (p *FTF) Name() string { return p.name("ftf", "gavel-ftf", "gavel-ftf-ss") }

func (p *FTF) Allocate(ctx context.Context, s *policy.State) (*policy.Allocation, error) {
	if a := noGPUs(s, p.Name()); a != nil {
		return a, nil
	}
	probe := newLP(s, solver.Maximize, p.Agnostic, false, 0)
	share := policy.EqualShare(s)
	n := len(s.Jobs)
	iso := make([]float64, n)
	E := make([]float64, n)
	since := make([]float64, n)
	lo := 0.0
	for m := range s.Jobs {
		best := 0.0
		for g := range s.C.Count {
			iso[m] += probe.tp[m][g] * share[m][g]
			best = math.Max(best, probe.tp[m][g])
		}
		since[m] = math.Max(0, s.Now-s.Jobs[m].Arrival)
		R := s.Jobs[m].Remaining
		E[m] = since[m] + R/math.Max(iso[m], 1e-12)
		if best > 0 {
			lo = math.Max(lo, (since[m]+R/best)/E[m])
		}
	}
	steps := p.Steps
	if steps == 0 {
		steps = 8
	}
	var bestAlloc *policy.Allocation
	hi := 1.0
	try := func(rho float64) (bool, error) {
		b := p.lp(s)
		coef := make([]float64, n)
		for m := range s.Jobs {
			den := rho*E[m] - since[m]
			if den <= 0 {
				return false, nil
			}
			// throughput_m ≥ λ·R/den  ⇔  (den/R)·throughput_m ≥ λ.
			coef[m] = den / math.Max(s.Jobs[m].Remaining, 1e-9)
		}
		b.maxMinRows(coef)
		a, res, err := b.run(ctx, &p.Cfg, p.Name())
		if err != nil {
			return false, err
		}
		if res.Objective >= 1-1e-6 {
			a.Note = fmt.Sprintf("%s: max ρ ≤ %.4f", p.Name(), rho)
			bestAlloc = a
			return true, nil
		}
		return false, nil
	}
	if ok, err := try(hi); err != nil {
		return Fallback(ctx, s, err)
	} else if !ok {
		// Numerical slack at ρ = 1: fall back to the equal share.
		return policy.Singles(s, share, p.Name()+": equal share"), nil
	}
	for i := 0; i < steps && hi-lo > 1e-3; i++ {
		mid := (lo + hi) / 2
		ok, err := try(mid)
		if err != nil {
			// A failed step ends the bisection: the allocation found at
			// hi stands, marked as a fallback.
			var f *lpFailure
			if !errors.As(err, &f) || ctx.Err() != nil {
				return nil, err
			}
			bestAlloc.Fallback = f.why
			bestAlloc.Note += fmt.Sprintf(" (%s; bisection stopped)", f.why)
			return bestAlloc, nil
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return bestAlloc, nil
}

// addNormalisedThroughput adds Σ_m scale_m·throughput_m/best_m to mdl's
// objective (mdl has b's variables first, in order).
func (b *lp) addNormalisedThroughput(mdl *solver.Model) {
	for m := range b.s.Jobs {
		best := 0.0
		for g := range b.s.C.Count {
			best = math.Max(best, b.tp[m][g])
		}
		if best == 0 {
			continue
		}
		for _, tm := range b.throughputTerms(m, float64(b.s.Jobs[m].GPUs)/best) {
			mdl.SetObj(tm.Var, mdl.Obj(tm.Var)+tm.Coef)
		}
	}
}

// Throughput maximises the total normalised throughput: Σ_m scale_m ·
// throughput_m(X) / best_m, best_m the job's fastest alone throughput (so
// that steps of unlike models compare as GPU-equivalents).
type Throughput struct{ Variant }

func (p *Throughput) Name() string { return p.name("tput", "gavel-tput", "gavel-tput-ss") }

func (p *Throughput) Allocate(ctx context.Context, s *policy.State) (*policy.Allocation, error) {
	if a := noGPUs(s, p.Name()); a != nil {
		return a, nil
	}
	b := p.lp(s)
	b.addNormalisedThroughput(b.model)
	return b.runOrFallback(ctx, &p.Cfg, p.Name())
}

// Cost maximises normalised throughput per dollar (Gavel's
// max_sum_throughput_normalized_by_cost): Σ_m scale_m·throughput_m/best_m
// over Σ_g price_g·Σ_m scale_m·X_mg, a linear-fractional program made
// linear by the Charnes–Cooper substitution Y = u·X, u = 1/cost: maximise
// the numerator in Y with cost(Y) = 1, Σ Y ≤ u per job and capacity·u per
// type; then X = Y/u. Types without a price are free and weighed at a cent
// an hour so that the ratio stays bounded.
type Cost struct{ Variant }

func (p *Cost) Name() string { return p.name("cost", "gavel-cost", "gavel-cost-ss") }

func (p *Cost) Allocate(ctx context.Context, s *policy.State) (*policy.Allocation, error) {
	if a := noGPUs(s, p.Name()); a != nil {
		return a, nil
	}
	// Build the plain LP for its variables and rows, then rewrite the
	// right-hand sides in terms of u.
	b := p.lp(s)
	mdl := solver.NewModel(solver.Maximize)
	nv := b.model.NumVars()
	for v := 0; v < nv; v++ {
		mdl.AddVar(0, solver.Inf, 0)
	}
	u := mdl.AddVar(0, solver.Inf, 0)
	G := len(s.C.Count)
	price := make([]float64, G)
	for g := range price {
		price[g] = math.Max(s.C.Price[g], 0.01)
	}
	capTerms := make([][]solver.Term, G)
	var costTerms []solver.Term
	for m := range s.Jobs {
		if len(b.shares[m]) > 0 {
			mdl.AddRow(-solver.Inf, 0, append(append([]solver.Term(nil), b.shares[m]...), solver.Term{Var: u, Coef: -1})...)
		}
		for g, v := range b.x[m] {
			if v != noVar {
				c := float64(s.Jobs[m].GPUs)
				capTerms[g] = append(capTerms[g], solver.Term{Var: v, Coef: c})
				costTerms = append(costTerms, solver.Term{Var: v, Coef: c * price[g]})
			}
		}
	}
	for pi, pr := range b.pairs {
		for g, v := range b.y[pi] {
			if v != noVar {
				c := float64(s.Jobs[pr.a].GPUs)
				capTerms[g] = append(capTerms[g], solver.Term{Var: v, Coef: c})
				costTerms = append(costTerms, solver.Term{Var: v, Coef: c * price[g]})
			}
		}
	}
	for g, terms := range capTerms {
		if len(terms) > 0 {
			mdl.AddRow(-solver.Inf, 0, append(terms, solver.Term{Var: u, Coef: -float64(s.C.Count[g])})...)
		}
	}
	if len(costTerms) == 0 {
		return &policy.Allocation{Note: p.Name() + ": nothing can run"}, nil
	}
	mdl.AddRow(1, 1, costTerms...)
	b.addNormalisedThroughput(mdl)
	res, err := solveLP(ctx, &p.Cfg, mdl, p.Name())
	if err != nil {
		return Fallback(ctx, s, err)
	}
	uv := res.Value(u)
	vals := make([]float64, nv)
	if uv > 1e-12 {
		for v := range vals {
			vals[v] = res.Values[v] / uv
		}
	}
	scaled := &solver.Result{Status: res.Status, Values: vals}
	return b.allocation(scaled, fmt.Sprintf("%s: LP %s, %d variables", p.Name(), res.Status, mdl.NumVars())), nil
}

// noGPUs is the empty allocation for a cluster without GPUs (every node
// gone or NotReady, as a Kubernetes scheduler can see it during an outage),
// or nil. The LPs have no bounded optimum there: their objectives divide
// by throughputs that no GPU provides.
func noGPUs(s *policy.State, name string) *policy.Allocation {
	if s.C.Total() > 0 {
		return nil
	}
	return &policy.Allocation{Note: name + ": the cluster has no GPUs"}
}
