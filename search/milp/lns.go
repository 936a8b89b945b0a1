package milp

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/search/space"
	"github.com/inlay-dev/inlay/solver"
)

// ImproveOptions configure Improve.
type ImproveOptions struct {
	// Budget is the wall-clock time Improve may take; 0 means until every
	// neighbourhood has been tried without improvement.
	Budget time.Duration
	// SubLimit caps each sub-MILP's time limit (default 10 s).
	SubLimit time.Duration
	// Threads is CBC's thread count for the sub-MILPs.
	Threads int
	// Args are extra CBC options for the sub-MILPs.
	Args []string
	// Log, when set, receives one line per sub-MILP.
	Log func(string)
	// Improved, when set, is called with each new incumbent and its load
	// as soon as it is taken (in Improve's goroutine; it must not keep a).
	Improved func(a *space.Assignment, load float64)
}

// ImproveStats say what Improve did.
type ImproveStats struct {
	// Start and Load are the objective (maximum normalised load) of the
	// start and of the result.
	Start, Load float64
	// Solves counts the sub-MILPs solved, Improved those whose solution
	// was taken.
	Solves, Improved int
	// Exhausted: every neighbourhood was tried from the result without
	// improvement (a local optimum of the neighbourhoods, as far as the
	// sub-MILPs' time limits let CBC see).
	Exhausted bool
}

// neighbourhood is a set of free placement variables: x[m][l][p] is free
// where free(m, l, p), else it is fixed at the incumbent's value.
type neighbourhood struct {
	name string
	free func(m, l, p int) bool
}

// Improve is a fix-and-optimise (large-neighbourhood) search on the MILP
// itself, from the assignment a, whose start vector must be feasible.
//
// Each step frees the placement variables of one neighbourhood, fixes
// every other x[m][l][p] at the incumbent's value (through its bounds, on
// the formulation's own model, restored afterwards), and has CBC solve that
// sub-MILP from the incumbent as MIP start. A solution is taken when its
// assignment, rebuilt as a start vector, is feasible for the full
// formulation and its load is lower. The neighbourhoods, in a fixed order
// and rebuilt from the incumbent after every improvement:
//   - each model in turn (all of its layers on any processor);
//   - every subgraph boundary at once: in every model, the layers within
//     3 (in layer order) of a layer on another processor, on any processor;
//   - the most loaded processor b with each other processor q: every layer
//     on b or q, of any model, on either of the two;
//   - each pair of models.
//
// It stops when the budget is spent, ctx is cancelled, or a whole round
// of neighbourhoods brings nothing. The result is never worse than a (on
// a failed sub-solve it is the incumbent so far, with the error). The
// sub-MILPs' bounds prove nothing about the full problem and are dropped.
func (f *Formulation) Improve(ctx context.Context, a *space.Assignment, opt ImproveOptions) (*space.Assignment, ImproveStats, error) {
	began := time.Now()
	if opt.SubLimit <= 0 {
		opt.SubLimit = 10 * time.Second
	}
	cur := a.Clone()
	x := f.Start(cur)
	if err := f.Model.Check(x, 1e-6); err != nil {
		return nil, ImproveStats{}, fmt.Errorf("milp: improve: the start is infeasible: %w", err)
	}
	st := ImproveStats{Start: x[f.L], Load: x[f.L]}
	hoods := f.neighbourhoods(x, cur)
	if len(hoods) == 0 {
		st.Exhausted = true
		return cur, st, nil
	}
	stale := 0
	for i := 0; stale < len(hoods); i++ {
		if ctx.Err() != nil {
			break
		}
		limit := opt.SubLimit
		if opt.Budget > 0 {
			left := opt.Budget - time.Since(began)
			if left < time.Second {
				break
			}
			limit = min(limit, left)
		}
		h := hoods[i%len(hoods)]
		next, load, err := f.solveNeighbourhood(ctx, h, cur, x, limit, opt)
		st.Solves++
		if err != nil {
			return cur, st, err
		}
		if opt.Log != nil {
			opt.Log(fmt.Sprintf("improve: %-24s load %.6g → %.6g (%s)", h.name, x[f.L], load, time.Since(began).Round(time.Millisecond)))
		}
		if next == nil || load >= x[f.L]*(1-1e-9) {
			stale++
			continue
		}
		cur, x = next, f.Start(next)
		st.Improved++
		st.Load = x[f.L]
		stale = 0
		if opt.Improved != nil {
			opt.Improved(cur.Clone(), st.Load)
		}
		// The most loaded processor may have changed: rebuild the list and
		// go on after the neighbourhood that improved.
		if hoods = f.neighbourhoods(x, cur); len(hoods) == 0 {
			stale = 0
			break
		}
		i %= len(hoods)
	}
	st.Exhausted = len(hoods) == 0 || stale >= len(hoods)
	return cur, st, nil
}

// solveNeighbourhood solves one sub-MILP from the incumbent (cur, its start
// vector x) and returns the assignment of its solution and that
// assignment's load, or nil when CBC found nothing feasible for the full
// formulation.
func (f *Formulation) solveNeighbourhood(ctx context.Context, h neighbourhood, cur *space.Assignment, x []float64, limit time.Duration, opt ImproveOptions) (*space.Assignment, float64, error) {
	m := f.Model
	type saved struct {
		v      solver.Var
		lo, hi float64
	}
	var restore []saved
	for mi, xs := range f.X {
		for l, row := range xs {
			for p, v := range row {
				if v < 0 || h.free(mi, l, p) {
					continue
				}
				lo, hi := m.Bounds(v)
				restore = append(restore, saved{v, lo, hi})
				val := 0.0
				if cur.Proc[mi][l] == p {
					val = 1
				}
				m.SetBounds(v, val, val)
			}
		}
	}
	res, err := solver.Solve(ctx, m, solver.Options{TimeLimit: limit, Threads: max(opt.Threads, 1), Args: opt.Args, Start: x, Grace: 5 * time.Second})
	for i := len(restore) - 1; i >= 0; i-- {
		m.SetBounds(restore[i].v, restore[i].lo, restore[i].hi)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, math.Inf(1), nil
		}
		return nil, 0, fmt.Errorf("milp: improve: %s: %w", h.name, err)
	}
	if !res.Status.HasSolution() || res.FromStart {
		return nil, math.Inf(1), nil
	}
	next, err := f.Assignment(res.Values)
	if err != nil {
		return nil, math.Inf(1), nil
	}
	next.Priority = append([]int(nil), cur.Priority...)
	y := f.Start(next)
	if m.Check(y, 1e-6) != nil {
		return nil, math.Inf(1), nil
	}
	return next, y[f.L], nil
}

// neighbourhoods lists Improve's neighbourhoods for the incumbent a (its
// start vector x), in their fixed order.
func (f *Formulation) neighbourhoods(x []float64, a *space.Assignment) []neighbourhood {
	var out []neighbourhood
	M := len(f.X)
	for mi := range M {
		out = append(out, neighbourhood{name: "model " + f.sp.Models[mi].Name, free: func(m, _, _ int) bool { return m == mi }})
	}
	// Every boundary at once: the layers within band of a layer (in layer
	// order) on another processor, on any processor.
	const band = 3
	near := make([][]bool, M)
	for mi, procs := range a.Proc {
		near[mi] = make([]bool, len(procs))
		for l := range procs {
			for k := max(0, l-band); k <= min(len(procs)-1, l+band); k++ {
				if procs[k] != procs[l] {
					near[mi][l] = true
					break
				}
			}
		}
	}
	out = append(out, neighbourhood{name: fmt.Sprintf("boundaries ±%d", band), free: func(m, l, _ int) bool { return near[m][l] }})
	// The most loaded processor (the first of the most loaded on ties).
	b, worst := -1, -1.0
	for i, row := range f.loadRows {
		if f.loadProc[i] < 0 {
			continue
		}
		s := 0.0
		for _, t := range row {
			s += t.Coef * x[t.Var]
		}
		if s > worst {
			b, worst = f.loadProc[i], s
		}
	}
	if b >= 0 {
		for q := range f.sp.Platform.Processors {
			if q == b {
				continue
			}
			out = append(out, neighbourhood{
				name: "processors " + f.sp.Platform.Processors[b].Name + "+" + f.sp.Platform.Processors[q].Name,
				free: func(m, l, p int) bool {
					on := a.Proc[m][l]
					return (on == b || on == q) && (p == b || p == q)
				},
			})
		}
	}
	for m1 := range M {
		for m2 := m1 + 1; m2 < M; m2++ {
			out = append(out, neighbourhood{name: "models " + f.sp.Models[m1].Name + "+" + f.sp.Models[m2].Name, free: func(m, _, _ int) bool { return m == m1 || m == m2 }})
		}
	}
	// Leave out those that free nothing.
	kept := out[:0]
	for _, h := range out {
		if f.frees(h) {
			kept = append(kept, h)
		}
	}
	return kept
}

// frees reports whether h leaves some layer a choice: two of its
// placement variables free.
func (f *Formulation) frees(h neighbourhood) bool {
	for mi, xs := range f.X {
		for l, row := range xs {
			n := 0
			for p, v := range row {
				if v >= 0 && h.free(mi, l, p) {
					n++
				}
			}
			if n > 1 {
				return true
			}
		}
	}
	return false
}
