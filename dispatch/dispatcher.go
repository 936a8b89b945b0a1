package dispatch

import (
	"fmt"
	"time"
)

// Policy says what happens to a request whose deadline passes.
type Policy uint8

const (
	// CompleteLate runs every request to completion; Finished.Late marks the
	// ones that finished after their deadline (count them as misses).
	CompleteLate Policy = iota
	// DropLate drops a request when one of its jobs would start after the
	// request's deadline.
	DropLate
)

// Config tunes a Dispatcher. The zero value is valid: CompleteLate.
type Config struct {
	Policy Policy
}

// Task is one job of one request: the unit the dispatcher launches.
type Task struct {
	Request int64
	Job     int
}

// Launch tells the caller to start a task now.
type Launch struct {
	Task Task
	// Proc is the processor of a compute task, -1 for a transfer.
	Proc int
	// Link is the link of a transfer, -1 for a compute task.
	Link int
}

// Finished reports a request whose jobs have all completed.
type Finished struct {
	Request         int64
	Group           int
	Arrival, Finish time.Duration
	// Late is Finish > Arrival + the group's deadline.
	Late bool
}

// Dropped reports a request abandoned under the DropLate policy.
type Dropped struct {
	Request     int64
	Group       int
	Arrival, At time.Duration
	Reason      string
}

// Ready is the batch of effects of the inputs since the previous call. Its
// slices belong to the Dispatcher and are valid until the next call of Ready.
type Ready struct {
	Launches []Launch
	Finished []Finished
	Dropped  []Dropped
}

// Job states within a request.
const (
	waiting uint8 = iota
	queued
	running
	done
)

type request struct {
	id                int64
	group             int
	arrival, deadline time.Duration // deadline is absolute
	pending           []int32       // per local job: dependencies not yet completed
	state             []uint8       // per local job
	left              int           // jobs not yet completed
	running           int
	dropped           bool
}

// Dispatcher is the state machine. It is not safe for concurrent use: one
// owner feeds it inputs and carries out its Ready batches.
type Dispatcher struct {
	prog   *Program
	cfg    Config
	local  []int   // job → index within its group's Jobs
	succs  [][]int // job → dependent jobs
	prio   []int   // job → its model's priority
	ndeps  [][]int32
	now    time.Duration
	nextID int64
	// reqs[i] is request base+i, nil once finished (IDs are sequential,
	// so a slice trimmed at the front replaces a map).
	reqs []*request
	base int64
	live int

	procQ    []taskHeap
	procBusy []int
	linkQ    []taskHeap
	linkBusy []int
	seq      int64
	// dirty lists the servers (processors, then links offset by the number
	// of processors) whose queue or load changed since the last Ready:
	// only they can launch.
	dirty   []int
	isDirty []bool

	// bufs[cur] accumulates effects; the other is the batch handed out by
	// the last Ready (its slices stay valid until the next call).
	bufs [2]Ready
	cur  int
}

// New builds a dispatcher for a program, which it validates. The program
// must not change afterwards.
func New(p *Program, cfg Config) (*Dispatcher, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if cfg.Policy > DropLate {
		return nil, fmt.Errorf("dispatch: unknown policy %d", cfg.Policy)
	}
	d := &Dispatcher{
		prog:     p,
		cfg:      cfg,
		local:    make([]int, len(p.Jobs)),
		succs:    make([][]int, len(p.Jobs)),
		prio:     make([]int, len(p.Jobs)),
		ndeps:    make([][]int32, len(p.Groups)),
		procQ:    make([]taskHeap, len(p.Procs)),
		procBusy: make([]int, len(p.Procs)),
		linkQ:    make([]taskHeap, len(p.Links)),
		linkBusy: make([]int, len(p.Links)),
		isDirty:  make([]bool, len(p.Procs)+len(p.Links)),
	}
	for gi, g := range p.Groups {
		d.ndeps[gi] = make([]int32, len(g.Jobs))
		for li, j := range g.Jobs {
			d.local[j] = li
			d.ndeps[gi][li] = int32(len(p.Jobs[j].Deps))
		}
	}
	for ji, j := range p.Jobs {
		d.prio[ji] = p.Models[j.Model].Priority
		for _, dep := range j.Deps {
			d.succs[dep] = append(d.succs[dep], ji)
		}
	}
	return d, nil
}

// Program returns the program the dispatcher runs.
func (d *Dispatcher) Program() *Program { return d.prog }

// InFlight is the number of requests that have arrived and are neither
// finished nor dropped-and-drained.
func (d *Dispatcher) InFlight() int { return d.live }

func (d *Dispatcher) request(id int64) *request {
	if id < d.base || id >= d.base+int64(len(d.reqs)) {
		return nil
	}
	return d.reqs[id-d.base]
}

func (d *Dispatcher) forget(r *request) {
	d.reqs[r.id-d.base] = nil
	d.live--
	for len(d.reqs) > 0 && d.reqs[0] == nil {
		d.reqs = d.reqs[1:]
		d.base++
	}
}

func (d *Dispatcher) advance(now time.Duration) {
	if now < d.now {
		panic(fmt.Sprintf("dispatch: time went backwards: %v after %v", now, d.now))
	}
	d.now = now
}

// Arrive registers a request of a group at time now and returns its ID
// (sequential from 0). The request's jobs without dependencies become ready.
func (d *Dispatcher) Arrive(group int, now time.Duration) (int64, error) {
	if group < 0 || group >= len(d.prog.Groups) {
		return 0, fmt.Errorf("dispatch: arrival for unknown group %d", group)
	}
	d.advance(now)
	g := &d.prog.Groups[group]
	r := &request{
		id:       d.nextID,
		group:    group,
		arrival:  now,
		deadline: now + g.Deadline,
		pending:  append([]int32(nil), d.ndeps[group]...),
		state:    make([]uint8, len(g.Jobs)),
		left:     len(g.Jobs),
	}
	d.nextID++
	d.reqs = append(d.reqs, r)
	d.live++
	if r.left == 0 {
		d.finish(r)
		return r.id, nil
	}
	for li, j := range g.Jobs {
		if r.pending[li] == 0 {
			d.enqueue(r, j)
		}
	}
	return r.id, nil
}

// Complete reports that a launched task finished at time now. Its
// dependents whose dependencies are now all complete become ready.
func (d *Dispatcher) Complete(t Task, now time.Duration) error {
	r := d.request(t.Request)
	if r == nil {
		return fmt.Errorf("dispatch: completion of task %v of an unknown request", t)
	}
	if t.Job < 0 || t.Job >= len(d.prog.Jobs) || d.prog.Models[d.prog.Jobs[t.Job].Model].Group != r.group {
		return fmt.Errorf("dispatch: completion of unknown job %d of request %d", t.Job, t.Request)
	}
	li := d.local[t.Job]
	if r.state[li] != running {
		return fmt.Errorf("dispatch: completion of job %d of request %d, which is not running", t.Job, t.Request)
	}
	d.advance(now)
	r.state[li] = done
	r.running--
	r.left--
	j := &d.prog.Jobs[t.Job]
	if j.Kind == Compute {
		d.procBusy[j.Proc]--
		d.touch(j.Proc)
	} else {
		d.linkBusy[j.Link]--
		d.touch(len(d.procQ) + j.Link)
	}
	if r.dropped {
		if r.running == 0 {
			d.forget(r)
		}
		return nil
	}
	for _, s := range d.succs[t.Job] {
		ls := d.local[s]
		if r.pending[ls]--; r.pending[ls] == 0 {
			d.enqueue(r, s)
		}
	}
	if r.left == 0 {
		d.finish(r)
	}
	return nil
}

func (d *Dispatcher) finish(r *request) {
	d.forget(r)
	d.bufs[d.cur].Finished = append(d.bufs[d.cur].Finished, Finished{
		Request: r.id, Group: r.group, Arrival: r.arrival, Finish: d.now, Late: d.now > r.deadline,
	})
}

func (d *Dispatcher) enqueue(r *request, job int) {
	r.state[d.local[job]] = queued
	j := &d.prog.Jobs[job]
	if j.Kind == Compute {
		d.procQ[j.Proc].push(entry{k1: int64(d.prio[job]), k2: int64(r.arrival), k3: r.id, job: job, req: r})
		d.touch(j.Proc)
		return
	}
	d.seq++
	d.linkQ[j.Link].push(entry{k1: d.seq, k2: r.id, k3: int64(job), job: job, req: r})
	d.touch(len(d.procQ) + j.Link)
}

func (d *Dispatcher) touch(server int) {
	if !d.isDirty[server] {
		d.isDirty[server] = true
		d.dirty = append(d.dirty, server)
	}
}

// Ready launches every task that can start at time now and returns the
// batch of effects: launches, and the requests finished or dropped since the
// previous call. Call it after each batch of inputs (arrivals and
// completions at the same instant may be fed together first).
func (d *Dispatcher) Ready(now time.Duration) Ready {
	d.advance(now)
	// Servers in index order (processors, then links): the launch order
	// must not depend on the order in which they became dirty.
	if len(d.dirty) > 1 {
		sortInts(d.dirty)
	}
	np := len(d.procQ)
	for _, s := range d.dirty {
		d.isDirty[s] = false
		if s < np {
			p := s
			limit := d.prog.Procs[p].Concurrency
			for d.procBusy[p] < limit && d.procQ[p].len() > 0 {
				if e := d.procQ[p].pop(); d.admit(e) {
					d.procBusy[p]++
					d.bufs[d.cur].Launches = append(d.bufs[d.cur].Launches, Launch{Task: Task{e.req.id, e.job}, Proc: p, Link: -1})
				}
			}
			continue
		}
		l := s - np
		shared := d.prog.Links[l].Shared
		for (!shared || d.linkBusy[l] < 1) && d.linkQ[l].len() > 0 {
			if e := d.linkQ[l].pop(); d.admit(e) {
				d.linkBusy[l]++
				d.bufs[d.cur].Launches = append(d.bufs[d.cur].Launches, Launch{Task: Task{e.req.id, e.job}, Proc: -1, Link: l})
			}
		}
	}
	d.dirty = d.dirty[:0]
	out := d.bufs[d.cur]
	d.cur ^= 1
	b := &d.bufs[d.cur]
	b.Launches, b.Finished, b.Dropped = b.Launches[:0], b.Finished[:0], b.Dropped[:0]
	return out
}

// admit decides whether a task at the head of its queue starts: it does
// unless its request was dropped, or is dropped now under DropLate.
func (d *Dispatcher) admit(e entry) bool {
	r := e.req
	if r.dropped {
		return false
	}
	if d.cfg.Policy == DropLate && d.now > r.deadline {
		r.dropped = true
		d.bufs[d.cur].Dropped = append(d.bufs[d.cur].Dropped, Dropped{
			Request: r.id, Group: r.group, Arrival: r.arrival, At: d.now,
			Reason: fmt.Sprintf("deadline passed at %v before %s could start", r.deadline, d.prog.Jobs[e.job].Label),
		})
		if r.running == 0 {
			d.forget(r)
		}
		return false
	}
	r.state[d.local[e.job]] = running
	r.running++
	return true
}

// entry is a queued task with its ordering key (k1, k2, k3, job).
type entry struct {
	k1, k2, k3 int64
	job        int
	req        *request
}

func (a entry) less(b entry) bool {
	if a.k1 != b.k1 {
		return a.k1 < b.k1
	}
	if a.k2 != b.k2 {
		return a.k2 < b.k2
	}
	if a.k3 != b.k3 {
		return a.k3 < b.k3
	}
	return a.job < b.job
}

// taskHeap is a binary min-heap of entries.
type taskHeap struct{ a []entry }

func (h *taskHeap) len() int { return len(h.a) }

func (h *taskHeap) push(e entry) {
	h.a = append(h.a, e)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.a[i].less(h.a[p]) {
			break
		}
		h.a[i], h.a[p] = h.a[p], h.a[i]
		i = p
	}
}

func (h *taskHeap) pop() entry {
	top := h.a[0]
	n := len(h.a) - 1
	h.a[0] = h.a[n]
	h.a[n] = entry{}
	h.a = h.a[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.a[l].less(h.a[m]) {
			m = l
		}
		if r < n && h.a[r].less(h.a[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.a[i], h.a[m] = h.a[m], h.a[i]
		i = m
	}
	return top
}

// sortInts is an insertion sort: the dirty list is short (slices.Sort, with
// no guard for one element, made BenchmarkEvaluate in sim ~6 % slower).
func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
