package adapt

import (
	"github.com/inlay-dev/inlay/cluster/goodput"
)

// Estimate is a policy's estimate of job v's goodput on a with knowledge
// k, at the batch size the job would use there: its own for rigid and
// scale-gpus jobs, the best in its range for adaptive ones. It returns
// that batch size and goodput (0 where it cannot run). a's parts should
// carry the servers they would span (MinNodes when unknown).
// Estimates are memoised per state across jobs of the same model, kind,
// batch size and epoch.
func (s *State) Estimate(v *View, a goodput.Alloc, k goodput.Knowledge) (batch, g float64) {
	if len(a) == 0 || !v.Model.Runs(a) {
		return 0, 0
	}
	key := estKey{m: v.Model, adaptive: v.Kind == Adaptive, epoch: v.Model.Eff.EpochAt(v.Progress), k: k}
	if !key.adaptive {
		key.batch = v.Batch
	}
	if len(a) <= len(key.parts) {
		for i, p := range a {
			key.parts[i] = [3]int{p.Type + 1, p.GPUs, p.Nodes}
		}
		if r, ok := s.cache[key]; ok {
			return r[0], r[1]
		}
	}
	if key.adaptive {
		lo, hi := v.Model.BatchRange(a)
		batch, g = v.Model.BestBatch(a, lo, hi, v.Progress, k, s.Split)
	} else {
		batch, g = v.Batch, v.Model.Goodput(a, v.Batch, v.Progress, k, s.Split)
	}
	if len(a) <= len(key.parts) {
		if s.cache == nil {
			s.cache = map[estKey][2]float64{}
		}
		s.cache[key] = [2]float64{batch, g}
	}
	return batch, g
}

type estKey struct {
	m        *goodput.Model
	adaptive bool
	batch    float64
	epoch    int
	k        goodput.Knowledge
	parts    [3][3]int
}

// Single is the allocation of n GPUs of type t on the fewest servers.
func (s *State) Single(t, n int) goodput.Alloc {
	return goodput.Alloc{{Type: t, GPUs: n, Nodes: s.Cluster.MinNodes(t, n)}}
}

// Pair is a mixed allocation of n1 GPUs of t1 and n2 of t2 (t1 ≠ t2), each
// on the fewest servers.
func (s *State) Pair(t1, n1, t2, n2 int) goodput.Alloc {
	a := goodput.Alloc{{Type: t1, GPUs: n1, Nodes: s.Cluster.MinNodes(t1, n1)}, {Type: t2, GPUs: n2, Nodes: s.Cluster.MinNodes(t2, n2)}}
	return a.Sorted()
}

// RestartFactor is Pollux's discount of a reallocation for a job that
// has run for age seconds with restarts restarts, each costing delay:
// (age − restarts·delay)/(age + delay), at least 0.
func RestartFactor(age float64, restarts int, delay float64) float64 {
	if age+delay <= 0 {
		return 1
	}
	return max(0, (age-float64(restarts)*delay)/(age+delay))
}

// Profiles is what a cluster has learnt of each model's scaling from every
// job of it so far: per model name, the GPU types some job of it has run on
// several GPUs of (goodput.Knowledge.Multi), as a cluster that keeps
// per-model profiles knows them. The zero value knows nothing.
type Profiles struct {
	multi map[string]uint64
}

// Learn records what the state's jobs have shown.
func (p *Profiles) Learn(s *State) {
	if p.multi == nil {
		p.multi = map[string]uint64{}
	}
	for i := range s.Jobs {
		v := &s.Jobs[i]
		p.multi[v.Model.Name] |= v.Know.Multi
	}
}

// Know is v's knowledge widened by what jobs of its model have shown
// (v.Know itself before any Learn).
func (p *Profiles) Know(v *View) goodput.Knowledge {
	k := v.Know
	k.Multi |= p.multi[v.Model.Name]
	return k
}
