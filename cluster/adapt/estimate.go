package adapt

import (
	"github.com/inlay-dev/inlay/cluster/goodput"
)

// Estimate is a policy's estimate of job v's goodput on a with knowledge
// k, at the batch size the job would use there: its own for rigid and
// scale-gpus jobs, the best in its range for adaptive ones. It returns
// that batch size and goodput (0 where it cannot run). a's parts should
// carry the servers they would span (MinNodes when unknown).
func (s *State) Estimate(v *View, a goodput.Alloc, k goodput.Knowledge) (batch, g float64) {
	if len(a) == 0 || !v.Model.Runs(a) {
		return 0, 0
	}
	if v.Kind != Adaptive {
		return v.Batch, v.Model.Goodput(a, v.Batch, v.Progress, k, s.Split)
	}
	lo, hi := v.Model.BatchRange(a)
	return v.Model.BestBatch(a, lo, hi, v.Progress, k, s.Split)
}

// Single is the allocation of n GPUs of type t on the fewest servers.
func (s *State) Single(t, n int) goodput.Alloc {
	return goodput.Alloc{{Type: t, GPUs: n, Nodes: s.Cluster.MinNodes(t, n)}}
}

// Pair is a mixed allocation of n1 GPUs of t1 and n2 of t2 (t1 ≠ t2), each
// on the fewest servers.
func (s *State) Pair(t1, n1, t2, n2 int) goodput.Alloc {
	a := goodput.Alloc{{Type: t1, GPUs: n1, Nodes: s.Cluster.MinNodes(t1, n1)}, {Type: t2, GPUs: n2, Nodes: s.Cluster.MinNodes(t2, n2)}}
	return a.Sorted()
}

// RestartFactor is Pollux's discount of a reallocation for a job that
// has run for age seconds with restarts restarts, each costing delay:
// (age − restarts·delay)/(age + delay), at least 0.
func RestartFactor(age float64, restarts int, delay float64) float64 {
	if age+delay <= 0 {
		return 1
	}
	return max(0, (age-float64(restarts)*delay)/(age+delay))
}
