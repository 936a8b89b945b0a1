// Package bound computes proven lower bounds on the makespan of a set of
// jobs that are all present at time 0 on a cluster.
//
// Longest: no job can run faster than alone on its fastest GPU type it fits
// on, so the makespan is at least max_m R_m / max_g T_mg. That holds for
// every schedule, space sharing included, provided no pair throughput in the
// table exceeds the job's alone throughput on that type (PairsNeverFaster
// checks it).
//
// Fluid: the makespan C of any schedule without space sharing is feasible
// for the LP  min C  s.t.  Σ_g T_mg·τ_mg ≥ R_m (every job's steps are
// done), Σ_g τ_mg ≤ C (a job runs on one type at a time), Σ_m s_m·τ_mg ≤
// n_g·C (no type holds more GPUs than it has), τ ≥ 0, where τ_mg is the time
// job m spends on type g: set τ_mg to the time the schedule runs m on g.
// The LP's optimum is therefore a lower bound; with x = τ/C it is Gavel's
// minimum-makespan LP, so the bound is what an allocation followed
// exactly, with no rounds and no integrality, would achieve.
package bound

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/solver"
)

// Longest returns max_m R_m / max_g T_mg in seconds.
func Longest(s *policy.State) float64 {
	lb := 0.0
	for m := range s.Jobs {
		if best := s.Best(&s.Jobs[m]); best > 0 {
			lb = math.Max(lb, s.Jobs[m].Remaining/best)
		}
	}
	return lb
}

// PairsNeverFaster reports whether every pair figure of the table is at
// most the alone figure of the same job on the same type (the condition
// under which Longest bounds schedules with space sharing).
func PairsNeverFaster(t *throughput.Table) (bool, string) {
	for a := 0; a < t.NumKeys(); a++ {
		for b := 0; b < t.NumKeys(); b++ {
			for g := range t.GPUs() {
				ta, _, ok := t.Pair(throughput.ID(a), throughput.ID(b), g)
				if ok && ta > t.Alone(throughput.ID(a), g)*(1+1e-9) {
					return false, fmt.Sprintf("%s with %s on %s: %.4g > alone %.4g", t.Key(throughput.ID(a)), t.Key(throughput.ID(b)), t.GPUs()[g], ta, t.Alone(throughput.ID(a), g))
				}
			}
		}
	}
	return true, ""
}

// Fluid solves the fluid makespan LP and returns C in seconds.
func Fluid(ctx context.Context, s *policy.State, solve func(context.Context, *solver.Model, solver.Options) (*solver.Result, error)) (float64, error) {
	if solve == nil {
		solve = solver.Solve
	}
	// Scale time by the longest-job bound so that values are about 1.
	scale := Longest(s)
	if scale <= 0 {
		return 0, nil
	}
	m := solver.NewModel(solver.Minimize)
	C := m.AddVar(0, solver.Inf, 1)
	G := len(s.C.Count)
	capTerms := make([][]solver.Term, G)
	for k := range s.Jobs {
		j := &s.Jobs[k]
		var work, busy []solver.Term
		for g, c := range s.C.Count {
			t := s.Alone(j, g)
			if c < j.GPUs || t <= 0 {
				continue
			}
			v := m.AddVar(0, solver.Inf, 0)
			work = append(work, solver.Term{Var: v, Coef: t * scale / j.Remaining})
			busy = append(busy, solver.Term{Var: v, Coef: 1})
			capTerms[g] = append(capTerms[g], solver.Term{Var: v, Coef: float64(j.GPUs)})
		}
		if len(work) == 0 {
			return 0, fmt.Errorf("cluster/bound: job %d runs on no GPU type", j.ID)
		}
		m.AddRow(1, solver.Inf, work...)
		m.AddRow(-solver.Inf, 0, append(busy, solver.Term{Var: C, Coef: -1})...)
	}
	for g, terms := range capTerms {
		if len(terms) > 0 {
			m.AddRow(-solver.Inf, 0, append(terms, solver.Term{Var: C, Coef: -float64(s.C.Count[g])})...)
		}
	}
	res, err := solve(ctx, m, solver.Options{TimeLimit: 5 * time.Minute})
	if err != nil {
		return 0, err
	}
	if res.Status != solver.Optimal {
		return 0, fmt.Errorf("cluster/bound: fluid LP %s (%s)", res.Status, res.Reason)
	}
	// A proven bound: CBC's dual bound equals the optimum for an LP; take
	// the smaller of the two for safety.
	c := res.Objective
	if !math.IsInf(res.Bound, 0) && !math.IsNaN(res.Bound) {
		c = math.Min(c, res.Bound)
	}
	return c * scale, nil
}
