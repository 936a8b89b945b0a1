package sim

import (
	"math"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

// Contention is what the simulator needs to stretch compute jobs that
// overlap on processors sharing a resource (package cost's contention
// model). Compile fills it when the estimator is a cost.ContentionEstimator
// and the platform lists shared resources; nil means no stretching.
type Contention struct {
	// Resources are the platform's shared resources (hw.Platform.Shared).
	Resources []hw.Shared
	// ProcShares lists, per processor, the indices of the resources it
	// shares.
	ProcShares [][]int
	// Use holds, per job, its use of each resource its processor shares
	// (aligned with ProcShares[job.Proc]; nil for transfers): u of the
	// model, computed from the job's uncontended duration.
	Use [][]float64
	// Sensitivity is each job's k (0 for transfers).
	Sensitivity []float64
}

// compileContention builds the program's contention data, or nil when
// the platform shares nothing or the estimator has no loads.
func compileContention(dp *dispatch.Program, pl *hw.Platform, loads []cost.Load) *Contention {
	if len(pl.Shared) == 0 || loads == nil {
		return nil
	}
	c := &Contention{Resources: pl.Shared, ProcShares: pl.Sharers(),
		Use: make([][]float64, len(dp.Jobs)), Sensitivity: make([]float64, len(dp.Jobs))}
	any := false
	for ji, j := range dp.Jobs {
		if j.Kind != dispatch.Compute {
			continue
		}
		l := loads[ji]
		shares := c.ProcShares[j.Proc]
		if len(shares) == 0 {
			continue
		}
		c.Use[ji] = make([]float64, len(shares))
		for i, r := range shares {
			c.Use[ji][i] = l.Use(j.Duration, &c.Resources[r])
		}
		c.Sensitivity[ji] = l.Sensitivity
		any = any || l.Sensitivity > 0
	}
	if !any {
		return nil
	}
	return c
}

// loadOf asks a contention estimator for a subgraph's load; ok is false
// when the estimator is not one.
func loadOf(est cost.Estimator, lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (cost.Load, bool, error) {
	ce, ok := est.(cost.ContentionEstimator)
	if !ok {
		return cost.Load{}, false, nil
	}
	l, err := ce.Load(lg, set, on)
	return l, true, err
}

// active is a compute task running under the contention model: its
// uncontended work left (ns) as of segStart, the slowdown it runs at since
// then, and its completion at that rate (at, with the event queue's
// sequence number seq taken when it was set, so that it sorts among the
// queue's events exactly as a queued event would). Its sensitivity k and
// its resources and uses are copied from the Contention at launch.
type active struct {
	req       int64
	job       int32
	span      int // index into Result.Spans, -1 when not recorded
	at        time.Duration
	seq       int64
	segStart  time.Duration
	start     time.Duration
	remaining float64
	slow      float64
	k         float64
	shares    []int
	use       []float64
}

// contended is a run's contention state: the running tasks, in launch
// order (so that re-rating is deterministic), a scratch load per resource,
// and the index of the task that completes first (-1: none runs).
//
// The tasks' completions are kept here rather than in the event queue:
// every start or end of a task re-rates its neighbours, and a queued
// completion per re-rating would leave the queue full of stale events
// (on the phone, where every processor shares the memory channel, most
// of them). The run loop merges the first of them with the queue by
// (time, sequence number), which is the order the queue itself keeps.
type contended struct {
	c         *Contention
	p         *dispatch.Program
	tasks     []active
	load      []float64
	next      int
	stretched int
}

func newContended(c *Contention, p *dispatch.Program) *contended {
	return &contended{c: c, p: p, load: make([]float64, len(c.Resources)), next: -1}
}

// slowdown of running task a given what runs beside it (the loads summed
// in x.load over every running task, a's own use taken out): the model's
// 1 + min(MaxSlowdown − 1, k · Σ_r min(1, load_r − u_a,r)), written with
// comparisons (math.Min and math.Max give the same values here: no
// operand is a signed zero that matters, and a NaN passes through both).
func (x *contended) slowdown(a *active) float64 {
	if a.k == 0 {
		return 1
	}
	var sum float64
	for i, r := range a.shares {
		v := x.load[r] - a.use[i]
		if v < 0 {
			v = 0
		}
		if v > 1 {
			v = 1
		}
		sum += v
	}
	ks := a.k * sum
	if ks > cost.MaxSlowdown-1 {
		ks = cost.MaxSlowdown - 1
	}
	return 1 + ks
}

// sumLoads recomputes each resource's summed use over the running tasks,
// in launch order (a running sum updated as tasks come and go would round
// differently, and the re-rating compares slowdowns exactly).
func (x *contended) sumLoads() {
	for i := range x.load {
		x.load[i] = 0
	}
	for ti := range x.tasks {
		a := &x.tasks[ti]
		for i, r := range a.shares {
			x.load[r] += a.use[i]
		}
	}
}

// rerate brings every running task's work left up to now and, where its
// slowdown changed, sets its completion anew (taking a sequence number
// from the queue, as a pushed event would); then finds the first
// completion. x.load must be the running tasks' summed uses.
func (x *contended) rerate(now time.Duration, q *eventQueue) {
	for ti := range x.tasks {
		if a := &x.tasks[ti]; a.reslow(now, x.slowdown(a)) {
			a.at, a.seq = now+time.Duration(math.Ceil(a.remaining*a.slow)), q.seq
			q.seq++
		}
	}
	x.next = -1
	for ti := range x.tasks {
		a := &x.tasks[ti]
		if x.next < 0 {
			x.next = ti
			continue
		}
		if n := &x.tasks[x.next]; a.at < n.at || (a.at == n.at && a.seq < n.seq) {
			x.next = ti
		}
	}
}

// first returns the time and sequence number of the first completion;
// ok is false when no task runs.
func (x *contended) first() (at time.Duration, seq int64, ok bool) {
	if x.next < 0 {
		return 0, 0, false
	}
	a := &x.tasks[x.next]
	return a.at, a.seq, true
}

// launch starts a compute task under the model and re-rates the others.
// The new task is the last in launch order, so adding its uses to the
// loads gives the sums sumLoads would (the same additions in the same
// order).
func (x *contended) launch(now time.Duration, req int64, job int32, span int, q *eventQueue) {
	x.tasks = append(x.tasks, active{req: req, job: job, segStart: now, start: now,
		remaining: float64(x.p.Jobs[job].Duration), slow: 0, span: span,
		k: x.c.Sensitivity[job], shares: x.c.ProcShares[x.p.Jobs[job].Proc], use: x.c.Use[job]})
	a := &x.tasks[len(x.tasks)-1]
	for i, r := range a.shares {
		x.load[r] += a.use[i]
	}
	x.rerate(now, q)
}

// complete ends the first task to complete (there must be one): it
// removes it, re-rates the others and returns it with its stretch
// (elapsed over uncontended duration).
func (x *contended) complete(q *eventQueue) (a active, stretch float64) {
	ti := x.next
	a = x.tasks[ti]
	x.tasks = append(x.tasks[:ti], x.tasks[ti+1:]...)
	if stretch = stretchOf(x.p, &a, a.at); stretch > 1.01 {
		x.stretched++
	}
	x.sumLoads()
	x.rerate(a.at, q)
	return a, stretch
}

// reslow, when the task's slowdown changes to s, brings its work left up
// to now at the old one, sets s and reports true.
func (a *active) reslow(now time.Duration, s float64) bool {
	if s == a.slow {
		return false
	}
	if elapsed := now - a.segStart; elapsed > 0 {
		a.remaining = math.Max(0, a.remaining-float64(elapsed)/a.slow)
	}
	a.segStart, a.slow = now, s
	return true
}

// stretchOf is a task's elapsed time, if it ends at end, over its
// uncontended duration (0 for a task of no duration).
func stretchOf(p *dispatch.Program, a *active, end time.Duration) float64 {
	if d := p.Jobs[a.job].Duration; d > 0 {
		return float64(end-a.start) / float64(d)
	}
	return 0
}

// owns reports whether a job runs under the model: a compute job on a
// processor that shares a resource (it exerts load even when it suffers
// none).
func (x *contended) owns(job int32) bool { return x.c.Use[job] != nil }
