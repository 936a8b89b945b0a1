package adapt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/solver"
)

// LPOptions configure LPBound. The zero value uses the defaults.
type LPOptions struct {
	// Step is the length of the time grid's intervals in seconds (0:
	// 900).
	Step float64
	// Window is how long after its release each job's work is tied to
	// the cluster's capacity, in seconds (0: 8 hours); work later than
	// that is free (and counted at the window's end).
	Window float64
	// Groups is how many runs of a job's progress get their own rates
	// (0: 1); more is tighter and larger (on Sia's Philly files 4 groups
	// moved the bound by under 5 % and took 10–30 times as long).
	Groups int
	// Solve is the LP solver (nil: solver.Solve).
	Solve func(context.Context, *solver.Model, solver.Options) (*solver.Result, error)
	// TimeLimit for the solve (0: 120 s).
	TimeLimit time.Duration
	// MaxVars bounds the LP's size (0: 300,000 variables); a larger one
	// is not built and ErrLPTooLarge comes back.
	MaxVars int
}

// ErrLPTooLarge says the LP would exceed LPOptions.MaxVars.
var ErrLPTooLarge = errors.New("LP too large")

// LPBound is a proven lower bound, in hours, on the average JCT any
// policy achieves in this simulator on jobs (mixed: mixed-type gangs
// allowed), from a time-indexed linear relaxation solved with CBC. It is
// never below LowerBound, whose per-job bound it keeps as a constraint.
//
// Units of work. Each job j's progress splits into stretches s of
// constant statistical efficiency; R_s bounds its goodput on any
// allocation there (rates). Measure work as w = ∫ dp/R_s: j needs
// W_j = minRun(j), and since its goodput never exceeds R_s it does at most
// one unit a second. On a single-type option a (a GPU type and count) its
// goodput is at most u_as, so it does at most σ_a = max_s u_as/R_s units a
// second there; in a mixed gang each GPU of type t adds at most
// φ_t = max_s g_ts/R_s units a second (rates' per-GPU bound). The maxima
// over s make both hold wherever the job is in its progress. (With
// Groups > 1 the stretches are cut into runs, each with its own work and
// maxima over its own stretches, and each run must be completed: the
// order of the runs is relaxed away.)
//
// Time splits into intervals [s_k, e_k) of Step seconds. Job j is
// released at r_j: its first round at or after its arrival plus its
// model's start-up delay (every job starts once and makes no progress
// before). For each job and interval the LP has x_jak, the seconds j runs
// on option a in interval k, and y_jtk, the GPU-seconds of type t it runs
// in mixed gangs; its work there is w_jk = Σ_a σ_a x_jak + Σ_t φ_t y_jtk.
// Any schedule gives a feasible point:
//
//	Σ_a x_jak ≤ L_jk and w_jk ≤ L_jk, L_jk = e_k − max(s_k, r_j) (time
//	    after the release: one allocation at a time, at most one unit a second);
//	Σ_j (Σ_{a on t} n_a x_jak + y_jtk) ≤ G_t (e_k − s_k) (capacity per type);
//	Σ_k w_jk + o_j = W_j (the job completes; o_j is its work after its
//	    window's end D_j = r_j + Window, on which no capacity binds).
//
// Completion (mean busy time). j's units are done at a rate ρ(τ) ≤ 1 with
// ∫ρ = W_j, all before C_j; its mean busy time M_j = ∫τρ/W_j is at most
// C_j − W_j/2 (the most it can be is with all work packed just before
// C_j), and at least Σ_k w_jk max(s_k, r_j)/W_j + o_j D_j/W_j, since work
// in interval k is done no earlier than its start or the release. So
//
//	C_j ≥ Σ_k w_jk max(s_k, r_j)/W_j + o_j D_j/W_j + W_j/2,  C_j ≥ r_j + W_j,
//
// and the LP's least Σ_j C_j bounds every schedule's. Restarts, placement
// and integrality are relaxed away; an option strictly inside the upper
// concave hull of (GPUs, σ) on its type is dropped, as time-sharing its
// hull neighbours does as much work on the same GPU-seconds. A job with no
// finite rate bound (a job given as a model, in a mixed gang) keeps its
// LowerBound term and uses no capacity. The LP's optimum must be proven
// (CBC's status optimal) and is taken less a 10⁻⁶ relative tolerance.
func LPBound(ctx context.Context, c *Cluster, jobs []Job, round float64, mixed bool, opt LPOptions) (float64, error) {
	if len(jobs) == 0 {
		return 0, nil
	}
	if opt.Step <= 0 {
		opt.Step = 900
	}
	if opt.Window <= 0 {
		opt.Window = 8 * 3600
	}
	if opt.Groups <= 0 {
		opt.Groups = 1
	}
	if opt.Solve == nil {
		opt.Solve = solver.Solve
	}
	if opt.MaxVars <= 0 {
		opt.MaxVars = 300000
	}
	if opt.TimeLimit <= 0 {
		opt.TimeLimit = 120 * time.Second
	}
	const h = 3600.0 // the LP is in hours
	memo := map[rateKey]*lpJob{}
	sumFixed := 0.0 // Σ (C_j − arrival) of the jobs outside the LP, seconds
	var in []lpJob
	for i := range jobs {
		j := &jobs[i]
		k := keyOf(j)
		lj, ok := memo[k]
		if !ok {
			lj = shape(rates(c, j, mixed), opt.Groups)
			memo[k] = lj
		}
		release := math.Ceil(j.Arrival/round)*round + j.Model.Restart
		switch {
		case math.IsInf(lj.work, 1):
			return math.Inf(1), nil
		case lj.work == 0:
			sumFixed += release - j.Arrival // its least run, lj.work, is 0
			continue
		}
		x := *lj
		x.release, x.arrival = release, j.Arrival
		in = append(in, x)
	}
	if len(in) == 0 {
		return sumFixed / float64(len(jobs)) / h, nil
	}
	t0, end := math.Inf(1), 0.0
	for _, j := range in {
		t0 = math.Min(t0, j.release)
		end = math.Max(end, j.release+opt.Window)
	}
	K := int(math.Ceil((end - t0) / opt.Step))
	vars := 0
	for _, j := range in {
		per := 1
		for _, g := range j.groups {
			per += len(g.opts) + len(g.phi)
		}
		vars += per * (int(opt.Window/opt.Step) + 1)
	}
	if vars > opt.MaxVars {
		return 0, fmt.Errorf("adapt: JCT bound: %w (%d jobs, about %d variables, more than %d)", ErrLPTooLarge, len(in), vars, opt.MaxVars)
	}
	start := func(k int) float64 { return t0 + float64(k)*opt.Step }
	m := solver.NewModel(solver.Minimize)
	capTerms := make([][][]solver.Term, K) // per interval and type
	for k := range capTerms {
		capTerms[k] = make([][]solver.Term, len(c.Types))
	}
	for _, j := range in {
		W := j.work / h
		D := j.release + opt.Window
		done := make([][]solver.Term, len(j.groups)) // per group: Σ_k w_jgk + o_jg
		var busy []solver.Term                       // the mean-busy-time terms
		for k := range K {
			s, e := start(k), start(k+1)
			if e <= j.release || s >= D {
				continue
			}
			from := math.Max(s, j.release)
			L := (math.Min(e, D) - from) / h
			var timeRow, workRow []solver.Term
			for g, gr := range j.groups {
				add := func(v solver.Var, rate float64) {
					workRow = append(workRow, solver.Term{Var: v, Coef: rate})
					done[g] = append(done[g], solver.Term{Var: v, Coef: rate})
					busy = append(busy, solver.Term{Var: v, Coef: -rate * from / h / W})
				}
				for a, o := range gr.opts {
					v := m.AddVar(0, L, 0)
					add(v, gr.sigma[a])
					timeRow = append(timeRow, solver.Term{Var: v, Coef: 1})
					capTerms[k][o.typ] = append(capTerms[k][o.typ], solver.Term{Var: v, Coef: float64(o.gpus)})
				}
				for t, phi := range gr.phi {
					if phi > 0 {
						v := m.AddVar(0, solver.Inf, 0)
						add(v, phi)
						capTerms[k][t] = append(capTerms[k][t], solver.Term{Var: v, Coef: 1})
					}
				}
			}
			if len(timeRow) > 1 {
				m.AddRow(-solver.Inf, L, timeRow...)
			}
			if len(workRow) > 1 || mixed {
				m.AddRow(-solver.Inf, L, workRow...)
			}
		}
		for g, gr := range j.groups {
			o := m.AddVar(0, solver.Inf, 0)
			busy = append(busy, solver.Term{Var: o, Coef: -D / h / W})
			m.AddRow(gr.work/h, gr.work/h, append(done[g], solver.Term{Var: o, Coef: 1})...)
		}
		// The objective is j's JCT, C_j − arrival (not C_j: the sum of the
		// completion times would lose the JCTs' digits).
		jct := m.AddVar((j.release+j.work-j.arrival)/h, solver.Inf, 1)
		busy = append(busy, solver.Term{Var: jct, Coef: 1})
		m.AddRow(W/2-j.arrival/h, solver.Inf, busy...)
	}
	for k := range K {
		for t, terms := range capTerms[k] {
			if len(terms) > 0 {
				m.AddRow(-solver.Inf, float64(c.GPUs(t))*opt.Step/h, terms...)
			}
		}
	}
	res, err := opt.Solve(ctx, m, solver.Options{Threads: 1, TimeLimit: opt.TimeLimit})
	if err != nil {
		return 0, fmt.Errorf("adapt: JCT bound LP: %w", err)
	}
	if res.Status != solver.Optimal {
		return 0, fmt.Errorf("adapt: JCT bound LP (%d jobs, %d variables): %s, not proven optimal", len(in), m.NumVars(), res.Reason)
	}
	return (res.Objective*h*(1-1e-6) + sumFixed) / float64(len(jobs)) / h, nil
}

// lpJob is one job in the LP: its arrival, release and work (seconds, in units of
// its best rate) and its progress in groups of stretches.
type lpJob struct {
	arrival, release, work float64
	groups                 []lpGroup
}

// lpGroup is a run of consecutive stretches of a job's progress: its work
// (seconds at the best rate), its options on their hulls with their units
// a second, and each mixed GPU's units a second by type (nil without
// mixed gangs).
type lpGroup struct {
	work  float64
	opts  []option
	sigma []float64
	phi   []float64
}

// rateKey identifies the jobs whose rate tables are equal.
type rateKey struct {
	m     *goodput.Model
	kind  Kind
	gpus  int
	batch float64
}

func keyOf(j *Job) rateKey {
	k := rateKey{m: j.Model, kind: j.Kind}
	if j.Kind != Adaptive {
		k.batch = j.Batch
	}
	if j.Kind == Rigid {
		k.gpus = j.GPUs
	}
	return k
}

// shape turns a rate table into the LP's per-job data: the work in units
// of the best rate, cut into at most groups runs of stretches of about
// equal work, and per run each option's and each mixed GPU's units a
// second (the most over the run's stretches), the options kept on their
// type's upper concave hull. Work 0: the job has no finite bound and
// stays out of the LP.
func shape(tb *rateTable, groups int) *lpJob {
	out := &lpJob{work: tb.minRun()}
	if math.IsInf(out.work, 1) || out.work == 0 {
		return out
	}
	// Cut the stretches into runs.
	var cuts [][2]int
	from, acc := 0, 0.0
	for s, l := range tb.lens {
		acc += l / tb.best[s]
		if acc >= out.work*float64(len(cuts)+1)/float64(groups)*(1-1e-12) || s == len(tb.lens)-1 {
			cuts = append(cuts, [2]int{from, s + 1})
			from = s + 1
		}
	}
	for _, cut := range cuts {
		gr := lpGroup{}
		ratio := func(r []float64) float64 {
			x := 0.0
			for s := cut[0]; s < cut[1]; s++ {
				if b := tb.best[s]; !math.IsInf(b, 1) && tb.lens[s] > 0 {
					x = math.Max(x, r[s]/b) // no units accrue where b is +Inf
				}
			}
			return x
		}
		for s := cut[0]; s < cut[1]; s++ {
			gr.work += tb.lens[s] / tb.best[s]
		}
		if gr.work == 0 {
			continue
		}
		if tb.perGPU != nil {
			gr.phi = make([]float64, len(tb.perGPU))
			for t, g := range tb.perGPU {
				gr.phi[t] = ratio(g)
				if math.IsInf(gr.phi[t], 1) || math.IsNaN(gr.phi[t]) {
					return &lpJob{} // no per-GPU bound: outside the LP
				}
			}
		}
		var types []int
		byType := map[int][]int{}
		for i, o := range tb.opts {
			if _, ok := byType[o.typ]; !ok {
				types = append(types, o.typ)
			}
			byType[o.typ] = append(byType[o.typ], i)
		}
		sort.Ints(types)
		for _, t := range types {
			idx := byType[t]
			sig := make([]float64, len(idx))
			for i, a := range idx {
				sig[i] = math.Min(ratio(tb.opts[a].rate), 1)
			}
			for _, i := range upperHull(tb.opts, idx, sig) {
				gr.opts = append(gr.opts, tb.opts[idx[i]])
				gr.sigma = append(gr.sigma, sig[i])
			}
		}
		out.groups = append(out.groups, gr)
	}
	return out
}

// upperHull returns the positions (into idx) of the options on the upper
// concave hull of the points (GPUs, σ) and the origin, σ increasing.
func upperHull(opts []option, idx []int, sig []float64) []int {
	order := make([]int, len(idx))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return opts[idx[order[a]]].gpus < opts[idx[order[b]]].gpus })
	type pt struct {
		x, y float64
		i    int
	}
	hull := []pt{{0, 0, -1}}
	for _, i := range order {
		p := pt{float64(opts[idx[i]].gpus), sig[i], i}
		if p.y <= hull[len(hull)-1].y {
			continue // more GPUs for no more work
		}
		for len(hull) >= 2 {
			a, b := hull[len(hull)-2], hull[len(hull)-1]
			// b is on or below the segment a–p: drop it.
			if (b.y-a.y)*(p.x-a.x) <= (p.y-a.y)*(b.x-a.x) {
				hull = hull[:len(hull)-1]
				continue
			}
			break
		}
		hull = append(hull, p)
	}
	var out []int
	for _, p := range hull[1:] {
		out = append(out, p.i)
	}
	return out
}
