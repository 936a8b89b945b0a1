// Package inlayadapt is inlay's adaptive, heterogeneity-aware policy for
// average JCT. Every round it grows each job's allocation greedily from
// nothing, always taking the step with the most benefit per unit of cost:
// the benefit of an allocation is the job's estimated goodput over its
// remaining progress (the rate at which it completes, so short jobs come
// first, as in shortest-remaining-time scheduling, while GPUs still go
// where they add the most), discounted by the restart it costs when it
// differs from the job's current allocation; the cost is the GPUs it
// takes, each weighed by the square root of its type's value (how fast
// the active jobs run on one GPU of it relative to their best type:
// comparative advantage, softened so that short jobs still reach the
// fast types).
// Jobs waiting long gain weight (ageing), so the longest do not starve.
// A pass after the greedy (Restore) gives a running elastic job that the
// greedy shrank, moved or stopped its allocation back unless the jobs that took
// its GPUs save more seconds than its restarts and slower progress cost
// it: the greedy's rates weigh a long job's loss by its remaining time,
// which prices its restarts at almost nothing.
// A last pass (Upgrade) moves each job to the fastest option its own and
// the idle GPUs hold, no larger than its plan: the value weighting alone
// leaves fast GPUs idle on an empty cluster.
// With mixed gangs on, a job may add GPUs of a second type, and a rigid
// job may split its GPUs over two types, when one type alone lacks room.
// Estimates use what any job of the same model has shown of its scaling
// (Share), as a cluster keeps per-model profiles: Sia's bootstrap assumes
// perfect scaling on every type a job has not itself run on several GPUs
// of, and a greedy that believes it gives new jobs GPUs they then lose.
//
// A lazy priority queue makes a round O((jobs + steps) · options · log
// jobs): well under a second at 2,048 GPUs.
package inlayadapt

import (
	"container/heap"
	"context"
	"math"
	"sort"

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
	// Scaling is the least scaling efficiency of a step that grows a job
	// already holding GPUs: its relative goodput gain over its relative
	// GPU-value growth (0: any gain).
	Scaling float64
	// Keep multiplies the benefit of a job's current allocation (≥ 1:
	// hysteresis against restarts).
	Keep float64
	// Sticky starts each round from the running jobs' current allocations
	// (they may grow, not shrink) instead of from nothing.
	Sticky bool
	// Oracle estimates with the true throughput models instead of the
	// bootstrapped ones (an ablation: what perfect profiles would give).
	Oracle bool
	// Time switches to the remaining-time objective: every job first gets
	// the start with the most goodput per cost, shortest first (aged); then
	// steps go where they cut the most remaining seconds per cost.
	Time bool
	// Util > 0 switches to a utility objective: Σ_j w_j·(1.1 − (G_j /
	// G_j,min)^(−1/2)) − 0.01·GPUs, Sia's form, with w_j = (median
	// remaining time / job's remaining time)^Util (short jobs weigh more).
	Util float64
	// AgeRestart discounts a change by Pollux's restart factor
	// (age − restarts·delay)/(age + delay) instead of the delay over the
	// remaining time.
	AgeRestart bool
	// Move lets a running job change GPU type (else it keeps the type it
	// runs on, and only its count changes).
	Move bool
	// Upgrade, after the greedy, moves each job (shortest aged remaining
	// time first) to the option with the most goodput that holds no more
	// GPUs than its plan and fits the GPUs its plan frees and those left
	// idle: the greedy weighs GPUs by their type's value even where they
	// would idle, so on an empty cluster a cheap slow type can win.
	Upgrade bool
	// ValuePow raises each type's value to this power before it weighs
	// the type's GPUs (1: the full comparative advantage; 0: every GPU
	// costs the same). Between the two, short jobs still reach the fast
	// types that comparative advantage alone would keep for long jobs
	// that gain more there.
	ValuePow float64
	// Hold keeps a running job's allocation (it may grow, not shrink or
	// move) until it has held it Hold times its restart delay, so that
	// every start buys at least (Hold − 1) delays of progress: without
	// it, two jobs that want the same GPUs take them from each other
	// every round as the waiting one ages, and neither gets past its
	// restart (0: no hold). With Restore on, it holds rigid jobs only:
	// Restore covers the others, and a rigid job cannot shrink, so it
	// only ever stops, which Restore prices worse than a hold does.
	Hold float64
	// Restore, after the greedy, gives back a running job the allocation
	// it holds when the greedy shrank, moved or stopped it to give its
	// GPUs to others, unless what those others save in completion time
	// exceeds what the job loses over the time they would hold its GPUs:
	// its restart delays (the change now and, on a slower plan, the
	// regrowth later; a restart loses no progress past the checkpoint)
	// and the progress it makes slower there, less what a stopped job
	// saves by resuming on its fastest type (a running job keeps its
	// type). Rigid jobs are left to Hold. A taker cut off entirely
	// is charged the wait for the next completion of another job, and at
	// least its own run. Each job's seconds count as much as another's
	// (times its ageing): the greedy's rates weigh a long job's loss by
	// its remaining time, which prices its restarts at almost nothing.
	// Restore weighs the victim's side (0: off; 1: seconds against
	// seconds).
	Restore float64

	// Share lets each job's estimates use what earlier and other jobs of
	// the same model have shown of its scaling (the GPU types it has run
	// on several GPUs of), as a cluster keeps per-model profiles, instead
	// of assuming perfect scaling until the job itself has shown it.
	Share bool

	since    map[int]held
	profiles adapt.Profiles
}

// held is a running job's allocation and when it took it.
type held struct {
	alloc goodput.Alloc
	at    float64
}

// New is the policy with its default ageing.
func New() *Policy {
	return &Policy{Ageing: 4, Scaling: 0.3, Upgrade: true, ValuePow: 0.5, Hold: 2, Restore: 1, Share: true}
}

func (p *Policy) Name() string { return "inlay" }
func (p *Policy) Mixed() bool  { return !p.NoMixed }

type option struct {
	g     float64 // goodput, restart-discounted
	raw   float64 // goodput
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
	tbest   float64 // remaining time at the best option, aged
	faster  float64 // a GPU of the job's best type over one of the type it runs on (1: none faster)
	gbest   float64
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
	p.learn(s)
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
			_, one[j][t] = s.Estimate(v, s.Single(t, 1), p.know(v))
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
		value[t] = math.Pow(math.Max(value[t]/math.Max(float64(counted), 1), 1e-3), p.ValuePow)
	}
	for j := range s.Jobs {
		v := &s.Jobs[j]
		jb := &jobs[j]
		jb.v = v
		jb.rem = math.Max(v.Remaining(), 1e-9)
		jb.faster = 1
		if len(v.Alloc) == 1 && one[j][v.Alloc[0].Type] > 0 {
			for t := range T {
				jb.faster = math.Max(jb.faster, one[j][t]/one[j][v.Alloc[0].Type])
			}
		}
		jb.options = p.options(s, v, mixed)
		if len(v.Alloc) > 0 && !p.Move {
			keep := jb.options[:0]
			for _, o := range jb.options {
				if hasType(o.alloc, v.Alloc[0].Type) {
					keep = append(keep, o)
				}
			}
			jb.options = keep
		}
		gbest := 0.0
		for i := range jb.options {
			o := &jb.options[i]
			b, g := s.Estimate(v, o.alloc, p.know(v))
			o.batch, o.raw = b, g
			if len(v.Alloc) > 0 && !adapt.SameCounts(v.Alloc, o.alloc) {
				// A restart costs its delay on the rest of the job.
				switch {
				case p.AgeRestart:
					g *= adapt.RestartFactor(s.Now-v.Arrival, v.Restarts, v.Model.Restart)
				case g > 0:
					g = jb.rem / (jb.rem/g + v.Model.Restart)
				}
			}
			if len(v.Alloc) > 0 && adapt.SameCounts(v.Alloc, o.alloc) && p.Keep > 0 {
				g *= p.Keep
			}
			o.gain, o.g = g, g
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
		jb.gbest = gbest
		jb.tbest = math.Inf(1)
		if gbest > 0 {
			jb.tbest = jb.rem / gbest / (jb.w * jb.rem) // remaining time, aged
		}
	}
	free := make([]int, T)
	for t := range T {
		free[t] = s.Cluster.GPUs(t)
	}
	p.track(s)
	if p.Sticky || p.Hold > 0 {
		for j := range jobs {
			jb := &jobs[j]
			if !p.Sticky && !p.holding(s.Now, jb.v) {
				continue
			}
			for k := range jb.options {
				if len(jb.v.Alloc) > 0 && adapt.SameCounts(jb.v.Alloc, jb.options[k].alloc) && fits(jb.options[k].alloc, nil, free) {
					replan(jb, jb.options[k], free)
					break
				}
			}
		}
	}
	if p.Time {
		p.start(jobs, free)
	}
	if p.Util > 0 {
		p.utility(jobs)
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
			if p.Scaling > 0 && jb.plan.gain != 0 && (dg/math.Abs(jb.plan.gain)) < p.Scaling*(dc/jb.plan.cost) {
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
		replan(jb, o, free)
		jb.version++
		push(it.j)
	}
	if p.Restore > 0 {
		p.restore(s, jobs, free)
	}
	if p.Upgrade {
		upgrade(jobs, free)
	}
	out := make([]adapt.Decision, len(s.Jobs))
	for j := range jobs {
		if len(jobs[j].plan.alloc) > 0 {
			out[j] = adapt.Decision{Alloc: jobs[j].plan.alloc, Batch: jobs[j].plan.batch}
		}
	}
	return out, nil
}

// track notes when each running job's allocation last changed.
func (p *Policy) track(s *adapt.State) {
	if p.Hold <= 0 {
		return
	}
	next := make(map[int]held, len(s.Jobs))
	for i := range s.Jobs {
		v := &s.Jobs[i]
		if len(v.Alloc) == 0 {
			continue
		}
		h, ok := p.since[v.ID]
		if !ok || !adapt.SameCounts(h.alloc, v.Alloc) {
			h = held{alloc: v.Alloc, at: s.Now}
		}
		next[v.ID] = h
	}
	p.since = next
}

// holding reports whether v still holds its allocation.
func (p *Policy) holding(now float64, v *adapt.View) bool {
	if p.Restore > 0 && v.Kind != adapt.Rigid {
		return false // Restore covers it
	}
	h, ok := p.since[v.ID]
	return ok && now-h.at < p.Hold*v.Model.Restart
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
		if count(next, p.Type) < p.GPUs {
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

func (p *Policy) know(v *adapt.View) goodput.Knowledge {
	if p.Oracle {
		return goodput.Truth
	}
	return p.profiles.Know(v) // v.Know alone until learn has run with Share
}

// learn records what the active jobs show of their models' scaling.
func (p *Policy) learn(s *adapt.State) {
	if p.Share {
		p.profiles.Learn(s)
	}
}

// start gives every job without a plan yet (a kept or held allocation
// stays), shortest aged remaining time first, the start with the most
// goodput per cost that fits, and turns every option's benefit into minus
// its remaining seconds.
func (p *Policy) start(jobs []job, free []int) {
	for _, j := range shortestFirst(jobs) {
		jb := &jobs[j]
		if len(jb.plan.alloc) > 0 {
			continue
		}
		best, bestR := -1, 0.0
		for k, o := range jb.options {
			if o.g > 0 && fits(o.alloc, nil, free) {
				if r := o.g / o.cost; r > bestR {
					best, bestR = k, r
				}
			}
		}
		if best >= 0 {
			replan(jb, jb.options[best], free)
		}
	}
	for j := range jobs {
		jb := &jobs[j]
		for k := range jb.options {
			o := &jb.options[k]
			o.gain = math.Inf(-1)
			if o.g > 0 {
				o.gain = -jb.rem / o.g
			}
		}
		if len(jb.plan.alloc) > 0 {
			jb.plan.gain = -jb.rem / jb.plan.g
		}
	}
}

// shortestFirst is the jobs' indices, shortest aged remaining time first.
func shortestFirst(jobs []job) []int {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].tbest < jobs[order[b]].tbest })
	return order
}

// upgrade moves planned jobs, shortest aged remaining time first, to the
// option with the most (restart-discounted) goodput among those with no
// more GPUs than the plan that fit its GPUs and the free ones.
func upgrade(jobs []job, free []int) {
	for _, j := range shortestFirst(jobs) {
		jb := &jobs[j]
		if len(jb.plan.alloc) == 0 {
			continue
		}
		best := -1
		for k, o := range jb.options {
			if o.g > jb.plan.g && (best < 0 || o.g > jb.options[best].g) &&
				o.alloc.GPUs() <= jb.plan.alloc.GPUs() && fits(o.alloc, jb.plan.alloc, free) {
				best = k
			}
		}
		if best >= 0 {
			replan(jb, jb.options[best], free)
		}
	}
}

// replan gives jb option o in place of its plan, returning the plan's GPUs
// to free and taking o's.
func replan(jb *job, o option, free []int) {
	for _, part := range jb.plan.alloc {
		free[part.Type] += part.GPUs
	}
	for _, part := range o.alloc {
		free[part.Type] -= part.GPUs
	}
	jb.plan = o
}

// utility sets every option's benefit to the weighted utility.
func (p *Policy) utility(jobs []job) {
	var ts []float64
	for j := range jobs {
		if t := jobs[j].rem / jobs[j].gbest; jobs[j].gbest > 0 {
			ts = append(ts, t)
		}
	}
	sort.Float64s(ts)
	med := 1.0
	if len(ts) > 0 {
		med = ts[len(ts)/2]
	}
	for j := range jobs {
		jb := &jobs[j]
		if !(jb.gbest > 0) {
			continue
		}
		w := math.Pow(med/(jb.rem/jb.gbest), p.Util-1)
		gmin := math.Inf(1)
		for _, o := range jb.options {
			if o.raw > 0 {
				gmin = math.Min(gmin, o.raw)
			}
		}
		for k := range jb.options {
			o := &jb.options[k]
			o.gain = math.Inf(-1)
			if o.g > 0 {
				o.gain = w*(1.1-math.Pow(o.g/gmin, -0.5)) - 0.01*float64(o.alloc.GPUs())
			}
		}
	}
}

func hasType(a goodput.Alloc, t int) bool {
	for _, p := range a {
		if p.Type == t {
			return true
		}
	}
	return false
}

// restore runs the Restore pass (see Policy.Restore) over the running
// jobs whose plan changes their allocation, those that would idle the
// most GPU-seconds in a restart first.
func (p *Policy) restore(s *adapt.State, jobs []job, free []int) {
	cur := make([]int, len(jobs)) // each job's current option (-1: none)
	var victims []int
	for j := range jobs {
		cur[j] = -1
		v := jobs[j].v
		if len(v.Alloc) == 0 {
			continue
		}
		for k := range jobs[j].options {
			if adapt.SameCounts(v.Alloc, jobs[j].options[k].alloc) {
				cur[j] = k
			}
		}
		if v.Kind == adapt.Rigid {
			continue // it cannot shrink: Hold covers it
		}
		if cur[j] >= 0 && jobs[j].options[cur[j]].raw > 0 && !adapt.SameCounts(v.Alloc, jobs[j].plan.alloc) && !grows(jobs[j].plan.alloc, v.Alloc) {
			victims = append(victims, j)
		}
	}
	idle := func(j int) float64 { return float64(jobs[j].v.Alloc.GPUs()) * jobs[j].v.Model.Restart }
	sort.SliceStable(victims, func(a, b int) bool { return idle(victims[a]) > idle(victims[b]) })
	for _, j := range victims {
		p.restoreOne(s, jobs, free, cur, j)
	}
}

// seconds is job jb's remaining time on option o: its remaining progress
// at o's goodput, plus a restart delay when o changes what it holds.
func seconds(jb *job, o *option) float64 {
	if !(o.raw > 0) {
		return math.Inf(1)
	}
	t := jb.rem / o.raw
	if !adapt.SameCounts(jb.v.Alloc, o.alloc) {
		t += jb.v.Model.Restart
	}
	return t
}

// restoreOne gives victim j its current option back if that costs the
// jobs that took its GPUs fewer (aged) seconds than it saves j.
func (p *Policy) restoreOne(s *adapt.State, jobs []job, free []int, cur []int, j int) {
	vj := &jobs[j]
	want := vj.options[cur[j]]
	// The GPUs j lacks for its current allocation once its plan is freed.
	left := append([]int(nil), free...)
	for _, part := range vj.plan.alloc {
		left[part.Type] += part.GPUs
	}
	need := make([]int, len(free))
	short := 0
	for _, part := range want.alloc {
		need[part.Type] = max(part.GPUs-left[part.Type], 0)
		short += need[part.Type]
	}
	// The next completion of a job other than the taker (j's on its
	// current allocation): when a taker cut off now would find GPUs.
	next := [2]float64{math.Inf(1), math.Inf(1)}
	first := -1
	for i := range jobs {
		o := &jobs[i].plan
		if i == j {
			o = &want
		}
		if len(o.alloc) == 0 {
			continue
		}
		switch t := jobs[i].rem / o.raw; {
		case t < next[0]:
			next[1], next[0], first = next[0], t, i
		case t < next[1]:
			next[1] = t
		}
	}
	wait := func(i int) float64 {
		if i == first {
			return math.Max(next[1], s.Round)
		}
		return math.Max(next[0], s.Round)
	}
	aged := func(i int) float64 { return jobs[i].w * jobs[i].rem }
	// Cut the takers (jobs holding more of a needed type than they did),
	// cheapest seconds per needed GPU first.
	cut := map[int]int{} // job → option index (-1: nothing)
	plan := func(i int) goodput.Alloc {
		if k, ok := cut[i]; ok {
			if k < 0 {
				return nil
			}
			return jobs[i].options[k].alloc
		}
		return jobs[i].plan.alloc
	}
	cost, hold := 0.0, s.Round
	for short > 0 {
		bi, bk, bc, bf := -1, 0, math.Inf(1), 0
		for i := range jobs {
			if i == j || len(plan(i)) == 0 {
				continue
			}
			ib := &jobs[i]
			now := plan(i)
			if !takes(now, ib.v.Alloc, need) {
				continue
			}
			base := seconds(ib, &ib.plan)
			try := func(k int, a goodput.Alloc, t float64) {
				f := 0
				for _, part := range now {
					f += min(part.GPUs-count(a, part.Type), need[part.Type])
				}
				if f <= 0 {
					return
				}
				c := (t - base) * aged(i)
				if k0, ok := cut[i]; ok { // already cut (not to nothing): the further cost
					c = (t - seconds(ib, &ib.options[k0])) * aged(i)
				}
				if c/float64(f) < bc/float64(max(bf, 1)) || bi < 0 {
					bi, bk, bc, bf = i, k, c, f
				}
			}
			for k := range ib.options {
				o := &ib.options[k]
				if o.raw > 0 && grows(now, o.alloc) && !adapt.SameCounts(o.alloc, now) {
					try(k, o.alloc, seconds(ib, o))
				}
			}
			// Cut off, it waits for the next completion, and at least
			// as long as it would have run: under shortest-first, the
			// GPUs it waits for go to jobs like it.
			try(-1, nil, base+math.Max(wait(i), ib.rem/ib.plan.raw))
		}
		if bi < 0 {
			return // j's GPUs went to no taker that can give them back
		}
		for _, part := range plan(bi) {
			f := part.GPUs
			if bk >= 0 {
				f -= count(jobs[bi].options[bk].alloc, part.Type)
			}
			d := min(f, need[part.Type])
			need[part.Type] -= d
			short -= d
		}
		if _, ok := cut[bi]; !ok {
			hold = math.Max(hold, seconds(&jobs[bi], &jobs[bi].plan))
		}
		cut[bi] = bk
		cost += bc
	}
	// What j loses with its plan over the takers' hold: the restart now,
	// and on a slower plan one more to regrow (none if it stops: the
	// resume is the one), plus the progress it makes slower there (less
	// than nothing on a faster one: a move).
	lose := vj.v.Model.Restart
	if len(vj.plan.alloc) > 0 && vj.plan.raw < want.raw {
		lose *= 2
	}
	lose += math.Min(hold, seconds(vj, &vj.plan)) * (1 - vj.plan.raw/want.raw)
	if len(vj.plan.alloc) == 0 {
		// Stopped, it is free to resume on its best type (a running job
		// keeps its type): what that saves counts against the loss.
		lose -= vj.rem / want.raw * (1 - 1/vj.faster)
	}
	if !(cost < p.Restore*lose*aged(j)) {
		return
	}
	replan(vj, want, free)
	idx := make([]int, 0, len(cut))
	for i := range cut {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		if k := cut[i]; k >= 0 {
			replan(&jobs[i], jobs[i].options[k], free)
		} else {
			replan(&jobs[i], option{}, free)
		}
	}
}

// takes reports whether a holds more of some needed type than before.
func takes(a, before goodput.Alloc, need []int) bool {
	for _, part := range a {
		if need[part.Type] > 0 && part.GPUs > count(before, part.Type) {
			return true
		}
	}
	return false
}

// count is a's GPUs of type t.
func count(a goodput.Alloc, t int) int {
	n := 0
	for _, part := range a {
		if part.Type == t {
			n += part.GPUs
		}
	}
	return n
}
