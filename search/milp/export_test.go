package milp

import (
	"context"
	"time"

	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/space"
	"github.com/inlay-dev/inlay/solver"
)

// LoadParts splits each load row at x into its layer, dispatch, transfer
// and latency parts (for the benchmarks' diagnostics).
func (f *Formulation) LoadParts(x []float64) (names []string, parts [][4]float64) {
	kind := map[int]int{}
	for _, av := range f.aux {
		switch av.kind {
		case auxCount:
			kind[int(av.v)] = 1
		case auxPair:
			kind[int(av.v)] = 2
		case auxLinkPair:
			kind[int(av.v)] = 3
		}
	}
	for i, row := range f.loadRows {
		var p [4]float64
		for _, t := range row {
			p[kind[int(t.Var)]] += t.Coef * x[t.Var]
		}
		names = append(names, f.loadName[i])
		parts = append(parts, p)
	}
	return names, parts
}

// Counts lists the subgraph-count variables n[m][p].
func (f *Formulation) Counts() (vars []solver.Var, ms, ps []int) {
	for _, av := range f.aux {
		if av.kind == auxCount {
			vars, ms, ps = append(vars, av.v), append(ms, av.m), append(ps, av.p)
		}
	}
	return vars, ms, ps
}

// LinkPairs lists the latency indicators of (model, domain pair): vars,
// their models, and the domains.
func (f *Formulation) LinkPairs() (vars []solver.Var, ms, ds, es []int) {
	for _, av := range f.aux {
		if av.kind == auxLinkPair {
			vars, ms, ds, es = append(vars, av.v), append(ms, av.m), append(ds, av.p), append(es, av.q)
		}
	}
	return vars, ms, ds, es
}

// SolveAgain is the planner's second solve of the full MILP from a.
func SolveAgain(ctx context.Context, f *Formulation, a *space.Assignment, proof *plan.Proof, limit time.Duration) (*space.Assignment, bool) {
	return (&Planner{}).solveAgain(ctx, f, a, proof, true, limit, 1, nil)
}

// ImproveAndProve is the planner's steps after its first solve, from a
// (whose load is first), ending by end with the search taking at most
// search, on threads threads; parallel=false is the option parallel=off.
func ImproveAndProve(ctx context.Context, f *Formulation, a *space.Assignment, proof *plan.Proof, end time.Time, search time.Duration, threads int, parallel bool) (*space.Assignment, bool) {
	p := New(Options{NoParallel: !parallel})
	return p.improveAndProve(ctx, f, a, f.Load(a), proof, true, improveBudget{end: end, search: search}, threads, nil)
}

// RestartBeside is the rule for restarting the solve beside the search.
var RestartBeside = restartBeside
