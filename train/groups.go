package train

import (
	"fmt"
	"math"
)

// Rank is Count identical data-parallel ranks of one stage in a plan
// whose stages each have data parallelism of their own: each rank a
// tensor-parallel group of TP GPUs of one type, taking Share sequences of
// every micro-batch.
type Rank struct {
	GPU   string `yaml:"gpu" json:"gpu"`
	TP    int    `yaml:"tp" json:"tp"`
	Share int    `yaml:"share" json:"share"`
	Count int    `yaml:"count" json:"count"`
}

// Group is one stage's data-parallel ranks.
type Group struct {
	Ranks []Rank `yaml:"ranks" json:"ranks"`
}

// DP is the group's number of data-parallel ranks.
func (g Group) DP() int {
	n := 0
	for _, r := range g.Ranks {
		n += r.Count
	}
	return n
}

// fillDefaults reads a rank left without TP or count as one.
func (r *Rank) fillDefaults() {
	if r.TP == 0 {
		r.TP = 1
	}
	if r.Count == 0 {
		r.Count = 1
	}
}

// StageDP reports whether the plan gives every stage its own
// data-parallel ranks (Groups) rather than replicas of the pipeline.
func (p *Plan) StageDP() bool { return len(p.Groups) > 0 }

// EachGroup calls fn for every tensor-parallel group type the plan uses,
// in order: each replica's stages, or each stage's ranks; n is how many
// such groups (Count for ranks), each of tp × CP GPUs.
func (p *Plan) EachGroup(fn func(gpu string, tp, n int)) {
	for _, r := range p.Replicas {
		for _, s := range r.Stages {
			fn(s.GPU, s.TP*p.ContextParallel(), 1)
		}
	}
	for _, g := range p.Groups {
		for _, r := range g.Ranks {
			fn(r.GPU, r.TP*p.ContextParallel(), r.Count)
		}
	}
}

// AsReplicas is a plan with per-stage data parallelism written as
// replicas when it is one: every stage has the same data parallelism and
// the i-th rank of every stage takes the same share, so rank i of each
// stage makes replica i (its batch the share times the micro-batches, its
// micro-batch the share). Replicas step on their own where the group's
// ranks wait for one another, so the replica form is never slower; more
// engines run it. It returns p and false otherwise.
func (p *Plan) AsReplicas() (*Plan, bool) {
	if !p.StageDP() {
		return p, false
	}
	dp := p.Groups[0].DP()
	shares := make([][]Rank, len(p.Groups)) // per stage, rank by rank
	for s, g := range p.Groups {
		if g.DP() != dp {
			return p, false
		}
		for _, r := range g.Ranks {
			for k := 0; k < r.Count; k++ {
				shares[s] = append(shares[s], r)
			}
		}
		for i := range shares[s] {
			if shares[s][i].Share != shares[0][i].Share {
				return p, false
			}
		}
	}
	q := *p
	q.Groups = nil
	q.Replicas = make([]Replica, dp)
	for i := range q.Replicas {
		r := &q.Replicas[i]
		r.Batch = shares[0][i].Share * p.Micros()
		r.MicroBatch = shares[0][i].Share
		for s := range p.Groups {
			r.Stages = append(r.Stages, Placement{GPU: shares[s][i].GPU, TP: shares[s][i].TP})
		}
	}
	return &q, true
}

// Micros is the number of micro-batches a replica-less plan runs: the
// global batch over the micro-batch.
func (p *Plan) Micros() int { return p.GlobalBatch / p.MicroBatch }

// checkGroups checks a plan with per-stage data parallelism: one group a
// stage, every stage's shares adding up to the micro-batch, the global
// batch a whole number of micro-batches. Such plans are of transformers,
// with 1F1B or GPipe; under context parallelism every rank is TP × CP
// GPUs.
func (p *Plan) checkGroups(m *Model) error {
	switch {
	case len(p.Replicas) > 0:
		return fmt.Errorf("groups: give replicas or groups, not both")
	case len(p.Groups) != len(p.Stages):
		return fmt.Errorf("groups: %d for %d stages (one a stage)", len(p.Groups), len(p.Stages))
	case m.Net != nil:
		return fmt.Errorf("groups: per-stage data parallelism is for transformers; %s is a graph network (use replicas)", m.Name)
	case p.Schedule.chunks() > 1:
		return fmt.Errorf("groups: per-stage data parallelism runs gpipe or 1f1b, not %s", p.Schedule)
	case p.GlobalBatch%p.MicroBatch != 0:
		return fmt.Errorf("global_batch: %d is not a multiple of the micro-batch %d", p.GlobalBatch, p.MicroBatch)
	case p.Micros() > 1<<20:
		return fmt.Errorf("global_batch: %d micro-batches is too many", p.Micros())
	}
	for s, g := range p.Groups {
		if len(g.Ranks) == 0 {
			return fmt.Errorf("groups[%d].ranks: none", s)
		}
		sum := 0
		for i, r := range g.Ranks {
			where := fmt.Sprintf("groups[%d].ranks[%d]", s, i)
			if err := checkTP(m, r.TP); err != nil {
				return fmt.Errorf("%s.tp: %v", where, err)
			}
			if r.Count <= 0 || r.Count > 1<<20 {
				return fmt.Errorf("%s.count: %d must be in 1..%d", where, r.Count, 1<<20)
			}
			if r.Share <= 0 || r.Share > p.MicroBatch {
				return fmt.Errorf("%s.share: %d must be in 1..%d (the micro-batch)", where, r.Share, p.MicroBatch)
			}
			sum += r.Share * r.Count
		}
		if sum != p.MicroBatch {
			return fmt.Errorf("groups[%d]: shares add up to %d sequences, not the micro-batch %d", s, sum, p.MicroBatch)
		}
	}
	return nil
}

// rankView is p as rank entry r of stage s runs it (AsRank).
func (p *Plan) rankView(s int, r Rank) *Plan {
	return p.AsRank(r.Share, p.Groups[s].DP(), p.Micros())
}

// AsRank is p as each of dp identical data-parallel ranks runs it that
// takes share sequences of each of micros micro-batches: a plan of dp
// replicas with share as their micro-batch, so that the replica-plan
// pricing and memory model apply to one rank of a stage with its own data
// parallelism.
func (p *Plan) AsRank(share, dp, micros int) *Plan {
	q := *p
	q.Groups = nil
	q.MicroBatch = share
	q.Replicas = make([]Replica, dp)
	for i := range q.Replicas {
		q.Replicas[i].Batch = micros * share
	}
	q.GlobalBatch = dp * micros * share
	return &q
}

// placeGroups puts every rank of every stage on the cluster's GPUs of its
// type, stage by stage, each rank's TP GPUs together, filling servers in
// order.
func placeGroups(c *Cluster, p *Plan) ([][]placed, error) {
	next := map[string]int{}
	out := make([][]placed, len(p.Groups))
	for s, g := range p.Groups {
		for i, r := range g.Ranks {
			for k := 0; k < r.Count; k++ {
				x, err := c.take(next, r.GPU, r.TP, p.ContextParallel(), p)
				if err != nil {
					return nil, fmt.Errorf("groups[%d].ranks[%d]: %v", s, i, err)
				}
				out[s] = append(out[s], x)
			}
		}
	}
	return out, nil
}

// entryOf lists, for each placed rank of stage s, its entry in
// p.Groups[s].Ranks.
func entryOf(g Group) []int {
	out := make([]int, 0, g.DP())
	for i, r := range g.Ranks {
		for k := 0; k < r.Count; k++ {
			out = append(out, i)
		}
	}
	return out
}

// simulateGroups predicts an iteration of a plan with per-stage data
// parallelism. Every micro-batch passes through the stages once; a
// stage's time for it is its slowest rank's on that rank's share, so the
// pipeline is one pipeline of these times under the plan's schedule.
// Between stages each rank sends its share's activations to the ranks of
// the next stage that take them (the slowest rank pair sets the time);
// gradients are reduced over each stage's own ranks.
func simulateGroups(m *Model, c *Cluster, p *Plan, opt Options) (*Result, error) {
	pl, err := placeGroups(c, p)
	if err != nil {
		return nil, fmt.Errorf("train: plan: %v", err)
	}
	prec := planPrecision(p)
	P, CP := p.PP(), p.ContextParallel()
	res := &Result{Model: m.Name, GPUs: p.GPUs()}
	fwd := make([]float64, P)
	bwd := make([]float64, P)
	send := make([]float64, P)
	params := make([]float64, P)
	type rankCost struct{ f, b, optim float64 }
	costs := make([][]rankCost, P) // per stage, per entry (its slowest rank)
	for s := 0; s < P; s++ {
		params[s] = stageParams(m, p, s)
		g := p.Groups[s]
		dp := g.DP() * CP // gradients are reduced, and ZeRO shards, over DP × CP
		ent := entryOf(g)
		costs[s] = make([]rankCost, len(g.Ranks))
		var dl link
		if p.Zero == 3 && dp > 1 {
			dl = c.dpLinkOf(len(pl[s]), func(i int) *placed { return &pl[s][i] })
		}
		for i := range pl[s] {
			x := &pl[s][i]
			r := g.Ranks[ent[i]]
			if i > 0 && ent[i-1] == ent[i] && x.tpCross == pl[s][i-1].tpCross {
				continue // the same as the rank before
			}
			d := newDevice(x.gpu, prec)
			f, b := transformerStage(m, p.rankView(s, r), s, x, &d, prec, c)
			local := params[s] / float64(x.tp)
			if p.Zero == 3 && dp > 1 {
				gt := dl.allGather(local*prec.param, dp)
				f += gt
				b += gt + dl.allGather(local*prec.comm, dp)
			}
			rc := &costs[s][ent[i]]
			rc.f, rc.b = math.Max(rc.f, f), math.Max(rc.b, b)
			rc.optim = math.Max(rc.optim, optimizerTime(&d, x.gpu, p, prec, local, dp))
			fwd[s], bwd[s] = math.Max(fwd[s], f), math.Max(bwd[s], b)
		}
	}
	// re-sharding between stages: rank i of a stage pairs with the rank of
	// the other stage at the same place in the micro-batch
	perSeq := float64(m.Seq*m.Hidden) * prec.act / float64(CP)
	for s := 0; s+1 < P; s++ {
		a, b := p.Groups[s], p.Groups[s+1]
		ea, eb := entryOf(a), entryOf(b)
		pair := func(from, to []placed, ef []int, gf Group, nt int) {
			for i := range from {
				j := i * nt / len(from)
				bytes := float64(gf.Ranks[ef[i]].Share) * perSeq
				if !p.P2PWhole {
					bytes /= float64(min(from[i].tp, to[j].tp))
				}
				send[s] = math.Max(send[s], c.p2pLink(&from[i], &to[j]).send(bytes))
			}
		}
		pair(pl[s], pl[s+1], ea, a, len(pl[s+1]))
		pair(pl[s+1], pl[s], eb, b, len(pl[s]))
	}

	w := pipePool.Get().(*pipeWork)
	defer pipePool.Put(w)
	in := pipeInput{p: P, v: 1, kind: p.Schedule.Kind, m: p.Micros(), fwd: fwd, bwd: bwd, send: send}
	var trace func(pipeTask)
	if opt.Trace {
		trace = func(t pipeTask) {
			kind := "backward"
			if t.fwd {
				kind = "forward"
			}
			res.Spans = append(res.Spans, Span{Stage: t.stage, Kind: kind, Chunk: t.chunk, Micro: t.mb, Start: t.start, End: t.end})
		}
	}
	lastB, busy, err := in.run(w, trace)
	if err != nil {
		return nil, err
	}

	res.Fits = true
	var peakFlops, totalBusy float64
	for s := 0; s < P; s++ {
		g := p.Groups[s]
		dp := g.DP() * CP
		syncT := 0.0
		if dp > 1 && p.Zero < 3 {
			minTP := pl[s][0].tp
			for i := range pl[s] {
				minTP = min(minTP, pl[s][i].tp)
			}
			bytes := params[s] / float64(minTP) * prec.comm
			ar := c.dpLinkOf(len(pl[s]), func(i int) *placed { return &pl[s][i] }).allReduce(bytes, dp, p.DPAlgorithm == "tree")
			if p.OverlapGradReduce {
				nb := math.Max(1, math.Ceil(bytes/(p.BucketMB*1e6)))
				// hidden behind the shortest backward of the stage's
				// ranks, as replicas are behind the shortest of theirs
				window := bwd[s]
				for _, rc := range costs[s] {
					window = math.Min(window, rc.b)
				}
				syncT = math.Max(ar/nb, ar-window*(1-1/nb))
			} else {
				syncT = ar
			}
		}
		if m.Tied && P > 1 && (s == 0 || s == P-1) {
			x, y := &pl[0][0], &pl[P-1][0]
			syncT += c.p2pLink(x, y).allReduce(float64(m.Vocab*m.Hidden)/float64(x.tp)*prec.comm, 2, false)
		}
		first := 0
		for e, r := range g.Ranks {
			x := &pl[s][first]
			first += r.Count
			rc := costs[s][e]
			end := lastB[s] + syncT + rc.optim
			// the rank computes its own share; the rest of the stage's
			// busy time it waits for the stage's slowest rank
			own := busy[s] * (rc.f + rc.b) / (fwd[s] + bwd[s])
			st := StageResult{Replica: e, Stage: s, Ranks: r.Count, GPU: x.gpu.Name, TP: r.TP, CP: p.CP, Layers: p.Stages[s],
				ForwardS: rc.f, BackwardS: rc.b, ComputeS: own, SyncS: syncT, OptimizerS: rc.optim, EndS: end,
				TimeS: own + syncT + rc.optim}
			st.Memory = stageMemory(m, p.rankView(s, r), s, x, prec, params[s])
			st.CapacityBytes = x.gpu.MemoryBytes()
			st.Fits = st.Memory.Total <= st.CapacityBytes
			if !st.Fits && res.Fits {
				res.Fits = false
				res.Reason = fmt.Sprintf("stage %d rank %d (%s, tp %d, %d sequences a micro-batch) needs %.1f GiB of its %.1f GiB", s, e, st.GPU, st.TP, r.Share, st.Memory.Total/(1<<30), st.CapacityBytes/(1<<30))
			}
			res.PeakMemoryBytes = math.Max(res.PeakMemoryBytes, st.Memory.Total)
			res.IterationS = math.Max(res.IterationS, end)
			totalBusy += own * float64(r.Count)
			peakFlops += newDevice(x.gpu, prec).peak * float64(r.TP*CP*r.Count)
			res.Stages = append(res.Stages, st)
			if opt.Trace && e == 0 {
				if syncT > 0 {
					res.Spans = append(res.Spans, Span{Stage: s, Kind: "grad-sync", Start: lastB[s], End: lastB[s] + syncT})
				}
				res.Spans = append(res.Spans, Span{Stage: s, Kind: "optimizer", Start: lastB[s] + syncT, End: end})
			}
		}
	}
	ranks := 0
	for _, g := range p.Groups {
		ranks += g.DP()
	}
	res.TokensPerS = float64(p.GlobalBatch) * float64(m.Seq) / res.IterationS
	res.MFU = 3 * m.FLOPsPerToken() * res.TokensPerS / peakFlops
	res.Bubble = 1 - totalBusy/(float64(ranks)*res.IterationS)
	return res, nil
}

// fitsGroups is Fits for a plan with per-stage data parallelism.
func fitsGroups(m *Model, c *Cluster, p *Plan) bool {
	prec := planPrecision(p)
	for s, g := range p.Groups {
		params := stageParams(m, p, s)
		for _, r := range g.Ranks {
			gt := c.gpu(r.GPU)
			if gt == nil {
				return false
			}
			mb := stageMemory(m, p.rankView(s, r), s, &placed{gpu: gt, tp: r.TP}, prec, params)
			if mb.Total > gt.MemoryBytes() || math.IsNaN(mb.Total) {
				return false
			}
		}
	}
	return true
}
