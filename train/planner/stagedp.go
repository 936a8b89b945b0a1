package planner

import (
	"fmt"
	"math"
	"sort"

	"github.com/inlay-dev/inlay/train"
)

// stageDP tries pipelines whose stages have data parallelism of their
// own (train.Plan.Groups): the first type's GPUs split evenly over ka
// stages, then the second type's over kb, each type with its own TP, so
// that each type runs at the data-parallel width its memory and speed
// suit (Metis's device groups, at the type boundary, with inlay's
// recomputation choices, context parallelism and layer balancer). Each split is priced from
// the parts and balanced under the memory caps; the best few by estimate
// are simulated.
func stageDP(e *evaluator) {
	m, c, B := e.m, e.c, e.o.GlobalBatch
	types := c.Types()
	if len(types) < 2 || m.Net != nil {
		return
	}
	var cands []metisCand
	for _, a := range types {
		for _, b := range types {
			if a == b {
				continue
			}
			for ka := 1; ka <= 3; ka++ {
				for kb := 1; kb <= 3 && ka+kb <= m.Layers; kb++ {
					for _, ta := range tpOptions(m, c, a) {
						for _, tb := range tpOptions(m, c, b) {
							for _, cp := range cpOptions(m) {
								if e.expired() {
									return
								}
								if cp > 1 && (ta*cp > c.GPUsPerNode(a) || tb*cp > c.GPUsPerNode(b)) {
									continue // the CP ring stays inside a server
								}
								cands = append(cands, stageDPSplits(e, [2]string{a, b}, [2]int{ka, kb}, [2]int{ta, tb}, cp, B)...)
							}
						}
					}
				}
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].est < cands[j].est })
	for i := 0; i < len(cands) && i < 8 && !e.expired(); i++ {
		e.try(cands[i].p, cands[i].note)
	}
}

// stageDPSplits prices one layout (types, stages of each, TP of each, the
// context-parallel degree) at
// every micro-batch the stages' data parallelism divides (a rank taking
// 1 to 16 sequences of it) and every recomputation.
func stageDPSplits(e *evaluator, types [2]string, k, tp [2]int, cp, B int) []metisCand {
	m, c := e.m, e.c
	var dp [2]int
	for i := range types {
		n := c.GPUs(types[i])
		if n%(k[i]*tp[i]*cp) != 0 {
			return nil
		}
		dp[i] = n / (k[i] * tp[i] * cp)
	}
	if e.o.MaxGPUs > 0 && c.GPUs(types[0])+c.GPUs(types[1]) > e.o.MaxGPUs {
		return nil
	}
	P := k[0] + k[1]
	var out []metisCand
	note := func(M int, rc string, caps, counts []int) *stageDPNote {
		return &stageDPNote{types: types, k: k, tp: tp, dp: dp, cp: cp, micro: M, recompute: rc, caps: caps, counts: counts}
	}
	for M := 1; M <= B; M++ {
		if B%M != 0 || M%dp[0] != 0 || M%dp[1] != 0 || M/dp[0] > 16 || M/dp[1] > 16 {
			continue
		}
		for _, rc := range recomputations {
			base := basePlan(c, M, B, rc, 1)
			base.CP = cp
			p := *base
			p.Groups = make([]train.Group, P)
			for s := range p.Groups {
				i := 0
				if s >= k[0] {
					i = 1
				}
				p.Groups[s] = train.Group{Ranks: []train.Rank{{GPU: types[i], TP: tp[i], Share: M / dp[i], Count: dp[i]}}}
			}
			sp := groupSplit(e, base, p.Groups, B/M, func(s int, r train.Rank) int {
				return layerCap(m, c, rankPlan(base, r, r.Count, B/M, P), s, r.GPU, r.TP)
			})
			if sp.counts == nil {
				continue
			}
			p.Stages = ranges(sp.counts)
			out = append(out, metisCand{est: sp.est, p: &p, note: note(M, rc, sp.caps, sp.counts)})
		}
	}
	return out
}

// split is a plan with per-stage groups priced from the parts: each
// stage's layer cap (the least any of its kinds of rank holds), its time
// with n layers (its slowest kind's), the balanced split (nil when none
// fits) and its 1F1B estimate.
type split struct {
	caps   []int
	cost   func(s, n int) float64
	counts []int
	est    float64
}

// groupSplit prices groups on base's settings, batches micro-batches a
// step; capOf is the most layers a kind of rank r holds on stage s.
func groupSplit(e *evaluator, base *train.Plan, groups []train.Group, batches int, capOf func(s int, r train.Rank) int) split {
	P := len(groups)
	sp := split{caps: make([]int, P)}
	pcs := make([][]train.PartCost, P)
	for s, g := range groups {
		sp.caps[s] = e.m.Layers
		for _, r := range g.Ranks {
			sp.caps[s] = min(sp.caps[s], capOf(s, r))
			q := *base
			q.MicroBatch = r.Share
			pcs[s] = append(pcs[s], e.cost(r.GPU, r.TP, &q))
		}
	}
	sp.cost = func(s, n int) float64 {
		t := 0.0
		for _, pc := range pcs[s] {
			t = math.Max(t, stageTime(pc, n, s, P))
		}
		return t
	}
	if sp.counts = balance(e.m.Layers, sp.caps, sp.cost); sp.counts != nil {
		ts := make([]float64, P)
		for s := range ts {
			ts[s] = sp.cost(s, sp.counts[s])
		}
		sp.est = replicaTime(ts, batches)
	}
	return sp
}

// stageDPNote is how stageDP made a plan: the two types, the stages each
// takes, their TP and data-parallel ranks, the CP degree, the
// micro-batch, the recomputation, each stage's layer cap and the split.
type stageDPNote struct {
	types        [2]string
	k, tp, dp    [2]int
	cp, micro    int
	recompute    string
	caps, counts []int
}

// explainStageDP writes down why a plan with per-stage data parallelism
// is as it is.
func explainStageDP(e *evaluator, res *Result, n *stageDPNote) *Explain {
	p, sim := res.Plan, res.Sim
	x := &Explain{}
	cp := ""
	if n.cp > 1 {
		cp = fmt.Sprintf(" × cp %d", n.cp)
	}
	x.Choices = append(x.Choices,
		fmt.Sprintf("stages with their own data parallelism: %s over %d stage(s) at %d ranks of tp %d%s, then %s over %d at %d ranks of tp %d%s; the best of %d simulated plans for the %s objective",
			n.types[0], n.k[0], n.dp[0], n.tp[0], cp, n.types[1], n.k[1], n.dp[1], n.tp[1], cp, res.Evaluated, e.o.Objective),
		fmt.Sprintf("micro-batch %d: %d and %d sequences a rank, %d micro-batches; recompute %s", n.micro, n.micro/n.dp[0], n.micro/n.dp[1], p.GlobalBatch/n.micro, n.recompute),
		"stage boundaries: "+fmt.Sprint(n.counts)+" layers, the least time of the slowest stage within each stage's memory (then moved a layer at a time while the simulator improved)")
	mem := 0.0
	for s, r := range p.Stages {
		note := StageNote{Stage: s, Layers: r}
		stageMax, memFrac := stageLoad(sim, s)
		for _, st := range sim.Stages {
			if st.Stage == s {
				note.Kinds = append(note.Kinds, fmt.Sprintf("%d× %s tp %d: %.1f ms a micro-batch", st.Ranks, st.GPU, st.TP, 1e3*(st.ForwardS+st.BackwardS)))
			}
		}
		capMin := e.m.Layers
		if s < len(n.caps) {
			capMin = n.caps[s]
		}
		note.LayersWhy = fmt.Sprintf("%d layers; memory allows at most %d here", r.Count(), capMin)
		note.Binding = stageBinding(e.m, r.Count(), capMin, memFrac, stageMax, sim)
		mem = math.Max(mem, memFrac)
		x.Stages = append(x.Stages, note)
	}
	x.Binding = overallBinding(mem, sim)
	return x
}
