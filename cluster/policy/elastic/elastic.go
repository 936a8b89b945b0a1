// Package elastic schedules moldable and elastic jobs: each round it
// chooses every job's GPU count (0 = wait, or a count in its range) by
// dynamic programming over the jobs' speedup profiles, maximising the sum
// of rate/remaining — the fraction of its remaining work each job does per
// second, which favours jobs that finish soon and counts that scale well —
// subject to the cluster's GPUs; then places the chosen counts on GPU types,
// the densest values first on the fastest types. A moldable job keeps the
// count it started with; an elastic one (Elastic.Online) may change it every
// round. Jobs without a range run on their own scale factor or wait.
package elastic

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// Policy is the moldable/elastic policy. It remembers the count each
// moldable job started with.
type Policy struct{ started map[int]int }

// New returns the policy.
func New() *Policy { return &Policy{started: map[int]int{}} }

func (*Policy) Name() string          { return "elastic" }
func (*Policy) Traits() policy.Traits { return policy.Traits{EveryRound: true} }

// options returns the GPU counts job j may get this round (besides 0).
func (p *Policy) options(j *policy.Job) []int {
	if e := j.Elastic; e != nil {
		if g, ok := p.started[j.ID]; ok && !e.Online {
			return []int{g}
		}
		var out []int
		for g := e.Min; g <= e.Max; g++ {
			out = append(out, g)
		}
		return out
	}
	return []int{j.GPUs}
}

func (p *Policy) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	N := s.C.Total()
	n := len(s.Jobs)
	alive := map[int]bool{}
	for m := range s.Jobs {
		alive[s.Jobs[m].ID] = true
	}
	for id := range p.started {
		if !alive[id] {
			delete(p.started, id)
		}
	}
	// best rate of job m on g GPUs over the types that hold g GPUs.
	bestRate := func(j *policy.Job, g int) (float64, int) {
		r, at := 0.0, -1
		for c, cnt := range s.C.Count {
			if cnt < g {
				continue
			}
			v := policy.ScaledRate(s.Table, j, c, g, func(id throughput.ID, c int) float64 { return s.Table.Alone(id, c) })
			if v > r {
				r, at = v, c
			}
		}
		return r, at
	}
	// Knapsack over GPUs: dp[k] is the best value with k GPUs in use.
	neg := math.Inf(-1)
	dp := make([]float64, N+1)
	for k := 1; k <= N; k++ {
		dp[k] = neg
	}
	choice := make([][]int16, n) // choice[m][k]: GPUs given to job m at capacity k
	for m := range s.Jobs {
		j := &s.Jobs[m]
		opts := p.options(j)
		next := append([]float64(nil), dp...)
		choice[m] = make([]int16, N+1)
		for _, g := range opts {
			r, _ := bestRate(j, g)
			if r <= 0 || g > N {
				continue
			}
			v := r / math.Max(j.Remaining, 1e-9) * j.Weight
			for k := N; k >= g; k-- {
				if dp[k-g] > neg && dp[k-g]+v > next[k] {
					next[k] = dp[k-g] + v
					choice[m][k] = int16(g)
				}
			}
		}
		dp = next
	}
	bestK := 0
	for k := range dp {
		if dp[k] > dp[bestK] {
			bestK = k
		}
	}
	give := make([]int, n)
	for m, k := n-1, bestK; m >= 0; m-- {
		g := int(choice[m][k])
		give[m] = g
		k -= g
	}
	// Place: densest value per GPU first, each on the fastest type with room.
	idx := []int{}
	dens := make([]float64, n)
	for m := range s.Jobs {
		if give[m] > 0 {
			r, _ := bestRate(&s.Jobs[m], give[m])
			dens[m] = r / math.Max(s.Jobs[m].Remaining, 1e-9) / float64(give[m])
			idx = append(idx, m)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if dens[idx[a]] != dens[idx[b]] {
			return dens[idx[a]] > dens[idx[b]]
		}
		return s.Jobs[idx[a]].ID < s.Jobs[idx[b]].ID
	})
	left := append([]int(nil), s.C.Count...)
	a := &policy.Allocation{}
	placed := 0
	for _, m := range idx {
		j := &s.Jobs[m]
		g := give[m]
		pick, pr := -1, 0.0
		for c := range left {
			if left[c] < g {
				continue
			}
			r := policy.ScaledRate(s.Table, j, c, g, func(id throughput.ID, c int) float64 { return s.Table.Alone(id, c) })
			if r > pr {
				pick, pr = c, r
			}
		}
		if pick < 0 {
			continue
		}
		left[pick] -= g
		x := make([]float64, len(left))
		x[pick] = 1
		a.Entries = append(a.Entries, policy.Entry{A: j.ID, B: -1, X: x, GPUs: g})
		if j.Elastic != nil && !j.Elastic.Online {
			if _, ok := p.started[j.ID]; !ok {
				p.started[j.ID] = g
			}
		}
		placed++
	}
	a.Sort()
	a.Note = fmt.Sprintf("elastic: %d jobs on %d GPUs", placed, bestK)
	return a, nil
}
