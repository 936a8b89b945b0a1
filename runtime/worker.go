package runtime

import (
	"fmt"
	goruntime "runtime"
	"time"

	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/graph"
)

// work is one launched task for a worker: a compute job with its inputs,
// or a transfer with the tensors to copy into the buffers given.
type work struct {
	task dispatch.Task
	sub  *subgraph // compute jobs
	in   []*graph.Data
	// sent is when the loop handed the task over (since the run's start).
	sent time.Duration
	// transfers: copy in[i].Raw into dst[i]
	dst [][]byte
}

// done is a worker's report of a finished task (loop.take).
type done struct {
	task       dispatch.Task
	proc, link int
	sent       time.Duration // copied from the work
	start, end time.Duration // since the run's start
	out        []*graph.Data
	err        error
}

// worker runs the tasks of one processor slot until its queue is closed.
// A worker of a processor with cores locks its goroutine to an OS thread
// and pins the thread to them first; ready receives the pinning's outcome.
// When the queue closes it restores the thread's affinity and unlocks it
// (the Go scheduler may have lent it the process's main thread); if the
// affinity cannot be restored the goroutine exits still locked, which ends
// the thread. l.start is the run's start: the loop sets it after every
// worker is ready and before it sends any work, and the receipt of a task
// orders that write before the worker's reads. The worker takes its own
// reports (loop.take), so the next task of its processor is often in its
// queue when it looks.
//
// An idle worker also listens on wake: the event loop, about to poll for
// an arrival that starts on this processor, sends the run-clock time until
// which the worker should poll its queue too, so that the arrival's task
// starts without the OS waking the worker's thread (tens of microseconds,
// on the test machine up to ~90 µs for a pinned thread on an idle core).
func worker(l *loop, proc int, cores []int, spin time.Duration, queue <-chan work, wake <-chan time.Duration, ready chan<- error) {
	if len(cores) > 0 {
		goruntime.LockOSThread()
		restore, err := pinThread(cores)
		if err != nil {
			goruntime.UnlockOSThread()
			ready <- fmt.Errorf("processor %d: %w", proc, err)
			return
		}
		defer func() {
			if restore() {
				goruntime.UnlockOSThread()
			}
		}()
	}
	ready <- nil
	for {
		w, ok := next(l, queue, wake, spin)
		if !ok {
			return
		}
		d := done{task: w.task, proc: proc, link: -1, sent: w.sent, start: time.Since(l.start)}
		d.out, d.err = w.sub.runner.Run(w.in)
		d.end = time.Since(l.start)
		l.take(d)
	}
}

// next takes the next task from the queue, polling it for up to spin
// before blocking (see Config.Spin): a task handed to a worker that
// polls starts without the OS waking a thread.
func next(l *loop, queue <-chan work, wake <-chan time.Duration, spin time.Duration) (work, bool) {
	if spin > 0 {
		// Not on the run's clock: the first call comes before the run
		// starts.
		if w, ok, got := poll(queue, time.Now().Add(spin)); got {
			return w, ok
		}
	}
	for {
		select {
		case w, ok := <-queue:
			return w, ok
		case until := <-wake:
			if w, ok, got := poll(queue, l.start.Add(until)); got {
				return w, ok
			}
		}
	}
}

// poll polls the queue until the deadline; got is false when nothing came
// (w and ok are a receive's).
func poll(queue <-chan work, deadline time.Time) (w work, ok, got bool) {
	for time.Now().Before(deadline) {
		select {
		case w, ok = <-queue:
			return w, ok, true
		default:
		}
	}
	return work{}, false, false
}

// transfer copies a transfer task's tensors on its own goroutine (links
// carry no thread of their own) and reports like a worker.
func transfer(l *loop, link int, w work) {
	d := done{task: w.task, proc: -1, link: link, sent: w.sent, start: time.Since(l.start)}
	d.out = make([]*graph.Data, len(w.in))
	for i, t := range w.in {
		copy(w.dst[i], t.Raw)
		d.out[i] = &graph.Data{DType: t.DType, Dims: t.Dims, Raw: w.dst[i]}
	}
	d.end = time.Since(l.start)
	l.take(d)
}
