package milp_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/search/milp"
	"github.com/inlay-dev/inlay/search/space"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/solver"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
)

// BenchmarkTighten compares formulation variants and CBC settings on the
// bench's scenarios (inlay bench --seed 1 --max-models M, M from
// -tight.models, default 4; -tight.scenarios of them, default 4) on phone:
// each variant is solved by CBC on one thread (deterministic) for
// -tight.limit of CPU time (default 30s) from the same start (the inlay
// planner at a fixed number of evaluations, -tight.evals, default 400; 0
// starts cold), and one line per (variant, scenario) gives the status, the
// bound, the incumbent and the gap. -tight.variants lists the variants
// (comma-separated names of tightenVariants). Run:
// go test -run '^$' -bench Tighten -benchtime 1x -timeout 0 ./search/milp/ -args -tight.variants base,cuts
func BenchmarkTighten(b *testing.B) {
	limit, models, scenarios, evals := *tightLimit, *tightModels, *tightScenarios, *tightEvals
	names := strings.Split(*tightVariants, ",")
	for b.Loop() {
		ss := tightenScenarios(b, models, scenarios, evals)
		for _, name := range names {
			v, ok := tightenVariants[name]
			if !ok {
				b.Fatalf("-tight.variants: no variant %q", name)
			}
			for _, s := range ss {
				si := s.index
				f, err := milp.Formulate(s.sp, v.form)
				if err != nil {
					b.Fatal(err)
				}
				// CPU seconds, not wall-clock ones, so that variants measured
				// on a loaded machine get the same work; no watchdog.
				args := append([]string{"-timeMode", "cpu", "-sec", fmt.Sprint(limit.Seconds())}, v.args...)
				opt := solver.Options{Threads: 1, Args: args}
				if s.start != nil && !v.cold {
					opt.Start = f.Start(s.start)
				}
				if dir := *tightLog; dir != "" {
					lf, err := os.Create(fmt.Sprintf("%s/%s-%d.log", dir, name, si))
					if err != nil {
						b.Fatal(err)
					}
					opt.Log = lf
					defer lf.Close()
				}
				res, err := solver.Solve(context.Background(), f.Model, opt)
				if err != nil {
					b.Fatal(err)
				}
				start := 0.0
				if opt.Start != nil {
					start = f.Model.Objective(opt.Start)
				}
				fmt.Printf("tighten: %-14s scenario %d (%d models): %-8s bound %.6g incumbent %.6g (start %.6g) gap %6.2f%%  %5.1fs  %d×%d  load %s\n",
					name, si, len(s.sp.Models), res.Status, res.Bound, res.Objective, start, 100*res.Gap, res.Wall.Seconds(),
					f.Model.NumRows(), f.Model.NumVars(), loadavg())
			}
		}
	}
}

type tightenVariant struct {
	form milp.FormulateOptions
	args []string
	cold bool
}

var tightenVariants = map[string]tightenVariant{
	"base":      {form: milp.FormulateOptions{Deadlines: true}, args: []string{"-cuts", "off"}},
	"prox":      {form: milp.FormulateOptions{Deadlines: true}, args: []string{"-cuts", "off", "-proximity", "on"}},
	"cuts+vnd":  {form: milp.FormulateOptions{Deadlines: true}, args: []string{"-Vnd", "on"}},
	"cuts+dins": {form: milp.FormulateOptions{Deadlines: true}, args: []string{"-Dins", "on"}},
	"cold":      {form: milp.FormulateOptions{Deadlines: true}, args: []string{"-cuts", "off"}, cold: true},
	"cuts":      {form: milp.FormulateOptions{Deadlines: true}},
	"nopre":     {form: milp.FormulateOptions{Deadlines: true}, args: []string{"-cuts", "off", "-preprocess", "off"}},
	"strong":    {form: milp.FormulateOptions{Deadlines: true}, args: []string{"-cuts", "off", "-strong", "20", "-trust", "10"}},
	"probe":     {form: milp.FormulateOptions{Deadlines: true}, args: []string{"-cuts", "off", "-probing", "on"}},
}

type tightenScenario struct {
	sp    *space.Space
	start *space.Assignment
	index int // the scenario's index in the bench
}

// tightenScenarios draws the bench's scenarios and their start plans.
func tightenScenarios(b *testing.B, models, scenarios, evals int) []tightenScenario {
	pl, err := hw.Resolve("phone")
	if err != nil {
		b.Fatal(err)
	}
	est, _, err := profile.CostModel("", false, pl, nil)
	if err != nil {
		b.Fatal(err)
	}
	build := zoo.CachedLayers()
	rng := rand.New(rand.NewSource(1))
	// -tight.only (comma-separated indices) keeps only those scenarios;
	// the others are still drawn, so that the indices are the bench's.
	only := map[int]bool{}
	for _, f := range strings.Split(*tightOnly, ",") {
		var i int
		if _, err := fmt.Sscan(f, &i); err == nil {
			only[i] = true
		}
	}
	var ss []tightenScenario
	for si := range scenarios {
		w, err := workload.Scenario(rng, workload.ScenarioOptions{Networks: zoo.BenchNetworks(), MaxModels: models}, build)
		if err != nil {
			b.Fatal(err)
		}
		w.Platform = pl.Name
		req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Evals: evals}
		sp, err := space.New(req)
		if err != nil {
			b.Fatal(err)
		}
		s := tightenScenario{sp: sp, index: si}
		if len(only) > 0 && !only[si] {
			continue
		}
		if evals > 0 {
			// -tight.cache keeps the start plans between runs.
			cached := ""
			if dir := *tightCache; dir != "" {
				cached = fmt.Sprintf("%s/start-%d-%d-%d.yaml", dir, models, si, evals)
			}
			p, err := plan.Load(cached)
			if err != nil {
				inlay, err := search.New("inlay")
				if err != nil {
					b.Fatal(err)
				}
				if p, err = inlay.Plan(context.Background(), req, sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1})); err != nil {
					b.Fatal(err)
				}
				if cached != "" {
					if err := p.Save(cached); err != nil {
						b.Fatal(err)
					}
				}
			}
			if s.start, err = sp.FromPlan(p); err != nil {
				b.Fatal(err)
			}
		}
		ss = append(ss, s)
	}
	return ss
}

// eachFormulation runs run, once per benchmark iteration, on every -tight
// scenario formulated with its deadlines.
func eachFormulation(b *testing.B, run func(s tightenScenario, f *milp.Formulation)) {
	ss := tightenScenarios(b, *tightModels, *tightScenarios, *tightEvals)
	for b.Loop() {
		for _, s := range ss {
			f, err := milp.Formulate(s.sp, milp.FormulateOptions{Deadlines: true})
			if err != nil {
				b.Fatal(err)
			}
			run(s, f)
		}
	}
}

// eachRootLP runs diag as eachFormulation runs, with the solved continuous
// relaxation of the formulation (the diagnostic benchmarks' root LP).
func eachRootLP(b *testing.B, diag func(s tightenScenario, f *milp.Formulation, root *solver.Result)) {
	eachFormulation(b, func(s tightenScenario, f *milp.Formulation) {
		root, err := solver.Solve(context.Background(), f.Model, solver.Options{Relaxed: true})
		if err != nil {
			b.Fatal(err)
		}
		diag(s, f, root)
	})
}

// BenchmarkTightenDiag prints, for the same scenarios, each processor's and
// link's load at the root LP's optimum and in the start plan, to see which
// rows bind. Run: go test -run '^$' -bench TightenDiag -benchtime 1x ./search/milp/
func BenchmarkTightenDiag(b *testing.B) {
	eachRootLP(b, func(s tightenScenario, f *milp.Formulation, res *solver.Result) {
		si := s.index
		start := f.Start(s.start)
		for _, row := range f.LoadRows() {
			lp, st := 0.0, 0.0
			for _, t := range row.Terms {
				lp += t.Coef * res.Values[t.Var]
				st += t.Coef * start[t.Var]
			}
			fmt.Printf("diag: scenario %d %-12s LP %.6g start %.6g\n", si, row.Name, lp, st)
		}
		fmt.Printf("diag: scenario %d LP objective %.6g, start %.6g\n", si, res.Objective, start[f.L])
	})
}

// loadavg is the one-minute load average ("?" where /proc has none).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// BenchmarkImprove measures the neighbourhood search (Formulation.Improve)
// on the same scenarios and starts as BenchmarkTighten: for each share s of
// -improve.shares (comma-separated, default "0,0.5"; "0.5/5s" sets
// Improve's SubLimit too), CBC solves the full MILP with the planner's
// options (-Vnd on, one thread) for (1−s) of -improve.limit (wall-clock,
// default 90s, the bench's milp:budget=120s less the start's quarter) and
// Improve takes CBC's incumbent on for the rest; one line per (scenario,
// share) gives the full MILP's bound, CBC's incumbent, Improve's and the
// gap of the better to that bound. -improve.log prints every sub-MILP;
// -improve.after DURATION keeps that long of -improve.limit for CBC to
// solve the full MILP once more, from the search's result (the planner's
// second solve). Run:
// go test -run '^$' -bench Improve -benchtime 1x -timeout 0 ./search/milp/ -args -tight.cache DIR
func BenchmarkImprove(b *testing.B) {
	limit := *improveLimit
	shares := strings.Split(*improveShares, ",")
	ss := tightenScenarios(b, *tightModels, *tightScenarios, *tightEvals)
	for b.Loop() {
		for _, s := range ss {
			si := s.index
			for _, sh := range shares {
				var share float64
				sh, sub, _ := strings.Cut(sh, "/")
				if _, err := fmt.Sscan(sh, &share); err != nil || share < 0 || share >= 1 {
					b.Fatalf("-improve.shares: %q", sh)
				}
				var subLimit time.Duration
				if sub != "" {
					var err error
					if subLimit, err = time.ParseDuration(sub); err != nil {
						b.Fatalf("-improve.shares: %q: %v", sub, err)
					}
				}
				f, err := milp.Formulate(s.sp, milp.FormulateOptions{Deadlines: true})
				if err != nil {
					b.Fatal(err)
				}
				args := []string{"-Vnd", "on"}
				began := time.Now()
				res, err := solver.Solve(context.Background(), f.Model, solver.Options{TimeLimit: time.Duration(float64(limit) * (1 - share)),
					Threads: 1, Args: args, Start: f.Start(s.start), Grace: 20 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				full, lns := res.Objective, res.Objective
				line := ""
				if left := limit - time.Since(began); share > 0 && res.Status == solver.Stopped && left > time.Second {
					a, err := f.Assignment(res.Values)
					if err != nil {
						b.Fatal(err)
					}
					after := *improveAfter
					opt := milp.ImproveOptions{Budget: max(left-after, time.Second), SubLimit: subLimit, Threads: 1, Args: args}
					if *improveLog {
						opt.Log = func(s string) { fmt.Printf("  %s load %s\n", s, loadavg()) }
					}
					got, st, err := f.Improve(context.Background(), a, opt)
					if err != nil {
						b.Fatal(err)
					}
					lns = st.Load
					line = fmt.Sprintf(" (%d of %d sub-MILPs taken, exhausted %v)", st.Improved, st.Solves, st.Exhausted)
					if after > 0 {
						// CBC once more on the full MILP, from the search's
						// result: does it find better, or raise the bound?
						again, err := solver.Solve(context.Background(), f.Model, solver.Options{TimeLimit: after,
							Threads: 1, Args: args, Start: f.Start(got), Grace: 20 * time.Second})
						if err != nil {
							b.Fatal(err)
						}
						line += fmt.Sprintf("; then CBC %v: %s bound %.7g incumbent %.7g (gap %.2f%%)", after, again.Status, again.Bound, again.Objective, 100*again.Gap)
					}
				}
				fmt.Printf("improve: scenario %d (%d models) share %.2f sub-limit %v: %-8s bound %.6g start %.6g cbc %.6g (%.1fs) improved %.6g%s gap %5.2f%% → %5.2f%%  %5.1fs  load %s\n",
					si, len(s.sp.Models), share, subLimit, res.Status, res.Bound, f.Model.Objective(f.Start(s.start)), full, res.Wall.Seconds(), lns, line,
					100*(full-res.Bound)/full, 100*(lns-res.Bound)/lns, time.Since(began).Seconds(), loadavg())
			}
		}
	}
}

// BenchmarkGapDiag prints, per load row, the layer, dispatch, transfer and
// latency parts at the root LP's optimum and in the start plan.
func BenchmarkGapDiag(b *testing.B) {
	eachRootLP(b, func(s tightenScenario, f *milp.Formulation, res *solver.Result) {
		si := s.index
		start := f.Start(s.start)
		names, lp := f.LoadParts(res.Values)
		_, st := f.LoadParts(start)
		for i := range names {
			fmt.Printf("gapdiag: scenario %d %-14s LP %.5f %.5f %.5f %.5f | start %.5f %.5f %.5f %.5f\n", si, names[i],
				lp[i][0], lp[i][1], lp[i][2], lp[i][3], st[i][0], st[i][1], st[i][2], st[i][3])
		}
		fmt.Printf("gapdiag: scenario %d LP %.6g start %.6g\n", si, res.Objective, start[f.L])
	})
}

// relaxedBound is the objective of m's continuous relaxation (+Inf when
// it is infeasible).
func relaxedBound(b *testing.B, m *solver.Model) float64 {
	r, err := solver.Solve(context.Background(), m, solver.Options{Relaxed: true})
	if err != nil {
		b.Fatal(err)
	}
	if r.Status == solver.Infeasible {
		return math.Inf(1)
	}
	return r.Objective
}

// BenchmarkBranchDiag branches once on each subgraph count n[m][p] (0:
// model m off p; ≥ 1: a whole dispatch) and on each latency indicator of
// a (model, domain pair) (0 or 1), and prints the two children's LP
// bounds against the root's: where the lesser child rises, branching on
// the counts raises the bound.
func BenchmarkBranchDiag(b *testing.B) {
	eachRootLP(b, func(s tightenScenario, f *milp.Formulation, root *solver.Result) {
		si := s.index
		vars, ms, ps := f.Counts()
		if !*branchCounts {
			vars = nil
		}
		for i, n := range vars {
			val := root.Values[n]
			lo, hi := f.Model.Bounds(n)
			var kids [2]float64
			for k := range 2 {
				var saved [][3]float64
				if k == 0 {
					f.Model.SetBounds(n, 0, 0)
					for _, x := range f.X[ms[i]] {
						if v := x[ps[i]]; v >= 0 {
							a, c := f.Model.Bounds(v)
							saved = append(saved, [3]float64{float64(v), a, c})
							f.Model.SetBounds(v, 0, 0)
						}
					}
				} else {
					f.Model.SetBounds(n, 1, hi)
				}
				kids[k] = relaxedBound(b, f.Model)
				for _, sv := range saved {
					f.Model.SetBounds(solver.Var(sv[0]), sv[1], sv[2])
				}
				f.Model.SetBounds(n, lo, hi)
			}
			fmt.Printf("branchdiag: scenario %d model %d proc %d n=%.3f root %.6g children %.6g %.6g (min +%.2f%%)\n", si, ms[i], ps[i], val, root.Objective, kids[0], kids[1], 100*(math.Min(kids[0], kids[1])/root.Objective-1))
		}
		// The latency indicators: 0 (no tensor of the model crosses
		// from D to E) or 1 (a whole latency).
		pvars, pms, pds, pes := f.LinkPairs()
		for i, v := range pvars {
			lo, hi := f.Model.Bounds(v)
			var kids [2]float64
			for k := range 2 {
				f.Model.SetBounds(v, float64(k), float64(k))
				kids[k] = relaxedBound(b, f.Model)
				f.Model.SetBounds(v, lo, hi)
			}
			fmt.Printf("branchdiag: scenario %d model %d domains %d→%d latency=%.3f root %.6g children %.6g %.6g (min +%.2f%%)\n", si, pms[i], pds[i], pes[i], root.Values[v], root.Objective, kids[0], kids[1], 100*(math.Min(kids[0], kids[1])/root.Objective-1))
		}
	})
}

// BenchmarkImproveFirst runs the two the other way round: the
// neighbourhood search from the start plan for -improve.first-share
// (default 0.5) of -improve.limit (default 90s), then CBC on the full MILP
// from the search's result for the rest; one line per scenario gives the
// search's incumbent, CBC's bound and incumbent, and the gap.
// -improve.after-args lists CBC option sets for that solve, separated by
// ";" (default "-Vnd on", the planner's): each solves from the same
// search result, for the same time, one after the other.
func BenchmarkImproveFirst(b *testing.B) {
	limit, share := *improveLimit, *improveFirstShare
	if share <= 0 || share >= 1 {
		b.Fatalf("-improve.first-share %v: want a share strictly between 0 and 1", share)
	}
	eachFormulation(b, func(s tightenScenario, f *milp.Formulation) {
		args := []string{"-Vnd", "on"}
		began := time.Now()
		opt := milp.ImproveOptions{Budget: time.Duration(float64(limit) * share), Threads: 1, Args: args}
		if *improveLog {
			opt.Log = func(s string) { fmt.Printf("  %s load %s\n", s, loadavg()) }
		}
		got, st, err := f.Improve(context.Background(), s.start, opt)
		if err != nil {
			b.Fatal(err)
		}
		lnsWall := time.Since(began)
		after := max(limit-lnsWall, time.Second)
		variants := strings.Split(*improveAfterArgs, ";")
		for _, v := range variants {
			res, err := solver.Solve(context.Background(), f.Model, solver.Options{TimeLimit: after,
				Threads: 1, Args: strings.Fields(v), Start: f.Start(got), Grace: 20 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			inc := math.Min(res.Objective, st.Load)
			fmt.Printf("improvefirst: scenario %d (%d models) share %.2f: start %.6g search %.6g (%d of %d taken, %.1fs) then cbc [%s] %-8s bound %.6g incumbent %.6g (%.1fs) gap %5.2f%%  load %s\n",
				s.index, len(s.sp.Models), share, st.Start, st.Load, st.Improved, st.Solves, lnsWall.Seconds(), v, res.Status, res.Bound, res.Objective, res.Wall.Seconds(),
				100*(inc-res.Bound)/inc, loadavg())
		}
	})
}
