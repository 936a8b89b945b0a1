package planner

import (
	"math"
	"time"

	"github.com/inlay-dev/inlay/train"
)

// baselineBudget bounds a baseline's search unless Options.Budget says
// otherwise; the baselines are meant to finish their grids.
const baselineBudget = 120 * time.Second

// startBaseline begins a baseline's search: the time it starts and an
// evaluator with the baselines' budget; it refuses graph networks and
// options that do not fit the model and cluster, and fills o's defaults
// (Options.check).
func startBaseline(name string, m *train.Model, c *train.Cluster, o *Options) (*evaluator, time.Time, error) {
	start := time.Now()
	if err := transformerOnly(name, m); err != nil {
		return nil, start, err
	}
	if err := o.check(m, c); err != nil {
		return nil, start, err
	}
	return newEvaluator(m, c, *o, baselineBudget), start, nil
}

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
	e, start, err := startBaseline("megatron", m, c, &o)
	if err != nil {
		return nil, err
	}
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
					for _, rc := range recomputations {
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
	e, start, err := startBaseline("amp", m, c, &o)
	if err != nil {
		return nil, err
	}
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
