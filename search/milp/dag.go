package milp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/search/heft"
	"github.com/inlay-dev/inlay/solver"
)

// Proof is what the solver proved about a plan or schedule.
type Proof struct {
	// Status is how the solve ended (optimal, stopped on the time limit or
	// an interruption, ...).
	Status solver.Status
	// Reason is the solver's word for how it stopped.
	Reason string
	// Incumbent is the MILP objective of the best solution found.
	Incumbent float64
	// Bound is the best proven bound on the objective: a lower bound on
	// the makespan, or on the maximum normalised load.
	Bound float64
	// Gap is the relative gap between Incumbent and Bound (0 when proven
	// optimal).
	Gap float64
	// Vars, Rows and Integers give the formulation's size.
	Vars, Rows, Integers int
	// Wall is how long the solver ran.
	Wall time.Duration
}

// DAGOptions configure ScheduleDAG.
type DAGOptions struct {
	// TimeLimit bounds the solve (0: 60 s).
	TimeLimit time.Duration
	// Threads is the solver's thread count (0: 1).
	Threads int
	// Start is a schedule to start from (a MIP start); nil for none. It
	// must be a valid schedule of the problem; its makespan also caps the
	// horizon, which keeps the big-M constants small.
	Start *heft.Schedule
	// GlobalBigM uses the horizon H as every disjunction's big-M and
	// leaves the start times unbounded below H (the looser form, kept for
	// comparison: BenchmarkDAGBigM).
	GlobalBigM bool
	// Args are extra CBC options (solver.Options.Args).
	Args []string
}

// ScheduleDAG minimises the makespan of a task graph exactly, with a
// disjunctive formulation:
//
//	x[t,p] ∈ {0,1}: task t runs on p (Σ_p x[t,p] = 1, 0 where it cannot);
//	S[t] ≥ 0 its start, F[t] = S[t] + Σ_p cost[t,p]·x[t,p], C ≥ F[t];
//	edge e = (a→b): S[b] ≥ F[a] + Σ_{p≠q} comm(e,p,q)·w[e,p,q],
//	  w[e,p,q] ≥ x[a,p] + x[b,q] − 1 (a on p, b on q);
//	unordered pairs {a,b} with no path between them: y[a,b] ∈ {0,1} (a first)
//	  and s[a,b] ≥ x[a,p] + x[b,p] − 1 (same processor), then
//	  S[b] ≥ F[a] − M[a,b]·(2 − y − s) and S[a] ≥ F[b] − M[b,a]·(1 + y − s);
//	C ≥ Σ_t cost[t,p]·x[t,p] on each p (load cut).
//
// H is the horizon: the start schedule's makespan, else the serial one;
// C ≤ H. Each big-M is the least that the data allow: with head[t] the
// longest path of least task costs into t (no task starts earlier) and
// tail[t] the one out of t after it finishes (no task finishes later than
// H − tail[t]), S[t] ∈ [head[t], H − tail[t] − least cost of t] and
// M[a,b] = H − tail[a] − head[b] ≥ F[a] − S[b] in every schedule within
// the horizon. The
// pairs linked by a path are already ordered by the precedence rows. The
// returned schedule is rebuilt from the solution's assignment and its
// order on each processor as the earliest schedule with that order (never
// longer than the solver's). Processors must have one lane each.
func ScheduleDAG(ctx context.Context, pb *heft.Problem, opt DAGOptions) (*heft.Schedule, Proof, error) {
	n, P := len(pb.Cost), pb.Procs
	for _, l := range pb.Lanes {
		if l > 1 {
			return nil, Proof{}, errors.New("milp: task graphs with processors of several lanes are not supported")
		}
	}
	if n == 0 || P == 0 {
		return nil, Proof{}, errors.New("milp: empty task graph")
	}
	comm := func(e, p, q int) float64 {
		if pb.Comm == nil || p == q {
			return 0
		}
		return pb.Comm(e, p, q)
	}
	pred := make([][]int, n)
	for i, e := range pb.Edges {
		pred[e.To] = append(pred[e.To], i)
	}
	order, err := heft.TopoOrder(n, pb.Edges)
	if err != nil {
		return nil, Proof{}, heft.ErrCycle
	}
	// Horizon: the start's makespan, else everything in sequence on the
	// cheapest processor of each task plus every communication.
	H := 0.0
	for t := range n {
		best := math.Inf(1)
		for p := range P {
			best = math.Min(best, pb.Cost[t][p])
		}
		if math.IsInf(best, 1) {
			return nil, Proof{}, fmt.Errorf("milp: task %d runs on no processor", t)
		}
		H += best
	}
	for e := range pb.Edges {
		worst := 0.0
		for p := range P {
			for q := range P {
				worst = math.Max(worst, comm(e, p, q))
			}
		}
		H += worst
	}
	if opt.Start != nil {
		if err := checkSchedule(pb, opt.Start); err != nil {
			return nil, Proof{}, fmt.Errorf("milp: start schedule: %w", err)
		}
		H = math.Min(H, opt.Start.Makespan)
	}
	H *= 1 + 1e-9

	// Least costs, heads and tails (communication may be 0: both ends on
	// one processor).
	least := make([]float64, n)
	for t := range n {
		least[t] = math.Inf(1)
		for p := range P {
			least[t] = math.Min(least[t], pb.Cost[t][p])
		}
	}
	head, tail := make([]float64, n), make([]float64, n)
	for _, t := range order {
		for _, e := range pred[t] {
			a := pb.Edges[e].From
			head[t] = math.Max(head[t], head[a]+least[a])
		}
	}
	for i := n - 1; i >= 0; i-- {
		a := order[i]
		for _, e := range pb.Edges {
			if e.From == a {
				tail[a] = math.Max(tail[a], least[e.To]+tail[e.To])
			}
		}
	}
	critical := 0.0
	for t := range n {
		critical = math.Max(critical, head[t]+least[t]+tail[t])
	}
	bigM := func(a, b int) float64 {
		if opt.GlobalBigM {
			return H
		}
		return math.Max(0, H-tail[a]-head[b])
	}

	m := solver.NewModel(solver.Minimize)
	C := m.AddVar(0, H, 1)
	if !opt.GlobalBigM {
		m.SetBounds(C, math.Min(critical, H), H)
	}
	x := make([][]solver.Var, n)
	S := make([]solver.Var, n)
	for t := range n {
		x[t] = make([]solver.Var, P)
		row := []solver.Term{}
		for p := range P {
			x[t][p] = m.AddBinary(0)
			if math.IsInf(pb.Cost[t][p], 1) {
				m.SetBounds(x[t][p], 0, 0)
			}
			row = append(row, solver.Term{Var: x[t][p], Coef: 1})
		}
		m.AddRow(1, 1, row...)
		S[t] = m.AddVar(0, H, 0)
		if !opt.GlobalBigM {
			m.SetBounds(S[t], head[t], math.Max(head[t], H-tail[t]-least[t]))
		}
	}
	// finish(t) terms: S[t] + Σ cost·x
	finish := func(t int, sign float64) []solver.Term {
		terms := []solver.Term{{Var: S[t], Coef: sign}}
		for p := range P {
			if c := pb.Cost[t][p]; !math.IsInf(c, 1) && c != 0 {
				terms = append(terms, solver.Term{Var: x[t][p], Coef: sign * c})
			}
		}
		return terms
	}
	for t := range n {
		// C − F[t] ≥ 0
		m.AddRow(0, solver.Inf, append(finish(t, -1), solver.Term{Var: C, Coef: 1})...)
	}
	for p := range P {
		terms := []solver.Term{{Var: C, Coef: 1}}
		for t := range n {
			if c := pb.Cost[t][p]; !math.IsInf(c, 1) && c != 0 {
				terms = append(terms, solver.Term{Var: x[t][p], Coef: -c})
			}
		}
		m.AddRow(0, solver.Inf, terms...)
	}
	type pairVar struct {
		e, p, q int
		v       solver.Var
	}
	var ws []pairVar
	for e, ed := range pb.Edges {
		a, b := ed.From, ed.To
		// S[b] − F[a] − Σ comm·w ≥ 0
		terms := append(finish(a, -1), solver.Term{Var: S[b], Coef: 1})
		for p := range P {
			for q := range P {
				c := comm(e, p, q)
				if p == q || c == 0 || math.IsInf(pb.Cost[a][p], 1) || math.IsInf(pb.Cost[b][q], 1) {
					continue
				}
				w := m.AddVar(0, 1, 0)
				m.AddRow(-1, solver.Inf, solver.Term{Var: w, Coef: 1}, solver.Term{Var: x[a][p], Coef: -1}, solver.Term{Var: x[b][q], Coef: -1})
				terms = append(terms, solver.Term{Var: w, Coef: -c})
				ws = append(ws, pairVar{e, p, q, w})
			}
		}
		m.AddRow(0, solver.Inf, terms...)
	}
	reach := reachability(n, pb.Edges, order)
	type pair struct {
		a, b int
		y, s solver.Var
	}
	var pairs []pair
	for a := range n {
		for b := a + 1; b < n; b++ {
			if reach[a][b] || reach[b][a] {
				continue
			}
			shared := false
			for p := range P {
				if !math.IsInf(pb.Cost[a][p], 1) && !math.IsInf(pb.Cost[b][p], 1) {
					shared = true
				}
			}
			if !shared {
				continue
			}
			y, s := m.AddBinary(0), m.AddVar(0, 1, 0)
			for p := range P {
				m.AddRow(-1, solver.Inf, solver.Term{Var: s, Coef: 1}, solver.Term{Var: x[a][p], Coef: -1}, solver.Term{Var: x[b][p], Coef: -1})
			}
			// S[b] − F[a] − M·y − M·s ≥ −2M
			Mab, Mba := bigM(a, b), bigM(b, a)
			m.AddRow(-2*Mab, solver.Inf, append(finish(a, -1), solver.Term{Var: S[b], Coef: 1}, solver.Term{Var: y, Coef: -Mab}, solver.Term{Var: s, Coef: -Mab})...)
			// S[a] − F[b] + M·y − M·s ≥ −M
			m.AddRow(-Mba, solver.Inf, append(finish(b, -1), solver.Term{Var: S[a], Coef: 1}, solver.Term{Var: y, Coef: Mba}, solver.Term{Var: s, Coef: -Mba})...)
			pairs = append(pairs, pair{a, b, y, s})
		}
	}

	var start []float64
	if opt.Start != nil {
		start = make([]float64, m.NumVars())
		st := opt.Start
		start[C] = st.Makespan
		for t := range n {
			start[x[t][st.Slots[t].Proc]] = 1
			start[S[t]] = st.Slots[t].Start
		}
		for _, w := range ws {
			if st.Slots[pb.Edges[w.e].From].Proc == w.p && st.Slots[pb.Edges[w.e].To].Proc == w.q {
				start[w.v] = 1
			}
		}
		for _, pr := range pairs {
			if st.Slots[pr.a].Start <= st.Slots[pr.b].Start {
				start[pr.y] = 1
			}
			if st.Slots[pr.a].Proc == st.Slots[pr.b].Proc {
				start[pr.s] = 1
			}
		}
	}
	limit := opt.TimeLimit
	if limit <= 0 {
		limit = 60 * time.Second
	}
	res, err := solver.Solve(ctx, m, solver.Options{TimeLimit: limit, Threads: opt.Threads, Start: start, Args: opt.Args})
	if err != nil {
		return nil, Proof{}, err
	}
	proof := Proof{Status: res.Status, Reason: res.Reason, Incumbent: res.Objective, Bound: res.Bound, Gap: res.Gap,
		Vars: m.NumVars(), Rows: m.NumRows(), Integers: m.NumIntegers(), Wall: res.Wall}
	if !res.Status.HasSolution() {
		if opt.Start != nil {
			// The solver found nothing better to report: the start stands,
			// with whatever bound was proven.
			return opt.Start, proof, nil
		}
		return nil, proof, fmt.Errorf("milp: no schedule found (%s)", res.Reason)
	}
	proc := make([]int, n)
	for t := range n {
		proc[t] = -1
		for p := range P {
			if res.Value(x[t][p]) > 0.5 {
				proc[t] = p
			}
		}
		if proc[t] < 0 {
			return nil, proof, fmt.Errorf("milp: solution leaves task %d unassigned", t)
		}
	}
	starts := make([]float64, n)
	for t := range n {
		starts[t] = res.Value(S[t])
	}
	sched := rebuild(pb, proc, starts, order, pred, comm)
	if opt.Start != nil && opt.Start.Makespan < sched.Makespan {
		sched = opt.Start // never worse than the start (rounding in the solver's output)
	}
	return sched, proof, nil
}

// rebuild turns an assignment and the solver's start times into an exact
// schedule: tasks on each processor keep the solver's order (by start,
// ties by topological position) and start as early as precedence,
// communication and that order allow.
func rebuild(pb *heft.Problem, proc []int, starts []float64, order []int, pred [][]int, comm func(e, p, q int) float64) *heft.Schedule {
	n := len(proc)
	pos := make([]int, n)
	for i, t := range order {
		pos[t] = i
	}
	seq := append([]int(nil), order...)
	sort.SliceStable(seq, func(i, j int) bool {
		a, b := seq[i], seq[j]
		if starts[a] != starts[b] {
			return starts[a] < starts[b]
		}
		return pos[a] < pos[b]
	})
	// Tasks in start order are a valid topological order whenever the
	// solver's starts respect precedence (they do, up to rounding; ties
	// fall back to the topological position). Re-sort defensively.
	done := make([]bool, n)
	var sorted []int
	for len(sorted) < n {
		for _, t := range seq {
			if done[t] {
				continue
			}
			ready := true
			for _, e := range pred[t] {
				if !done[pb.Edges[e].From] {
					ready = false
					break
				}
			}
			if ready {
				done[t] = true
				sorted = append(sorted, t)
				break
			}
		}
	}
	free := make([]float64, pb.Procs)
	s := &heft.Schedule{Slots: make([]heft.Slot, n), Rank: make([]float64, n), Order: sorted}
	for i, t := range sorted {
		p := proc[t]
		st := free[p]
		for _, e := range pred[t] {
			a := pb.Edges[e].From
			st = math.Max(st, s.Slots[a].Finish+comm(e, proc[a], p))
		}
		fin := st + pb.Cost[t][p]
		s.Slots[t] = heft.Slot{Proc: p, Start: st, Finish: fin}
		s.Rank[t] = float64(n - i)
		free[p] = fin
		s.Makespan = math.Max(s.Makespan, fin)
	}
	return s
}

// checkSchedule verifies precedence with communication, no overlap on a
// processor, and the makespan.
func checkSchedule(pb *heft.Problem, s *heft.Schedule) error {
	return VerifySchedule(pb, s, 1e-9)
}

// VerifySchedule checks a schedule independently of how it was made: every
// task on a processor that can run it for exactly its cost, every edge's
// consumer starting no earlier than its producer's finish plus the
// communication between their processors, no two tasks overlapping on one
// single-lane processor, and Makespan the latest finish. tol is an
// absolute tolerance.
func VerifySchedule(pb *heft.Problem, s *heft.Schedule, tol float64) error {
	n := len(pb.Cost)
	if len(s.Slots) != n {
		return fmt.Errorf("%d slots for %d tasks", len(s.Slots), n)
	}
	last := 0.0
	for t, sl := range s.Slots {
		if sl.Proc < 0 || sl.Proc >= pb.Procs {
			return fmt.Errorf("task %d on processor %d of %d", t, sl.Proc, pb.Procs)
		}
		c := pb.Cost[t][sl.Proc]
		if math.IsInf(c, 1) {
			return fmt.Errorf("task %d on processor %d, which cannot run it", t, sl.Proc)
		}
		if sl.Start < -tol || math.Abs(sl.Finish-sl.Start-c) > tol {
			return fmt.Errorf("task %d: [%g, %g] for cost %g", t, sl.Start, sl.Finish, c)
		}
		last = math.Max(last, sl.Finish)
	}
	if math.Abs(last-s.Makespan) > tol {
		return fmt.Errorf("makespan %g, latest finish %g", s.Makespan, last)
	}
	for e, ed := range pb.Edges {
		a, b := s.Slots[ed.From], s.Slots[ed.To]
		c := 0.0
		if pb.Comm != nil && a.Proc != b.Proc {
			c = pb.Comm(e, a.Proc, b.Proc)
		}
		if b.Start < a.Finish+c-tol {
			return fmt.Errorf("edge %d (%d -> %d): starts at %g before %g (finish %g + communication %g)", e, ed.From, ed.To, b.Start, a.Finish+c, a.Finish, c)
		}
	}
	for a := range n {
		for b := a + 1; b < n; b++ {
			sa, sb := s.Slots[a], s.Slots[b]
			if sa.Proc == sb.Proc && sa.Start < sb.Finish-tol && sb.Start < sa.Finish-tol && sa.Finish > sa.Start && sb.Finish > sb.Start {
				return fmt.Errorf("tasks %d [%g, %g] and %d [%g, %g] overlap on processor %d", a, sa.Start, sa.Finish, b, sb.Start, sb.Finish, sa.Proc)
			}
		}
	}
	return nil
}

// reachability returns reach[a][b]: a path a → … → b exists.
func reachability(n int, edges []heft.Edge, order []int) [][]bool {
	succ := make([][]int, n)
	for _, e := range edges {
		succ[e.From] = append(succ[e.From], e.To)
	}
	reach := make([][]bool, n)
	for i := len(order) - 1; i >= 0; i-- {
		t := order[i]
		reach[t] = make([]bool, n)
		for _, s := range succ[t] {
			reach[t][s] = true
			for u, r := range reach[s] {
				if r {
					reach[t][u] = true
				}
			}
		}
	}
	return reach
}
