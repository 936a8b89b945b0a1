package planner

import (
	"sort"

	"github.com/inlay-dev/inlay/train"
)

// Metis follows Um et al., "Metis: Fast Automatic Distributed Training
// on Heterogeneous GPUs" (USENIX ATC 2024), as its code searches
// (SamsungLabs/Metis: search_space/plan.py, search_space/device_group.py,
// model/load_balancer.py, model/device_group.py):
//
//   - For each order of the GPU types it lays every GPU of the cluster out
//     in a line, the types in that order, and cuts the line into stages:
//     device groups whose sizes are powers of two of at least the GPUs
//     over the stages (min_group_scale_variance 1), every order of the
//     sizes with runs of the smallest merged so that at most four blocks
//     are permuted (max_permute_len 4). A group may straddle the types.
//   - Every number of micro-batches that divides the global batch.
//   - Each stage starts all data-parallel (dp = its GPUs, tp 1); while the
//     plan is invalid (a rank with no sequence of the micro-batch, or more
//     than the largest profiled batch) or does not fit, the stage with the
//     least free memory (at first, the largest dp) halves dp and doubles
//     tp; the first strategy that fits is the candidate.
//   - Inside a stage whose ranks are of two types, each micro-batch is
//     split over the ranks in proportion to their speed, largest
//     remainders first (DataLoadBalancer).
//   - Layers go to stages by speed within each stage's memory: inlay's
//     balancer (the least time of the slowest stage) stands in for Metis's
//     greedy LayerComputeBalancer, which can only do as well.
//   - Candidates are ranked by the 1F1B estimate (the first micro-batch
//     through every stage, the rest at the slowest stage's pace), the best
//     64 simulated. Recomputation none or full.
//
// The largest profiled TP is the server (the artifact's example: 4), the
// largest profiled batch a rank takes 16 (the example: 4); both are
// wider than the artifact's runs, never narrower.
type Metis struct{}

// Name is the registry's name.
func (Metis) Name() string { return "metis" }

// metisCand is a ranked candidate.
type metisCand struct {
	est  float64
	p    *train.Plan
	note any // how the plan was made, for --explain
}

// metisMaxShare is the largest batch a rank takes (Metis's
// max_profiled_batch_size).
const metisMaxShare = 16

// Plan searches.
func (Metis) Plan(m *train.Model, c *train.Cluster, o Options) (*Result, error) {
	e, start, err := startBaseline("metis", m, c, &o)
	if err != nil {
		return nil, err
	}
	ms := &metisSearch{e: e, caps: map[metisCapKey]int{}, tps: map[string][]int{}, speed: map[train.Placement]float64{}}
	var cands []metisCand
	for _, order := range permutations(c.Types()) {
		line := metisLine(c, order, o.MaxGPUs)
		N := len(line)
		for k := 1; k <= min(N, m.Layers) && !e.expired(); k++ {
			for _, dg := range metisDeviceGroups(N, k, 4) {
				for batches := o.GlobalBatch; batches >= 1; batches-- {
					if o.GlobalBatch%batches != 0 {
						continue
					}
					for _, rc := range []string{"none", "full"} {
						if e.expired() {
							break
						}
						if cand, ok := ms.candidate(line, dg, o.GlobalBatch/batches, rc); ok {
							cands = append(cands, cand)
						}
					}
				}
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].est < cands[j].est })
	// the best-ranked candidate is simulated even when the enumeration
	// spent the budget, so that a plan comes back
	for i := 0; i < len(cands) && i < 64 && (i == 0 || !e.expired()); i++ {
		e.try(cands[i].p, nil)
	}
	return e.finish("metis", start)
}

// metisLine is every GPU's type, the types in order (under a GPU cap, the
// first that many).
func metisLine(c *train.Cluster, order []string, maxGPUs int) []string {
	var line []string
	for _, t := range order {
		for i := 0; i < c.GPUs(t); i++ {
			line = append(line, t)
		}
	}
	if maxGPUs > 0 && maxGPUs < len(line) {
		line = line[:maxGPUs]
	}
	return line
}

// metisDeviceGroups are the stage sizes Metis tries for k stages of N
// GPUs (gen_dgroups_for_stages_with_variance with variance 1): powers of
// two of at least N/k summing to N, each multiset in every order of its
// blocks, where runs of the smallest size are merged pairwise until at
// most maxPermute blocks remain.
func metisDeviceGroups(N, k, maxPermute int) [][]int {
	least := max(N/k, k/N)
	var shapes []int
	for g := 1; g <= N; g *= 2 {
		if g >= least {
			shapes = append(shapes, g)
		}
	}
	var out [][]int
	var rec func(sum, from int, sol []int)
	rec = func(sum, from int, sol []int) {
		left := k - len(sol)
		if left == 0 {
			if sum == N {
				for _, p := range metisPermute(sol, maxPermute) {
					out = append(out, p)
				}
			}
			return
		}
		if len(shapes) == 0 || shapes[len(shapes)-1]*left < N-sum || shapes[from]*left > N-sum {
			return
		}
		for i := from; i < len(shapes) && sum+shapes[i] <= N; i++ {
			rec(sum+shapes[i], i, append(append([]int(nil), sol...), shapes[i]))
		}
	}
	if len(shapes) > 0 {
		rec(0, 0, nil)
	}
	return out
}

// metisPermute is Metis's permute: the sizes (ascending) as blocks,
// neighbouring pairs of the smallest merged (at least half of the
// smallest, or as many as bring the blocks down to maxPermute) until at
// most maxPermute blocks remain or none merge, then every distinct order
// of the blocks.
func metisPermute(sizes []int, maxPermute int) [][]int {
	blocks := make([][]int, len(sizes))
	for i, s := range sizes {
		blocks[i] = []int{s}
	}
	sum := func(b []int) int {
		n := 0
		for _, x := range b {
			n += x
		}
		return n
	}
	for len(blocks) > maxPermute {
		least := sum(blocks[0])
		numMin := 0
		for numMin < len(blocks) && sum(blocks[numMin]) == least {
			numMin++
		}
		reduce := max(len(blocks)-maxPermute, numMin/2)
		var merged [][]int
		for i := 0; i < len(blocks); i += 2 {
			if i/2 >= reduce {
				merged = append(merged, blocks[i:]...)
				break
			}
			if i+1 >= len(blocks) {
				merged = append(merged, blocks[i])
			} else if sum(blocks[i]) == least && sum(blocks[i+1]) == least {
				merged = append(merged, append(append([]int(nil), blocks[i]...), blocks[i+1]...))
			} else {
				merged = append(merged, blocks[i], blocks[i+1])
			}
		}
		if len(merged) == len(blocks) {
			break
		}
		blocks = merged
	}
	var out [][]int
	seen := map[string]bool{}
	var rec func(used []bool, cur []int, n int)
	rec = func(used []bool, cur []int, n int) {
		if n == len(blocks) {
			key := ""
			for _, x := range cur {
				key += string(rune(x)) + ","
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, append([]int(nil), cur...))
			}
			return
		}
		for i := range blocks {
			if !used[i] {
				used[i] = true
				rec(used, append(cur, blocks[i]...), n+1)
				used[i] = false
			}
		}
	}
	rec(make([]bool, len(blocks)), nil, 0)
	return out
}

// metisStage is one stage's strategy: its GPUs on the line, dp × tp.
type metisStage struct {
	first, gpus int
	dp, tp      int
}

// metisSearch is one Metis search: the evaluator, and what the
// candidates share (each rank kind's layer capacity, each type's TP
// degrees).
type metisSearch struct {
	e     *evaluator
	caps  map[metisCapKey]int
	tps   map[string][]int
	speed map[train.Placement]float64 // layers a second at micro-batch 1
}

// metisCapKey names a rank kind's layer capacity: its stage's place in
// the pipeline, the rank and its stage's data parallelism, the
// micro-batches, the recomputation.
type metisCapKey struct {
	s, P        int
	rank        train.Rank
	dp, batches int
	rc          string
}

// layerCap is the most layers rank kind r holds on stage s of P.
func (ms *metisSearch) layerCap(base *train.Plan, r train.Rank, s, P, dp, batches int) int {
	r.Count = 0
	k := metisCapKey{s, P, r, dp, batches, base.Recompute}
	if n, ok := ms.caps[k]; ok {
		return n
	}
	n := layerCap(ms.e.m, ms.e.c, rankPlan(base, r, dp, batches, P), s, r.GPU, r.TP)
	ms.caps[k] = n
	return n
}

// validTP reports whether type gpu can take tensor parallelism tp.
func (ms *metisSearch) validTP(gpu string, tp int) bool {
	opts, ok := ms.tps[gpu]
	if !ok {
		opts = tpOptions(ms.e.m, ms.e.c, gpu)
		ms.tps[gpu] = opts
	}
	for _, t := range opts {
		if t == tp {
			return true
		}
	}
	return false
}

// candidate walks Metis's strategies for one order, device groups and
// micro-batch: the first that is valid and fits is the candidate.
func (ms *metisSearch) candidate(line []string, dg []int, micro int, rc string) (metisCand, bool) {
	e := ms.e
	m, c := e.m, e.c
	P := len(dg)
	st := make([]metisStage, P)
	first := 0
	for s, g := range dg {
		st[s] = metisStage{first: first, gpus: g, dp: g, tp: 1}
		first += g
	}
	base := basePlan(c, micro, e.o.GlobalBatch, rc, 1)
	batches := e.o.GlobalBatch / micro
	for {
		groups, ok := ms.ranks(line, st, micro)
		headroom := make([]float64, P) // free memory, for the next step
		if ok {
			p := *base
			p.Groups = groups
			sp := groupSplit(e, base, groups, batches, func(s int, r train.Rank) int {
				return ms.layerCap(base, r, s, P, groups[s].DP(), batches)
			})
			if sp.counts != nil {
				p.Stages = ranges(sp.counts)
				return metisCand{est: sp.est, p: &p}, true
			}
			caps, cost := sp.caps, sp.cost
			// the stage whose memory is shortest against its share of
			// the layers by speed
			speed, total := make([]float64, P), 0.0
			for s := range speed {
				speed[s] = 1 / cost(s, 1)
				total += speed[s]
			}
			for s := range headroom {
				headroom[s] = float64(caps[s]) - float64(m.Layers)*speed[s]/total
			}
		} else {
			for s := range headroom {
				headroom[s] = 1 / float64(st[s].dp)
			}
		}
		order := make([]int, P)
		for s := range order {
			order[s] = s
		}
		sort.SliceStable(order, func(i, j int) bool { return headroom[order[i]] < headroom[order[j]] })
		moved := false
		for _, s := range order {
			if st[s].dp > 1 {
				st[s].dp /= 2
				st[s].tp *= 2
				moved = true
				break
			}
		}
		if !moved {
			return metisCand{}, false
		}
	}
}

// metisRanks builds each stage's ranks for a strategy: rank i of a stage
// is its i-th TP group on the line, typed by its first GPU; one type's
// ranks share the micro-batch evenly, two types' in proportion to speed.
// It reports false when the strategy is invalid: a TP the type cannot
// take, a rank without a sequence or with more than Metis profiles.
func (ms *metisSearch) ranks(line []string, st []metisStage, micro int) ([]train.Group, bool) {
	out := make([]train.Group, len(st))
	type run struct {
		gpu        string
		n          int // ranks
		speed, rem float64
		share      int
	}
	var runs []run
	for s, x := range st {
		if !ms.validTP(line[x.first], x.tp) || !ms.validTP(line[x.first+x.gpus-1], x.tp) || micro < x.dp {
			return nil, false
		}
		// the line holds each type's GPUs together: a stage is a run or
		// two (three or more types: more), each of whole TP groups
		runs = runs[:0]
		total := 0.0
		for i := x.first; i < x.first+x.gpus; {
			j := i
			for j < x.first+x.gpus && line[j] == line[i] {
				j++
			}
			if (j-i)%x.tp != 0 {
				return nil, false // a TP group across two types
			}
			r := run{gpu: line[i], n: (j - i) / x.tp, speed: ms.speedOf(line[i], x.tp)}
			total += r.speed * float64(r.n)
			runs = append(runs, r)
			i = j
		}
		g := &out[s]
		if len(runs) == 1 {
			if micro%x.dp != 0 || micro/x.dp > metisMaxShare {
				return nil, false
			}
			g.Ranks = []train.Rank{{GPU: runs[0].gpu, TP: x.tp, Share: micro / x.dp, Count: x.dp}}
			continue
		}
		// in proportion to speed, the remainder one sequence each to the
		// ranks of the largest fractions, earlier ranks first on ties
		left := micro
		for i := range runs {
			f := float64(micro) * runs[i].speed / total
			runs[i].share = int(f)
			runs[i].rem = f - float64(runs[i].share)
			left -= runs[i].share * runs[i].n
		}
		idx := make([]int, len(runs))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return runs[idx[a]].rem > runs[idx[b]].rem })
		extra := make([]int, len(runs))
		for _, i := range idx {
			extra[i] = min(left, runs[i].n)
			left -= extra[i]
		}
		for i, r := range runs {
			for _, part := range [][2]int{{r.share + 1, extra[i]}, {r.share, r.n - extra[i]}} {
				if part[1] == 0 {
					continue
				}
				if part[0] < 1 || part[0] > metisMaxShare {
					return nil, false
				}
				g.Ranks = append(g.Ranks, train.Rank{GPU: r.gpu, TP: x.tp, Share: part[0], Count: part[1]})
			}
		}
	}
	return out, true
}

// speedOf is a rank's layers a second on type gpu at tp, micro-batch 1
// (the profile DataLoadBalancer reads: tp{tp}_bs1).
func (ms *metisSearch) speedOf(gpu string, tp int) float64 {
	k := train.Placement{GPU: gpu, TP: tp}
	v, ok := ms.speed[k]
	if !ok {
		v = 1 / ms.e.cost(gpu, tp, basePlan(ms.e.c, 1, 1, "none", 1)).Layer
		ms.speed[k] = v
	}
	return v
}

// rankPlan is base as each of dp ranks like r runs it, batches
// micro-batches (train.Plan.AsRank), with room for P stages.
func rankPlan(base *train.Plan, r train.Rank, dp, batches, P int) *train.Plan {
	q := base.AsRank(r.Share, dp, batches)
	q.Stages = make([]train.LayerRange, P)
	return q
}
