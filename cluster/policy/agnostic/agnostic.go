// Package agnostic holds the heterogeneity-agnostic policies Gavel compares
// against: FIFO, LAS (Gavel's agnostic max-min fairness), Tiresias-style
// two-dimensional LAS, SRTF and Gandiva-style random packing. None of them
// looks at how fast a job runs on each GPU type.
package agnostic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/inlay-dev/inlay/cluster/policy"
)

// LAS is Gavel's heterogeneity-agnostic max-min fairness ("LAS" in its
// figures): every job gets an equal share of GPU time, whatever type.
type LAS struct{}

var _ policy.Policy = LAS{}

func (LAS) Name() string          { return "las" }
func (LAS) Traits() policy.Traits { return policy.Traits{Agnostic: true} }
func (LAS) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	return policy.Singles(s, policy.EqualShare(s), "equal GPU-time shares"), nil
}

// order fills the cluster with whole jobs in the given order: each takes a
// GPU type with room for it (the one it ran on last when it still has room,
// else the first in a seeded random order of types) and gets X = 1 there.
func order(s *policy.State, idx []int, rng *rand.Rand) [][]float64 {
	left := append([]int(nil), s.C.Count...)
	x := make([][]float64, len(s.Jobs))
	types := make([]int, 0, len(left))
	for g, c := range left {
		if c > 0 {
			types = append(types, g)
		}
	}
	for _, m := range idx {
		j := &s.Jobs[m]
		x[m] = make([]float64, len(left))
		pick := -1
		if j.Last >= 0 && left[j.Last] >= j.GPUs && s.Alone(j, j.Last) > 0 {
			pick = j.Last
		} else {
			rng.Shuffle(len(types), func(a, b int) { types[a], types[b] = types[b], types[a] })
			for _, g := range types {
				if left[g] >= j.GPUs && s.Alone(j, g) > 0 {
					pick = g
					break
				}
			}
		}
		if pick >= 0 {
			left[pick] -= j.GPUs
			x[m][pick] = 1
		}
	}
	return x
}

// FIFO runs jobs to completion in arrival order, each on whichever type has
// room.
type FIFO struct{ rng *rand.Rand }

// NewFIFO returns a FIFO policy whose choice of types is seeded.
func NewFIFO(seed uint64) *FIFO { return &FIFO{rng: rand.New(rand.NewPCG(seed, 0x6669666f))} }

func (*FIFO) Name() string { return "fifo" }
func (*FIFO) Traits() policy.Traits {
	return policy.Traits{Agnostic: true, EventDriven: true, Sticky: true}
}
func (f *FIFO) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	// Running jobs first (they keep their GPUs), then by arrival.
	idx := make([]int, len(s.Jobs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ra, rb := s.Jobs[idx[a]].Last >= 0, s.Jobs[idx[b]].Last >= 0
		if ra != rb {
			return ra
		}
		return s.Jobs[idx[a]].ID < s.Jobs[idx[b]].ID
	})
	return policy.Singles(s, order(s, idx, f.rng), "arrival order"), nil
}

// SRTF runs the jobs with the least remaining time first, preempting at
// arrivals; remaining time is taken at the mean throughput over the types
// (it does not place by speed).
type SRTF struct{ rng *rand.Rand }

// NewSRTF returns a seeded SRTF policy.
func NewSRTF(seed uint64) *SRTF { return &SRTF{rng: rand.New(rand.NewPCG(seed, 0x73727466))} }

func (*SRTF) Name() string          { return "srtf" }
func (*SRTF) Traits() policy.Traits { return policy.Traits{Agnostic: true, EventDriven: true} }
func (p *SRTF) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	rem := make([]float64, len(s.Jobs))
	for m := range s.Jobs {
		j := &s.Jobs[m]
		sum, k := 0.0, 0
		for g, c := range s.C.Count {
			if c > 0 && s.Alone(j, g) > 0 {
				sum += s.Alone(j, g)
				k++
			}
		}
		rem[m] = j.Remaining / (sum / float64(max(k, 1)))
	}
	idx := make([]int, len(s.Jobs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if rem[idx[a]] != rem[idx[b]] {
			return rem[idx[a]] < rem[idx[b]]
		}
		return s.Jobs[idx[a]].ID < s.Jobs[idx[b]].ID
	})
	return policy.Singles(s, order(s, idx, p.rng), "shortest remaining time"), nil
}

// Tiresias is two-dimensional LAS with discretised priority queues
// (Gu et al., NSDI 2019): a job's queue is set by the GPU-time it has
// attained (thresholds in GPU-hours); lower queues first, arrival order
// within a queue; allocations are recomputed every round.
type Tiresias struct {
	Thresholds []float64 // GPU-hours; default {1, 10}
	rng        *rand.Rand
}

// NewTiresias returns a seeded Tiresias-style policy.
func NewTiresias(seed uint64) *Tiresias {
	return &Tiresias{Thresholds: []float64{1, 10}, rng: rand.New(rand.NewPCG(seed, 0x74697265))}
}

func (*Tiresias) Name() string          { return "tiresias" }
func (*Tiresias) Traits() policy.Traits { return policy.Traits{Agnostic: true, EveryRound: true} }
func (p *Tiresias) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	queue := func(j *policy.Job) int {
		q := 0
		for _, t := range p.Thresholds {
			if j.Attained/3600 >= t {
				q++
			}
		}
		return q
	}
	idx := make([]int, len(s.Jobs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		qa, qb := queue(&s.Jobs[idx[a]]), queue(&s.Jobs[idx[b]])
		if qa != qb {
			return qa < qb
		}
		return s.Jobs[idx[a]].ID < s.Jobs[idx[b]].ID
	})
	return policy.Singles(s, order(s, idx, p.rng), fmt.Sprintf("%d queues", len(p.Thresholds)+1)), nil
}
