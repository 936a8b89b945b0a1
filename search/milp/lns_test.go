package milp_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/milp"
	"github.com/inlay-dev/inlay/search/space"
	"github.com/inlay-dev/inlay/solver"
	"github.com/inlay-dev/inlay/solver/solvertest"
	"github.com/inlay-dev/inlay/workload"
)

// lnsInstance: two models of three layers (chains) on P0 (domain d0) and
// P1 (domain d1, across a shared link), with a dispatch overhead, at 50 Hz
// in one group with a loose deadline.
func lnsInstance(t *testing.T) *milp.Formulation {
	t.Helper()
	pl, est := twoDomains(300 * time.Microsecond)
	w := &workload.Workload{Platform: "hand"}
	for _, spec := range []struct {
		name  string
		times [][]time.Duration
	}{
		{"a", [][]time.Duration{{2 * ms, 3 * ms}, {4 * ms, 1 * ms}, {1 * ms, 5 * ms}}},
		{"b", [][]time.Duration{{3 * ms, 2 * ms}, {2 * ms, 2 * ms}, {5 * ms, 1 * ms}}},
	} {
		g := chain(spec.name, 3)
		lg, err := graph.BuildLayers(g)
		if err != nil {
			t.Fatal(err)
		}
		est.times[lg] = spec.times
		w.Models = append(w.Models, &workload.Model{Name: spec.name, Graph: g, Layers: lg, Zoo: spec.name})
	}
	w.Groups = []*workload.Group{{Name: "g", Models: []string{"a", "b"}, Period: 20 * ms, Deadline: time.Second, Arrival: workload.Periodic}}
	return formulate(t, &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1})
}

// lnsAssignments are lnsInstance's 64 assignments, by mask: bit i places
// layer i%3 of model i/3 (a, then b) on P0 (0) or P1 (1).
func lnsAssignments() []*space.Assignment {
	out := make([]*space.Assignment, 64)
	for mask := range out {
		out[mask] = &space.Assignment{Proc: [][]int{{mask & 1, mask >> 1 & 1, mask >> 2 & 1}, {mask >> 3 & 1, mask >> 4 & 1, mask >> 5 & 1}}, Priority: []int{0, 1}}
	}
	return out
}

// lnsOptimum is the first of lnsAssignments with the least load, and that
// load.
func lnsOptimum(f *milp.Formulation) (*space.Assignment, float64) {
	var opt *space.Assignment
	best := math.Inf(1)
	for _, a := range lnsAssignments() {
		if l := f.Load(a); l < best {
			best, opt = l, a
		}
	}
	return opt, best
}

// lnsStart is lnsInstance's assignment of every layer to processor 0,
// which is not optimal.
func lnsStart() *space.Assignment {
	return &space.Assignment{Proc: [][]int{{0, 0, 0}, {0, 0, 0}}, Priority: []int{0, 1}}
}

// weakProof is a proof with the given status, start as its incumbent and
// bound as its (weak) bound.
func weakProof(f *milp.Formulation, start *space.Assignment, bound float64, status string) *plan.Proof {
	return &plan.Proof{Status: status, Incumbent: f.Load(start), Bound: bound, ScaleBound: 1 / bound, Gap: 1 - bound/f.Load(start)}
}

// formulate is the MILP, with deadlines, of req's search space.
func formulate(tb testing.TB, req *plan.Request) *milp.Formulation {
	tb.Helper()
	sp, err := space.New(req)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := milp.Formulate(sp, milp.FormulateOptions{Deadlines: true})
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// From a start with everything on P0, the neighbourhood search reaches the
// optimum over all 64 assignments (its last neighbourhood, both models,
// is the whole problem here), never takes a worse or infeasible
// incumbent, and leaves the formulation's bounds as they were.
func TestImproveReachesOptimum(t *testing.T) {
	solvertest.RequireCBC(t)
	f := lnsInstance(t)
	for mask, a := range lnsAssignments() {
		if err := f.Model.Check(f.Start(a), 1e-6); err != nil {
			t.Fatalf("assignment %06b: %v", mask, err)
		}
	}
	_, best := lnsOptimum(f)
	start := lnsStart()
	if f.Load(start) <= best*(1+1e-6) {
		t.Fatalf("the start (load %g) is already optimal (%g): the instance tests nothing", f.Load(start), best)
	}
	type bounds struct{ lo, hi float64 }
	before := make([]bounds, f.Model.NumVars())
	for v := range before {
		before[v].lo, before[v].hi = f.Model.Bounds(solver.Var(v))
	}
	var steps []float64
	got, st, err := f.Improve(context.Background(), start, milp.ImproveOptions{SubLimit: 20 * time.Second, Threads: 1,
		Log: func(string) { steps = append(steps, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	x := f.Start(got)
	if err := f.Model.Check(x, 1e-6); err != nil {
		t.Fatalf("result infeasible for the full formulation: %v", err)
	}
	if math.Abs(st.Start-f.Load(start)) > 1e-12 || math.Abs(st.Load-x[f.L]) > 1e-12 {
		t.Errorf("stats say %g → %g, the assignments %g → %g", st.Start, st.Load, f.Load(start), x[f.L])
	}
	if math.Abs(st.Load-best) > 1e-9*best {
		t.Errorf("load %g after %d sub-MILPs (%d taken), want the optimum %g", st.Load, st.Solves, st.Improved, best)
	}
	if st.Improved == 0 || !st.Exhausted || st.Solves != len(steps) {
		t.Errorf("stats %+v (%d log lines): want improvements, then a full round without", st, len(steps))
	}
	for v, b := range before {
		if lo, hi := f.Model.Bounds(solver.Var(v)); lo != b.lo || hi != b.hi {
			t.Fatalf("variable %d left with bounds [%g, %g], was [%g, %g]", v, lo, hi, b.lo, b.hi)
		}
	}
}

// From the optimum it stays there: no sub-MILP is taken, and the result
// is the start.
func TestImproveNeverWorse(t *testing.T) {
	solvertest.RequireCBC(t)
	f := lnsInstance(t)
	opt, _ := lnsOptimum(f)
	got, st, err := f.Improve(context.Background(), opt, milp.ImproveOptions{SubLimit: 20 * time.Second, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Improved != 0 || st.Load != f.Load(opt) || !st.Exhausted {
		t.Errorf("from the optimum %g: stats %+v", f.Load(opt), st)
	}
	for m := range opt.Proc {
		for l := range opt.Proc[m] {
			if got.Proc[m][l] != opt.Proc[m][l] {
				t.Fatalf("model %d layer %d moved from P%d to P%d without improvement", m, l, opt.Proc[m][l], got.Proc[m][l])
			}
		}
	}
}

// The planner's second solve of the full MILP, from an incumbent that is
// not optimal and a proof with a weak bound: it finds the optimum, proves
// it (bound = optimum, gap 0, "optimal"), and the incumbent it returns is
// feasible at that load. From the optimum with a proof whose bound is
// already tight, the bound stays and nothing moves.
func TestSolveAgain(t *testing.T) {
	solvertest.RequireCBC(t)
	f := lnsInstance(t)
	opt, best := lnsOptimum(f)
	start := lnsStart()
	proof := weakProof(f, start, best/2, "stopped")
	got, root := milp.SolveAgain(context.Background(), f, start, proof, 20*time.Second)
	x := f.Start(got)
	if err := f.Model.Check(x, 1e-6); err != nil {
		t.Fatalf("incumbent infeasible: %v", err)
	}
	if math.Abs(x[f.L]-best) > 1e-9*best || math.Abs(proof.Incumbent-best) > 1e-9*best {
		t.Errorf("incumbent %g (proof %g), want the optimum %g", x[f.L], proof.Incumbent, best)
	}
	if proof.Status != "optimal" || math.Abs(proof.Bound-best) > 1e-6*best || proof.Gap > 1e-6 || root {
		t.Errorf("proof %+v (root bound %v): want optimal, bound %g, gap 0", proof, root, best)
	}
	if math.Abs(proof.ScaleBound-1/proof.Bound) > 1e-9*proof.ScaleBound {
		t.Errorf("scale bound %g, bound %g", proof.ScaleBound, proof.Bound)
	}
	// A bound already above what the second solve proves is kept.
	tight := &plan.Proof{Status: "stopped", Incumbent: best, Bound: best, ScaleBound: 1 / best}
	got, _ = milp.SolveAgain(context.Background(), f, opt, tight, 20*time.Second)
	if tight.Bound != best || tight.Gap > 1e-9 || f.Load(got) != best {
		t.Errorf("from the optimum: proof %+v, load %g, want bound and load %g", tight, f.Load(got), best)
	}
}

// With two threads, a full CBC solve runs beside the search (restarted
// from each better incumbent it takes), and the proof takes its incumbent
// and bound: in parallel mode there is no second solve after the search,
// so "optimal" can come only from the solve beside it. With parallel=off
// and no time for a second solve (under its 2 s) or for the search (1 ns
// of it), the start and its weak bound stay.
func TestImproveAndProveBeside(t *testing.T) {
	solvertest.RequireCBC(t)
	f := lnsInstance(t)
	_, best := lnsOptimum(f)
	start := lnsStart()
	weak := best / 2
	for _, parallel := range []bool{true, false} {
		proof := weakProof(f, start, weak, "time limit")
		end := time.Now().Add(1500 * time.Millisecond)
		if parallel {
			end = time.Now().Add(20 * time.Second)
		}
		began := time.Now()
		got, root := milp.ImproveAndProve(context.Background(), f, start, proof, end, time.Nanosecond, 2, parallel)
		if parallel && time.Since(began) > 15*time.Second {
			t.Errorf("parallel: took %v: the search was not stopped when the solve beside it proved optimality", time.Since(began))
		}
		x := f.Start(got)
		if err := f.Model.Check(x, 1e-6); err != nil {
			t.Fatalf("parallel %v: incumbent infeasible: %v", parallel, err)
		}
		if !parallel {
			if proof.Bound != weak || proof.Incumbent != f.Load(start) || proof.Status != "time limit" || !root {
				t.Errorf("parallel off: proof %+v, want the start and the weak bound as they were", proof)
			}
			continue
		}
		if math.Abs(x[f.L]-best) > 1e-9*best || proof.Status != "optimal" || math.Abs(proof.Bound-best) > 1e-6*best || proof.Gap > 1e-6 || root {
			t.Errorf("parallel: incumbent %g, proof %+v (root bound %v): want optimal at %g", x[f.L], proof, root, best)
		}
		if !strings.Contains(proof.Note, "beside") {
			t.Errorf("note %q does not say the solve beside the search did it", proof.Note)
		}
	}
}

// A young solve beside the search is restarted from every better
// incumbent; an older one only for an improvement of at least a quarter
// of its gap, or when there is no finite bound to measure the gap by.
func TestRestartBeside(t *testing.T) {
	for _, tc := range []struct {
		name            string
		ran             time.Duration
		from, load, bnd float64
		want            bool
	}{
		{"young, small step", time.Second, 1.00, 0.999, 0.90, true},
		{"old, small step", 30 * time.Second, 1.00, 0.99, 0.90, false},
		{"old, a quarter of the gap", 30 * time.Second, 1.00, 0.975, 0.90, true},
		{"old, past the bound", 30 * time.Second, 1.00, 0.95, 0.96, true},
		{"old, no bound", 30 * time.Second, 1.00, 0.999, math.NaN(), true},
		{"old, infinite bound", 30 * time.Second, 1.00, 0.999, math.Inf(-1), true},
		{"old, gap closed", 30 * time.Second, 1.00, 0.999, 1.00, true},
	} {
		if got := milp.RestartBeside(tc.ran, tc.from, tc.load, tc.bnd); got != tc.want {
			t.Errorf("%s: restart %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseOptionsImprove(t *testing.T) {
	o, err := milp.ParseOptions("budget=120s, improve=off")
	if err != nil || o.Budget != 120*time.Second || !o.NoImprove || o.NoParallel {
		t.Errorf("got %+v, %v", o, err)
	}
	if o, err := milp.ParseOptions("parallel=off"); err != nil || !o.NoParallel || o.NoImprove {
		t.Errorf("parallel=off: got %+v, %v", o, err)
	}
	for _, bad := range []string{"improve=maybe", "budget=120s,cuts=on", "improve", "parallel=2"} {
		if _, err := milp.ParseOptions(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
