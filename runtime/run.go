package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand"
	goruntime "runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/stats"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/timeline"
)

// Run executes the plan for Config.Duration (see the package documentation)
// and returns what it measured with the simulator's prediction. Errors in
// the configuration, the plan or session creation are returned before any
// request arrives; failures while running are accounted as dropped
// requests. A cancelled ctx stops the run early with Result.Interrupted.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := check(&c); err != nil {
		return nil, err
	}
	rt, err := ort.Open(c.Library)
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	pr, err := prepare(&c, rt)
	if err != nil {
		return nil, err
	}
	defer pr.close()
	warnings := pr.warmup(c.Warmup)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	d, err := dispatch.New(pr.prog.Program, dispatch.Config{Policy: c.Policy})
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	// Workers spend their time in ONNX Runtime (cgo calls), during which
	// each holds a Go scheduler slot (P) until sysmon takes it back, which
	// can take up to 10 ms: with GOMAXPROCS = the number of cores, a
	// completion would wait that long for the event loop to get a P. So the
	// run gets a P per worker plus two (the loop, and the rest of the
	// process), and GOMAXPROCS is restored afterwards.
	slots := 0
	for _, p := range pr.prog.Procs {
		slots += p.Concurrency
	}
	if prev := goruntime.GOMAXPROCS(0); prev < slots+2 {
		goruntime.GOMAXPROCS(slots + 2)
		defer goruntime.GOMAXPROCS(prev)
	}
	l := newLoop(&c, pr, d)
	res, err := l.run(ctx)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(warnings, res.Warnings...)
	if err := predict(pr.prog, &c, res); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("prediction: %v", err))
	}
	return res, nil
}

// Predict sets res's predicted latencies and misses to the simulator's
// for the run c describes (what Run does after a run): c's plan of c's
// workload on c's platform under c.Cost, at c.Scale, c.Seed and c.Policy,
// plus c.ArrivalLag. res may come from elsewhere (an agent's run of the
// same plan); its groups must be the workload's, in order.
func Predict(c Config, res *Result) error {
	prog, err := sim.Compile(c.Workload, c.Platform, c.Cost, c.Plan)
	if err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	return predict(prog, &c, res)
}

func predict(prog *sim.Program, c *Config, res *Result) error {
	pred, err := sim.Run(prog, sim.Options{Scale: c.Scale, Seed: c.Seed, Policy: c.Policy, NoSpans: !c.PredictSpans})
	if err != nil {
		return err
	}
	res.PredictedSpans = pred.Spans
	if len(pred.Groups) != len(res.Groups) {
		return fmt.Errorf("runtime: the simulation has %d groups, the run %d", len(pred.Groups), len(res.Groups))
	}
	for i := range res.Groups {
		if pred.Groups[i].Name != res.Groups[i].Name {
			return fmt.Errorf("runtime: group %d is %s in the simulation, %s in the run", i, pred.Groups[i].Name, res.Groups[i].Name)
		}
		res.Groups[i].PredictedP50, res.Groups[i].PredictedP99 = pred.Groups[i].P50+c.ArrivalLag, pred.Groups[i].P99+c.ArrivalLag
	}
	res.PredictedMisses = pred.Misses
	if prog.Contention != nil {
		alone, err := sim.Run(prog, sim.Options{Scale: c.Scale, Seed: c.Seed, Policy: c.Policy, NoSpans: true, NoContention: true})
		if err != nil {
			return err
		}
		for i := range res.Groups {
			res.Groups[i].PredictedUncontendedP50 = alone.Groups[i].P50 + c.ArrivalLag
		}
	}
	return nil
}

// tkey names a tensor of one model instance of a request; to is the
// receiving subgraph of a copy made by a transfer, -1 for the original.
type tkey struct {
	model int
	name  string
	to    int
}

// request is the run's state of one request (guarded by loop.mu).
type request struct {
	id             int64
	group, index   int
	arrival, end   time.Duration
	tensors        map[tkey]*graph.Data
	bufs           [][]byte
	spans          []int
	running        int
	accounted      bool // counted as completed or dropped
	failed         bool // nothing more of it runs
	dispatcherDone bool // the dispatcher has forgotten it
}

// groupState is a group's arrivals and figures.
type groupState struct {
	period   float64 // scaled, in ns
	deadline time.Duration
	poisson  bool
	rng      *rand.Rand
	k        int           // arrivals issued
	nextAt   time.Duration // the next arrival's time
	backlog  int           // 0: no bound
	inflight int
	res      GroupResult
	lat      []time.Duration
	drops    map[string]*DropCount
}

// loop is the run's state around the dispatcher. Two kinds of goroutine
// drive it, one at a time under mu: the event loop (arrivals, the end of
// the run, Ctrl-C) and the workers and transfers, each of which takes its
// own report (completes the task, then hands out what the dispatcher
// launches, its own next task included) on its own thread as soon as the
// task ends. So a chain of jobs on one processor (of concurrency 1) runs
// without a thread switch between them, and the event loop wakes only for
// arrivals, errors, Ctrl-C and the end of the run.
type loop struct {
	c    *Config
	pr   *prepared
	prog *dispatch.Program

	// start is the run's start, set before any task is handed out and
	// read-only from then on.
	start  time.Time
	queues []chan work
	// wakes asks each processor's idle workers to poll their queue until a
	// run-clock time (see worker); capacity: the processor's concurrency.
	wakes []chan time.Duration
	// kick wakes the event loop (capacity 1; a send never blocks) when a
	// report may end the run: an error, or no task outstanding after the
	// arrivals ended.
	kick chan struct{}

	mu sync.Mutex // guards everything below
	d  *dispatch.Dispatcher
	// err is the first internal error; the run stops and returns it.
	err          error
	arrivalsOpen bool
	reqs         map[int64]*request
	groups       []*groupState
	outstanding  int // tasks handed to workers or transfers, not yet reported
	// running counts each processor's tasks handed to its workers and not
	// yet reported; entry lists each group's processors of jobs that start
	// on arrival.
	running []int
	entry   [][]int
	stopped bool // nothing more launches
	last    time.Duration
	res     *Result
	// sums of the hand-off and report delays over tasks
	handOff, report time.Duration
	tasks           int
	// arrival lags of the requests that reached the dispatcher
	lags []time.Duration
	pool bufPool
	// subIndex is each subgraph's place in res.Subgraphs.
	subIndex map[*subgraph]int
}

func newLoop(c *Config, pr *prepared, d *dispatch.Dispatcher) *loop {
	prog := pr.prog.Program
	l := &loop{c: c, pr: pr, prog: prog, d: d, kick: make(chan struct{}, 1), arrivalsOpen: true, reqs: map[int64]*request{}, res: &Result{Scale: c.Scale, Duration: c.Duration}}
	for gi, g := range c.Workload.Groups {
		gs := &groupState{
			period:   float64(g.Period) / c.Scale,
			deadline: g.Deadline,
			poisson:  prog.Groups[gi].Poisson,
			rng:      rand.New(rand.NewSource(c.Seed*1000003 + int64(gi))),
			backlog:  c.backlog(g),
			drops:    map[string]*DropCount{},
		}
		gs.res = GroupResult{Name: g.Name, OfferedHz: c.Scale * g.RateHz(), Deadline: g.Deadline}
		gs.nextAt = gs.gap()
		if !gs.poisson {
			gs.nextAt = 0
		}
		l.groups = append(l.groups, gs)
	}
	for _, p := range prog.Procs {
		l.res.Procs = append(l.res.Procs, ProcResult{Name: p.Name})
	}
	l.running = make([]int, len(prog.Procs))
	l.entry = make([][]int, len(prog.Groups))
	for gi, g := range prog.Groups {
		for _, ji := range g.Jobs {
			if j := &prog.Jobs[ji]; j.Kind == dispatch.Compute && len(j.Deps) == 0 && !slices.Contains(l.entry[gi], j.Proc) {
				l.entry[gi] = append(l.entry[gi], j.Proc)
			}
		}
	}
	l.subIndex = map[*subgraph]int{}
	for _, mp := range c.Plan.Models {
		for _, s := range pr.byModel[mp.Model] {
			if _, ok := l.subIndex[s]; ok {
				continue
			}
			l.subIndex[s] = len(l.res.Subgraphs)
			l.res.Subgraphs = append(l.res.Subgraphs, SubgraphResult{
				Model: s.model, Index: s.index, Label: s.label, Processor: c.Platform.Processors[s.proc].Name,
			})
		}
	}
	return l
}

// gap draws a Poisson inter-arrival time.
func (g *groupState) gap() time.Duration {
	return time.Duration(math.Round(g.rng.ExpFloat64() * g.period))
}

// advance moves the group to its next arrival time.
func (g *groupState) advance() {
	g.k++
	if g.poisson {
		g.nextAt += g.gap()
		return
	}
	g.nextAt = time.Duration(math.Round(float64(g.k) * g.period))
}

func (l *loop) now() time.Duration {
	n := time.Since(l.start)
	if n < l.last {
		n = l.last
	}
	l.last = n
	return n
}

// startWorkers starts every processor slot's worker and waits until they
// are pinned.
func (l *loop) startWorkers(wg *sync.WaitGroup) error {
	slots := 0
	for _, p := range l.prog.Procs {
		slots += p.Concurrency
	}
	ready := make(chan error, slots)
	for pi, p := range l.prog.Procs {
		q := make(chan work, p.Concurrency)
		l.queues = append(l.queues, q)
		wk := make(chan time.Duration, p.Concurrency)
		l.wakes = append(l.wakes, wk)
		cores := l.c.Platform.Processors[pi].Cores
		if l.c.NoPin {
			cores = nil
		}
		for k := 0; k < p.Concurrency; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				worker(l, pi, cores, l.c.Spin, q, wk, ready)
			}()
		}
	}
	var errs []error
	for i := 0; i < slots; i++ {
		if err := <-ready; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("runtime: worker: %w", errors.Join(errs...))
	}
	return nil
}

func (l *loop) run(ctx context.Context) (*Result, error) {
	var wg sync.WaitGroup
	defer wg.Wait()
	err := l.startWorkers(&wg)
	defer func() {
		for _, q := range l.queues {
			close(q)
		}
	}()
	if err != nil {
		return nil, err
	}
	l.start = time.Now()
	// The event loop runs on a thread of its own: locked, with a fine
	// timer slack and off the pinned workers' cores when there are others
	// (a loop that woke or polled on a worker's core would hold it from
	// the worker). If the thread's settings cannot be put back, its
	// goroutine exits still locked, which ends the thread.
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		slack := preciseTimers()
		held, _ := l.c.workerCores()
		away := pinAway(held)
		l.mu.Lock()
		err := l.events(ctx)
		l.mu.Unlock()
		if away() && slack() {
			goruntime.UnlockOSThread()
		}
		errc <- err
	}()
	err = <-errc
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil && l.err == nil {
		l.err = err
	}
	// Whatever happened, every task handed out reports before the sessions
	// close.
	for l.outstanding > 0 {
		l.wait(nil, nil)
	}
	if l.err != nil {
		return nil, l.err
	}
	return l.finish(), nil
}

// wait releases mu until a kick, the timer or ctx; it reports whether ctx
// was done.
func (l *loop) wait(tc <-chan time.Time, ctxDone <-chan struct{}) bool {
	l.mu.Unlock()
	defer l.mu.Lock()
	select {
	case <-l.kick:
	case <-tc:
	case <-ctxDone:
		return true
	}
	return false
}

// sleepUntil releases mu and sleeps until the run's clock reaches t, in
// the kernel (sleepFor: Go's timers would take the arrival up to a
// millisecond late), in steps of at most sleepStep, between which it
// returns early on a kick or when ctx is done (reported).
func (l *loop) sleepUntil(t time.Duration, ctxDone <-chan struct{}) bool {
	l.mu.Unlock()
	defer l.mu.Lock()
	for {
		left := t - time.Since(l.start)
		if left <= 0 {
			return closed(ctxDone)
		}
		select {
		case <-ctxDone:
			return true
		case <-l.kick:
			return false
		default:
		}
		sleepFor(min(left, sleepStep))
	}
}

// closed reports whether ch (a context's Done channel; nil: never) is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// sleepStep bounds one sleep of the event loop while requests arrive, and
// so how long a kick (an error) or Ctrl-C may wait.
const sleepStep = 20 * time.Millisecond

// signal wakes the event loop if it waits.
func (l *loop) signal() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// events runs the event loop with mu held (it releases it while it waits).
func (l *loop) events(ctx context.Context) error {
	c := l.c
	drainUntil := c.Duration + c.DrainTimeout
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ctxDone := ctx.Done()
	for {
		if l.err != nil {
			return l.err
		}
		if l.stopped && l.outstanding == 0 {
			return nil
		}
		if !l.arrivalsOpen && len(l.reqs) == 0 && l.outstanding == 0 {
			return nil
		}
		wake, next := time.Duration(-1), -1
		switch {
		case l.stopped:
		case l.arrivalsOpen:
			wake, next = l.nextArrival()
		default:
			wake = drainUntil
		}
		var tc <-chan time.Time
		interrupted := false
		if wake >= 0 {
			left := wake - time.Since(l.start)
			early := time.Duration(0)
			if l.arrivalsOpen {
				early = c.ArrivalSpin
			}
			switch {
			case left <= early && next >= 0 && !l.idleEntry(next):
				// The arrival would wait for a busy processor anyway:
				// sleep to it.
				interrupted = l.sleepUntil(wake, ctxDone)
			case left <= early:
				// Close to an arrival: poll the clock rather than sleep
				// (see Config.ArrivalSpin), and have the idle workers the
				// request starts on poll their queues with it.
				if early > 0 {
					l.prewake(next, wake+prewakeMargin)
				}
				l.mu.Unlock()
				for time.Since(l.start) < wake && !closed(ctxDone) {
				}
				l.mu.Lock()
				interrupted = closed(ctxDone)
			case l.arrivalsOpen:
				interrupted = l.sleepUntil(wake-early, ctxDone)
			default:
				timer.Reset(max(left-early, 0))
				tc = timer.C
				interrupted = l.wait(tc, ctxDone)
			}
		} else {
			interrupted = l.wait(nil, ctxDone)
		}
		if l.err != nil {
			return l.err
		}
		now := l.now()
		if interrupted {
			ctxDone = nil
			l.res.Interrupted = true
			l.arrivalsOpen = false
			if err := l.stop(now, "the run was interrupted"); err != nil {
				return err
			}
			continue
		}
		if l.arrivalsOpen {
			if err := l.arrivals(now); err != nil {
				return err
			}
			if now >= c.Duration {
				l.arrivalsOpen = false
			}
		}
		if err := l.ready(now); err != nil {
			return err
		}
		if !l.arrivalsOpen && !l.stopped && now >= drainUntil && len(l.reqs) > 0 {
			ctxDone = nil // a Ctrl-C now finds nothing left to interrupt
			if err := l.stop(now, fmt.Sprintf("still in flight %v after the arrivals ended", c.DrainTimeout)); err != nil {
				return err
			}
		}
	}
}

// take is a worker's or a transfer's report of a finished task, taken on
// its own goroutine: it completes the task and hands out whatever the
// dispatcher launches next.
func (l *loop) take(dn done) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		l.outstanding--
		l.signal()
		return
	}
	now := l.now()
	err := l.complete(dn, now)
	if err == nil && l.arrivalsOpen && !l.stopped {
		// Arrivals due now that the event loop has not taken yet (it
		// sleeps through them while their processors are busy) are
		// taken here, where they can start.
		err = l.arrivals(now)
	}
	if err == nil {
		err = l.ready(now)
	}
	if err != nil {
		l.err = err
		l.stopped = true
	}
	switch {
	case l.err != nil || (l.outstanding == 0 && (l.stopped || !l.arrivalsOpen)):
		// The end of the run, or an error.
		l.signal()
	case dn.proc >= 0 && l.arrivalsOpen && l.c.ArrivalSpin > 0 && l.freeSlots(dn.proc) > 0:
		// A slot freed on a processor where the next arrival starts, within
		// ArrivalSpin of it: the loop, which went to sleep to the arrival
		// while the processor was busy, should poll for it instead.
		if at, g := l.nextArrival(); g >= 0 && at-now <= l.c.ArrivalSpin && slices.Contains(l.entry[g], dn.proc) {
			l.signal()
		}
	}
}

// prewakeMargin is how long past an arrival's time the workers woken for
// it keep polling their queues for its task.
const prewakeMargin = 100 * time.Microsecond

// prewake asks the idle workers of group g's first processors to poll
// their queues until the run-clock time until (never blocking: a worker
// that has a wake-up pending gets no second one).
func (l *loop) prewake(g int, until time.Duration) {
	if g < 0 {
		return
	}
	for _, p := range l.entry[g] {
		for range l.freeSlots(p) {
			select {
			case l.wakes[p] <- until:
			default:
			}
		}
	}
}

// nextArrival is the time and group of the next arrival (group -1 and the
// end of the arrivals when none comes before it).
func (l *loop) nextArrival() (at time.Duration, group int) {
	at, group = l.c.Duration, -1
	for gi, g := range l.groups {
		if g.nextAt < at {
			at, group = g.nextAt, gi
		}
	}
	return at, group
}

// idleEntry reports whether a request of group g arriving now would start
// at once: one of the processors of its first jobs has a free slot.
func (l *loop) idleEntry(g int) bool {
	return slices.ContainsFunc(l.entry[g], func(p int) bool { return l.freeSlots(p) > 0 })
}

// freeSlots is how many of processor p's workers have no task.
func (l *loop) freeSlots(p int) int {
	return l.prog.Procs[p].Concurrency - l.running[p]
}

// arrivals issues every arrival due by now, in (time, group) order.
func (l *loop) arrivals(now time.Duration) error {
	for {
		best := -1
		for gi, g := range l.groups {
			if g.nextAt <= now && g.nextAt < l.c.Duration && (best < 0 || g.nextAt < l.groups[best].nextAt) {
				best = gi
			}
		}
		if best < 0 {
			return nil
		}
		g := l.groups[best]
		at := g.nextAt
		g.advance()
		index := g.res.Requests
		g.res.Requests++
		if g.backlog > 0 && g.inflight >= g.backlog {
			g.drop(ReasonOverloaded, fmt.Sprintf("arrived at %v with %d requests of the group in flight (backlog %d)", at, g.inflight, g.backlog))
			l.last = max(l.last, now)
			continue
		}
		l.lags = append(l.lags, now-at)
		id, err := l.d.Arrive(best, now)
		if err != nil {
			return fmt.Errorf("runtime: %w", err)
		}
		l.reqs[id] = &request{id: id, group: best, index: index, arrival: at, tensors: map[tkey]*graph.Data{}}
		g.inflight++
	}
}

func (g *groupState) drop(reason, detail string) {
	g.res.Dropped++
	dc := g.drops[reason]
	if dc == nil {
		dc = &DropCount{Reason: reason, Example: detail}
		g.drops[reason] = dc
	}
	dc.Count++
}

// account ends a request: dropped with a reason, or completed.
func (l *loop) account(r *request, reason, detail string) {
	if r.accounted {
		return
	}
	r.accounted = true
	g := l.groups[r.group]
	g.inflight--
	late := true
	if reason != "" {
		g.drop(reason, detail)
		r.failed = true
	} else {
		lat := r.end - r.arrival
		g.res.Completed++
		g.lat = append(g.lat, lat)
		if late = lat > g.deadline; late {
			g.res.Late++
		}
	}
	if late {
		for _, s := range r.spans {
			l.res.Spans[s].Late = true
		}
	}
}

// cleanup forgets a request nobody needs any more.
func (l *loop) cleanup(r *request) {
	if r.accounted && r.dispatcherDone && r.running == 0 {
		for _, b := range r.bufs {
			l.pool.put(b)
		}
		delete(l.reqs, r.id)
	}
}

// stop ends the run early: every request in flight is dropped as
// "shutdown" and nothing more launches.
func (l *loop) stop(now time.Duration, why string) error {
	l.stopped = true
	ids := make([]int64, 0, len(l.reqs))
	for id := range l.reqs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		l.account(l.reqs[id], ReasonShutdown, why)
	}
	return l.ready(now)
}

// complete takes a task's report.
func (l *loop) complete(dn done, now time.Duration) error {
	l.outstanding--
	r := l.reqs[dn.task.Request]
	if r == nil {
		return fmt.Errorf("runtime: completion of task %v of an unknown request", dn.task)
	}
	r.running--
	r.end = max(r.end, dn.end)
	l.handOff += dn.start - dn.sent
	l.report += max(now-dn.end, 0)
	l.tasks++
	j := &l.prog.Jobs[dn.task.Job]
	m := &l.prog.Models[j.Model]
	if dn.proc >= 0 {
		l.running[dn.proc]--
		pr := &l.res.Procs[dn.proc]
		pr.Runs++
		pr.Busy += dn.end - dn.start
	}
	if l.c.Spans {
		lane := ""
		if dn.proc >= 0 {
			lane = l.prog.Procs[dn.proc].Name
		} else {
			lane = l.prog.Links[dn.link].Name
		}
		r.spans = append(r.spans, len(l.res.Spans))
		l.res.Spans = append(l.res.Spans, timeline.Span{
			Processor: lane, Label: j.Label, Group: l.prog.Groups[m.Group].Name, Model: m.Name,
			Request: r.index, Start: dn.start, End: dn.end, Arrival: r.arrival, Late: r.accounted,
		})
	}
	switch {
	case dn.err != nil:
		where := j.Label
		if dn.proc >= 0 {
			where += " on " + l.prog.Procs[dn.proc].Name
		}
		l.account(r, ReasonError, fmt.Sprintf("%s: %v", where, dn.err))
	case r.failed:
	case j.Kind == dispatch.Compute:
		s := l.pr.jobSub[dn.task.Job]
		for i, name := range s.outputs {
			r.tensors[tkey{j.Model, name, -1}] = dn.out[i]
		}
		sr := &l.res.Subgraphs[l.subIndex[s]]
		sr.Run = append(sr.Run, dn.end-dn.start)
		sr.Service = append(sr.Service, max(now-dn.sent, dn.end-dn.start))
	default:
		for i, name := range l.pr.jobCopy[dn.task.Job] {
			r.tensors[tkey{j.Model, name, j.Subgraph}] = dn.out[i]
		}
	}
	if err := l.d.Complete(dn.task, now); err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	l.cleanup(r)
	return nil
}

// ready carries out the dispatcher's batches: it hands launches to the
// workers, and completes at once (without running them) the tasks of
// requests that failed or of a stopped run.
func (l *loop) ready(now time.Duration) error {
	for {
		b := l.d.Ready(now)
		skipped := false
		for _, f := range b.Finished {
			r := l.reqs[f.Request]
			r.dispatcherDone = true
			l.account(r, "", "")
			l.cleanup(r)
		}
		for _, dr := range b.Dropped {
			r := l.reqs[dr.Request]
			r.dispatcherDone = true
			l.account(r, ReasonDeadline, dr.Reason)
			l.cleanup(r)
		}
		for _, ln := range b.Launches {
			r := l.reqs[ln.Task.Request]
			if l.stopped || r.failed || !l.launch(r, ln) {
				if err := l.d.Complete(ln.Task, now); err != nil {
					return fmt.Errorf("runtime: %w", err)
				}
				skipped = true
			}
		}
		if !skipped {
			return nil
		}
	}
}

// launch hands a task to its worker (or starts its transfer); false when a
// tensor it needs is missing, which fails the request.
func (l *loop) launch(r *request, ln dispatch.Launch) bool {
	j := &l.prog.Jobs[ln.Task.Job]
	if j.Kind == dispatch.Compute {
		s := l.pr.jobSub[ln.Task.Job]
		in := make([]*graph.Data, len(s.inputs))
		zero := 0
		for i, name := range s.inputs {
			if s.fromModel[i] {
				in[i] = s.pool[i][r.index%len(s.pool[i])]
				continue
			}
			if t := r.tensors[tkey{j.Model, name, j.Subgraph}]; t != nil {
				in[i] = t
				continue
			}
			t := r.tensors[tkey{j.Model, name, -1}]
			if t == nil {
				l.account(r, ReasonError, fmt.Sprintf("%s: input %q was not produced", j.Label, name))
				return false
			}
			in[i] = t
			zero++
		}
		l.res.ZeroCopy += int64(zero)
		r.running++
		l.outstanding++
		l.running[ln.Proc]++
		l.queues[ln.Proc] <- work{task: ln.Task, sub: s, in: in, sent: time.Since(l.start)}
		return true
	}
	names := l.pr.jobCopy[ln.Task.Job]
	w := work{task: ln.Task, in: make([]*graph.Data, len(names)), dst: make([][]byte, len(names))}
	for i, name := range names {
		t := r.tensors[tkey{j.Model, name, -1}]
		if t == nil {
			l.account(r, ReasonError, fmt.Sprintf("%s: tensor %q was not produced", j.Label, name))
			return false
		}
		w.in[i] = t
		w.dst[i] = l.pool.get(len(t.Raw))
		r.bufs = append(r.bufs, w.dst[i])
	}
	l.res.Copied += int64(len(names))
	w.sent = time.Since(l.start)
	r.running++
	l.outstanding++
	go transfer(l, ln.Link, w)
	return true
}

// finish computes the figures.
func (l *loop) finish() *Result {
	res := l.res
	res.Elapsed = l.last
	if l.tasks > 0 {
		res.HandOff, res.Report = l.handOff/time.Duration(l.tasks), l.report/time.Duration(l.tasks)
	}
	if n := len(l.lags); n > 0 {
		var sum time.Duration
		for _, d := range l.lags {
			sum += d
		}
		res.ArrivalLag = sum / time.Duration(n)
		sort.Slice(l.lags, func(i, j int) bool { return l.lags[i] < l.lags[j] })
		res.ArrivalLagP50 = stats.Percentile(l.lags, 0.5)
	}
	for pi := range res.Procs {
		if res.Elapsed > 0 {
			res.Procs[pi].Utilisation = float64(res.Procs[pi].Busy) / (float64(res.Elapsed) * float64(l.prog.Procs[pi].Concurrency))
		}
	}
	for _, g := range l.groups {
		gr := g.res
		if n := len(g.lat); n > 0 {
			sort.Slice(g.lat, func(i, j int) bool { return g.lat[i] < g.lat[j] })
			gr.P50, gr.P99, gr.Max = stats.Percentile(g.lat, 0.5), stats.Percentile(g.lat, 0.99), g.lat[n-1]
			var sum float64
			for _, x := range g.lat {
				sum += float64(x)
			}
			gr.Mean = time.Duration(math.Round(sum / float64(n)))
		}
		if gr.Requests > 0 {
			gr.MissRate = float64(gr.Late+gr.Dropped) / float64(gr.Requests)
		}
		if res.Duration > 0 {
			gr.RateHz = float64(gr.Completed) / res.Duration.Seconds()
		}
		reasons := slices.Sorted(maps.Keys(g.drops))
		for _, k := range reasons {
			gr.Drops = append(gr.Drops, *g.drops[k])
		}
		res.Groups = append(res.Groups, gr)
	}
	for _, p := range l.prog.Procs {
		res.Lanes = append(res.Lanes, p.Name)
	}
	if l.c.Spans {
		used := map[string]bool{}
		for _, s := range res.Spans {
			used[s.Processor] = true
		}
		for _, lk := range l.prog.Links {
			if used[lk.Name] {
				res.Lanes = append(res.Lanes, lk.Name)
			}
		}
	}
	return res
}

// bufPool keeps byte buffers by size for reuse across requests. It is
// used under loop.mu.
type bufPool struct{ free map[int][][]byte }

func (p *bufPool) get(n int) []byte {
	if l := p.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[n] = l[:len(l)-1]
		return b
	}
	return make([]byte, n)
}

func (p *bufPool) put(b []byte) {
	if p.free == nil {
		p.free = map[int][][]byte{}
	}
	p.free[len(b)] = append(p.free[len(b)], b)
}
