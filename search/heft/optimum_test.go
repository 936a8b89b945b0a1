package heft

import (
	"math"
	"testing"
)

// TestTopcuogluOptimumExhaustive proves by exhaustive search that 73 is
// the least makespan of Topcuoglu et al.'s graph (HEFT: 80; search/milp's
// TestScheduleDAGTopcuoglu proves it again by a MILP). Every schedule is
// matched by one the search tries: place the tasks in the order of their
// start times, each at its earliest insertion slot on its processor, and
// no task starts later than it did (the tasks before it on that processor
// end no later, so its interval stays free). So a depth-first search over
// every next ready task and every processor, with insertion, pruned where
// a lower bound (finish times so far plus the remaining chain at the
// fastest costs, free communication) cannot beat the best found, is exact.
func TestTopcuogluOptimumExhaustive(t *testing.T) {
	pb, _ := topcuoglu()
	n := len(pb.Cost)
	pred, succ := make([][]int, n), make([][]int, n) // edge indices
	for i, e := range pb.Edges {
		pred[e.To] = append(pred[e.To], i)
		succ[e.From] = append(succ[e.From], i)
	}
	minCost := make([]float64, n)
	for i, c := range pb.Cost {
		minCost[i] = math.Inf(1)
		for _, x := range c {
			minCost[i] = math.Min(minCost[i], x)
		}
	}
	// tail[i]: the longest chain of fastest costs from i to an exit, i included.
	tail := make([]float64, n)
	for i := n - 1; i >= 0; i-- { // IDs are topological here
		tail[i] = minCost[i]
		for _, e := range succ[i] {
			tail[i] = math.Max(tail[i], minCost[i]+tail[pb.Edges[e].To])
		}
	}
	slots := make([]Slot, n)
	done := make([]bool, n)
	lanes := make([]Timeline, pb.Procs)
	best := 80.0 // HEFT's schedule: only shorter ones are of interest
	nodes := 0
	var dfs func(placed int, makespan float64)
	dfs = func(placed int, makespan float64) {
		nodes++
		if placed == n {
			best = math.Min(best, makespan)
			return
		}
		// Bound: every task still to place starts no earlier than its placed
		// predecessors finish (free communication) and has its chain to run.
		lb := makespan
		for i := 0; i < n; i++ {
			if done[i] {
				continue
			}
			ready := 0.0
			for _, e := range pred[i] {
				if f := pb.Edges[e].From; done[f] {
					ready = math.Max(ready, slots[f].Finish)
				}
			}
			lb = math.Max(lb, ready+tail[i])
		}
		if lb >= best {
			return
		}
		for i := 0; i < n; i++ {
			if done[i] {
				continue
			}
			ok := true
			for _, e := range pred[i] {
				ok = ok && done[pb.Edges[e].From]
			}
			if !ok {
				continue
			}
			for p := 0; p < pb.Procs; p++ {
				ready := 0.0
				for _, e := range pred[i] {
					f := pb.Edges[e].From
					c := 0.0
					if slots[f].Proc != p {
						c = pb.Comm(e, slots[f].Proc, p)
					}
					ready = math.Max(ready, slots[f].Finish+c)
				}
				w := pb.Cost[i][p]
				start := lanes[p].Earliest(ready, w)
				saved := append([][2]float64(nil), lanes[p].busy...)
				lanes[p].Insert(start, start+w)
				slots[i], done[i] = Slot{Proc: p, Start: start, Finish: start + w}, true
				dfs(placed+1, math.Max(makespan, start+w))
				done[i] = false
				lanes[p].busy = saved
			}
		}
	}
	dfs(0, 0)
	t.Logf("%d search nodes", nodes)
	if best != 73 {
		t.Errorf("least makespan %v, want 73", best)
	}
}
