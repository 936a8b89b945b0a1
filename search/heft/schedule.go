package heft

import (
	"errors"
	"fmt"
	"github.com/inlay-dev/inlay/internal/intheap"
	"math"
	"sort"
)

// Edge is a precedence between two tasks of a Problem.
type Edge struct{ From, To int }

// Problem is a task graph to schedule on processors. Times are in any one
// unit (abstract units for plain task graphs, nanoseconds for layers).
type Problem struct {
	// Procs is the number of processors.
	Procs int
	// Lanes gives each processor's number of tasks it runs at once; nil or a
	// zero entry means one.
	Lanes []int
	// Cost[t][p] is task t's run time on processor p; +Inf means t cannot
	// run on p. Its length is the number of tasks.
	Cost [][]float64
	// Edges between tasks; together they must form a DAG.
	Edges []Edge
	// Comm is the time to send edge e's data from processor p to q (p ≠ q);
	// nil means free communication. It is never asked for p == q, where
	// communication is free.
	Comm func(e, p, q int) float64
}

// Slot is one task's place in a schedule.
type Slot struct {
	Proc, Lane    int
	Start, Finish float64
}

// Schedule is HEFT's answer.
type Schedule struct {
	// Slots are indexed by task.
	Slots []Slot
	// Rank is each task's upward rank.
	Rank []float64
	// Order is the order in which tasks were placed (decreasing rank).
	Order    []int
	Makespan float64
	// Finish records what HEFT weighed as it placed each task: Finish[t][p]
	// is task t's earliest finish on processor p (over its lanes), +Inf
	// where p cannot run t. Slots[t].Finish is the least of them.
	Finish [][]float64
}

// ErrCycle reports a task graph that is not acyclic.
var ErrCycle = errors.New("heft: task graph has a cycle")

// Run schedules a problem with HEFT with insertion (Topcuoglu, Hariri, Wu:
// "Performance-effective and low-complexity task scheduling for
// heterogeneous computing", IEEE TPDS 13(3), 2002):
//
//  1. upward rank: rank(t) = w̄(t) + max over successors s of (c̄(t,s) +
//     rank(s)), where w̄ is t's mean cost over the processors that can run it
//     and c̄ the mean communication cost over ordered pairs of distinct
//     processors;
//  2. tasks in decreasing rank (ties: the earlier in a topological order
//     with ties broken by task index), each placed on the processor (and
//     lane) where it finishes earliest, in the earliest idle gap that fits
//     after its inputs arrive (ties: the lower processor, then lane).
//
// Deterministic. O(e·p² + t²·p) for t tasks, e edges and p processors.
func Run(pb *Problem) (*Schedule, error) {
	n := len(pb.Cost)
	if pb.Procs <= 0 {
		return nil, errors.New("heft: no processors")
	}
	succ := make([][]int, n) // edge indices out of each task
	pred := make([][]int, n)
	for i, e := range pb.Edges {
		if e.From < 0 || e.From >= n || e.To < 0 || e.To >= n {
			return nil, fmt.Errorf("heft: edge %d (%d -> %d) out of range", i, e.From, e.To)
		}
		succ[e.From] = append(succ[e.From], i)
		pred[e.To] = append(pred[e.To], i)
	}
	topo, err := topoOrder(n, pb.Edges, succ)
	if err != nil {
		return nil, err
	}
	pos := make([]int, n)
	for i, t := range topo {
		pos[t] = i
	}
	comm := func(e, p, q int) float64 {
		if p == q || pb.Comm == nil {
			return 0
		}
		return pb.Comm(e, p, q)
	}
	meanCost := make([]float64, n)
	for t := 0; t < n; t++ {
		if len(pb.Cost[t]) != pb.Procs {
			return nil, fmt.Errorf("heft: task %d has %d costs for %d processors", t, len(pb.Cost[t]), pb.Procs)
		}
		sum, k := 0.0, 0
		for _, c := range pb.Cost[t] {
			if math.IsNaN(c) || c < 0 {
				return nil, fmt.Errorf("heft: task %d: bad cost %v", t, c)
			}
			if !math.IsInf(c, 1) {
				sum += c
				k++
			}
		}
		if k == 0 {
			return nil, &NoProcessorError{Task: t}
		}
		meanCost[t] = sum / float64(k)
	}
	meanComm := make([]float64, len(pb.Edges))
	if pb.Procs > 1 {
		for i := range pb.Edges {
			sum := 0.0
			for p := 0; p < pb.Procs; p++ {
				for q := 0; q < pb.Procs; q++ {
					if p != q {
						sum += comm(i, p, q)
					}
				}
			}
			meanComm[i] = sum / float64(pb.Procs*(pb.Procs-1))
		}
	}
	rank := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		t := topo[i]
		best := 0.0
		for _, e := range succ[t] {
			if r := meanComm[e] + rank[pb.Edges[e].To]; r > best {
				best = r
			}
		}
		rank[t] = meanCost[t] + best
	}
	order := append([]int{}, topo...)
	sort.SliceStable(order, func(a, b int) bool {
		ta, tb := order[a], order[b]
		if rank[ta] != rank[tb] {
			return rank[ta] > rank[tb]
		}
		return pos[ta] < pos[tb]
	})
	// A task's predecessors have a rank at least as high, and ties go by
	// topological position, so order is topological. Zero-cost tasks with
	// zero-cost edges can tie; the stable sort keeps them in topo order.
	lanes := make([][]*Timeline, pb.Procs)
	for p := range lanes {
		k := 1
		if p < len(pb.Lanes) && pb.Lanes[p] > 1 {
			k = pb.Lanes[p]
		}
		for l := 0; l < k; l++ {
			lanes[p] = append(lanes[p], &Timeline{})
		}
	}
	s := &Schedule{Slots: make([]Slot, n), Rank: rank, Order: order, Finish: make([][]float64, n)}
	placed := make([]bool, n)
	for _, t := range order {
		best := Slot{Proc: -1}
		s.Finish[t] = make([]float64, pb.Procs)
		for p := 0; p < pb.Procs; p++ {
			w := pb.Cost[t][p]
			s.Finish[t][p] = math.Inf(1)
			if math.IsInf(w, 1) {
				continue
			}
			ready := 0.0
			for _, e := range pred[t] {
				from := pb.Edges[e].From
				if !placed[from] {
					return nil, fmt.Errorf("heft: internal error: task %d placed before its predecessor %d", t, from)
				}
				ps := s.Slots[from]
				if r := ps.Finish + comm(e, ps.Proc, p); r > ready {
					ready = r
				}
			}
			for l, tl := range lanes[p] {
				start := tl.Earliest(ready, w)
				s.Finish[t][p] = math.Min(s.Finish[t][p], start+w)
				if best.Proc < 0 || start+w < best.Finish {
					best = Slot{Proc: p, Lane: l, Start: start, Finish: start + w}
				}
			}
		}
		lanes[best.Proc][best.Lane].Insert(best.Start, best.Finish)
		s.Slots[t] = best
		placed[t] = true
		if best.Finish > s.Makespan {
			s.Makespan = best.Finish
		}
	}
	return s, nil
}

// NoProcessorError reports a task that no processor can run.
type NoProcessorError struct{ Task int }

func (e *NoProcessorError) Error() string {
	return fmt.Sprintf("heft: task %d cannot run on any processor", e.Task)
}

// CycleError reports a cycle, with the tasks left unordered.
type CycleError struct{ Tasks []int }

func (e *CycleError) Error() string {
	return fmt.Sprintf("heft: task graph has a cycle through %d task(s), first %d", len(e.Tasks), e.Tasks[0])
}

func (e *CycleError) Unwrap() error { return ErrCycle }

// TopoOrder is a topological order of n tasks under edges, the lowest
// ready index first (Kahn's algorithm); a cycle is a *CycleError.
func TopoOrder(n int, edges []Edge) ([]int, error) {
	succ := make([][]int, n)
	for i, e := range edges {
		succ[e.From] = append(succ[e.From], i)
	}
	return topoOrder(n, edges, succ)
}

// topoOrder is TopoOrder with succ[t] the indices of the edges out of t.
func topoOrder(n int, edges []Edge, succ [][]int) ([]int, error) {
	indeg := make([]int, n)
	for _, e := range edges {
		indeg[e.To]++
	}
	var ready intheap.Heap
	for t := 0; t < n; t++ {
		if indeg[t] == 0 {
			ready.Push(t)
		}
	}
	order := make([]int, 0, n)
	for ready.Len() > 0 {
		t := ready.Pop()
		order = append(order, t)
		for _, e := range succ[t] {
			to := edges[e].To
			indeg[to]--
			if indeg[to] == 0 {
				ready.Push(to)
			}
		}
	}
	if len(order) < n {
		var left []int
		for t, d := range indeg {
			if d > 0 {
				left = append(left, t)
			}
		}
		return nil, &CycleError{Tasks: left}
	}
	return order, nil
}

// Timeline is one lane's busy intervals, sorted by start: the insertion
// scheduling that HEFT and package search/inlay's DAG decoder share.
// The zero value is an empty lane.
type Timeline struct{ busy [][2]float64 }

// Earliest returns the earliest start ≥ ready of an idle gap of length w.
// O(intervals).
func (tl *Timeline) Earliest(ready, w float64) float64 {
	start := ready
	for _, iv := range tl.busy {
		if start+w <= iv[0] {
			return start
		}
		if iv[1] > start {
			start = iv[1]
		}
	}
	return start
}

// Insert marks [start, finish) busy. The caller keeps intervals disjoint
// (Earliest's answer does). O(intervals).
func (tl *Timeline) Insert(start, finish float64) {
	i := sort.Search(len(tl.busy), func(i int) bool { return tl.busy[i][0] > start })
	tl.busy = append(tl.busy, [2]float64{})
	copy(tl.busy[i+1:], tl.busy[i:])
	tl.busy[i] = [2]float64{start, finish}
}

// Reset empties the lane, keeping its storage.
func (tl *Timeline) Reset() { tl.busy = tl.busy[:0] }
