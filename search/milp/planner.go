package milp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/driver"
	"github.com/inlay-dev/inlay/search/space"
	"github.com/inlay-dev/inlay/solver"
)

// Options configure the planner.
type Options struct {
	// Start plans the warm start (the inlay planner); nil starts cold.
	Start plan.Planner
	// StartShare is the share of the budget the start planner gets
	// (default 0.25); the solver gets the rest.
	StartShare float64
	// NoDeadlines leaves the critical-path rows out.
	NoDeadlines bool
	// Budget, when set, replaces the request's budget (so that a bench can
	// give the MILP longer than the heuristics: "milp:budget=120s").
	Budget time.Duration
	// ImproveShare is the share of the solver's time that CBC's first
	// solve of the full MILP gets, and the most that the neighbourhood
	// search (Formulation.Improve) then takes from its incumbent (default
	// 1/3 each); CBC solves the full MILP again from the search's
	// incumbent for the rest. NoImprove leaves the search and the second
	// solve out: CBC gets all of it.
	ImproveShare float64
	NoImprove    bool
	// NoParallel keeps the solves one at a time. By default, where the
	// request allows two threads or more (req.Workers), after the first
	// solve CBC solves the full MILP beside the neighbourhood search, on
	// half of the threads, from the best incumbent so far (restarted when
	// the search improves it by enough, see restartBeside), until the
	// budget is spent, in place of the second solve (see improveAndProve).
	NoParallel bool
}

// ParseOptions reads the argument of "milp:...": "", or comma-separated
// options budget=DURATION, improve=on|off and parallel=on|off.
func ParseOptions(arg string) (Options, error) {
	var o Options
	if strings.TrimSpace(arg) == "" {
		return o, nil
	}
	for _, opt := range strings.Split(arg, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(opt), "=")
		switch {
		case ok && k == "budget":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return o, fmt.Errorf("milp: option budget=%q: want a positive duration such as 120s", v)
			}
			o.Budget = d
		case ok && k == "improve" && (v == "on" || v == "off"):
			o.NoImprove = v == "off"
		case ok && k == "parallel" && (v == "on" || v == "off"):
			o.NoParallel = v == "off"
		case ok && (k == "improve" || k == "parallel"):
			return o, fmt.Errorf("milp: option %s=%q: want on or off", k, v)
		default:
			return o, fmt.Errorf("milp: option %q: the options are budget=DURATION, improve=on|off and parallel=on|off", opt)
		}
	}
	return o, nil
}

// Planner is the "milp" planner: the MILP of Formulation, solved by CBC
// from the start planner's plan, within the request's budget.
type Planner struct{ opt Options }

var _ plan.Prover = (*Planner)(nil)

// New returns the planner.
func New(opt Options) *Planner {
	if opt.StartShare <= 0 || opt.StartShare >= 1 {
		opt.StartShare = 0.25
	}
	if opt.ImproveShare <= 0 || opt.ImproveShare >= 0.5 {
		opt.ImproveShare = 1.0 / 3
	}
	return &Planner{opt: opt}
}

// Name is "milp".
func (p *Planner) Name() string { return "milp" }

// Plan returns the plan of PlanProof.
func (p *Planner) Plan(ctx context.Context, req *plan.Request, eval plan.Evaluator) (*plan.Plan, error) {
	pl, _, err := p.PlanProof(ctx, req, eval)
	return pl, err
}

// PlanProof plans the request and proves a bound on every plan of it.
//
// The budget (req.Budget, else driver.DefaultBudget) is split: the start
// planner gets StartShare of it, CBC the rest as its time limit, on
// req.Workers threads (after its first solve, improveAndProve splits them
// between the neighbourhood search and a solve beside it). Cancelling ctx
// stops CBC, which returns its incumbent. Both the solver's plan and the
// start plan are scored by eval and the better one is returned, so the
// result is never worse than the start. The proof's ScaleBound is
// 1/Bound: no plan sustains more.
// Without CBC it returns solver.ErrNoCBC.
func (p *Planner) PlanProof(ctx context.Context, req *plan.Request, eval plan.Evaluator) (*plan.Plan, *plan.Proof, error) {
	if _, err := solver.Command(); err != nil {
		return nil, nil, fmt.Errorf("milp: %w", err)
	}
	began := time.Now()
	budget := req.Budget
	if p.opt.Budget > 0 {
		budget = p.opt.Budget
	}
	if budget <= 0 {
		budget = driver.DefaultBudget
	}
	sp, err := space.New(req)
	if err != nil {
		return nil, nil, err
	}
	var startPlan *plan.Plan
	var startAssign *space.Assignment
	if p.opt.Start != nil {
		sub := *req
		sub.Budget = time.Duration(float64(budget) * p.opt.StartShare)
		if sub.Evals > 0 && p.opt.Budget == 0 {
			sub.Budget = 0
		}
		startPlan, err = p.opt.Start.Plan(ctx, &sub, eval)
		if err != nil {
			return nil, nil, fmt.Errorf("milp: start planner %s: %w", p.opt.Start.Name(), err)
		}
		if startAssign, err = sp.FromPlan(startPlan); err != nil {
			return nil, nil, fmt.Errorf("milp: start plan: %w", err)
		}
	}
	f, err := Formulate(sp, FormulateOptions{Deadlines: !p.opt.NoDeadlines})
	if err != nil {
		return nil, nil, err
	}
	// CBC's default cuts and its variable neighbourhood search: the root
	// bound is the balance of the loads and does not move, so the gap is
	// the incumbent's. Side by side on two bench scenarios
	// (BenchmarkTighten, 25 CPU seconds each, one thread) the cuts found
	// better incumbents than no cuts (gaps 3.52 % and 4.97 % against
	// 3.56 % and 7.20 %), and the neighbourhood search better ones still
	// (2.50 % and 1.67 %).
	cbcArgs := []string{"-Vnd", "on"}
	opt := solver.Options{TimeLimit: max(budget-time.Since(began), time.Second), Threads: max(req.Workers, 1), Args: cbcArgs}
	// With a feasible start, CBC's first solve of the full MILP gets a
	// share of the time (its root LP gives the proven bound, its
	// heuristics a first improvement), the neighbourhood search at most as
	// much (Improve: fix-and-optimise on the same MILP, from CBC's
	// incumbent), and a second solve of the full MILP from the search's
	// incumbent the rest: with that incumbent CBC prunes enough of its
	// tree to raise the bound, or to prove the incumbent optimal. With two
	// threads or more, a full solve beside the search takes the second
	// solve's place (improveAndProve).
	improve := false
	solverTime := opt.TimeLimit
	if startAssign != nil {
		opt.Start = f.Start(startAssign)
		if !p.opt.NoImprove && f.Model.Check(opt.Start, 1e-6) == nil {
			improve = true
			opt.TimeLimit = max(time.Duration(float64(solverTime)*p.opt.ImproveShare), time.Second)
		}
	}
	opt.Grace = 20 * time.Second
	res, err := solver.Solve(ctx, f.Model, opt)
	if err != nil {
		if startPlan == nil {
			return nil, nil, fmt.Errorf("milp: %w", err)
		}
		// CBC could not run or gave nothing readable back (or Ctrl-C came
		// before it started): the start plan stands, nothing proven.
		p.keepStart(startPlan)
		if errors.Is(err, context.Canceled) {
			return startPlan, &plan.Proof{Solver: "cbc", Status: "interrupted", Objective: "max normalised load",
				Incumbent: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1), ScaleBound: math.Inf(1),
				Note: "interrupted before CBC ran: the start plan stands, nothing proven", Vars: f.Model.NumVars(), Rows: f.Model.NumRows(), Integers: f.Model.NumIntegers(),
				Seconds: time.Since(began).Seconds()}, nil
		}
		return startPlan, &plan.Proof{Solver: "cbc", Status: "no result", Objective: "max normalised load",
			Incumbent: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1), ScaleBound: math.Inf(1),
			Note: "CBC returned nothing within the budget and its grace period (" + strings.TrimSuffix(strings.TrimPrefix(err.Error(), "solver: "), ": ") + "): the start plan stands, nothing proven", Vars: f.Model.NumVars(), Rows: f.Model.NumRows(), Integers: f.Model.NumIntegers(),
			Seconds: time.Since(began).Seconds()}, nil
	}
	proof := &plan.Proof{Solver: "cbc", Status: res.Reason, Objective: "max normalised load",
		Incumbent: res.Objective, Bound: res.Bound, Gap: res.Gap, ScaleBound: math.Inf(1),
		Vars: f.Model.NumVars(), Rows: f.Model.NumRows(), Integers: f.Model.NumIntegers(), Seconds: res.Wall.Seconds()}
	switch {
	case res.Status == solver.Infeasible && f.Deadlines && len(f.Memory) == 0:
		proof.ScaleBound = 0
		proof.Note = "deadlines bind: no assignment keeps every group's critical path (at lower-bound costs) within its deadline, so no plan meets them"
	case res.Status == solver.Infeasible && len(f.Memory) > 0:
		proof.ScaleBound = 0
		proof.Note = "no assignment keeps the weights within the memory capacities"
		if f.Deadlines {
			proof.Note += " and every group's critical path (at lower-bound costs) within its deadline"
		}
		proof.Note += ", so no plan meets them"
	case res.Bound > 0 && !math.IsInf(res.Bound, 0):
		proof.ScaleBound = 1 / res.Bound
	}
	rootBound := res.RootBound && res.Status != solver.Optimal
	if res.FromStart {
		how := "stopped"
		if res.Killed {
			how = "was killed after ignoring the stop for its grace period"
		}
		proof.Note = joinNote(proof.Note, "CBC "+how+" before it reported an incumbent: the start plan is the incumbent")
	}
	if f.PeakFallback {
		proof.Note = joinNote(proof.Note, "the estimator gives no per-layer lower bounds: costs are FLOPs at peak")
	}
	if !res.Status.HasSolution() {
		if startPlan == nil {
			return nil, proof, fmt.Errorf("milp: no plan found (%s)", res.Reason)
		}
		p.keepStart(startPlan)
		return startPlan, proof, nil
	}
	a, err := f.Assignment(res.Values)
	if err != nil {
		return nil, nil, err
	}
	if left := budget - time.Since(began); improve && res.Status == solver.Stopped && ctx.Err() == nil && left >= 2*time.Second {
		if startAssign != nil {
			a.Priority = append([]int(nil), startAssign.Priority...)
		}
		if f.Model.Check(f.Start(a), 1e-6) == nil {
			a, rootBound = p.improveAndProve(ctx, f, a, res.Objective, proof, rootBound, improveBudget{
				end: began.Add(budget), search: time.Duration(float64(solverTime) * p.opt.ImproveShare),
			}, max(req.Workers, 1), cbcArgs)
		}
	}
	if rootBound {
		proof.Note = joinNote(proof.Note, "the bound is the root LP relaxation's: CBC stopped before branch and bound improved on it")
	}
	if startAssign != nil {
		a.Priority = append([]int(nil), startAssign.Priority...)
	}
	if note := f.bindingDeadlines(f.Start(a)); note != "" {
		proof.Note = joinNote(proof.Note, note)
	}
	mine, err := sp.Plan(p.Name(), a)
	if err != nil {
		return nil, nil, err
	}
	if startPlan == nil {
		return mine, proof, nil
	}
	if len(f.Memory) > 0 {
		// The start planner's search scores plans over a capacity 0, but it
		// returns one when it found nothing that fits; the MILP's plan
		// keeps within them at the least bytes a data type allows.
		startErr, mineErr := startPlan.Validate(req.Workload, req.Platform), mine.Validate(req.Workload, req.Platform)
		switch {
		case startErr != nil && mineErr == nil:
			proof.Note = joinNote(proof.Note, "the start plan is over a memory capacity ("+strings.TrimPrefix(startErr.Error(), "plan: ")+") and is not kept")
			return mine, proof, nil
		case startErr == nil && mineErr != nil:
			p.keepStart(startPlan)
			proof.Note = joinNote(proof.Note, "the solver's plan is over a memory capacity in its data types ("+strings.TrimPrefix(mineErr.Error(), "plan: ")+"): the start plan is kept")
			return startPlan, proof, nil
		}
	}
	// Ctrl-C ends the search, not the choice between its two plans: both
	// are scored even when ctx is cancelled, so the incumbent comes back.
	judge := context.WithoutCancel(ctx)
	ms, err := eval.Evaluate(judge, mine)
	if err != nil {
		return nil, nil, err
	}
	ss, err := eval.Evaluate(judge, startPlan)
	if err != nil {
		return nil, nil, err
	}
	if ss.Scale > ms.Scale {
		p.keepStart(startPlan)
		proof.Note = joinNote(proof.Note, fmt.Sprintf("the start plan simulates better (%.4g× against %.4g×) and is kept", ss.Scale, ms.Scale))
		return startPlan, proof, nil
	}
	return mine, proof, nil
}

// improveBudget is the time of the steps after CBC's first solve: all of
// them end by end, the neighbourhood search takes at most search.
type improveBudget struct {
	end    time.Time
	search time.Duration
}

// improveAndProve runs the steps after CBC's first solve, from its
// incumbent a (load first, feasible) and the proof of that solve.
//
// On one thread: the neighbourhood search (Improve) for at most b.search,
// then CBC's second solve of the full MILP from the search's incumbent
// until b.end.
//
// With two threads or more (and NoParallel unset), the search and a full
// solve run side by side until b.end, each on one CBC process with half of
// the threads: the full solve (on a copy of the model) starts from a, and
// when the search takes a better incumbent it is stopped, its result
// taken, and started again from the best incumbent so far, unless it has
// run for besideFresh and the improvement is small against its gap
// (restartBeside). The search runs until its local optimum or b.end; when
// it ends early and the solve beside it started from an older incumbent,
// a second full solve from the best one takes the search's threads. So
// the proof from each new incumbent starts at once instead of after the
// search's share of the time (on bench scenario 1, CBC needed 50 s of one thread to prove the
// search's incumbent optimal, which it had found 11 s into a 38 s
// search), and the search gets the time the second solve had. One CBC
// process per core rather than one with more threads: from that incumbent
// one thread proved it in 50 s, two threads had not within 52 s
// (BenchmarkImproveFirst).
//
// The proof takes the best incumbent and the tightest bound of all the
// solves (each a bound on the full MILP); when a full solve proves
// optimality the search is stopped. It returns the incumbent and whether
// the bound is still a root LP's.
func (p *Planner) improveAndProve(ctx context.Context, f *Formulation, a *space.Assignment, first float64, proof *plan.Proof, rootBound bool, b improveBudget, threads int, args []string) (*space.Assignment, bool) {
	t0, base := time.Now(), proof.Seconds
	parallel := !p.opt.NoParallel && threads >= 2
	chainCtx, cancelChain := context.WithCancel(ctx)
	defer cancelChain()
	var beside *besideSolve
	newBeside := func(threads int) *besideSolve {
		if left := time.Until(b.end); left >= 2*time.Second && chainCtx.Err() == nil {
			return solveBeside(chainCtx, f.Model.Clone(), f.Load(a), solver.Options{TimeLimit: left, Threads: threads,
				Args: args, Start: f.Start(a), Grace: 20 * time.Second}, cancelChain)
		}
		return nil
	}
	// join waits for the full solve s (stopped first when stop) and takes
	// its incumbent and bound into the proof.
	join := func(s *besideSolve, stop bool, who string) {
		if s == nil {
			return
		}
		if stop {
			s.cancel()
		}
		res, err := s.wait()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
				proof.Note = joinNote(proof.Note, who+" gave nothing back ("+strings.TrimPrefix(err.Error(), "solver: ")+")")
			}
			return
		}
		a, rootBound = f.merge(res, a, proof, rootBound, who)
	}
	const besideWho = "a full CBC solve beside the search"
	restarts, kept := 0, 0
	// take makes c, of load, the incumbent when it is better than a. The
	// sub-MILPs' bounds are dropped: the gap stays the incumbent's against
	// the full MILP's bound.
	take := func(c *space.Assignment, load float64) {
		if load < f.Load(a)*(1-1e-9) {
			a = c
			proof.Incumbent = load
			if bound := proof.Bound; !math.IsInf(bound, 0) && !math.IsNaN(bound) {
				proof.Gap = math.Max(0, load-bound) / math.Max(load, 1e-12)
			}
		}
	}
	opt := ImproveOptions{Budget: min(time.Until(b.end), b.search), Threads: threads, Args: args}
	if parallel {
		opt.Budget, opt.Threads = time.Until(b.end), threads-threads/2
		opt.Improved = func(c *space.Assignment, load float64) {
			take(c, load)
			if beside != nil && !restartBeside(time.Since(beside.started), beside.from, f.Load(a), proof.Bound) {
				kept++
				return
			}
			if beside != nil {
				restarts++
			}
			join(beside, true, besideWho)
			beside = newBeside(threads / 2)
		}
		beside = newBeside(threads / 2)
	}
	better, st, err := f.Improve(chainCtx, a, opt)
	if err != nil {
		proof.Note = joinNote(proof.Note, "the neighbourhood search stopped on an error ("+strings.TrimPrefix(err.Error(), "milp: ")+")")
	}
	if better != nil && st.Load < first*(1-1e-9) {
		proof.Note = joinNote(proof.Note, fmt.Sprintf("the neighbourhood search then lowered the incumbent from %.6g to %.6g (%d of %d sub-MILPs taken; the bound is the full MILP's)", first, st.Load, st.Improved, st.Solves))
		take(better, st.Load)
	}
	if parallel {
		// The search is over (its local optimum, or the end). When the
		// solve beside it started from an incumbent the search has since
		// lowered, a second full solve from the best one takes the search's
		// threads for the time left; the two run side by side, and the
		// first to prove optimality stops the other.
		var fresh *besideSolve
		if beside != nil && f.Load(a) < beside.from*(1-1e-9) {
			fresh = newBeside(threads - threads/2)
		}
		join(beside, false, besideWho)
		join(fresh, false, "a full CBC solve from the search's last incumbent")
		if kept > 0 {
			proof.Note = joinNote(proof.Note, fmt.Sprintf("the solve beside the search was restarted from %d of the search's better incumbents and kept running through %d small improvements", restarts, kept))
		}
		proof.Seconds = math.Max(proof.Seconds, base+time.Since(t0).Seconds())
		return a, rootBound
	}
	proof.Seconds += time.Since(t0).Seconds()
	if left := time.Until(b.end); ctx.Err() == nil && left >= 2*time.Second {
		a, rootBound = p.solveAgain(ctx, f, a, proof, rootBound, left, threads, args)
	}
	return a, rootBound
}

// Restarting the solve beside the search throws its branch-and-bound tree
// away. besideFresh and besideShare say when that is worth it.
const (
	// besideFresh: a solve younger than this (still in its root LP and
	// cuts on the bench's scenarios) is restarted from every better
	// incumbent.
	besideFresh = 5 * time.Second
	// besideShare: an older one only when the new incumbent closes at
	// least this share of the gap it started with.
	besideShare = 0.25
)

// restartBeside says whether a solve beside the search that has run for
// ran, from an incumbent of load from, is restarted from a better one of
// load, against the bound so far. With the incumbent lowered by δ, CBC's
// tree prunes the nodes whose bound lies within δ of the old incumbent;
// when δ is small against the gap that is a small share of the open
// nodes, and the solve's progress is worth more.
func restartBeside(ran time.Duration, from, load, bound float64) bool {
	gap := from - bound
	if ran < besideFresh || math.IsNaN(bound) || math.IsInf(bound, 0) || gap <= 0 {
		return true
	}
	return from-load >= besideShare*gap
}

// besideSolve is a CBC solve running in its own goroutine, started at
// started from an incumbent of load from.
type besideSolve struct {
	done    chan struct{}
	res     *solver.Result
	err     error
	cancel  context.CancelFunc
	started time.Time
	from    float64
}

// solveBeside starts solver.Solve(ctx, m, opt) in a goroutine and calls
// onOptimal when it proves optimality; from is the load of opt.Start. m
// must not be changed while it runs.
func solveBeside(ctx context.Context, m *solver.Model, from float64, opt solver.Options, onOptimal func()) *besideSolve {
	ctx, cancel := context.WithCancel(ctx)
	s := &besideSolve{done: make(chan struct{}), cancel: cancel, started: time.Now(), from: from}
	go func() {
		defer close(s.done)
		s.res, s.err = solver.Solve(ctx, m, opt)
		if s.err == nil && s.res.Status == solver.Optimal {
			onOptimal()
		}
	}()
	return s
}

// wait waits for the solve to end and returns its result.
func (s *besideSolve) wait() (*solver.Result, error) {
	<-s.done
	s.cancel()
	return s.res, s.err
}

// solveAgain has CBC solve the full MILP once more, from the incumbent a,
// within limit, and updates the proof (merge). It returns the incumbent
// and whether the bound is still a root LP's.
func (p *Planner) solveAgain(ctx context.Context, f *Formulation, a *space.Assignment, proof *plan.Proof, rootBound bool, limit time.Duration, threads int, args []string) (*space.Assignment, bool) {
	t0 := time.Now()
	res, err := solver.Solve(ctx, f.Model, solver.Options{TimeLimit: limit, Threads: threads, Args: args, Start: f.Start(a), Grace: 20 * time.Second})
	proof.Seconds += time.Since(t0).Seconds()
	if err != nil {
		proof.Note = joinNote(proof.Note, "CBC's second solve gave nothing back ("+strings.TrimPrefix(err.Error(), "solver: ")+")")
		return a, rootBound
	}
	return f.merge(res, a, proof, rootBound, "CBC's second solve (from that incumbent)")
}

// merge updates the proof with a further solve res of the full MILP,
// made by who, against the incumbent a: the better incumbent, the tighter
// bound (each solve's is a bound on the full MILP), the gap between them,
// "optimal" when res proves it. It returns the incumbent and whether the
// bound is still a root LP's.
func (f *Formulation) merge(res *solver.Result, a *space.Assignment, proof *plan.Proof, rootBound bool, who string) (*space.Assignment, bool) {
	inc := f.Start(a)[f.L]
	if res.Status.HasSolution() && !res.FromStart && res.Objective < inc*(1-1e-9) {
		if b, err := f.Assignment(res.Values); err == nil {
			b.Priority = append([]int(nil), a.Priority...)
			if y := f.Start(b); f.Model.Check(y, 1e-6) == nil && y[f.L] < inc {
				proof.Note = joinNote(proof.Note, fmt.Sprintf("%s lowered the incumbent to %.6g", who, y[f.L]))
				a, inc = b, y[f.L]
			}
		}
	}
	bound := proof.Bound
	switch {
	case res.Status == solver.Optimal:
		// Proven optimal: the bound is the optimum (CBC's own objective,
		// at least as low as the incumbent rebuilt from it).
		if opt := math.Min(res.Objective, inc); math.IsNaN(bound) || opt > bound {
			bound = opt
		}
		proof.Status = res.Reason
		rootBound = false
	case res.Status.HasSolution() && !math.IsInf(res.Bound, 0) && !math.IsNaN(res.Bound) && (math.IsNaN(bound) || res.Bound > bound):
		bound = res.Bound
		rootBound = res.RootBound
	}
	if !math.IsNaN(bound) && (math.IsNaN(proof.Bound) || bound > proof.Bound) {
		if math.IsNaN(proof.Bound) || fmt.Sprintf("%.6g", bound) != fmt.Sprintf("%.6g", proof.Bound) {
			// A rise below the note's six digits is taken, not told.
			proof.Note = joinNote(proof.Note, fmt.Sprintf("%s raised the bound from %.6g to %.6g", who, proof.Bound, bound))
		}
		proof.Bound = bound
		if bound > 0 {
			proof.ScaleBound = 1 / bound
		}
	}
	proof.Incumbent = inc
	if !math.IsNaN(proof.Bound) && !math.IsInf(proof.Bound, 0) {
		proof.Gap = math.Max(0, inc-proof.Bound) / math.Max(inc, 1e-12)
	}
	return a, rootBound
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// bindingDeadlines names the groups whose critical path at lower-bound
// costs, in the solution, is within 1% of the deadline.
func (f *Formulation) bindingDeadlines(values []float64) string {
	if !f.Deadlines {
		return ""
	}
	cp := make([]float64, len(f.sp.W.Groups))
	for _, av := range f.aux {
		if av.kind == auxFinish {
			cp[av.g] = math.Max(cp[av.g], values[av.v])
		}
	}
	note := ""
	for gi, g := range f.sp.W.Groups {
		if d := g.Deadline.Seconds(); d > 0 && cp[gi] >= 0.99*d {
			note = joinNote(note, fmt.Sprintf("deadline of group %q binds (critical path %.3g ms of %.3g ms at lower-bound costs)", g.Name, 1e3*cp[gi], 1e3*d))
		}
	}
	return note
}

// keepStart names the start plan, kept as this planner's answer, as
// milp's; what its own planner recorded stays, marked as the start's.
func (p *Planner) keepStart(sp *plan.Plan) {
	from := sp.Planner
	sp.Planner = p.Name()
	for i := range sp.Decisions {
		sp.Decisions[i].Step = "kept from the start plan (" + from + "): " + sp.Decisions[i].Step
	}
}
