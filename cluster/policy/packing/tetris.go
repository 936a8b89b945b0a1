// Package packing holds multi-resource packing (Tetris, Grandl et al.,
// SIGCOMM 2014; DeepRM's setting): jobs demand CPU cores and memory per
// GPU beside the GPUs, and the policy packs them so that no GPU type's
// servers run out of any resource. Each event it keeps the running jobs
// where they are (no preemption) and then repeatedly starts the waiting job
// and GPU type with the best score: the alignment of the job's demand
// vector with the type's free resources (both normalised by the type's
// capacity, Tetris's dot product), times the job's speed there relative to
// its fastest type (heterogeneity), plus a small shortest-remaining-work
// term. Capacities are per GPU type in aggregate (the servers' CPUs and
// memory summed), not per server.
package packing

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/inlay-dev/inlay/cluster/policy"
)

// Tetris is the multi-resource packing policy.
type Tetris struct {
	// SRTFWeight weighs the shortest-remaining-work term (0: 0.1).
	SRTFWeight float64
}

// candidates bounds the waiting jobs scored per start.
const candidates = 256

func (*Tetris) Name() string          { return "tetris" }
func (*Tetris) Traits() policy.Traits { return policy.Traits{EventDriven: true} }

func (p *Tetris) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	w := p.SRTFWeight
	if w == 0 {
		w = 0.1
	}
	G := len(s.C.Count)
	freeG := make([]float64, G)
	freeC := append([]float64(nil), s.C.CPUs...)
	freeM := append([]float64(nil), s.C.Memory...)
	for g, c := range s.C.Count {
		freeG[g] = float64(c)
	}
	fits := func(j *policy.Job, g int) bool {
		n := float64(j.GPUs)
		return freeG[g] >= n && freeC[g] >= j.CPUs*n-1e-9 && freeM[g] >= j.MemoryGiB*n-1e-9 && s.Alone(j, g) > 0
	}
	take := func(j *policy.Job, g int) {
		n := float64(j.GPUs)
		freeG[g] -= n
		freeC[g] -= j.CPUs * n
		freeM[g] -= j.MemoryGiB * n
	}
	x := make([][]float64, len(s.Jobs))
	for m := range x {
		x[m] = make([]float64, G)
	}
	// Running jobs stay.
	var waiting []int
	for m := range s.Jobs {
		j := &s.Jobs[m]
		if j.Last >= 0 && j.LastGPUs > 0 && fits(j, j.Last) {
			take(j, j.Last)
			x[m][j.Last] = 1
			continue
		}
		waiting = append(waiting, m)
	}
	best := make([]float64, len(s.Jobs))
	work := make([]float64, len(s.Jobs))
	maxWork := 0.0
	for _, m := range waiting {
		j := &s.Jobs[m]
		for g := range s.C.Count {
			best[m] = math.Max(best[m], s.Alone(j, g))
		}
		if best[m] > 0 {
			work[m] = j.Remaining / best[m] * float64(j.GPUs)
			maxWork = math.Max(maxWork, work[m])
		}
	}
	sort.SliceStable(waiting, func(a, b int) bool { return work[waiting[a]] < work[waiting[b]] })
	if len(waiting) > candidates {
		waiting = waiting[:candidates]
	}
	started := 0
	for {
		bm, bg, bs := -1, -1, math.Inf(-1)
		for _, m := range waiting {
			j := &s.Jobs[m]
			if best[m] == 0 { // cannot run, or started this call
				continue
			}
			for g := range s.C.Count {
				if !fits(j, g) {
					continue
				}
				n := float64(j.GPUs)
				align := n / float64(s.C.Count[g]) * freeG[g] / float64(s.C.Count[g])
				if s.C.CPUs[g] > 0 {
					align += j.CPUs * n / s.C.CPUs[g] * freeC[g] / s.C.CPUs[g]
				}
				if s.C.Memory[g] > 0 {
					align += j.MemoryGiB * n / s.C.Memory[g] * freeM[g] / s.C.Memory[g]
				}
				score := align * s.Alone(j, g) / best[m]
				if maxWork > 0 {
					score += w * (1 - work[m]/maxWork)
				}
				if score > bs {
					bm, bg, bs = m, g, score
				}
			}
		}
		if bm < 0 {
			break
		}
		take(&s.Jobs[bm], bg)
		x[bm][bg] = 1
		best[bm] = 0
		started++
	}
	a := policy.Singles(s, x, fmt.Sprintf("tetris: %d started", started))
	return a, nil
}
