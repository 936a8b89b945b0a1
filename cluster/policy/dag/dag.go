// Package dag schedules DAG jobs (Lachesis's setting): a job's stages run
// after their predecessors, each stage a piece of training with its own
// type, GPUs and steps. The policy is HEFT-like: at every event it ranks the
// ready stages by their upward rank — the stage's remaining time on its
// fastest GPU type plus the longest chain of work after it
// (policy.Job.Downstream) — and, highest rank first, places each on the GPU
// type with free room where it finishes earliest (all GPUs are free from
// now, so that is the fastest type with room). Plain jobs are DAGs of one
// stage. Stages are not duplicated: a training stage's output is its
// weights, and a copy would hold GPUs the ranks give to other stages.
package dag

import (
	"context"
	"fmt"
	"sort"

	"github.com/inlay-dev/inlay/cluster/policy"
)

// Policy is the critical-path policy.
type Policy struct{}

func (Policy) Name() string          { return "dag" }
func (Policy) Traits() policy.Traits { return policy.Traits{EventDriven: true} }

func (Policy) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	n := len(s.Jobs)
	rank := make([]float64, n)
	for m := range s.Jobs {
		j := &s.Jobs[m]
		if best := s.Best(j); best > 0 {
			rank[m] = j.Remaining/best + j.Downstream
		} else {
			rank[m] = -1
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if rank[idx[a]] != rank[idx[b]] {
			return rank[idx[a]] > rank[idx[b]]
		}
		return s.Jobs[idx[a]].ID < s.Jobs[idx[b]].ID
	})
	left := append([]int(nil), s.C.Count...)
	x := make([][]float64, n)
	placed := 0
	for _, m := range idx {
		x[m] = make([]float64, len(left))
		j := &s.Jobs[m]
		if rank[m] < 0 {
			continue
		}
		if pick := s.Fastest(j, left); pick >= 0 {
			left[pick] -= j.GPUs
			x[m][pick] = 1
			placed++
		}
	}
	return policy.Singles(s, x, fmt.Sprintf("dag: %d stages placed by upward rank", placed)), nil
}
