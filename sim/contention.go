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
// uncontended work left (ns) as of segStart, and the slowdown it runs at
// since then. ver numbers its completion events; an event of an older
// version is stale (the task was re-rated since) and skipped.
type active struct {
	req       int64
	job       int32
	ver       int32
	segStart  time.Duration
	start     time.Duration
	remaining float64
	slow      float64
	span      int // index into Result.Spans, -1 when not recorded
}

// contended is a run's contention state: the running tasks, in launch
// order (so that re-rating is deterministic), and a scratch load per
// resource.
type contended struct {
	c         *Contention
	p         *dispatch.Program
	tasks     []active
	load      []float64
	stretched int
}

func newContended(c *Contention, p *dispatch.Program) *contended {
	return &contended{c: c, p: p, load: make([]float64, len(c.Resources))}
}

// slowdown of running task a given what runs beside it (the loads summed
// in x.load over every running task, a's own use taken out).
func (x *contended) slowdown(a *active) float64 {
	j := &x.p.Jobs[a.job]
	k := x.c.Sensitivity[a.job]
	if k == 0 {
		return 1
	}
	use := x.c.Use[a.job]
	var sum float64
	for i, r := range x.c.ProcShares[j.Proc] {
		sum += math.Min(1, math.Max(0, x.load[r]-use[i]))
	}
	return 1 + math.Min(cost.MaxSlowdown-1, k*sum)
}

// sumLoads recomputes each resource's summed use over the running tasks.
func (x *contended) sumLoads() {
	for i := range x.load {
		x.load[i] = 0
	}
	for ti := range x.tasks {
		j := &x.p.Jobs[x.tasks[ti].job]
		use := x.c.Use[x.tasks[ti].job]
		for i, r := range x.c.ProcShares[j.Proc] {
			x.load[r] += use[i]
		}
	}
}

// rerate brings every running task's work left up to now and, where its
// slowdown changed, schedules its completion anew (a new version).
func (x *contended) rerate(now time.Duration, q *eventQueue) {
	x.sumLoads()
	for ti := range x.tasks {
		a := &x.tasks[ti]
		s := x.slowdown(a)
		if s == a.slow {
			continue
		}
		if elapsed := now - a.segStart; elapsed > 0 {
			a.remaining = math.Max(0, a.remaining-float64(elapsed)/a.slow)
		}
		a.segStart, a.slow = now, s
		a.ver++
		q.push(event{at: now + time.Duration(math.Ceil(a.remaining*s)), group: -1, req: a.req, job: a.job, ver: a.ver})
	}
}

// launch starts a compute task under the model and re-rates the others.
func (x *contended) launch(now time.Duration, req int64, job int32, span int, q *eventQueue) {
	x.tasks = append(x.tasks, active{req: req, job: job, segStart: now, start: now,
		remaining: float64(x.p.Jobs[job].Duration), slow: 0, span: span})
	x.rerate(now, q)
}

// complete handles a completion event: ok is false for a stale one. On a
// current one it removes the task, re-rates the others and returns the
// task's stretch (elapsed over uncontended duration).
func (x *contended) complete(e event, q *eventQueue) (a active, stretch float64, ok bool) {
	for ti := range x.tasks {
		t := &x.tasks[ti]
		if t.req != e.req || t.job != e.job {
			continue
		}
		if t.ver != e.ver {
			return active{}, 0, false
		}
		a = *t
		x.tasks = append(x.tasks[:ti], x.tasks[ti+1:]...)
		if d := x.p.Jobs[a.job].Duration; d > 0 {
			stretch = float64(e.at-a.start) / float64(d)
		}
		if stretch > 1.01 {
			x.stretched++
		}
		x.rerate(e.at, q)
		return a, stretch, true
	}
	return active{}, 0, false
}

// owns reports whether a job runs under the model: a compute job on a
// processor that shares a resource (it exerts load even when it suffers
// none).
func (x *contended) owns(job int32) bool { return x.c.Use[job] != nil }
