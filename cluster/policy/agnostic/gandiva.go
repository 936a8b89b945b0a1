package agnostic

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/inlay-dev/inlay/cluster/policy"
)

// Gandiva is the Gandiva-style packing policy as Gavel models it: while
// the jobs fit, time is split equally; when they do not, jobs are paired at
// random (only jobs of equal scale factor), pairs stay together while
// sharing still pays (their throughputs together, normalised to each job
// alone and summed over the types, at least 1), and time is split equally
// among the pairs and the jobs left alone.
type Gandiva struct {
	rng     *rand.Rand
	partner map[int]int // job → partner (-1: alone)
}

// NewGandiva returns a seeded Gandiva policy.
func NewGandiva(seed uint64) *Gandiva {
	return &Gandiva{rng: rand.New(rand.NewPCG(seed, 0x67616e64)), partner: map[int]int{}}
}

func (*Gandiva) Name() string { return "gandiva" }
func (*Gandiva) Traits() policy.Traits {
	return policy.Traits{Agnostic: true, SpaceSharing: true}
}

func (p *Gandiva) gain(s *policy.State, a, b *policy.Job) float64 {
	sum := 0.0
	for g, c := range s.C.Count {
		if c == 0 {
			continue
		}
		ta, tb, ok := s.Table.Pair(a.Row, b.Row, g)
		if !ok {
			return 0
		}
		sum += ta/s.Alone(a, g) + tb/s.Alone(b, g)
	}
	return sum
}

func (p *Gandiva) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	byID := map[int]int{}
	need := 0
	for m := range s.Jobs {
		byID[s.Jobs[m].ID] = m
		need += s.Jobs[m].GPUs
	}
	// Forget pairings of finished jobs and pairings that stopped paying.
	for _, m := range slices.Sorted(maps.Keys(p.partner)) {
		q := p.partner[m]
		_, okA := byID[m]
		_, okB := byID[q]
		if !okA || (q >= 0 && !okB) || (q >= 0 && p.gain(s, &s.Jobs[byID[m]], &s.Jobs[byID[q]]) < 1) {
			delete(p.partner, m)
			if q >= 0 {
				delete(p.partner, q)
			}
		}
	}
	type combo struct{ a, b int }
	var combos []combo
	if need <= s.C.Total() {
		for m := range s.Jobs {
			combos = append(combos, combo{m, -1})
		}
	} else {
		var free []int
		for m := range s.Jobs {
			if _, ok := p.partner[s.Jobs[m].ID]; !ok {
				free = append(free, s.Jobs[m].ID)
			}
		}
		// As many random draws as there were jobs to pair (Gavel's bound).
		for tries, n := 0, len(free); len(free) > 1 && tries < n; tries++ {
			i := p.rng.IntN(len(free))
			k := p.rng.IntN(len(free) - 1)
			if k >= i {
				k++
			}
			a, b := free[i], free[k]
			if s.Jobs[byID[a]].GPUs != s.Jobs[byID[b]].GPUs {
				continue
			}
			p.partner[a], p.partner[b] = b, a
			hi, lo := max(i, k), min(i, k)
			free = append(free[:hi], free[hi+1:]...)
			free = append(free[:lo], free[lo+1:]...)
		}
		for _, id := range free {
			p.partner[id] = -1
		}
		for m := range s.Jobs {
			id := s.Jobs[m].ID
			q := p.partner[id]
			switch {
			case q < 0:
				combos = append(combos, combo{m, -1})
			case id < q:
				combos = append(combos, combo{m, byID[q]})
			}
		}
	}
	a := &policy.Allocation{Note: "random pairs"}
	n := float64(len(combos))
	for _, c := range combos {
		x := make([]float64, len(s.C.Count))
		sum := 0.0
		scale := float64(s.Jobs[c.a].GPUs)
		for g, cnt := range s.C.Count {
			x[g] = float64(cnt) / n / scale
			sum += x[g]
		}
		if sum > 1 {
			for g := range x {
				x[g] /= sum
			}
		}
		b := -1
		if c.b >= 0 {
			b = s.Jobs[c.b].ID
		}
		a.Entries = append(a.Entries, policy.Entry{A: s.Jobs[c.a].ID, B: b, X: x})
	}
	a.Sort()
	return a, nil
}
