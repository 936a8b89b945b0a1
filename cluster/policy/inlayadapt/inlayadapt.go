// Package inlayadapt is inlay's adaptive, heterogeneity-aware policy for
// average JCT. Every round it grows each job's allocation greedily from
// nothing, always taking the step with the most benefit per unit of cost:
// the benefit of an allocation is the job's estimated goodput over its
// remaining progress (the rate at which it completes, so short jobs come
// first, as in shortest-remaining-time scheduling, while GPUs still go
// where they add the most), discounted by the restart it costs when it
// differs from the job's current allocation; the cost is the GPUs it
// takes, each weighed by its type's value (how fast the active jobs run
// on one GPU of it relative to their best type: comparative advantage).
// Jobs waiting long gain weight (ageing), so the longest do not starve.
// With mixed gangs on, a job may add GPUs of a second type, and a rigid
// job may split its GPUs over two types, when one type alone lacks room.
//
// A lazy priority queue makes a round O((jobs + steps) · options · log
// jobs): well under a second at 2,048 GPUs.
package inlayadapt

import (
	"container/heap"
	"context"
	"math"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
)

// Policy is inlay's adaptive policy.
type Policy struct {
	// Ageing: a job's weight grows by its waiting time over Ageing times
	// its remaining time at its best allocation (0: no ageing).
	Ageing float64
	// NoMixed forbids mixed gangs even where the simulator allows them.
	NoMixed bool
}

// New is the policy with its default ageing.
func New() *Policy { return &Policy{Ageing: 4} }

func (p *Policy) Name() string { return "inlay" }
func (p *Policy) Mixed() bool  { return !p.NoMixed }

type option struct {
	alloc goodput.Alloc
	batch float64
	gain  float64 // weighted benefit
	cost  float64
}

type job struct {
	v       *adapt.View
	w       float64 // weight: 1/remaining progress, aged
	rem     float64
	plan    option
	options []option
	version int
}

type item struct {
	ratio   float64
	j, k    int // job, option index
	version int
}

type queue []item

func (q queue) Len() int { return len(q) }
func (q queue) Less(a, b int) bool {
	if q[a].ratio != q[b].ratio {
		return q[a].ratio > q[b].ratio
	}
	return q[a].j < q[b].j
}
func (q queue) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *queue) Push(x any)   { *q = append(*q, x.(item)) }
func (q *queue) Pop() any     { o := (*q)[len(*q)-1]; *q = (*q)[:len(*q)-1]; return o }

// Allocate runs the greedy.
func (p *Policy) Allocate(ctx context.Context, s *adapt.State) ([]adapt.Decision, error) {
	T := len(s.Cluster.Types)
	mixed := s.Mixed && !p.NoMixed
	jobs := make([]job, len(s.Jobs))
	// Type values: mean over jobs of the one-GPU goodput relative to the
	// job's best type.
	value := make([]float64, T)
	counted := 0
	one := make([][]float64, len(s.Jobs))
	for j := range s.Jobs {
		v := &s.Jobs[j]
		one[j] = make([]float64, T)
		best := 0.0
		for t := range T {
			_, one[j][t] = s.Estimate(v, s.Single(t, 1), v.Know)
			best = math.Max(best, one[j][t])
		}
		if best > 0 {
			counted++
			for t := range T {
				value[t] += one[j][t] / best
			}
		}
	}
	for t := range T {
		value[t] = math.Max(value[t]/math.Max(float64(counted), 1), 1e-3)
	}
	for j := range s.Jobs {
		v := &s.Jobs[j]
		jb := &jobs[j]
		jb.v = v
		jb.rem = math.Max(v.Remaining(), 1e-9)
		jb.options = p.options(s, v, mixed)
		gbest := 0.0
		for i := range jb.options {
			o := &jb.options[i]
			b, g := s.Estimate(v, o.alloc, v.Know)
			o.batch = b
			if len(v.Alloc) > 0 && !sameCounts(v.Alloc, o.alloc) {
				// A restart costs its delay on the rest of the job.
				if g > 0 {
					g = jb.rem / (jb.rem/g + v.Model.Restart)
				}
			}
			o.gain = g
			gbest = math.Max(gbest, g)
			for _, part := range o.alloc {
				o.cost += float64(part.GPUs) * value[part.Type]
			}
		}
		jb.w = 1 / jb.rem
		if p.Ageing > 0 && gbest > 0 {
			wait := s.Now - v.Arrival - v.Ran
			jb.w *= 1 + math.Max(wait, 0)/(p.Ageing*jb.rem/gbest)
		}
		for i := range jb.options {
			jb.options[i].gain *= jb.w
		}
	}
	free := make([]int, T)
	for t := range T {
		free[t] = s.Cluster.GPUs(t)
	}
	q := &queue{}
	push := func(j int) {
		jb := &jobs[j]
		bestK, bestR := -1, 0.0
		for k := range jb.options {
			o := &jb.options[k]
			dg, dc := o.gain-jb.plan.gain, o.cost-jb.plan.cost
			if dg <= 0 || dc <= 0 || !fits(o.alloc, jb.plan.alloc, free) || !grows(o.alloc, jb.plan.alloc) {
				continue
			}
			if r := dg / dc; r > bestR {
				bestK, bestR = k, r
			}
		}
		if bestK >= 0 {
			heap.Push(q, item{ratio: bestR, j: j, k: bestK, version: jb.version})
		}
	}
	for j := range jobs {
		push(j)
	}
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		it := heap.Pop(q).(item)
		jb := &jobs[it.j]
		if it.version != jb.version {
			continue
		}
		o := jb.options[it.k]
		if !fits(o.alloc, jb.plan.alloc, free) {
			push(it.j) // capacity changed since: find its best step now
			continue
		}
		for _, part := range jb.plan.alloc {
			free[part.Type] += part.GPUs
		}
		for _, part := range o.alloc {
			free[part.Type] -= part.GPUs
		}
		jb.plan = o
		jb.version++
		push(it.j)
	}
	out := make([]adapt.Decision, len(s.Jobs))
	for j := range jobs {
		if len(jobs[j].plan.alloc) > 0 {
			out[j] = adapt.Decision{Alloc: jobs[j].plan.alloc, Batch: jobs[j].plan.batch}
		}
	}
	return out, nil
}

// options lists a job's candidate allocations.
func (p *Policy) options(s *adapt.State, v *adapt.View, mixed bool) []option {
	T := len(s.Cluster.Types)
	var out []option
	add := func(a goodput.Alloc) {
		if v.Model.Runs(a) {
			out = append(out, option{alloc: a})
		}
	}
	if v.Kind == adapt.Rigid {
		n := v.GPUs
		for t := range T {
			if n <= s.Cluster.GPUs(t) {
				add(s.Single(t, n))
			}
		}
		if mixed {
			for t1 := range T {
				for t2 := t1 + 1; t2 < T; t2++ {
					for n1 := 1; n1 < n; n1++ {
						if n1 <= s.Cluster.GPUs(t1) && n-n1 <= s.Cluster.GPUs(t2) {
							add(s.Pair(t1, n1, t2, n-n1))
						}
					}
				}
			}
		}
		return out
	}
	for t := range T {
		for _, n := range s.Cluster.Configs(t) {
			add(s.Single(t, n))
		}
	}
	if mixed {
		for t1 := range T {
			for _, n1 := range s.Cluster.Configs(t1) {
				for t2 := range T {
					if t2 == t1 {
						continue
					}
					for _, n2 := range s.Cluster.Configs(t2) {
						// A second type joins a gang that fills whole servers of
						// the first (or its whole type), at most as many GPUs.
						if n2 > n1 || n1+n2 > adapt.MaxJobGPUs || (n1%s.Cluster.Types[t1].PerNode != 0 && n1 != s.Cluster.GPUs(t1)) {
							continue
						}
						add(s.Pair(t1, n1, t2, n2))
					}
				}
			}
		}
	}
	return out
}

// grows reports whether next holds at least plan's GPUs of every type
// plan holds (a job's allocation only grows within a round).
func grows(next, plan goodput.Alloc) bool {
	for _, p := range plan {
		ok := false
		for _, q := range next {
			ok = ok || (q.Type == p.Type && q.GPUs >= p.GPUs)
		}
		if !ok {
			return false
		}
	}
	return true
}

// fits reports whether replacing plan by next fits the free GPUs.
func fits(next, plan goodput.Alloc, free []int) bool {
	for _, q := range next {
		need := q.GPUs
		for _, p := range plan {
			if p.Type == q.Type {
				need -= p.GPUs
			}
		}
		if need > free[q.Type] {
			return false
		}
	}
	return true
}

func sameCounts(a, b goodput.Alloc) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].GPUs != b[i].GPUs {
			return false
		}
	}
	return true
}
