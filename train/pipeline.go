package train

import (
	"fmt"
	"math"
	"sync"
)

// The pipeline of one replica is evaluated as a list schedule: each stage
// runs its forward and backward tasks in the order its schedule fixes, and
// a task starts when its stage is free and its input has arrived (the
// previous stage's forward, or the next stage's backward, whose task
// includes the blocking point-to-point send). The order is fixed, so no event queue is
// needed: one pass over the stages after another advances every stage as
// far as its inputs allow, which is linear in the tasks for the schedules
// here.

// op is one task of a stage: a forward or backward of one chunk (virtual
// stage) for one micro-batch.
type op struct {
	fwd   bool
	chunk int32
	mb    int32
}

// pipeWork is the scratch space of one evaluation; pooled so that a
// planner's many evaluations allocate little.
type pipeWork struct {
	ops    []op
	start  []int // start[s] is stage s's first op in ops
	ptr    []int
	free   []float64
	fEnd   []float64 // [virtual stage × micro-batch]
	bEnd   []float64
	lastB  []float64
	busy   []float64
	firstF []float64
}

var pipePool = sync.Pool{New: func() any { return new(pipeWork) }}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// pipeTask is a task as the trace shows it.
type pipeTask struct {
	stage, chunk, mb int
	fwd              bool
	start, end       float64
}

// pipeInput is one replica's pipeline: per virtual stage (chunk·P + s)
// the forward and backward time of one micro-batch and the transfer to
// the next virtual stage.
type pipeInput struct {
	p, v, m int
	kind    string
	fwd     []float64
	bwd     []float64
	send    []float64
}

// order appends stage s's tasks in the schedule's order: GPipe runs every
// forward, then every backward; 1F1B (v = 1) and interleaved 1F1B follow
// Megatron-LM's schedule (warm-up forwards, one forward one backward, the
// remaining backwards; chunks cycle every p micro-batches).
func (in *pipeInput) order(ops []op, s int) []op {
	p, v, m := in.p, in.v, in.m
	total := m * v
	chunkOf := func(k int, fwd bool) (int32, int32) {
		c := (k % (p * v)) / p
		if !fwd {
			c = v - 1 - c
		}
		mb := (k/(p*v))*p + k%p
		if v == 1 {
			mb = k
		}
		return int32(c), int32(mb)
	}
	if in.kind == "gpipe" {
		for k := 0; k < total; k++ {
			c, mb := chunkOf(k, true)
			ops = append(ops, op{true, c, mb})
		}
		for k := 0; k < total; k++ {
			c, mb := chunkOf(k, false)
			ops = append(ops, op{false, c, mb})
		}
		return ops
	}
	warm := (p-s-1)*2 + (v-1)*p
	if v == 1 {
		warm = p - s - 1
	}
	if warm > total {
		warm = total
	}
	for k := 0; k < warm; k++ {
		c, mb := chunkOf(k, true)
		ops = append(ops, op{true, c, mb})
	}
	for i := 0; i < total-warm; i++ {
		c, mb := chunkOf(warm+i, true)
		ops = append(ops, op{true, c, mb})
		c, mb = chunkOf(i, false)
		ops = append(ops, op{false, c, mb})
	}
	for k := total - warm; k < total; k++ {
		c, mb := chunkOf(k, false)
		ops = append(ops, op{false, c, mb})
	}
	return ops
}

// run evaluates the pipeline and returns, per stage, when its last
// backward ends and how long it computed, and when its first forward
// started. trace, when not nil, sees every task. The slices belong to w.
func (in *pipeInput) run(w *pipeWork, trace func(pipeTask)) (lastB, busy []float64, err error) {
	p, v, m := in.p, in.v, in.m
	nv := p * v
	w.ops = w.ops[:0]
	w.start = grow(w.start, p+1)
	for s := 0; s < p; s++ {
		w.start[s] = len(w.ops)
		w.ops = in.order(w.ops, s)
	}
	w.start[p] = len(w.ops)
	w.ptr = grow(w.ptr, p)
	w.free = grow(w.free, p)
	w.lastB = grow(w.lastB, p)
	w.busy = grow(w.busy, p)
	w.fEnd = grow(w.fEnd, nv*m)
	w.bEnd = grow(w.bEnd, nv*m)
	for i := range w.fEnd {
		w.fEnd[i] = -1
		w.bEnd[i] = -1
	}
	for s := 0; s < p; s++ {
		w.ptr[s] = w.start[s]
		w.free[s] = 0
		w.lastB[s] = 0
		w.busy[s] = 0
	}
	left := len(w.ops)
	for left > 0 {
		progress := false
		for s := 0; s < p; s++ {
			for w.ptr[s] < w.start[s+1] {
				o := w.ops[w.ptr[s]]
				vs := int(o.chunk)*p + s
				ready := 0.0
				var dur float64
				// A transfer blocks its sender: it is part of the task
				// that sends, and the receiver can start when it ends.
				if o.fwd {
					if vs > 0 {
						dep := w.fEnd[(vs-1)*m+int(o.mb)]
						if dep < 0 {
							break
						}
						ready = dep
					}
					dur = in.fwd[vs]
					if vs < nv-1 {
						dur += in.send[vs]
					}
				} else {
					if vs < nv-1 {
						dep := w.bEnd[(vs+1)*m+int(o.mb)]
						if dep < 0 {
							break
						}
						ready = dep
					} else if w.fEnd[vs*m+int(o.mb)] < 0 {
						break
					}
					dur = in.bwd[vs]
					if vs > 0 {
						dur += in.send[vs-1]
					}
				}
				st := math.Max(ready, w.free[s])
				end := st + dur
				if o.fwd {
					w.fEnd[vs*m+int(o.mb)] = end
				} else {
					w.bEnd[vs*m+int(o.mb)] = end
					w.lastB[s] = end
				}
				w.free[s] = end
				w.busy[s] += dur
				if trace != nil {
					trace(pipeTask{stage: s, chunk: int(o.chunk), mb: int(o.mb), fwd: o.fwd, start: st, end: end})
				}
				w.ptr[s]++
				left--
				progress = true
			}
		}
		if !progress {
			return nil, nil, fmt.Errorf("train: the %s schedule deadlocks with %d stages and %d micro-batches", in.kind, p, m)
		}
	}
	return w.lastB, w.busy, nil
}
