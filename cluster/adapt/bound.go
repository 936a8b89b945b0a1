package adapt

import (
	"math"

	"github.com/inlay-dev/inlay/cluster/goodput"
)

// LowerBound is a proven lower bound, in hours, on the average JCT any
// policy achieves in this simulator on jobs: each job waits for the first
// round at or after its arrival, pays its model's start-up delay, and then
// runs no faster than its best allocation allows at each epoch. For a
// single type that is the exact model on the fewest servers, over every
// GPU count up to MaxJobGPUs (or the job's own for rigid jobs); for a
// mixed gang (when mixed) a relaxation: no faster than n GPUs all of the
// fastest type computing with no synchronisation beyond the least
// cross-server one. Over a batch-size interval [a, b] goodput is at most
// the largest gain at b over the step time at a (gain grows and step
// time does not shrink with the batch).
func LowerBound(c *Cluster, jobs []Job, round float64, mixed bool) float64 {
	memo := map[rateKey]float64{}
	sum := 0.0
	for i := range jobs {
		j := &jobs[i]
		k := keyOf(j)
		run, ok := memo[k]
		if !ok {
			run = minRun(c, j, mixed)
			memo[k] = run
		}
		start := math.Ceil(j.Arrival/round) * round
		sum += start - j.Arrival + j.Model.Restart + run
	}
	return sum / float64(len(jobs)) / 3600
}

// minRun is the least time to run j from no progress to its target.
func minRun(c *Cluster, j *Job, mixed bool) float64 {
	return rates(c, j, mixed).minRun()
}

// rateTable holds, for one job, upper bounds on its goodput over each
// stretch of progress on which its statistical efficiency is constant
// (an epoch of its trace, cut at the target).
type rateTable struct {
	// lens is each stretch's progress.
	lens []float64
	// best bounds the goodput of every allocation the job may hold (single
	// type, and mixed gangs where mixed), per stretch; +Inf: no bound.
	best []float64
	// opts are the single-type allocations, each with its bound per
	// stretch.
	opts []option
	// perGPU bounds, per type and stretch, the goodput one GPU of the type
	// adds to a mixed gang (nil without mixed gangs; +Inf: no bound).
	perGPU [][]float64
}

// option is one single-type allocation: gpus GPUs of type typ.
type option struct {
	typ, gpus int
	rate      []float64 // per stretch
}

// rates bounds j's goodput on every allocation. For a single type the
// bound is the exact model on the fewest servers or on two (the
// simulator may spread a part that fits one server), over every GPU count
// up to MaxJobGPUs (or the job's own for rigid jobs). For a mixed gang
// (when mixed) two relaxations: the whole gang runs no faster than n GPUs
// all of the fastest type computing with no synchronisation beyond the
// least cross-server one (mixedFloor); and each GPU of type t in it
// processes at most MaxLocal_t samples per Compute_t(MaxLocal_t) seconds
// (a gang's step is at least its micro-steps' compute time, in which each
// GPU computes its share, at most MaxLocal, on its own line), each sample
// making at most GainUpper(M)/M progress at the least batch M the gang
// can take (gain per sample falls with the batch). Over a batch-size
// interval [a, b] a single allocation's goodput is at most the largest
// gain at b over the step time at a (gain grows and step time does not
// shrink with the batch).
func rates(c *Cluster, j *Job, mixed bool) *rateTable {
	m := j.Model
	e := m.Eff
	var counts []int
	if j.Kind == Rigid {
		counts = []int{j.GPUs}
	} else {
		for n := 1; n <= MaxJobGPUs; n++ {
			counts = append(counts, n)
		}
	}
	// Batch intervals.
	var bounds [][2]float64
	mlo := j.Batch // the least batch a mixed gang may take
	if j.Kind == Adaptive {
		lo, hi := e.M0, math.Max(e.MaxBatch, float64(MaxJobGPUs))
		const k = 64
		for i := range k {
			a := lo * math.Pow(hi/lo, float64(i)/k)
			b := lo * math.Pow(hi/lo, float64(i+1)/k)
			bounds = append(bounds, [2]float64{a, b})
		}
		mlo = math.Max(e.M0, 2)
	} else {
		bounds = [][2]float64{{j.Batch, j.Batch}}
	}
	tb := &rateTable{}
	for t := range c.Types {
		for _, n := range counts {
			if m.Fits[t] != nil && n <= c.GPUs(t) {
				tb.opts = append(tb.opts, option{typ: t, gpus: n})
			}
		}
	}
	if mixed {
		tb.perGPU = make([][]float64, len(c.Types))
	}
	// rate is the bound over the batch intervals given a step-time floor
	// at a batch (0: no floor, +Inf: cannot run).
	rate := func(p float64, floor func(M float64) float64) float64 {
		r := 0.0
		for _, iv := range bounds {
			switch step := floor(iv[0]); {
			case step == 0:
				return math.Inf(1) // no floor: this stretch bounds nothing
			case step > 0 && !math.IsInf(step, 1):
				r = math.Max(r, e.GainUpper(iv[1], p)/step)
			}
		}
		return r
	}
	p := 0.0
	for p < e.Target {
		next := math.Min(e.Target, e.NextEpoch(p))
		best := 0.0
		for i := range tb.opts {
			o := &tb.opts[i]
			r := rate(p, func(M float64) float64 {
				step := math.Inf(1)
				for _, nodes := range []int{c.MinNodes(o.typ, o.gpus), 2} {
					if nodes > c.Types[o.typ].Nodes || nodes > o.gpus {
						continue
					}
					a := goodput.Alloc{{Type: o.typ, GPUs: o.gpus, Nodes: nodes}}
					step = math.Min(step, m.Step(a, M, goodput.Truth, goodput.Proportional))
				}
				return step
			})
			o.rate = append(o.rate, r)
			best = math.Max(best, r)
		}
		if mixed {
			for _, n := range counts {
				if n > 1 && n <= c.Total() {
					best = math.Max(best, rate(p, func(M float64) float64 { return mixedFloor(m, n, M) }))
				}
			}
			for t := range c.Types {
				tb.perGPU[t] = append(tb.perGPU[t], perGPU(m, t, mlo, p))
			}
		}
		tb.lens = append(tb.lens, next-p)
		tb.best = append(tb.best, best)
		p = next
	}
	return tb
}

// perGPU bounds the goodput one GPU of type t adds to a mixed gang at
// progress p whose batch is at least mlo (see rates). A GPU computing a
// local batch m in a micro-step of at least Compute_t(m) adds at most
// m/Compute_t(m) samples a second, and the gang's batch M is at least m
// and mlo, so each sample makes at most GainUpper(M')/M' progress with
// M' = max(m, mlo). Over an interval [a, b] of m the first factor is at
// most its value at b and the second its value at a; the intervals are
// halvings from MaxLocal, the last one reaching down to 0.
func perGPU(m *goodput.Model, t int, mlo, p float64) float64 {
	f := m.Fits[t]
	switch {
	case f == nil:
		return 0
	case m.Planned != nil:
		return math.Inf(1)
	}
	perSample := func(M float64) float64 {
		M = math.Max(M, mlo)
		return m.Eff.GainUpper(M, p) / M
	}
	best := 0.0
	b := f.MaxLocal
	for i := range 24 {
		a := b / 2
		if i == 23 {
			a = 0
		}
		c := m.Slowdown * f.Compute(b)
		if !(c > 0) {
			return math.Inf(1)
		}
		best = math.Max(best, b/c*perSample(a))
		b = a
	}
	return best
}

// minRun is the least time to reach the target: each stretch at its best
// rate (+Inf when some stretch has no allocation that runs the job).
func (tb *rateTable) minRun() float64 {
	total := 0.0
	for s, l := range tb.lens {
		if !(tb.best[s] > 0) {
			return math.Inf(1)
		}
		total += l / tb.best[s]
	}
	return total
}

// mixedFloor is a lower bound on the step time of any mixed gang of n
// GPUs at batch M: compute of M/n samples on the fastest type's line, and
// at least the least cross-server synchronisation.
// A job given as a model (its rates from the training planner) has no
// such line: its floor is 0, and the bound keeps only its waits.
func mixedFloor(m *goodput.Model, n int, M float64) float64 {
	if m.Planned != nil {
		return 0
	}
	c, s := math.Inf(1), math.Inf(1)
	for _, f := range m.Fits {
		if f == nil {
			continue
		}
		c = math.Min(c, f.Compute(M/float64(n)))
		s = math.Min(s, f.Sync(n, 2))
	}
	return m.Slowdown * math.Max(c, s)
}
