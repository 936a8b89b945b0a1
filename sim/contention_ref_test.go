package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/timeline"
)

// refRun is the straightforward implementation of contended runs that the
// simulator's faster one must agree with exactly: every compute task's
// completion is an event in the queue, every start and end of a task
// re-rates all running tasks and queues a new completion for each whose
// slowdown changed, and a completion that was re-rated since it was
// queued is skipped when it comes out. Everything else is Run's.
func refRun(prog *Program, opt Options) (*Result, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	p := prog.Program
	d, err := dispatch.New(p, dispatch.Config{Policy: opt.Policy})
	if err != nil {
		return nil, err
	}
	horizon := opt.Horizon
	if horizon == 0 {
		opt.Warmup, opt.Requests = capRequests(p, opt)
		horizon = DefaultHorizon(p, opt.Scale, opt.Warmup+opt.Requests)
	}
	r := &refRunner{run: newRun(p, d, opt, horizon)}
	if prog.Contention != nil && !opt.NoContention {
		r.cont = &refContended{c: prog.Contention, p: p, load: make([]float64, len(prog.Contention.Resources))}
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
		r.dispatch(now)
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

// refTask is a running task: its current completion event is the one
// with sequence number seq; any other of its events is stale.
type refTask struct {
	req       int64
	job       int32
	seq       int64
	segStart  time.Duration
	start     time.Duration
	remaining float64
	slow      float64
	span      int
}

type refContended struct {
	c         *Contention
	p         *dispatch.Program
	tasks     []refTask
	load      []float64
	stretched int
}

func (x *refContended) slowdown(a *refTask) float64 {
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
		a := &x.tasks[ti]
		s := x.slowdown(a)
		if s == a.slow {
			continue
		}
		if elapsed := now - a.segStart; elapsed > 0 {
			a.remaining = math.Max(0, a.remaining-float64(elapsed)/a.slow)
		}
		a.segStart, a.slow = now, s
		a.seq = q.seq
		q.push(event{at: now + time.Duration(math.Ceil(a.remaining*s)), group: -1, req: a.req, job: a.job})
	}
}

func (x *refContended) complete(e event, q *eventQueue) (a refTask, stretch float64, ok bool) {
	for ti := range x.tasks {
		t := &x.tasks[ti]
		if t.req != e.req || t.job != e.job {
			continue
		}
		if t.seq != e.seq {
			return refTask{}, 0, false
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
	return refTask{}, 0, false
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
				j := &r.p.Jobs[e.job]
				r.res.Procs[j.Proc].Busy += e.at - a.start - j.Duration
				if a.span >= 0 {
					r.res.Spans[a.span].End = e.at
					r.res.Spans[a.span].Stretch = stretch
				}
			}
			if err := r.d.Complete(dispatch.Task{Request: e.req, Job: int(e.job)}, now); err != nil {
				return false, fmt.Errorf("sim: %w", err)
			}
			handled = true
			continue
		}
		handled = true
		id, err := r.d.Arrive(g, now)
		if err != nil {
			return false, fmt.Errorf("sim: %w", err)
		}
		if int(id) != len(r.reqs) {
			panic("sim: dispatcher request IDs are not sequential")
		}
		idx := r.counts[g]
		r.counts[g]++
		r.reqs = append(r.reqs, reqInfo{group: g, index: idx, arrival: now})
		if idx >= r.opt.Warmup {
			st := &r.stats[g]
			st.requests++
			if st.firstArrival < 0 {
				st.firstArrival = now
			}
		}
		if k := r.counts[g]; k < len(r.arrivals[g]) {
			r.q.push(event{at: r.arrivals[g][k], group: e.group})
		}
	}
	return handled, nil
}

func (r *refRunner) dispatch(now time.Duration) {
	ready := r.d.Ready(now)
	for _, l := range ready.Launches {
		r.launch(now, l)
	}
	for _, f := range ready.Finished {
		r.end = now
		ri := &r.reqs[f.Request]
		if f.Late {
			r.markLate(ri)
		}
		if ri.index < r.opt.Warmup {
			continue
		}
		st := &r.stats[f.Group]
		st.lat = append(st.lat, f.Finish-f.Arrival)
		if f.Late {
			st.late++
		}
	}
	for _, dr := range ready.Dropped {
		ri := &r.reqs[dr.Request]
		r.markLate(ri)
		if ri.index >= r.opt.Warmup {
			r.stats[dr.Group].dropped++
		}
	}
	if now > r.end {
		r.end = now
	}
	r.settled = len(ready.Finished) > 0 || len(ready.Dropped) > 0
}

func (r *refRunner) launch(now time.Duration, l dispatch.Launch) {
	p := r.p
	nproc := len(p.Procs)
	j := &p.Jobs[l.Task.Job]
	lane := l.Proc
	if j.Kind == dispatch.Transfer {
		lane = nproc + l.Link
		r.res.Links[l.Link].Busy += j.Duration
	} else {
		r.res.Procs[l.Proc].Busy += j.Duration
	}
	contended := r.cont != nil && j.Kind == dispatch.Compute && r.cont.c.Use[l.Task.Job] != nil
	if !contended {
		r.q.push(event{at: now + j.Duration, group: -1, req: l.Task.Request, job: int32(l.Task.Job)})
	}
	span := -1
	if r.record {
		span = len(r.res.Spans)
	}
	if contended {
		r.cont.tasks = append(r.cont.tasks, refTask{req: l.Task.Request, job: int32(l.Task.Job),
			segStart: now, start: now, remaining: float64(j.Duration), span: span})
		r.cont.rerate(now, &r.q)
	}
	if !r.record {
		return
	}
	ri := &r.reqs[l.Task.Request]
	ri.spans = append(ri.spans, len(r.res.Spans))
	name := ""
	if lane < nproc {
		name = p.Procs[lane].Name
	} else {
		name = p.Links[l.Link].Name
	}
	m := &p.Models[j.Model]
	r.res.Spans = append(r.res.Spans, timeline.Span{
		Processor: name, Label: j.Label, Group: p.Groups[m.Group].Name, Model: m.Name,
		Request: ri.index, Start: now + j.HandOff, End: now + j.Duration, Arrival: ri.arrival,
	})
}
