package agnostic

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/inlay-dev/inlay/cluster/policy"
)

// GavelFIFO is Gavel's heterogeneity-agnostic FIFO as its code runs it
// (stanford-futuredata/gavel, scheduler/policies/fifo.py, FIFOPolicy in
// mode "base"), kept to explain the FIFO figure Gavel publishes for the
// static-multiple trace; "fifo" is the FIFO its comments describe (each job
// on a random type with room, run to completion).
//
// Gavel's loop meant to pick a random type with room draws an index
// (rng.randrange) but assigns the job to worker_type, the variable left
// over from the loop that listed the available types in name order: the
// last one, "v100" while it is listed, whether or not it has room. The
// drawn index only picks which type leaves the list when the assigned
// type's count reaches exactly zero. So nearly every job is allocated to
// the V100s (or, after a draw removed them, to the P100s), the other types
// idle, and the mechanism time-shares the V100s among the allocated jobs
// (Gavel's rule for FIFO policies: an entry with a zero share on a type
// does not run there). Allocations persist across calls: a finished job's
// type goes to the first queued job that fits there, as in Gavel.
type GavelFIFO struct {
	rng   *rand.Rand
	alloc map[int]int // job ID → column
}

// NewGavelFIFO returns the policy with its draws seeded.
func NewGavelFIFO(seed uint64) *GavelFIFO {
	return &GavelFIFO{rng: rand.New(rand.NewPCG(seed, 0x67666966)), alloc: map[int]int{}}
}

func (*GavelFIFO) Name() string { return "fifo-gavel" }
func (*GavelFIFO) Traits() policy.Traits {
	return policy.Traits{Agnostic: true, OnlyAllocated: true}
}

func (p *GavelFIFO) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	G := len(s.C.Count)
	active := make(map[int]int, len(s.Jobs)) // ID → index
	for m := range s.Jobs {
		active[s.Jobs[m].ID] = m
	}
	avail := append([]int(nil), s.C.Count...)
	var queue []int // job indices not allocated, by ID (s.Jobs is sorted)
	for m := range s.Jobs {
		if _, ok := p.alloc[s.Jobs[m].ID]; !ok {
			queue = append(queue, m)
		}
	}
	// Finished jobs hand their type to the head of the queue if it fits;
	// running ones hold their GPUs.
	ids := slices.Sorted(maps.Keys(p.alloc))
	for _, id := range ids {
		g := p.alloc[id]
		if m, ok := active[id]; ok {
			avail[g] -= s.Jobs[m].GPUs
			continue
		}
		if len(queue) > 0 {
			next := queue[0]
			queue = queue[1:]
			if s.Jobs[next].GPUs <= avail[g] {
				p.alloc[s.Jobs[next].ID] = g
				avail[g] -= s.Jobs[next].GPUs
			}
		}
		delete(p.alloc, id)
	}
	// Available types in name order, as Gavel sorts them.
	var types []int
	for g := range avail {
		if avail[g] > 0 {
			types = append(types, g)
		}
	}
	sort.SliceStable(types, func(a, b int) bool { return s.C.GPUs[types[a]] < s.C.GPUs[types[b]] })
	for len(queue) > 0 && len(types) > 0 {
		m := queue[0]
		queue = queue[1:]
		sf := s.Jobs[m].GPUs
		var fit []int // positions in types with room for the job
		for i, g := range types {
			if avail[g] >= sf {
				fit = append(fit, i)
			}
		}
		if len(fit) == 0 {
			break
		}
		drawn := fit[p.rng.IntN(len(fit))]
		g := types[len(types)-1] // the leaked loop variable
		p.alloc[s.Jobs[m].ID] = g
		avail[g] -= sf
		if avail[g] == 0 {
			types = append(types[:drawn], types[drawn+1:]...)
		}
	}
	x := make([][]float64, len(s.Jobs))
	for m := range s.Jobs {
		x[m] = make([]float64, G)
		if g, ok := p.alloc[s.Jobs[m].ID]; ok && s.Alone(&s.Jobs[m], g) > 0 {
			x[m][g] = 1
		}
	}
	return policy.Singles(s, x, "Gavel's FIFO (base mode, as its code runs)"), nil
}
