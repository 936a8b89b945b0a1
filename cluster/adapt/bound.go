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
	type key struct {
		m     *goodput.Model
		kind  Kind
		gpus  int
		batch float64
	}
	memo := map[key]float64{}
	sum := 0.0
	for i := range jobs {
		j := &jobs[i]
		k := key{m: j.Model, kind: j.Kind}
		if j.Kind != Adaptive {
			k.batch = j.Batch
		}
		if j.Kind == Rigid {
			k.gpus = j.GPUs
		}
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
	if j.Kind == Adaptive {
		lo, hi := e.M0, math.Max(e.MaxBatch, float64(MaxJobGPUs))
		const k = 64
		for i := range k {
			a := lo * math.Pow(hi/lo, float64(i)/k)
			b := lo * math.Pow(hi/lo, float64(i+1)/k)
			bounds = append(bounds, [2]float64{a, b})
		}
	} else {
		bounds = [][2]float64{{j.Batch, j.Batch}}
	}
	total := 0.0
	p := 0.0
	for p < e.Target {
		next := math.Min(e.Target, e.NextEpoch(p))
		best := 0.0
		for _, iv := range bounds {
			gain := e.GainUpper(iv[1], p)
			for _, n := range counts {
				step := math.Inf(1)
				for t := range c.Types {
					if m.Fits[t] == nil || n > c.GPUs(t) {
						continue
					}
					a := goodput.Alloc{{Type: t, GPUs: n, Nodes: c.MinNodes(t, n)}}
					step = math.Min(step, m.Step(a, iv[0], goodput.Truth, goodput.Proportional))
				}
				if mixed && n > 1 && n <= c.Total() {
					step = math.Min(step, mixedFloor(m, n, iv[0]))
				}
				switch {
				case step == 0:
					best = math.Inf(1) // no floor: this stretch bounds nothing
				case step > 0 && !math.IsInf(step, 1):
					best = math.Max(best, gain/step)
				}
			}
		}
		if !(best > 0) {
			return math.Inf(1)
		}
		total += (next - p) / best
		p = next
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
