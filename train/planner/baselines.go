package planner

import (
	"math"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/train"
)

// baselineBudget bounds a baseline's search unless Options.Budget says
// otherwise; the baselines are meant to finish their grids.
const baselineBudget = 120 * time.Second

// Megatron is what a Megatron-LM user does by hand: one GPU type (each
// of the cluster's types in turn, alone), uniform stages (pp dividing the
// layers, as Megatron-LM requires without its uneven-stage arguments),
// tp × pp × dp using every GPU of the type where the batch splits evenly
// over the replicas, else the most it allows, and the best of the grid of
// tp (powers of two inside a server), pp, micro-batch 1–8 and
// recomputation none, selective or full, with the distributed optimizer.
type Megatron struct{}

// Name is the registry's name.
func (Megatron) Name() string { return "megatron" }

// Plan searches the grid.
func (Megatron) Plan(m *train.Model, c *train.Cluster, o Options) (*Result, error) {
	start := time.Now()
	if err := transformerOnly("megatron", m); err != nil {
		return nil, err
	}
	if err := o.check(m, c); err != nil {
		return nil, err
	}
	e := newEvaluator(m, c, o, baselineBudget)
	B := o.GlobalBatch
	for _, t := range c.Types() {
		N := c.GPUs(t)
		if o.MaxGPUs > 0 {
			N = min(N, o.MaxGPUs)
		}
		for _, tp := range tpOptions(m, c, t) {
			for pp := 1; pp <= m.Layers && tp*pp <= N; pp++ {
				if m.Layers%pp != 0 {
					continue
				}
				for _, mb := range []int{1, 2, 4, 8} {
					// the most replicas the GPUs hold that split the
					// batch evenly: every GPU of the type when the
					// counts divide, else as many as they allow (344
					// GPUs and a batch of 256 train on 256)
					dp := N / (tp * pp)
					for dp > 0 && B%(dp*mb) != 0 {
						dp--
					}
					if dp == 0 {
						continue
					}
					for _, rc := range []string{"none", "selective", "full"} {
						if e.expired() {
							return e.finish("megatron", start)
						}
						p, err := train.Uniform(m, t, tp, pp, dp, mb, B)
						if err != nil {
							continue
						}
						q := basePlan(c, mb, B, rc, 1)
						q.Stages, q.Replicas = p.Stages, p.Replicas
						e.try(q, nil)
					}
				}
			}
		}
	}
	return e.finish("megatron", start)
}

// AMP follows Li et al., "AMP: Automatically Finding Model Parallel
// Strategies with Heterogeneity Awareness" (NeurIPS 2022): one tp × pp ×
// dp over all the GPUs (uniform degrees), the GPUs laid out in rank order
// (tensor ranks fastest, then data, then pipeline) over each order of the
// GPU types (AMP's device placements), the layers cut into stages by
// dynamic programming on its cost model so the slowest stage is least
// (a stage costs as its slowest GPU), the batch split evenly over the
// replicas; every candidate is then ranked — here by the simulator, in
// place of AMP's own cost model — and memory is checked, which AMP does
// not. Recomputation none or full.
type AMP struct{}

// Name is the registry's name.
func (AMP) Name() string { return "amp" }

// Plan searches.
func (AMP) Plan(m *train.Model, c *train.Cluster, o Options) (*Result, error) {
	start := time.Now()
	if err := transformerOnly("amp", m); err != nil {
		return nil, err
	}
	if err := o.check(m, c); err != nil {
		return nil, err
	}
	e := newEvaluator(m, c, o, baselineBudget)
	B := o.GlobalBatch
	N := c.GPUs("")
	if o.MaxGPUs > 0 {
		N = min(N, o.MaxGPUs)
	}
	for _, order := range permutations(c.Types()) {
		var gpus []string // the type of each GPU in rank order
		for _, t := range order {
			for i := 0; i < c.GPUs(t); i++ {
				gpus = append(gpus, t)
			}
		}
		gpus = gpus[:N]
		for _, tp := range commonTP(m, c) {
			for pp := 1; pp <= m.Layers && tp*pp <= N; pp++ {
				if N%(tp*pp) != 0 {
					continue
				}
				dp := N / (tp * pp)
				for _, mb := range []int{1, 2, 4, 8} {
					if B%(dp*mb) != 0 {
						continue
					}
					for _, rc := range []string{"none", "full"} {
						if e.expired() {
							return e.finish("amp", start)
						}
						base := basePlan(c, mb, B, rc, 1)
						types := make([][]string, dp) // [replica][stage]
						for r := range types {
							types[r] = make([]string, pp)
							for s := range types[r] {
								types[r][s] = gpus[(s*dp+r)*tp]
							}
						}
						// a stage costs as its slowest type; each stage's
						// parts' costs once per type, not once per replica
						pcs := make([][]train.PartCost, pp)
						for s := range pcs {
							seen := map[string]bool{}
							for r := 0; r < dp; r++ {
								if t := types[r][s]; !seen[t] {
									seen[t] = true
									pcs[s] = append(pcs[s], e.cost(t, tp, base))
								}
							}
						}
						cost := func(s, n int) float64 {
							worst := 0.0
							for _, pc := range pcs[s] {
								worst = math.Max(worst, stageTime(pc, n, s, pp))
							}
							return worst
						}
						caps := make([]int, pp)
						for s := range caps {
							caps[s] = m.Layers
						}
						counts := balance(m.Layers, caps, cost)
						if counts == nil {
							continue
						}
						p := *base
						p.Stages = ranges(counts)
						for r := 0; r < dp; r++ {
							rep := train.Replica{Batch: B / dp}
							for s := 0; s < pp; s++ {
								rep.Stages = append(rep.Stages, train.Placement{GPU: types[r][s], TP: tp})
							}
							p.Replicas = append(p.Replicas, rep)
						}
						e.try(&p, nil)
					}
				}
			}
		}
	}
	return e.finish("amp", start)
}

// Metis follows Um et al., "Metis: Fast Automatic Distributed Training
// on Heterogeneous GPUs" (USENIX ATC 2024): for each order of the GPU
// types, pipeline depth and data-parallel degree, it enumerates device
// groups — each stage a group of GPUs of one type, its own TP (intra-stage
// plan) — taking the types' GPUs in order, and its layer load balancer
// gives each stage layers in proportion to the group's speed, within the
// group's memory; candidates are ranked by a cost estimate (1F1B: the
// first micro-batch through every stage, the rest at the slowest stage's
// pace) and the best few simulated. The replicas are identical and share
// the batch evenly. Recomputation none or full.
type Metis struct{}

// Name is the registry's name.
func (Metis) Name() string { return "metis" }

// metisCand is a ranked candidate.
type metisCand struct {
	est float64
	p   *train.Plan
}

// Plan searches.
func (Metis) Plan(m *train.Model, c *train.Cluster, o Options) (*Result, error) {
	start := time.Now()
	if err := transformerOnly("metis", m); err != nil {
		return nil, err
	}
	if err := o.check(m, c); err != nil {
		return nil, err
	}
	e := newEvaluator(m, c, o, baselineBudget)
	var cands []metisCand
	for _, order := range permutations(c.Types()) {
		for _, pp := range ppOptions(m.Layers, c.GPUs("")) {
			for _, mb := range []int{1, 2, 4, 8} {
				for _, rc := range []string{"none", "full"} {
					if e.expired() {
						break
					}
					cands = append(cands, metisGroups(e, order, pp, mb, rc)...)
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

// metisGroups enumerates the device groups of one order, depth,
// micro-batch and recomputation: how many stages each type takes, each
// type's TP, and the largest dp the groups allow.
func metisGroups(e *evaluator, order []string, pp, mb int, rc string) []metisCand {
	m, c := e.m, e.c
	if e.o.GlobalBatch%mb != 0 {
		return nil
	}
	base := basePlan(c, mb, e.o.GlobalBatch, rc, 1)
	var out []metisCand
	// stages per type: k[i] ≥ 0, Σ k = pp, types in order
	var split func(i, left int, k []int)
	split = func(i, left int, k []int) {
		if i == len(order)-1 {
			k = append(k, left)
			for _, tps := range tpChoices(m, c, order, k) {
				if cand, ok := metisPlan(e, base, order, k, tps, pp); ok {
					out = append(out, cand)
				}
			}
			return
		}
		for n := 0; n <= left && !e.expired(); n++ {
			split(i+1, left-n, append(append([]int(nil), k...), n))
		}
	}
	split(0, pp, nil)
	return out
}

// tpChoices are the per-type TP choices of the types that take stages.
func tpChoices(m *train.Model, c *train.Cluster, order []string, k []int) [][]int {
	out := [][]int{make([]int, len(order))}
	for i, t := range order {
		if k[i] == 0 {
			continue
		}
		var next [][]int
		for _, tps := range out {
			for _, tp := range tpOptions(m, c, t) {
				x := append([]int(nil), tps...)
				x[i] = tp
				next = append(next, x)
			}
		}
		out = next
	}
	return out
}

// metisPlan builds one device-group candidate with its load-balanced
// layers and its estimate.
func metisPlan(e *evaluator, base *train.Plan, order []string, k, tps []int, pp int) (metisCand, bool) {
	m, c, B := e.m, e.c, e.o.GlobalBatch
	dp := 1 << 30
	var stageType []string
	var stageTP []int
	for i, t := range order {
		if k[i] == 0 {
			continue
		}
		n := c.GPUs(t)
		if e.o.MaxGPUs > 0 {
			n = min(n, e.o.MaxGPUs)
		}
		dp = min(dp, n/(k[i]*tps[i]))
		for j := 0; j < k[i]; j++ {
			stageType = append(stageType, t)
			stageTP = append(stageTP, tps[i])
		}
	}
	for dp > 0 && B%(dp*base.MicroBatch) != 0 {
		dp--
	}
	if dp == 0 {
		return metisCand{}, false
	}
	p := *base
	p.Stages = train.EvenStages(m.Layers, pp)
	for r := 0; r < dp; r++ {
		rep := train.Replica{Batch: B / dp}
		for s := 0; s < pp; s++ {
			rep.Stages = append(rep.Stages, train.Placement{GPU: stageType[s], TP: stageTP[s]})
		}
		p.Replicas = append(p.Replicas, rep)
	}
	caps := make([]int, pp)
	for s := range caps {
		caps[s] = layerCap(m, c, &p, s, stageType[s], stageTP[s])
	}
	// the load balancer: layers in proportion to each group's speed
	speed := make([]float64, pp)
	total := 0.0
	for s := range speed {
		speed[s] = 1 / e.cost(stageType[s], stageTP[s], base).Layer
		total += speed[s]
	}
	counts := make([]int, pp)
	left := m.Layers
	for s := range counts {
		counts[s] = max(1, min(caps[s], int(math.Round(float64(m.Layers)*speed[s]/total))))
		left -= counts[s]
	}
	for left != 0 {
		moved := false
		for s := 0; s < pp && left != 0; s++ {
			switch {
			case left > 0 && counts[s] < caps[s]:
				counts[s]++
				left--
				moved = true
			case left < 0 && counts[s] > 1:
				counts[s]--
				left++
				moved = true
			}
		}
		if !moved {
			return metisCand{}, false
		}
	}
	p.Stages = ranges(counts)
	ts := make([]float64, pp)
	for s := range ts {
		ts[s] = stageTime(e.cost(stageType[s], stageTP[s], base), counts[s], s, pp)
	}
	return metisCand{est: replicaTime(ts, B/(dp*base.MicroBatch)), p: &p}, true
}

// commonTP are the TP degrees every type can take.
func commonTP(m *train.Model, c *train.Cluster) []int {
	var out []int
	for _, tp := range tpOptions(m, c, c.Types()[0]) {
		ok := true
		for _, t := range c.Types()[1:] {
			if tp > c.GPUsPerNode(t) {
				ok = false
			}
		}
		if ok {
			out = append(out, tp)
		}
	}
	return out
}

// permutations lists the orders of xs, the given order first.
func permutations(xs []string) [][]string {
	if len(xs) <= 1 {
		return [][]string{append([]string(nil), xs...)}
	}
	var out [][]string
	for i := range xs {
		rest := append(append([]string(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{xs[i]}, p...))
		}
	}
	return out
}
