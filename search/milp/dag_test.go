package milp_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/search/dag"
	"github.com/inlay-dev/inlay/search/heft"
	"github.com/inlay-dev/inlay/search/inlay"
	"github.com/inlay-dev/inlay/search/milp"
	"github.com/inlay-dev/inlay/solver"
	"github.com/inlay-dev/inlay/solver/solvertest"
)

func TestScheduleDAGTopcuoglu(t *testing.T) {
	solvertest.RequireCBC(t)
	g, err := dag.Load("../../examples/topcuoglu-dag.json")
	if err != nil {
		t.Fatal(err)
	}
	pb := g.Problem()
	start, err := inlay.ScheduleDAG(pb, inlay.DAGOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, proof, err := milp.ScheduleDAG(context.Background(), pb, milp.DAGOptions{TimeLimit: 60 * time.Second, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	if proof.Status != solver.Optimal || proof.Gap != 0 {
		t.Fatalf("status %v gap %g, want proven optimal", proof.Status, proof.Gap)
	}
	if s.Makespan > start.Makespan {
		t.Errorf("makespan %g, worse than the inlay planner's %g", s.Makespan, start.Makespan)
	}
	// Topcuoglu et al.'s graph: HEFT 80, the optimum 73 (proven also by
	// search/heft's TestTopcuogluOptimumExhaustive; search/inlay's local
	// search reaches it).
	if math.Abs(s.Makespan-73) > 1e-6 {
		t.Errorf("makespan %g, want the optimum 73", s.Makespan)
	}
	if math.Abs(s.Makespan-proof.Bound) > 1e-6 {
		t.Errorf("makespan %g, proven bound %g: an optimal schedule attains its bound", s.Makespan, proof.Bound)
	}
	if err := milp.VerifySchedule(pb, s, 1e-9); err != nil {
		t.Fatal(err)
	}
	t.Logf("makespan %g (inlay %g), %d vars, %d rows, %v", s.Makespan, start.Makespan, proof.Vars, proof.Rows, proof.Wall)
}

// Hand-solvable: a chain a → b with costs a = [1, 3], b = [3, 1] and an
// edge cost c. Together on one processor: 4; a on P0 and b on P1: 2 + c.
// The optimum is min(4, 2 + c).
func TestScheduleDAGChainClosedForm(t *testing.T) {
	solvertest.RequireCBC(t)
	for _, c := range []float64{0, 1, 2, 5} {
		pb := &heft.Problem{Procs: 2, Cost: [][]float64{{1, 3}, {3, 1}}, Edges: []heft.Edge{{From: 0, To: 1}},
			Comm: func(e, p, q int) float64 { return c }}
		s, proof, err := milp.ScheduleDAG(context.Background(), pb, milp.DAGOptions{TimeLimit: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		want := math.Min(4, 2+c)
		if s.Makespan != want || proof.Status != solver.Optimal || math.Abs(proof.Bound-want) > 1e-6 {
			t.Errorf("c=%g: makespan %g bound %g (%v), want %g proven", c, s.Makespan, proof.Bound, proof.Status, want)
		}
		if err := milp.VerifySchedule(pb, s, 1e-9); err != nil {
			t.Error(err)
		}
	}
}

func TestVerifyScheduleCatches(t *testing.T) {
	pb := &heft.Problem{Procs: 2, Cost: [][]float64{{2, 2}, {2, 2}, {1, 1}}, Edges: []heft.Edge{{From: 0, To: 1}},
		Comm: func(e, p, q int) float64 { return 3 }}
	good := &heft.Schedule{Slots: []heft.Slot{{Proc: 0, Start: 0, Finish: 2}, {Proc: 0, Start: 2, Finish: 4}, {Proc: 1, Start: 0, Finish: 1}}, Makespan: 4}
	if err := milp.VerifySchedule(pb, good, 0); err != nil {
		t.Fatalf("valid schedule rejected: %v", err)
	}
	cases := map[string]*heft.Schedule{
		"communication ignored": {Slots: []heft.Slot{{Proc: 0, Start: 0, Finish: 2}, {Proc: 1, Start: 2, Finish: 4}, {Proc: 1, Start: 0, Finish: 1}}, Makespan: 4},
		"overlap":               {Slots: []heft.Slot{{Proc: 0, Start: 0, Finish: 2}, {Proc: 0, Start: 2, Finish: 4}, {Proc: 0, Start: 1, Finish: 2}}, Makespan: 4},
		"precedence":            {Slots: []heft.Slot{{Proc: 0, Start: 1, Finish: 3}, {Proc: 0, Start: 0, Finish: 2}, {Proc: 1, Start: 0, Finish: 1}}, Makespan: 3},
		"wrong makespan":        {Slots: []heft.Slot{{Proc: 0, Start: 0, Finish: 2}, {Proc: 0, Start: 2, Finish: 4}, {Proc: 1, Start: 0, Finish: 1}}, Makespan: 3},
		"wrong duration":        {Slots: []heft.Slot{{Proc: 0, Start: 0, Finish: 1}, {Proc: 0, Start: 2, Finish: 4}, {Proc: 1, Start: 0, Finish: 1}}, Makespan: 4},
	}
	for name, s := range cases {
		if err := milp.VerifySchedule(pb, s, 1e-9); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// BenchmarkDAGBigM compares the disjunctive formulation with one big-M
// (the horizon) against per-pair big-Ms from heads and tails, on seeded
// random task graphs (-dagbig.n tasks, default 14, on 3 single-lane
// processors, -dagbig.seeds of them, default 6), cold, one CBC thread, with
// a limit of -dagbig.limit CPU time (default 20s). Run:
// go test -run '^$' -bench DAGBigM -benchtime 1x ./search/milp/ -args -dagbig.n 16
func BenchmarkDAGBigM(b *testing.B) {
	n, seeds, limit := *dagBigN, *dagBigSeeds, *dagBigLimit
	for b.Loop() {
		for seed := range seeds {
			pb := randomDAG(uint64(seed), n, 3)
			for _, global := range []bool{true, false} {
				// CPU seconds (the machine may be loaded); the wall-clock
				// watchdog only as a backstop.
				_, proof, err := milp.ScheduleDAG(context.Background(), pb, milp.DAGOptions{TimeLimit: 100 * limit, GlobalBigM: global,
					Args: []string{"-timeMode", "cpu", "-sec", fmt.Sprint(limit.Seconds())}})
				if err != nil {
					b.Fatal(err)
				}
				form := "per-pair M"
				if global {
					form = "global M  "
				}
				fmt.Printf("dagbigm: seed %d, %d tasks: %s %-8s makespan %6.1f bound %6.1f gap %5.1f%% %6.1fs wall  load %s\n",
					seed, n, form, proof.Status, proof.Incumbent, proof.Bound, 100*proof.Gap, proof.Wall.Seconds(), loadavg())
			}
		}
	}
}

// randomDAG is a seeded task graph: integer costs 1–20, an edge a→b
// (a < b) with probability 1/4 and a communication cost 0–9 between
// distinct processors.
func randomDAG(seed uint64, n, procs int) *heft.Problem {
	rng := rand.New(rand.NewPCG(seed, 11))
	pb := &heft.Problem{Procs: procs, Lanes: make([]int, procs)}
	for p := range pb.Lanes {
		pb.Lanes[p] = 1
	}
	for range n {
		row := make([]float64, procs)
		for p := range row {
			row[p] = float64(1 + rng.IntN(20))
		}
		pb.Cost = append(pb.Cost, row)
	}
	var comm []float64
	for a := range n {
		for b := a + 1; b < n; b++ {
			if rng.IntN(4) == 0 {
				pb.Edges = append(pb.Edges, heft.Edge{From: a, To: b})
				comm = append(comm, float64(rng.IntN(10)))
			}
		}
	}
	pb.Comm = func(e, p, q int) float64 { return comm[e] }
	return pb
}

// TestScheduleDAGBigMAgrees checks the per-pair big-Ms and start-time
// bounds against the single-M form on small random task graphs, each from
// HEFT's schedule (whose makespan is the horizon, so that the bounds are as
// tight as they get): both must prove the same optimum, and the schedule
// must verify.
func TestScheduleDAGBigMAgrees(t *testing.T) {
	solvertest.RequireCBC(t)
	for seed := range uint64(6) {
		pb := randomDAG(seed, 7, 2)
		start, err := heft.Run(pb)
		if err != nil {
			t.Fatal(err)
		}
		var makespans [2]float64
		for i, global := range []bool{true, false} {
			s, proof, err := milp.ScheduleDAG(context.Background(), pb, milp.DAGOptions{TimeLimit: 60 * time.Second, Start: start, GlobalBigM: global})
			if err != nil {
				t.Fatal(err)
			}
			if proof.Status != solver.Optimal {
				t.Fatalf("seed %d, global %v: %v, want optimal", seed, global, proof.Status)
			}
			if err := milp.VerifySchedule(pb, s, 1e-9); err != nil {
				t.Fatalf("seed %d, global %v: %v", seed, global, err)
			}
			makespans[i] = s.Makespan
		}
		if math.Abs(makespans[0]-makespans[1]) > 1e-6 {
			t.Errorf("seed %d: optimum %g with one big-M, %g with per-pair big-Ms", seed, makespans[0], makespans[1])
		}
	}
}
