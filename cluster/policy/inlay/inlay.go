// Package inlay is inlay's own cluster policy. Gavel's LAS shares every
// GPU type fairly among all active jobs, which keeps each job's throughput
// normalised to its share but lets every job linger; inlay aims at Gavel's
// own objectives instead:
//
//   - average JCT (policy "inlay"): the job that would finish first under
//     fair sharing goes first (the fair sojourn protocol, see
//     JCT.NoAgeing), which is shortest remaining work first for new jobs
//     and keeps long ones from starving ("inlay-srpt" ranks by remaining
//     work alone, measured in GPU-seconds on the job's fastest type); the
//     chosen jobs are then
//     matched to GPU types by comparative advantage (a job that gains most
//     from a V100 over a K80 gets the V100), and the GPUs of the chosen jobs
//     are shared with waiting jobs when the pair's combined normalised
//     throughput pays for the slowdown of the chosen job;
//   - makespan (policy "inlay-makespan"): the fluid minimum-makespan LP
//     recomputed at every arrival and completion (not at most every 32
//     minutes), so that the schedule tracks the fluid optimum whose value is
//     the lower bound (package bound).
//
// "inlay" needs no solver: sorting, the closed-form equal share and a
// greedy matching, O(n log n + n·G) per round plus O(n·K) for the pairing
// (K candidates per GPU).
package inlay

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/policy/gavel"
)

// maxPartners bounds the waiting jobs considered as partners.
const maxPartners = 64

// JCT is the average-JCT policy.
type JCT struct {
	// Share is the least combined normalised throughput (a/A + b/B on the
	// type) for two jobs to share GPUs; 0: 1.25.
	Share float64
	// Keep is the least fraction of its alone throughput the chosen job
	// keeps when it shares; 0: 0.6.
	Keep float64
	// NoSharing turns space sharing off.
	NoSharing bool
	// NoAgeing ranks jobs by remaining work alone ("inlay-srpt"). By
	// default jobs are ranked by the time they would finish under processor
	// sharing: the fair sojourn protocol (Friedman and Henderson,
	// SIGMETRICS 2003). The policy runs, beside the real cluster, a virtual
	// one where the jobs not yet done there get Gavel's
	// heterogeneity-agnostic max-min share (policy.EqualShare, at its
	// isolated throughput), and serves first the job that finishes first
	// there. A short new job still finishes early there and goes first, as
	// under shortest-remaining-first; a long job that has waited keeps
	// progressing in the virtual system until its virtual finish comes
	// ahead of the newcomers', so it cannot starve (on one server FSP
	// finishes no job later than processor sharing does). No constant.
	NoAgeing bool

	// The ageing's virtual system: per job ID, the steps left there, the rate
	// it has had since the last call, and when it finished there.
	virtLeft, virtRate, virtDone map[int]float64
	virtNow                      float64
}

var _ policy.Policy = (*JCT)(nil)

func (p *JCT) Name() string {
	name := "inlay"
	if p.NoAgeing {
		name = "inlay-srpt"
	}
	if p.NoSharing {
		name += "-noss"
	}
	return name
}

// virtualFinish advances the virtual processor-sharing system to s.Now and
// returns each job's finish time there (the ageing): the time it finished
// there, for a job done in the virtual system but not in the real one,
// else now plus its virtual steps left over its virtual rate.
func (p *JCT) virtualFinish(s *policy.State) []float64 {
	if p.virtLeft == nil {
		p.virtLeft, p.virtRate, p.virtDone = map[int]float64{}, map[int]float64{}, map[int]float64{}
		p.virtNow = s.Now
	}
	out := make([]float64, len(s.Jobs))
	var live []policy.Job // jobs still running in the virtual system
	var liveIdx []int
	seen := make(map[int]bool, len(s.Jobs))
	for m := range s.Jobs {
		j := &s.Jobs[m]
		seen[j.ID] = true
		if done, ok := p.virtDone[j.ID]; ok {
			out[m] = done
			continue
		}
		left, ok := p.virtLeft[j.ID]
		from := p.virtNow
		if !ok {
			// New since the last call (at most a round ago): in the
			// virtual system from its arrival, at its first rate.
			left, from = j.Steps, math.Max(j.Arrival, p.virtNow)
		}
		if r := p.virtRate[j.ID]; r > 0 {
			if t := from + left/r; t <= s.Now {
				p.virtDone[j.ID] = t
				delete(p.virtLeft, j.ID)
				out[m] = t
				continue
			}
			left -= r * math.Max(0, s.Now-from)
		}
		p.virtLeft[j.ID] = left
		live = append(live, *j)
		liveIdx = append(liveIdx, m)
	}
	// The live jobs share the cluster max-min fairly until the next call.
	vs := &policy.State{Now: s.Now, Jobs: live, C: s.C, Table: s.Table}
	iso := policy.IsolatedThroughput(vs, policy.EqualShare(vs))
	for i, m := range liveIdx {
		id := s.Jobs[m].ID
		p.virtRate[id] = iso[i]
		out[m] = math.Inf(1)
		if iso[i] > 0 {
			out[m] = s.Now + p.virtLeft[id]/iso[i]
		}
	}
	for _, mp := range []map[int]float64{p.virtLeft, p.virtRate, p.virtDone} {
		for id := range mp {
			if !seen[id] {
				delete(mp, id)
			}
		}
	}
	p.virtNow = s.Now
	return out
}

func (p *JCT) Traits() policy.Traits {
	return policy.Traits{SpaceSharing: !p.NoSharing, EveryRound: true}
}

// Allocate picks the jobs to run this round.
func (p *JCT) Allocate(_ context.Context, s *policy.State) (*policy.Allocation, error) {
	n, G := len(s.Jobs), len(s.C.Count)
	share, keep := p.Share, p.Keep
	if share == 0 {
		share = 1.25
	}
	if keep == 0 {
		keep = 0.6
	}
	best := make([]float64, n)
	work := make([]float64, n)
	for m := range s.Jobs {
		j := &s.Jobs[m]
		best[m] = s.Best(j)
		work[m] = math.Inf(1)
		if best[m] > 0 {
			work[m] = j.Remaining / best[m] * float64(j.GPUs) / j.Weight
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	key := work
	if !p.NoAgeing {
		key = p.virtualFinish(s)
	}
	sort.Slice(idx, func(a, b int) bool {
		if key[idx[a]] != key[idx[b]] {
			return key[idx[a]] < key[idx[b]]
		}
		if work[idx[a]] != work[idx[b]] {
			return work[idx[a]] < work[idx[b]]
		}
		return s.Jobs[idx[a]].ID < s.Jobs[idx[b]].ID
	})
	// Choose jobs in that order while GPUs remain (a job that does not fit
	// is skipped, not waited for: smaller jobs behind it may fill the gap).
	total := s.C.Total()
	var chosen []int
	used := 0
	for _, m := range idx {
		if used >= total {
			break
		}
		if best[m] > 0 && used+s.Jobs[m].GPUs <= total {
			chosen = append(chosen, m)
			used += s.Jobs[m].GPUs
		}
	}
	at := assignTypes(s, chosen, best)
	// Work conservation: GPUs the matching left free go to the next jobs
	// in order that can run there.
	left := append([]int(nil), s.C.Count...)
	in := make([]bool, n)
	for i, m := range chosen {
		in[m] = true
		if at[i] >= 0 {
			left[at[i]] -= s.Jobs[m].GPUs
		}
	}
	for _, m := range idx {
		if in[m] || best[m] == 0 {
			continue
		}
		j := &s.Jobs[m]
		if pick := s.Fastest(j, left); pick >= 0 {
			left[pick] -= j.GPUs
			chosen = append(chosen, m)
			at = append(at, pick)
			in[m] = true
		}
	}
	x := make([][]float64, n)
	for m := range x {
		x[m] = make([]float64, G)
	}
	a := &policy.Allocation{}
	running := make([]bool, n)
	for i, m := range chosen {
		if g := at[i]; g >= 0 {
			x[m][g] = 1
			running[m] = true
		}
	}
	// Space sharing: each running job (shortest first) may take one waiting
	// partner of its scale factor on its GPUs.
	pairs := 0
	if !p.NoSharing && s.Table.CanShare() {
		var waiting []int
		// The first partners in order are the ones worth starting; a
		// bounded list keeps the pairing O(n·K).
		for _, m := range idx {
			if !running[m] && best[m] > 0 {
				waiting = append(waiting, m)
				if len(waiting) == maxPartners {
					break
				}
			}
		}
		taken := make([]bool, n)
		for i, m := range chosen {
			g := at[i]
			if g < 0 {
				continue
			}
			ja := &s.Jobs[m]
			bestK, bestGain := -1, share
			for _, k := range waiting {
				jb := &s.Jobs[k]
				if taken[k] || jb.GPUs != ja.GPUs {
					continue
				}
				ta, tb, ok := s.Table.Pair(ja.Row, jb.Row, g)
				if !ok || ta < keep*s.Alone(ja, g) {
					continue
				}
				if gain := ta/s.Alone(ja, g) + tb/best[k]; gain > bestGain {
					bestK, bestGain = k, gain
				}
			}
			if bestK >= 0 {
				taken[bestK] = true
				x[m][g] = 0
				xx := make([]float64, G)
				xx[g] = 1
				lo, hi := s.Jobs[m].ID, s.Jobs[bestK].ID
				if lo > hi {
					lo, hi = hi, lo
				}
				a.Entries = append(a.Entries, policy.Entry{A: lo, B: hi, X: xx})
				pairs++
			}
		}
	}
	// Only the jobs that run: the mechanism asks this policy every round,
	// so a job left out simply waits.
	for m := range s.Jobs {
		for _, v := range x[m] {
			if v > 0 {
				a.Entries = append(a.Entries, policy.Entry{A: s.Jobs[m].ID, B: -1, X: x[m]})
				break
			}
		}
	}
	a.Sort()
	a.Note = fmt.Sprintf("%s: %d jobs chosen, %d pairs", p.Name(), len(chosen), pairs)
	return a, nil
}

// assignTypes matches the chosen jobs (indices into s.Jobs) to GPU types
// within the counts: it returns a column per chosen job (-1: none fits).
// Types are filled from the fastest (by the chosen jobs' mean throughput);
// each takes, among the jobs left that it can run, those that would lose
// most by going to the next type instead — the comparative-advantage rule,
// optimal for two types and jobs of one GPU.
func assignTypes(s *policy.State, chosen []int, best []float64) []int {
	G := len(s.C.Count)
	out := make([]int, len(chosen))
	for i := range out {
		out[i] = -1
	}
	speed := make([]float64, G)
	for _, m := range chosen {
		for g := range speed {
			speed[g] += s.Alone(&s.Jobs[m], g) / best[m]
		}
	}
	order := make([]int, 0, G)
	for g, c := range s.C.Count {
		if c > 0 {
			order = append(order, g)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return speed[order[a]] > speed[order[b]] })
	left := append([]int(nil), s.C.Count...)
	for oi, g := range order {
		// Normalised rate here and on the best slower type.
		type cand struct {
			i         int
			advantage float64
		}
		var cs []cand
		for i, m := range chosen {
			if out[i] >= 0 {
				continue
			}
			j := &s.Jobs[m]
			here := s.Alone(j, g) / best[m]
			if here <= 0 || s.C.Count[g] < j.GPUs {
				continue
			}
			next := 0.0
			for _, h := range order[oi+1:] {
				if s.C.Count[h] >= j.GPUs {
					next = math.Max(next, s.Alone(j, h)/best[m])
				}
			}
			// Normalised rate lost by holding the next type instead.
			cs = append(cs, cand{i, here - next})
		}
		sort.SliceStable(cs, func(a, b int) bool {
			if cs[a].advantage != cs[b].advantage {
				return cs[a].advantage > cs[b].advantage
			}
			return cs[a].i < cs[b].i
		})
		for _, c := range cs {
			need := s.Jobs[chosen[c.i]].GPUs
			if left[g] >= need {
				left[g] -= need
				out[c.i] = g
			}
		}
	}
	return out
}

// Makespan is the fluid minimum-makespan LP (Gavel's formulation),
// recomputed at every arrival and completion.
type Makespan struct {
	LP           gavel.Config
	SpaceSharing bool
}

func (p *Makespan) Name() string {
	if p.SpaceSharing {
		return "inlay-makespan-ss"
	}
	return "inlay-makespan"
}

func (p *Makespan) Traits() policy.Traits {
	return policy.Traits{SpaceSharing: p.SpaceSharing, EveryEvent: true}
}

func (p *Makespan) Allocate(ctx context.Context, s *policy.State) (*policy.Allocation, error) {
	// inlay's own LP takes the vertex with the tie-break whatever the LP
	// mode of Gavel's policies (gavel.Config.Interior is Gavel's way).
	cfg := p.LP
	cfg.Interior = false
	inner := &gavel.Makespan{Variant: gavel.Variant{Cfg: cfg, SpaceSharing: p.SpaceSharing}}
	a, err := inner.Allocate(ctx, s)
	if err != nil {
		return nil, err
	}
	a.Note = p.Name() + ": " + a.Note
	return a, nil
}
