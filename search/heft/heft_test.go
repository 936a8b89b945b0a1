package heft

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// topcuoglu is the 10-task, 3-processor example of Topcuoglu et al. 2002
// (Fig. 2); tasks n1..n10 are 0..9.
func topcuoglu() (*Problem, map[Edge]float64) {
	cost := [][]float64{
		{14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17}, {12, 13, 10},
		{13, 16, 9}, {7, 15, 11}, {5, 11, 14}, {18, 12, 20}, {21, 7, 16},
	}
	data := map[Edge]float64{
		{0, 1}: 18, {0, 2}: 12, {0, 3}: 9, {0, 4}: 11, {0, 5}: 14,
		{1, 7}: 19, {1, 8}: 16, {2, 6}: 23, {3, 7}: 27, {3, 8}: 23,
		{4, 8}: 13, {5, 7}: 15, {6, 9}: 17, {7, 9}: 11, {8, 9}: 13,
	}
	pb := &Problem{Procs: 3, Cost: cost}
	for _, e := range []Edge{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {1, 7}, {1, 8}, {2, 6}, {3, 7}, {3, 8}, {4, 8}, {5, 7}, {6, 9}, {7, 9}, {8, 9}} {
		pb.Edges = append(pb.Edges, e)
	}
	pb.Comm = func(e, p, q int) float64 { return data[pb.Edges[e]] }
	return pb, data
}

func TestTopcuoglu(t *testing.T) {
	pb, _ := topcuoglu()
	s, err := Run(pb)
	if err != nil {
		t.Fatal(err)
	}
	if s.Makespan != 80 {
		t.Errorf("makespan %v, want 80", s.Makespan)
	}
	// Upward ranks from the paper's Table 2 (rounded to two decimals).
	wantRank := []float64{108.00, 77.00, 80.00, 80.00, 69.00, 63.33, 42.67, 35.67, 44.33, 14.67}
	for i, r := range wantRank {
		if math.Abs(s.Rank[i]-r) > 0.01 {
			t.Errorf("rank(n%d) = %.2f, want %.2f", i+1, s.Rank[i], r)
		}
	}
	// The schedule of the paper's Fig. 3(a).
	want := []Slot{
		{Proc: 2, Start: 0, Finish: 9}, {Proc: 0, Start: 27, Finish: 40}, {Proc: 2, Start: 9, Finish: 28},
		{Proc: 1, Start: 18, Finish: 26}, {Proc: 2, Start: 28, Finish: 38}, {Proc: 1, Start: 26, Finish: 42},
		{Proc: 2, Start: 38, Finish: 49}, {Proc: 0, Start: 57, Finish: 62}, {Proc: 1, Start: 56, Finish: 68},
		{Proc: 1, Start: 73, Finish: 80},
	}
	for i, w := range want {
		if s.Slots[i] != w {
			t.Errorf("n%d: got %+v, want %+v", i+1, s.Slots[i], w)
		}
	}
}

func TestHandComputed(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name     string
		pb       Problem
		comm     float64 // every edge's cost across processors
		procs    []int
		makespan float64
	}{
		{
			// a -> b, b much faster on P2 but the transfer costs more than it saves.
			name: "communication keeps chain local",
			pb:   Problem{Procs: 2, Cost: [][]float64{{2, 3}, {5, 4}}, Edges: []Edge{{0, 1}}},
			comm: 10, procs: []int{0, 0}, makespan: 7,
		},
		{
			name: "cheap communication moves b",
			pb:   Problem{Procs: 2, Cost: [][]float64{{2, 3}, {9, 4}}, Edges: []Edge{{0, 1}}},
			comm: 1, procs: []int{0, 1}, makespan: 7,
		},
		{
			// Two independent equal tasks spread over two equal processors.
			name:  "independent tasks in parallel",
			pb:    Problem{Procs: 2, Cost: [][]float64{{4, 4}, {4, 4}}},
			procs: []int{0, 1}, makespan: 4,
		},
		{
			// HEFT is greedy: a goes to P1 (tie, lower ID) although b can
			// only run on P2 and the transfer then costs 5.
			name: "a task only one processor runs",
			pb:   Problem{Procs: 2, Cost: [][]float64{{1, 1}, {inf, 3}, {1, 1}}, Edges: []Edge{{0, 1}, {1, 2}}},
			comm: 5, procs: []int{0, 1, 1}, makespan: 10,
		},
		{
			name:  "two lanes run both at once",
			pb:    Problem{Procs: 1, Lanes: []int{2}, Cost: [][]float64{{4}, {4}, {1}}, Edges: []Edge{{0, 2}, {1, 2}}},
			procs: []int{0, 0, 0}, makespan: 5,
		},
		{
			// Insertion: c (rank low) fits into the gap P1 leaves while
			// waiting for b's data.
			name: "insertion into an idle gap",
			pb: Problem{Procs: 2, Cost: [][]float64{{1, inf}, {inf, 5}, {1, inf}, {2, inf}},
				Edges: []Edge{{0, 1}, {1, 3}}},
			comm: 0, procs: []int{0, 1, 0, 0}, makespan: 8,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pb := tc.pb
			pb.Comm = func(e, p, q int) float64 { return tc.comm }
			s, err := Run(&pb)
			if err != nil {
				t.Fatal(err)
			}
			if s.Makespan != tc.makespan {
				t.Errorf("makespan %v, want %v (slots %+v)", s.Makespan, tc.makespan, s.Slots)
			}
			for i, p := range tc.procs {
				if s.Slots[i].Proc != p {
					t.Errorf("task %d on %d, want %d", i, s.Slots[i].Proc, p)
				}
			}
			checkValid(t, &pb, s)
		})
	}
}

// checkValid checks precedence (with communication) and that no two tasks
// overlap on one lane.
func checkValid(t *testing.T, pb *Problem, s *Schedule) {
	t.Helper()
	for i, e := range pb.Edges {
		a, b := s.Slots[e.From], s.Slots[e.To]
		c := 0.0
		if a.Proc != b.Proc && pb.Comm != nil {
			c = pb.Comm(i, a.Proc, b.Proc)
		}
		if b.Start < a.Finish+c {
			t.Errorf("task %d starts at %v before its input from %d arrives at %v", e.To, b.Start, e.From, a.Finish+c)
		}
	}
	for i, a := range s.Slots {
		if a.Finish-a.Start != pb.Cost[i][a.Proc] {
			t.Errorf("task %d: duration %v, cost %v", i, a.Finish-a.Start, pb.Cost[i][a.Proc])
		}
		for j, b := range s.Slots {
			if i < j && a.Proc == b.Proc && a.Lane == b.Lane && a.Start < b.Finish && b.Start < a.Finish {
				t.Errorf("tasks %d and %d overlap: %+v %+v", i, j, a, b)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	inf := math.Inf(1)
	_, err := Run(&Problem{Procs: 1, Cost: [][]float64{{1}, {1}}, Edges: []Edge{{0, 1}, {1, 0}}})
	if !errors.Is(err, ErrCycle) {
		t.Errorf("cycle: got %v", err)
	}
	_, err = Run(&Problem{Procs: 2, Cost: [][]float64{{inf, inf}}})
	var np *NoProcessorError
	if !errors.As(err, &np) || np.Task != 0 {
		t.Errorf("unrunnable task: got %v", err)
	}
	if _, err := Run(&Problem{Procs: 2, Cost: [][]float64{{1}}}); err == nil {
		t.Error("short cost row accepted")
	}
	if _, err := Run(&Problem{Procs: 1, Cost: [][]float64{{-1}}}); err == nil {
		t.Error("negative cost accepted")
	}
}

// TestRandomValid checks HEFT's schedules on seeded random DAGs: every
// precedence (with communication) holds, no lane runs two tasks at once,
// and every task runs where it can.
func TestRandomValid(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n, procs := 1+rng.IntN(30), 1+rng.IntN(4)
		pb := &Problem{Procs: procs, Lanes: make([]int, procs)}
		for p := range pb.Lanes {
			pb.Lanes[p] = 1 + rng.IntN(2)
		}
		for i := 0; i < n; i++ {
			row := make([]float64, procs)
			runnable := false
			for p := range row {
				if rng.IntN(5) == 0 {
					row[p] = math.Inf(1)
				} else {
					row[p] = float64(rng.IntN(20))
					runnable = true
				}
			}
			if !runnable {
				row[rng.IntN(procs)] = 1
			}
			pb.Cost = append(pb.Cost, row)
		}
		var comm []float64
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				if rng.IntN(5) == 0 {
					pb.Edges = append(pb.Edges, Edge{a, b})
					comm = append(comm, float64(rng.IntN(10)))
				}
			}
		}
		pb.Comm = func(e, p, q int) float64 { return comm[e] }
		s, err := Run(pb)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkValid(t, pb, s)
		for i, sl := range s.Slots {
			if math.IsInf(pb.Cost[i][sl.Proc], 1) || sl.Lane >= pb.Lanes[sl.Proc] {
				t.Errorf("seed %d: task %d on %+v", seed, i, sl)
			}
		}
	}
}
