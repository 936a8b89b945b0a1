package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/dispatch"
)

// refRun is the straightforward implementation of contended runs that the
// simulator's faster one must agree with exactly: every compute task's
// completion is an event in the queue, every start and end of a task
// re-rates all running tasks and queues a new completion for each whose
// slowdown changed, and a completion that was re-rated since it was
// queued is skipped when it comes out. Everything else is Run's.
func refRun(prog *Program, opt Options) (*Result, error) {
	run, err := start(prog, opt)
	if err != nil {
		return nil, err
	}
	r := &refRunner{run: run}
	if prog.Contention != nil && !r.opt.NoContention {
		r.cont = &refContended{c: prog.Contention, p: r.p, load: make([]float64, len(prog.Contention.Resources))}
	}
	for len(r.q.a) > 0 {
		now := r.q.a[0].at
		handled, err := r.handleEvents(now)
		if err != nil {
			return nil, err
		}
		if !handled {
			continue // only stale completions of re-rated tasks
		}
		r.dispatch(now, r.launch)
		if r.opt.failFast && r.overMissBudget() {
			r.res.Stopped = true
			break
		}
	}
	res := r.finish()
	if r.cont != nil {
		res.Stretched = r.cont.stretched
	}
	return res, nil
}

type refRunner struct {
	*run
	cont *refContended
}

type refContended struct {
	c         *Contention
	p         *dispatch.Program
	tasks     []active // seq: the sequence number of the task's current completion event; any other is stale
	load      []float64
	stretched int
}

func (x *refContended) slowdown(a *active) float64 {
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

func (x *refContended) rerate(now time.Duration, q *eventQueue) {
	for i := range x.load {
		x.load[i] = 0
	}
	for ti := range x.tasks {
		j := &x.p.Jobs[x.tasks[ti].job]
		for i, r := range x.c.ProcShares[j.Proc] {
			x.load[r] += x.c.Use[x.tasks[ti].job][i]
		}
	}
	for ti := range x.tasks {
		if a := &x.tasks[ti]; a.reslow(now, x.slowdown(a)) {
			a.seq = q.seq
			q.push(event{at: now + time.Duration(math.Ceil(a.remaining*a.slow)), group: -1, req: a.req, job: a.job})
		}
	}
}

func (x *refContended) complete(e event, q *eventQueue) (a active, stretch float64, ok bool) {
	for ti := range x.tasks {
		t := &x.tasks[ti]
		if t.req != e.req || t.job != e.job {
			continue
		}
		if t.seq != e.seq {
			return active{}, 0, false
		}
		a = *t
		x.tasks = append(x.tasks[:ti], x.tasks[ti+1:]...)
		if stretch = stretchOf(x.p, &a, e.at); stretch > 1.01 {
			x.stretched++
		}
		x.rerate(e.at, q)
		return a, stretch, true
	}
	return active{}, 0, false
}

func (r *refRunner) handleEvents(now time.Duration) (handled bool, err error) {
	for len(r.q.a) > 0 && r.q.a[0].at == now {
		e := r.q.pop()
		g := int(e.group)
		if g < 0 {
			if r.cont != nil && r.cont.c.Use[e.job] != nil {
				a, stretch, ok := r.cont.complete(e, &r.q)
				if !ok {
					continue
				}
				r.endStretched(&a, e.at, stretch)
			}
			if err := r.d.Complete(dispatch.Task{Request: e.req, Job: int(e.job)}, now); err != nil {
				return false, fmt.Errorf("sim: %w", err)
			}
			handled = true
			continue
		}
		handled = true
		if err := r.arrive(now, e); err != nil {
			return false, err
		}
	}
	return handled, nil
}

// launch is run.launch (whose own contention state is nil: it queues
// the completion) but for a contended task, whose completion rerate
// queues.
func (r *refRunner) launch(now time.Duration, l dispatch.Launch) {
	j := &r.p.Jobs[l.Task.Job]
	if r.cont == nil || j.Kind != dispatch.Compute || r.cont.c.Use[l.Task.Job] == nil {
		r.run.launch(now, l)
		return
	}
	r.addBusy(l)
	r.cont.tasks = append(r.cont.tasks, active{req: l.Task.Request, job: int32(l.Task.Job),
		segStart: now, start: now, remaining: float64(j.Duration), span: r.nextSpan()})
	r.cont.rerate(now, &r.q)
	r.recordSpan(now, l)
}
