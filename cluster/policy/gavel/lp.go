// Package gavel holds Gavel's heterogeneity-aware policies (Narayanan et
// al., OSDI 2020, section 4): max-min fairness (Gavel's LAS), finish-time
// fairness, minimum makespan, maximum total throughput and minimum cost,
// each with and without space sharing, stated as linear programs over the
// allocation matrix X (job or job pair × GPU type → fraction of time) and
// solved by COIN-OR CBC through package solver. The heterogeneity-agnostic
// variants of finish-time fairness and makespan take every throughput as 1,
// as Gavel's do.
//
// Every formulation shares the constraints of Gavel's get_base_constraints:
// 0 ≤ X, Σ over the entries holding a job ≤ 1, and Σ scale·X ≤ GPUs per
// type. A min-max objective alone leaves the non-binding jobs' shares to
// the solver's whim (a vertex that may idle GPUs); a tie-break of 10⁻³/n
// times the sum of the normalised throughputs makes the LP pick, among the
// optimal allocations, one that uses the capacity (Gavel's interior-point
// solver lands in the middle of that face instead).
package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/solver"
)

// Solve is the LP solver's signature (solver.Solve by default).
type Solve func(ctx context.Context, m *solver.Model, opt solver.Options) (*solver.Result, error)

// Config is shared by the package's policies.
type Config struct {
	Solve Solve
	// PairsPerJob bounds the space-sharing candidates: each job keeps its
	// PairsPerJob best partners by combined normalised throughput (0: 8).
	PairsPerJob int
	// TimeLimit per LP solve (0: 60 s).
	TimeLimit time.Duration
	// Interior solves the LPs as Gavel does, by an interior-point method
	// (Gavel's cvxpy runs ECOS; here CBC's barrier without crossover,
	// solver.Options.Interior) and without the tie-break: where the
	// optimum is not unique the allocation is a point inside the optimal
	// face, not the vertex the tie-break picks, and entries a vertex
	// leaves at zero hold small positive shares.
	Interior bool
}

func (c *Config) solve() Solve {
	if c.Solve == nil {
		return solver.Solve
	}
	return c.Solve
}

func (c *Config) options() solver.Options {
	tl := c.TimeLimit
	if tl == 0 {
		tl = 60 * time.Second
	}
	return solver.Options{TimeLimit: tl, Threads: 1, Interior: c.Interior}
}

// pair is a space-sharing candidate: jobs a and b (indices into the
// state's jobs) and per column their throughputs together (0: cannot).
type pair struct {
	a, b int
	t    [][2]float64
}

// lp is an allocation LP under construction.
type lp struct {
	s     *policy.State
	tp    [][]float64 // per job and column: the throughput the objective uses
	model *solver.Model
	x     [][]solver.Var // per job and column; -1: no variable
	pairs []pair
	y     [][]solver.Var // per pair and column
	// shares holds, per job, the terms of Σ X over the entries holding it.
	shares [][]solver.Term
	// noTieBreak leaves the min-max objectives without the tie-break
	// (Config.Interior).
	noTieBreak bool
}

const noVar = solver.Var(-1)

// newLP declares the variables and base constraints. tp gives the
// throughputs (nil: the table's alone figures); agnostic uses 1 for every
// type a job can run on.
//
// gavelForm states the LP as Gavel's policies do (Config.Interior): with
// heterogeneity-aware throughputs, a variable for every job on every type
// with enough GPUs, zero throughput included, and no upper bound of 1 on
// it (Σ X ≤ 1 implies it). The optimum is the same; the point an
// interior-point method returns inside the optimal face is not, as it
// depends on every inequality of the formulation.
func newLP(s *policy.State, sense solver.Sense, agnostic, spaceSharing bool, pairsPerJob int, gavelForm ...bool) *lp {
	b := &lp{s: s, model: solver.NewModel(sense)}
	gf := len(gavelForm) > 0 && gavelForm[0] && !agnostic
	ub := 1.0
	if gf {
		ub = solver.Inf
	}
	n, G := len(s.Jobs), len(s.C.Count)
	b.tp = make([][]float64, n)
	b.x = make([][]solver.Var, n)
	b.shares = make([][]solver.Term, n)
	capTerms := make([][]solver.Term, G)
	for m := range s.Jobs {
		j := &s.Jobs[m]
		b.tp[m] = make([]float64, G)
		b.x[m] = make([]solver.Var, G)
		for g := range s.C.Count {
			b.x[m][g] = noVar
			t := s.Alone(j, g)
			if s.C.Count[g] < j.GPUs || (t <= 0 && !gf) {
				continue
			}
			if agnostic {
				t = 1
			}
			b.tp[m][g] = t
			v := b.model.AddVar(0, ub, 0)
			b.x[m][g] = v
			b.shares[m] = append(b.shares[m], solver.Term{Var: v, Coef: 1})
			capTerms[g] = append(capTerms[g], solver.Term{Var: v, Coef: float64(j.GPUs)})
		}
	}
	if spaceSharing {
		b.pairs = candidatePairs(s, pairsPerJob)
		b.y = make([][]solver.Var, len(b.pairs))
		for p, pr := range b.pairs {
			b.y[p] = make([]solver.Var, G)
			for g := range s.C.Count {
				b.y[p][g] = noVar
				if pr.t[g][0] <= 0 || pr.t[g][1] <= 0 || s.C.Count[g] < s.Jobs[pr.a].GPUs {
					continue
				}
				v := b.model.AddVar(0, ub, 0)
				b.y[p][g] = v
				b.shares[pr.a] = append(b.shares[pr.a], solver.Term{Var: v, Coef: 1})
				b.shares[pr.b] = append(b.shares[pr.b], solver.Term{Var: v, Coef: 1})
				capTerms[g] = append(capTerms[g], solver.Term{Var: v, Coef: float64(s.Jobs[pr.a].GPUs)})
			}
		}
	}
	for m := range s.Jobs {
		if len(b.shares[m]) > 0 {
			b.model.AddRow(-solver.Inf, 1, b.shares[m]...)
		}
	}
	for g, terms := range capTerms {
		if len(terms) > 0 {
			b.model.AddRow(-solver.Inf, float64(s.C.Count[g]), terms...)
		}
	}
	return b
}

// candidatePairs lists the pairs worth sharing: equal scale factors, and
// among each job's partners the pairsPerJob best by the best-type sum of
// the two normalised throughputs (pairs that gain nothing, a sum ≤ 1 on
// every type, are dropped). Sorted by (a, b).
func candidatePairs(s *policy.State, pairsPerJob int) []pair {
	if pairsPerJob <= 0 {
		pairsPerJob = 8
	}
	n, G := len(s.Jobs), len(s.C.Count)
	type cand struct {
		other int
		gain  float64
	}
	best := make([][]cand, n)
	for a := 0; a < n; a++ {
		ja := &s.Jobs[a]
		for b := a + 1; b < n; b++ {
			jb := &s.Jobs[b]
			if ja.GPUs != jb.GPUs {
				continue
			}
			gain := 0.0
			for g := 0; g < G; g++ {
				if s.C.Count[g] == 0 {
					continue
				}
				ta, tb, ok := s.Table.Pair(ja.Row, jb.Row, g)
				if !ok {
					continue
				}
				gain = math.Max(gain, ta/s.Alone(ja, g)+tb/s.Alone(jb, g))
			}
			if gain <= 1 {
				continue
			}
			best[a] = append(best[a], cand{b, gain})
			best[b] = append(best[b], cand{a, gain})
		}
	}
	keep := map[[2]int]bool{}
	for a := range best {
		c := best[a]
		sort.SliceStable(c, func(i, k int) bool {
			if c[i].gain != c[k].gain {
				return c[i].gain > c[k].gain
			}
			return c[i].other < c[k].other
		})
		for i := 0; i < len(c) && i < pairsPerJob; i++ {
			keep[[2]int{min(a, c[i].other), max(a, c[i].other)}] = true
		}
	}
	keys := make([][2]int, 0, len(keep))
	for k := range keep {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, k int) bool {
		if keys[i][0] != keys[k][0] {
			return keys[i][0] < keys[k][0]
		}
		return keys[i][1] < keys[k][1]
	})
	out := make([]pair, len(keys))
	for i, k := range keys {
		p := pair{a: k[0], b: k[1], t: make([][2]float64, G)}
		for g := 0; g < G; g++ {
			ta, tb, ok := s.Table.Pair(s.Jobs[k[0]].Row, s.Jobs[k[1]].Row, g)
			if ok {
				p.t[g] = [2]float64{ta, tb}
			}
		}
		out[i] = p
	}
	return out
}

// throughputTerms returns job m's throughput as terms, each coefficient
// times scale: alone entries at tp, pair entries at the pair's figure
// (times tp/alone when the LP is agnostic, which makes it 1·share).
func (b *lp) throughputTerms(m int, scale float64) []solver.Term {
	var out []solver.Term
	for g, v := range b.x[m] {
		if v != noVar {
			out = append(out, solver.Term{Var: v, Coef: scale * b.tp[m][g]})
		}
	}
	for p, pr := range b.pairs {
		if pr.a != m && pr.b != m {
			continue
		}
		k := 0
		if pr.b == m {
			k = 1
		}
		for g, v := range b.y[p] {
			if v == noVar {
				continue
			}
			t := pr.t[g][k]
			if alone := b.s.Alone(&b.s.Jobs[m], g); alone > 0 {
				t *= b.tp[m][g] / alone
			}
			out = append(out, solver.Term{Var: v, Coef: scale * t})
		}
	}
	return out
}

// lpFailure is a solve that gave no allocation although the policy could
// go on: CBC stopped without a solution (killed after its time limit on a
// loaded machine), claimed an LP that always has x = 0 feasible
// infeasible, or failed as a process.
type lpFailure struct{ why string }

func (e *lpFailure) Error() string { return e.why }

// solveLP runs the solver on m. A missing CBC and a cancelled context are
// errors; every other failure is an *lpFailure.
func solveLP(ctx context.Context, cfg *Config, m *solver.Model, name string) (*solver.Result, error) {
	res, err := cfg.solve()(ctx, m, cfg.options())
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		if errors.Is(err, solver.ErrNoCBC) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, &lpFailure{fmt.Sprintf("%s: LP failed: %v", name, err)}
	}
	if !res.Status.HasSolution() {
		return nil, &lpFailure{fmt.Sprintf("%s: LP %s (%s) after %.1f s", name, res.Status, res.Reason, res.Wall.Seconds())}
	}
	return res, nil
}

// run solves the model and turns the solution into an allocation.
func (b *lp) run(ctx context.Context, cfg *Config, name string) (*policy.Allocation, *solver.Result, error) {
	res, err := solveLP(ctx, cfg, b.model, name)
	if err != nil {
		return nil, nil, err
	}
	return b.allocation(res, fmt.Sprintf("%s: LP %s, %d variables", name, res.Status, b.model.NumVars())), res, nil
}

// Fallback is what every policy of the package returns when its LP gives
// no solution (an *lpFailure): Gavel's heterogeneity-agnostic max-min
// allocation (policy.EqualShare, water-filling in closed form, O(n log n)),
// with Allocation.Fallback saying why. It is a feasible point of every
// formulation here (the one at which the max-min LP's objective is 1 and
// finish-time fairness's ρ is 1), it covers every active job, including
// those that arrived since the last allocation, and it needs no solver, so
// the run goes on; the mechanism counts these allocations. Other errors
// (no CBC, a cancelled context) are returned as they are.
func Fallback(ctx context.Context, s *policy.State, err error) (*policy.Allocation, error) {
	var f *lpFailure
	if !errors.As(err, &f) || ctx.Err() != nil {
		return nil, err
	}
	a := policy.Singles(s, policy.EqualShare(s), f.why+"; fell back to the equal share")
	a.Fallback = f.why
	return a, nil
}

// runOrFallback is run, with Fallback on a failed solve.
func (b *lp) runOrFallback(ctx context.Context, cfg *Config, name string) (*policy.Allocation, error) {
	a, _, err := b.run(ctx, cfg, name)
	if err != nil {
		return Fallback(ctx, b.s, err)
	}
	return a, nil
}

func clip(v float64) float64 { return math.Min(1, math.Max(0, v)) }

func (b *lp) allocation(res *solver.Result, note string) *policy.Allocation {
	s := b.s
	G := len(s.C.Count)
	a := &policy.Allocation{Note: note}
	for m := range s.Jobs {
		x := make([]float64, G)
		for g, v := range b.x[m] {
			if v != noVar {
				x[g] = clip(res.Value(v))
			}
		}
		a.Entries = append(a.Entries, policy.Entry{A: s.Jobs[m].ID, B: -1, X: x})
	}
	for p, pr := range b.pairs {
		x := make([]float64, G)
		any := false
		for g, v := range b.y[p] {
			if v != noVar {
				x[g] = clip(res.Value(v))
				any = any || x[g] > 1e-6
			}
		}
		if any {
			a.Entries = append(a.Entries, policy.Entry{A: s.Jobs[pr.a].ID, B: s.Jobs[pr.b].ID, X: x})
		}
	}
	a.Sort()
	return a
}
