package planner

import (
	"fmt"
	"math"

	"github.com/inlay-dev/inlay/train"
)

// graphGlobalBatch is a graph network's global batch when the options
// give none: 32 samples a GPU (Goyal et al. 2017's per-GPU batch for
// ResNet-50), at least 256 (their base batch).
func graphGlobalBatch(gpus int) int { return max(256, 32*gpus) }

// transformerOnly refuses a graph network in a planner that searches
// tensor parallelism and transformer layers.
func transformerOnly(name string, m *train.Model) error {
	if m.Net != nil {
		return fmt.Errorf("planner %s: %s is a graph network; plan it with the inlay planner", name, m.Name)
	}
	return nil
}

// planGraph searches a graph network's plans: data × pipeline
// parallelism (pipeline stages of about equal FLOPs ending where one
// tensor crosses), the micro-batch, and recomputation none or full
// (selective recomputation is the transformer's attention). Replicas are
// pipelines of one GPU type; every type of the cluster (or of those the
// caps leave) gives replicas, or only the fastest types do, and each
// replica takes a share of the batch in proportion to its simulated
// rate, in whole micro-batches.
func planGraph(e *evaluator) {
	m, c, B := e.m, e.c, e.o.GlobalBatch
	types := c.Types()
	gpus := c.GPUs("")
	if e.o.MaxGPUs > 0 {
		gpus = min(gpus, e.o.MaxGPUs)
	}
	for _, rc := range []string{"none", "full"} {
		for _, pp := range ppOptions(m.Layers, gpus) {
			for mb := 1; mb <= B; mb *= 2 {
				if B%mb != 0 || e.expired() {
					continue
				}
				for _, stages := range stageChoices(e, pp, mb, rc) {
					rates := map[string]float64{}
					for _, t := range types {
						rates[t] = replicaRate(e, stages, t, mb, rc)
					}
					// all the types, then each type alone
					sets := [][]string{types}
					if len(types) > 1 {
						for _, t := range types {
							sets = append(sets, []string{t})
						}
					}
					for _, set := range sets {
						if p := graphPlan(e, stages, set, rates, mb, rc, gpus); p != nil {
							e.try(p, nil)
						}
					}
				}
			}
		}
	}
}

// stageChoices are the pp-stage splits tried: balanced in time on each
// GPU type of the cluster (train.BalancedStages), each split once.
func stageChoices(e *evaluator, pp, mb int, rc string) [][]train.LayerRange {
	var out [][]train.LayerRange
	seen := map[string]bool{}
	for _, t := range e.c.Types() {
		g, _ := e.c.GPUType(t)
		p := graphBase(e.c, nil, mb, mb, rc)
		p.Replicas = []train.Replica{oneType(t, pp, mb)}
		e.precision(p)
		st, ok := train.BalancedStages(e.m, &g, p, pp)
		if !ok {
			continue
		}
		key := fmt.Sprint(st)
		if !seen[key] {
			seen[key] = true
			out = append(out, st)
		}
	}
	return out
}

// graphBase is the settings of a graph network's plans: 1F1B, gradients
// reduced in buckets during the backward (PyTorch DDP), no ZeRO.
func graphBase(c *train.Cluster, stages []train.LayerRange, mb, global int, rc string) *train.Plan {
	p := basePlan(c, mb, global, rc, 0)
	p.SequenceParallel = false
	p.Stages = stages
	return p
}

// replicaRate is one pipeline replica's samples a second on type t, alone
// (0 when it does not fit or the cluster has too few of the type).
func replicaRate(e *evaluator, stages []train.LayerRange, t string, mb int, rc string) float64 {
	pp := len(stages)
	if e.c.GPUs(t) < pp {
		return 0
	}
	batch := mb * max(2*pp, 4)
	p := graphBase(e.c, stages, mb, batch, rc)
	p.Replicas = []train.Replica{oneType(t, pp, batch)}
	e.precision(p)
	if p.Check(e.m) != nil || !train.Fits(e.m, e.c, p) {
		return 0
	}
	r, err := train.Simulate(e.m, e.c, p, train.Options{})
	e.n++
	if err != nil || !r.Fits {
		return 0
	}
	return r.TokensPerS
}

// oneType is a replica of pp stages on type t.
func oneType(t string, pp, batch int) train.Replica {
	rep := train.Replica{Batch: batch}
	for range pp {
		rep.Stages = append(rep.Stages, train.Placement{GPU: t, TP: 1})
	}
	return rep
}

// graphPlan builds the plan of as many pp-stage replicas of the given
// types as the GPUs hold, each with a batch share in proportion to its
// rate; nil when none fits or the batch does not split.
func graphPlan(e *evaluator, stages []train.LayerRange, types []string, rates map[string]float64, mb int, rc string, gpus int) *train.Plan {
	pp := len(stages)
	B := e.o.GlobalBatch
	var reps []string
	total := 0.0
	for _, t := range types {
		if rates[t] <= 0 {
			continue
		}
		for n := e.c.GPUs(t) / pp; n > 0 && (len(reps)+1)*pp <= gpus; n-- {
			reps = append(reps, t)
			total += rates[t]
		}
	}
	units := B / mb
	if len(reps) == 0 || units < len(reps) {
		return nil
	}
	// whole micro-batches in proportion to the rates, the remainder to
	// the largest fractions (in replica order on ties)
	p := graphBase(e.c, stages, mb, B, rc)
	share := make([]int, len(reps))
	frac := make([]float64, len(reps))
	left := units
	for i, t := range reps {
		x := float64(units) * rates[t] / total
		share[i] = max(1, int(math.Floor(x)))
		frac[i] = x - math.Floor(x)
		left -= share[i]
	}
	for left > 0 {
		best := 0
		for i := range frac {
			if frac[i] > frac[best] {
				best = i
			}
		}
		share[best]++
		frac[best] = -1
		left--
		if frac[best] == -1 && left > 0 && allTaken(frac) {
			for i := range frac {
				frac[i] = 0
			}
		}
	}
	if left < 0 {
		return nil
	}
	for i, t := range reps {
		p.Replicas = append(p.Replicas, oneType(t, pp, share[i]*mb))
	}
	return p
}

// allTaken reports whether every fraction has had its extra share.
func allTaken(frac []float64) bool {
	for _, f := range frac {
		if f != -1 {
			return false
		}
	}
	return true
}
