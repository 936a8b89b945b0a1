package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/internal/stats"
	"github.com/inlay-dev/inlay/timeline"
	"github.com/inlay-dev/inlay/workload"
)

// Program is a compiled plan: the dispatcher's program plus the names the
// reports use. Build it with Compile, or wrap a hand-made dispatch.Program.
type Program struct {
	*dispatch.Program
	// Planner and Platform name where the program came from (reports only).
	Planner, Platform string
	// Contention stretches overlapping compute jobs on processors that
	// share a resource; nil: none (see Contention).
	Contention *Contention
}

// Defaults of Options; see Options.
const (
	DefaultRequests = 200
	DefaultWarmup   = 20
	// DefaultMaxJobs caps the job executions of a default-horizon run.
	DefaultMaxJobs = 250_000
	// MinRequests is the fewest measured requests the cap leaves the
	// slowest group.
	MinRequests = 50
)

// Options tune a simulation run.
type Options struct {
	// Seed drives the Poisson arrivals (one *rand.Rand per group, seeded
	// from Seed and the group's index). Periodic runs ignore it.
	Seed int64
	// Horizon is how long requests arrive, in virtual time. 0 means the
	// default: long enough for every group to issue Warmup+Requests requests
	// at its scaled rate, i.e. max over groups of (Warmup+Requests)·Period/Scale.
	// After the horizon no request arrives and the run drains: every request
	// that arrived is carried to completion (or dropped), so none is censored.
	Horizon time.Duration
	// Scale multiplies every group's nominal rate; 0 means 1.
	Scale float64
	// Requests is the number of measured requests per group the default
	// horizon is sized for; 0 means DefaultRequests (200: with the 99 %
	// criterion a group may miss at most 2 of them).
	Requests int
	// Warmup is the number of first requests of each group excluded from the
	// statistics; 0 means DefaultWarmup (20), negative means none. The run
	// starts empty, so the first requests see shorter queues than the
	// steady state; excluding them makes the statistics more conservative.
	Warmup int
	// MaxJobs caps the job executions (compute and transfer) of a run with
	// the default horizon; 0 means DefaultMaxJobs, negative no cap. A plan
	// cut into hundreds of subgraphs, with groups whose rates differ by 10×,
	// would otherwise run millions of jobs per simulation: the slowest group
	// sizes the horizon and the fastest repeats its jobs many times over.
	// When Warmup+Requests requests of the slowest group would exceed the
	// cap, both are scaled down together, but never below MinRequests (50)
	// measured requests (at most 0 misses at the 99 % criterion: a stricter
	// test, so the cap can only lower the max sustainable scale).
	MaxJobs int
	// Policy is the dispatcher's deadline policy (default CompleteLate).
	Policy dispatch.Policy
	// NoSpans skips recording spans (faster; for rate searches).
	NoSpans bool
	// NoContention runs every job at its uncontended duration even when
	// the program carries a contention model (the "without contention"
	// prediction).
	NoContention bool

	// failFast stops the run as soon as some group has certainly missed
	// more than MaxMissRate of its measured requests (rate searches only).
	failFast bool
}

func (o Options) withDefaults() (Options, error) {
	var err error
	if o.Scale, err = workload.RateScale(o.Scale); err != nil {
		return o, fmt.Errorf("sim: %w", err)
	}
	if o.Horizon < 0 {
		return o, fmt.Errorf("sim: negative horizon %v", o.Horizon)
	}
	if o.Requests == 0 {
		o.Requests = DefaultRequests
	}
	if o.Requests < 0 {
		return o, fmt.Errorf("sim: negative request count %d", o.Requests)
	}
	switch {
	case o.Warmup == 0:
		o.Warmup = DefaultWarmup
	case o.Warmup < 0:
		o.Warmup = 0
	}
	if o.MaxJobs == 0 {
		o.MaxJobs = DefaultMaxJobs
	}
	return o, nil
}

// GroupResult is the outcome of one group's measured requests (warm-up
// excluded).
type GroupResult struct {
	Name string
	// Requests arrived after the warm-up; Completed of them finished;
	// Late finished after their deadline; Dropped were abandoned
	// (dispatch.DropLate only).
	Requests, Completed, Late, Dropped int
	// Latency from arrival to the group's last job done, over the completed
	// requests: median, 99th percentile (nearest rank), mean and maximum.
	P50, P99, Mean, Max time.Duration
	// MissRate is (Late+Dropped)/Requests.
	MissRate float64
	// RateHz is the achieved throughput: measured requests completed per
	// second of the window in which they arrived.
	RateHz float64
	// OfferedHz is the scaled nominal rate; Deadline the group's deadline.
	OfferedHz float64
	Deadline  time.Duration
}

// ProcResult is a processor's (or link's) use over the run.
type ProcResult struct {
	Name string
	// Busy is the summed duration of the jobs it ran; Utilisation is Busy
	// over Concurrency × the run's length (links: over the run's length).
	Busy        time.Duration
	Utilisation float64
}

// Result is the outcome of a run.
type Result struct {
	Scale  float64
	Groups []GroupResult
	Procs  []ProcResult
	// Links lists the links in program order.
	Links []ProcResult
	// Spans are what ran where (nil with Options.NoSpans); Processor is a
	// processor's name, or a link's name for transfers. Lanes lists those
	// names: every processor, then the links that carried a transfer.
	Spans []timeline.Span
	Lanes []string
	// Horizon is the arrival window; End the time the last request finished.
	Horizon, End time.Duration
	// Misses reports the groups whose miss rate exceeds 1 % ("" when none):
	// "group g: 5 of 200 requests late (p99 41ms > deadline 33ms)".
	Misses string
	// Stopped is true when a rate search cut the run short once a group had
	// certainly failed; then Requests are the requests the full run would
	// have measured and the latency figures cover the completed ones.
	Stopped bool
	// Stretched counts the compute jobs that contention lengthened by
	// more than 1 %.
	Stretched int
}

// Meets reports whether at least 99 % of every group's measured requests
// met their deadline.
func (r *Result) Meets() bool {
	if r.Stopped {
		return false
	}
	for _, g := range r.Groups {
		if g.MissRate > MaxMissRate {
			return false
		}
	}
	return true
}

// MaxMissRate is the largest miss rate a sustainable group may have.
const MaxMissRate = 0.01

// event is an arrival of a group's request (group ≥ 0) or the completion
// of a task (group -1). Compute tasks under the contention model complete
// through the run's contended state instead (see contended).
type event struct {
	at    time.Duration
	seq   int64
	req   int64 // completions: the task's request
	job   int32 // completions: the task's job
	group int32 // arrivals: the group; -1 for completions
}

// eventQueue is a min-heap ordered by (time, sequence number): events at
// the same instant come out in the order they were scheduled.
type eventQueue struct {
	a   []event
	seq int64
	now time.Duration
}

func (q *eventQueue) push(e event) {
	if e.at < q.now {
		panic(fmt.Sprintf("sim: event scheduled at %v, in the past of %v", e.at, q.now))
	}
	e.seq = q.seq
	q.seq++
	q.a = append(q.a, e)
	i := len(q.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.a[i], q.a[p] = q.a[p], q.a[i]
		i = p
	}
}

func (q *eventQueue) less(i, j int) bool {
	if q.a[i].at != q.a[j].at {
		return q.a[i].at < q.a[j].at
	}
	return q.a[i].seq < q.a[j].seq
}

func (q *eventQueue) pop() event {
	top := q.a[0]
	n := len(q.a) - 1
	q.a[0] = q.a[n]
	q.a = q.a[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.a[i], q.a[m] = q.a[m], q.a[i]
		i = m
	}
	q.now = top.at
	return top
}

// reqInfo is what the simulator keeps per request.
type reqInfo struct {
	group, index int
	arrival      time.Duration
	spans        []int // indices into the span list
}

// Run simulates the program at the options' rate scale. It is deterministic:
// the same program and options give the same result. Periodic groups all
// release their first request at time 0 (the critical instant); request k of
// a periodic group arrives at round(k·Period/Scale). Poisson groups draw
// exponential inter-arrival times with mean Period/Scale.
//
// Cost: O(R·J·log) for R requests of J jobs each.
func Run(prog *Program, opt Options) (*Result, error) {
	if prog == nil || prog.Program == nil {
		return nil, errors.New("sim: nil program")
	}
	r, err := start(prog, opt)
	if err != nil {
		return nil, err
	}
	if prog.Contention != nil && !r.opt.NoContention {
		r.cont = newContended(prog.Contention, r.p)
	}
	for {
		now, ok := r.nextAt()
		if !ok {
			break
		}
		if err := r.handleEvents(now); err != nil {
			return nil, err
		}
		r.dispatch(now, r.launch)
		if r.opt.failFast && r.overMissBudget() {
			r.res.Stopped = true
			break
		}
	}
	return r.finish(), nil
}

// groupStat is one group's tally during a run (requests after warm-up).
type groupStat struct {
	lat                     []time.Duration
	requests, late, dropped int
	firstArrival            time.Duration
}

// run is one simulation in progress: the event queue around the
// dispatcher, the requests so far and the tallies.
type run struct {
	p        *dispatch.Program
	d        *dispatch.Dispatcher
	opt      Options
	horizon  time.Duration
	res      *Result
	arrivals [][]time.Duration // per group, drawn up front
	counts   []int             // per group: requests arrived so far
	q        eventQueue
	stats    []groupStat
	reqs     []reqInfo // indexed by request ID (sequential from 0)
	end      time.Duration
	record   bool
	// settled: some request finished or was dropped at the last step.
	settled bool
	// cont is the contention state (nil: durations as compiled).
	cont *contended
}

// start prepares a run of prog under opt: the options' defaults, the
// dispatcher and the horizon (with the request counts capped when the
// horizon is derived from them).
func start(prog *Program, opt Options) (*run, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	p := prog.Program
	d, err := dispatch.New(p, dispatch.Config{Policy: opt.Policy})
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	horizon := opt.Horizon
	if horizon == 0 {
		opt.Warmup, opt.Requests = capRequests(p, opt)
		horizon = DefaultHorizon(p, opt.Scale, opt.Warmup+opt.Requests)
	}
	return newRun(p, d, opt, horizon), nil
}

func newRun(p *dispatch.Program, d *dispatch.Dispatcher, opt Options, horizon time.Duration) *run {
	r := &run{p: p, d: d, opt: opt, horizon: horizon, record: !opt.NoSpans}
	r.res = &Result{Scale: opt.Scale, Horizon: horizon}
	r.res.Procs = make([]ProcResult, len(p.Procs))
	for i, pr := range p.Procs {
		r.res.Procs[i].Name = pr.Name
	}
	r.res.Links = make([]ProcResult, len(p.Links))
	for i, l := range p.Links {
		r.res.Links[i].Name = l.Name
	}
	// Arrival times per group, drawn up front so each group's count (and
	// so the miss budget of a fail-fast run) is known.
	r.arrivals = arrivalTimes(p, opt, horizon)
	r.counts = make([]int, len(p.Groups))
	for gi := range p.Groups {
		if len(r.arrivals[gi]) > 0 {
			r.q.push(event{at: r.arrivals[gi][0], group: int32(gi)})
		}
	}
	r.stats = make([]groupStat, len(p.Groups))
	for gi := range r.stats {
		r.stats[gi].firstArrival = -1
	}
	return r
}

// arrivalTimes are each group's arrivals before the horizon: periodic at
// round(k·Period/Scale), or Poisson from the group's own seeded source.
func arrivalTimes(p *dispatch.Program, opt Options, horizon time.Duration) [][]time.Duration {
	arrivals := make([][]time.Duration, len(p.Groups))
	for gi, g := range p.Groups {
		period := float64(g.Period) / opt.Scale
		if g.Poisson {
			rng := rand.New(rand.NewSource(opt.Seed*1000003 + int64(gi)))
			for t := time.Duration(math.Round(rng.ExpFloat64() * period)); t < horizon; t += time.Duration(math.Round(rng.ExpFloat64() * period)) {
				arrivals[gi] = append(arrivals[gi], t)
			}
			continue
		}
		for k := 0; ; k++ {
			t := time.Duration(math.Round(float64(k) * period))
			if t >= horizon {
				break
			}
			arrivals[gi] = append(arrivals[gi], t)
		}
	}
	return arrivals
}

// nextAt is the time of the next event: the queue's first or the first
// completion of a contended task, whichever is earlier; ok is false when
// there is none.
func (r *run) nextAt() (now time.Duration, ok bool) {
	if len(r.q.a) > 0 {
		now, ok = r.q.a[0].at, true
	}
	if r.cont != nil {
		if at, _, c := r.cont.first(); c && (!ok || at < now) {
			now, ok = at, true
		}
	}
	return now, ok
}

// contendedFirst reports whether the next event at now is a contended
// task's completion rather than the queue's first: it is when it is due
// at now and was scheduled before the queue's first event at now.
func (r *run) contendedFirst(now time.Duration) bool {
	if r.cont == nil {
		return false
	}
	at, seq, ok := r.cont.first()
	if !ok || at != now {
		return false
	}
	return len(r.q.a) == 0 || r.q.a[0].at != now || seq < r.q.a[0].seq
}

// handleEvents hands every event at now to the dispatcher, in the order
// they were scheduled: arrivals (queueing the group's next) and
// completions.
func (r *run) handleEvents(now time.Duration) error {
	for {
		if r.contendedFirst(now) {
			r.q.now = now
			a, stretch := r.cont.complete(&r.q)
			r.endStretched(&a, a.at, stretch)
			if err := r.d.Complete(dispatch.Task{Request: a.req, Job: int(a.job)}, now); err != nil {
				return fmt.Errorf("sim: %w", err)
			}
			continue
		}
		if len(r.q.a) == 0 || r.q.a[0].at != now {
			return nil
		}
		e := r.q.pop()
		g := int(e.group)
		if g < 0 {
			if err := r.d.Complete(dispatch.Task{Request: e.req, Job: int(e.job)}, now); err != nil {
				return fmt.Errorf("sim: %w", err)
			}
			continue
		}
		if err := r.arrive(now, e); err != nil {
			return err
		}
	}
}

// endStretched books a contended task that ended at end: the time it ran
// beyond its duration is busy time, and its span ends then.
func (r *run) endStretched(a *active, end time.Duration, stretch float64) {
	j := &r.p.Jobs[a.job]
	r.res.Procs[j.Proc].Busy += end - a.start - j.Duration
	if a.span >= 0 {
		r.res.Spans[a.span].End = end
		r.res.Spans[a.span].Stretch = stretch
	}
}

// arrive hands the arrival e of a request at now to the dispatcher and
// queues its group's next arrival.
func (r *run) arrive(now time.Duration, e event) error {
	g := int(e.group)
	id, err := r.d.Arrive(g, now)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
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
	return nil
}

// dispatch starts what the dispatcher launches at now and tallies the
// requests it finished or dropped; launch starts a task (run.launch, or
// the reference implementation's in tests).
func (r *run) dispatch(now time.Duration, launch func(time.Duration, dispatch.Launch)) {
	ready := r.d.Ready(now)
	for _, l := range ready.Launches {
		launch(now, l)
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

// launch starts one task: its completion event (or its run under the
// contention model), its busy time and its span.
func (r *run) launch(now time.Duration, l dispatch.Launch) {
	j := r.addBusy(l)
	if r.cont != nil && j.Kind == dispatch.Compute && r.cont.owns(int32(l.Task.Job)) {
		r.cont.launch(now, l.Task.Request, int32(l.Task.Job), r.nextSpan(), &r.q)
	} else {
		r.q.push(event{at: now + j.Duration, group: -1, req: l.Task.Request, job: int32(l.Task.Job)})
	}
	r.recordSpan(now, l)
}

// addBusy adds a launched task's duration to its processor's or link's
// busy time and returns its job.
func (r *run) addBusy(l dispatch.Launch) *dispatch.Job {
	j := &r.p.Jobs[l.Task.Job]
	if j.Kind == dispatch.Transfer {
		r.res.Links[l.Link].Busy += j.Duration
	} else {
		r.res.Procs[l.Proc].Busy += j.Duration
	}
	return j
}

// nextSpan is the index the next recorded span takes (-1: spans are not
// recorded).
func (r *run) nextSpan() int {
	if !r.record {
		return -1
	}
	return len(r.res.Spans)
}

// recordSpan records a launched task's span (when spans are recorded).
func (r *run) recordSpan(now time.Duration, l dispatch.Launch) {
	if !r.record {
		return
	}
	p := r.p
	j := &p.Jobs[l.Task.Job]
	ri := &r.reqs[l.Task.Request]
	ri.spans = append(ri.spans, len(r.res.Spans))
	var name string
	if j.Kind == dispatch.Transfer {
		name = p.Links[l.Link].Name
	} else {
		name = p.Procs[l.Proc].Name
	}
	m := &p.Models[j.Model]
	r.res.Spans = append(r.res.Spans, timeline.Span{
		Processor: name, Label: j.Label, Group: p.Groups[m.Group].Name, Model: m.Name,
		Request: ri.index, Start: now + j.HandOff, End: now + j.Duration, Arrival: ri.arrival,
	})
}

// markLate marks a request's spans late (when spans are recorded).
func (r *run) markLate(ri *reqInfo) {
	if !r.record {
		return
	}
	for _, s := range ri.spans {
		r.res.Spans[s].Late = true
	}
}

// overMissBudget reports, after a step that settled requests, whether some
// group already missed more than MaxMissRate of all its requests (a
// fail-fast run then stops).
func (r *run) overMissBudget() bool {
	if !r.settled {
		return false
	}
	over := false
	for gi := range r.stats {
		st := &r.stats[gi]
		if budget := MaxMissRate * float64(max(len(r.arrivals[gi])-r.opt.Warmup, 0)); float64(st.late+st.dropped) > budget {
			over = true
		}
	}
	return over
}

// finish completes the result: utilisations, per-group figures, lanes.
func (r *run) finish() *Result {
	p, res := r.p, r.res
	res.End = r.end
	if r.cont != nil {
		res.Stretched = r.cont.stretched
	}
	if r.end > 0 {
		for i := range res.Procs {
			res.Procs[i].Utilisation = float64(res.Procs[i].Busy) / (float64(r.end) * float64(p.Procs[i].Concurrency))
		}
		for i := range res.Links {
			res.Links[i].Utilisation = float64(res.Links[i].Busy) / float64(r.end)
		}
	}
	var misses []string
	for gi, g := range p.Groups {
		gr := r.groupResult(gi)
		if gr.MissRate > MaxMissRate {
			misses = append(misses, fmt.Sprintf("group %q: %d of %d requests missed their deadline (p99 %v > deadline %v)",
				g.Name, gr.Late+gr.Dropped, gr.Requests, gr.P99, g.Deadline))
		}
		res.Groups = append(res.Groups, gr)
	}
	res.Misses = joinLines(misses)
	if r.record {
		res.Lanes = make([]string, 0, len(p.Procs))
		for _, pr := range p.Procs {
			res.Lanes = append(res.Lanes, pr.Name)
		}
		for i, l := range p.Links {
			if res.Links[i].Busy > 0 || linkUsed(p, i) {
				res.Lanes = append(res.Lanes, l.Name)
			}
		}
	}
	return res
}

// groupResult is group gi's figures at the end of the run.
func (r *run) groupResult(gi int) GroupResult {
	g := r.p.Groups[gi]
	st := &r.stats[gi]
	if r.res.Stopped {
		st.requests = max(len(r.arrivals[gi])-r.opt.Warmup, 0)
	}
	gr := GroupResult{
		Name: g.Name, Requests: st.requests, Completed: len(st.lat), Late: st.late, Dropped: st.dropped,
		OfferedHz: r.opt.Scale * float64(time.Second) / float64(g.Period), Deadline: g.Deadline,
	}
	if len(st.lat) > 0 {
		sort.Slice(st.lat, func(i, j int) bool { return st.lat[i] < st.lat[j] })
		gr.P50, gr.P99 = stats.Percentile(st.lat, 0.50), stats.Percentile(st.lat, 0.99)
		gr.Max = st.lat[len(st.lat)-1]
		var sum float64
		for _, l := range st.lat {
			sum += float64(l)
		}
		gr.Mean = time.Duration(math.Round(sum / float64(len(st.lat))))
		if window := r.horizon - st.firstArrival; window > 0 {
			gr.RateHz = float64(len(st.lat)) / window.Seconds()
		}
	}
	if st.requests > 0 {
		gr.MissRate = float64(st.late+st.dropped) / float64(st.requests)
	}
	return gr
}

func linkUsed(p *dispatch.Program, link int) bool {
	for _, j := range p.Jobs {
		if j.Kind == dispatch.Transfer && j.Link == link {
			return true
		}
	}
	return false
}

func joinLines(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += "; "
		}
		out += x
	}
	return out
}

// capRequests scales the warm-up and measured request counts of the slowest
// group down so that a run executes about opt.MaxJobs jobs at most.
func capRequests(p *dispatch.Program, opt Options) (warmup, requests int) {
	warmup, requests = opt.Warmup, opt.Requests
	if opt.MaxJobs < 0 || requests <= MinRequests {
		return
	}
	var slowest time.Duration
	for _, g := range p.Groups {
		slowest = max(slowest, g.Period)
	}
	// Jobs run per request of the slowest group, over all groups.
	var perSlow float64
	for _, g := range p.Groups {
		perSlow += float64(len(g.Jobs)) * float64(slowest) / float64(g.Period)
	}
	n := warmup + requests
	if perSlow*float64(n) <= float64(opt.MaxJobs) {
		return
	}
	f := float64(opt.MaxJobs) / (perSlow * float64(n))
	requests = max(int(float64(requests)*f), MinRequests)
	warmup = int(math.Round(float64(warmup) * float64(requests) / float64(opt.Requests)))
	return
}

// DefaultHorizon is the arrival window that lets every group issue n
// requests at the given scale: max over groups of n·Period/scale.
func DefaultHorizon(p *dispatch.Program, scale float64, n int) time.Duration {
	var h float64
	for _, g := range p.Groups {
		h = math.Max(h, float64(n)*float64(g.Period)/scale)
	}
	if h > math.MaxInt64/2 {
		h = math.MaxInt64 / 2
	}
	return time.Duration(math.Ceil(h))
}
