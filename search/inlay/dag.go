package inlay

import (
	"errors"
	"fmt"
	"math"
	"math/rand"

	"github.com/inlay-dev/inlay/search/heft"
)

// DAGOptions tune ScheduleDAG.
type DAGOptions struct {
	// Seed drives the local search's random moves.
	Seed int64
	// Iterations is the number of candidate schedules decoded (default
	// 20000, fewer on large graphs so that the work stays near 10⁸
	// elementary steps).
	Iterations int
}

// ScheduleDAG minimises the makespan of a task graph: HEFT first, then an
// iterated local search over a priority per task and a processor per task
// (or "earliest finish", HEFT's own choice). A candidate is decoded by list
// scheduling with insertion: the ready task of highest priority goes next,
// on its processor (lane by earliest finish) or, when it has none, where it
// finishes earliest. Moves: a task forced to another processor or released
// to earliest-finish, a priority nudged, two priorities swapped; a move is
// kept when the makespan does not grow, and after a long run without
// improvement the search restarts from the best schedule, shaken. The
// result is HEFT's schedule unless a strictly shorter one was found, so it
// is never worse than HEFT. Deterministic for a seed.
// O(iterations · (e + t·p·t)) for t tasks, e edges and p processors.
func ScheduleDAG(pb *heft.Problem, opt DAGOptions) (*heft.Schedule, error) {
	base, err := heft.Run(pb)
	if err != nil {
		return nil, err
	}
	n := len(pb.Cost)
	if n == 0 {
		return base, nil
	}
	dec, err := newDecoder(pb)
	if err != nil {
		return nil, err
	}
	iters := opt.Iterations
	if iters <= 0 {
		work := float64(n*n*pb.Procs + len(pb.Edges) + 1)
		iters = int(math.Min(20000, math.Max(200, 1e8/work)))
	}
	rng := rand.New(rand.NewSource(opt.Seed))

	// HEFT's decisions as the start: its ranks and processors.
	key := append([]float64(nil), base.Rank...)
	proc := make([]int, n)
	for t, sl := range base.Slots {
		proc[t] = sl.Proc
	}
	spread := 0.0
	for _, r := range key {
		spread = math.Max(spread, r)
	}
	if spread <= 0 {
		spread = 1
	}
	curKey, curProc := key, proc
	cur := dec.makespan(curKey, curProc)
	bestKey, bestProc, best := append([]float64(nil), key...), append([]int(nil), proc...), cur
	stale := 0
	feasible := make([][]int, n)
	for t := range feasible {
		for p, c := range pb.Cost[t] {
			if !math.IsInf(c, 1) {
				feasible[t] = append(feasible[t], p)
			}
		}
	}
	k2 := make([]float64, n)
	p2 := make([]int, n)
	for it := 0; it < iters; it++ {
		copy(k2, curKey)
		copy(p2, curProc)
		moves := 1 + rng.Intn(2)
		for m := 0; m < moves; m++ {
			t := rng.Intn(n)
			switch r := rng.Float64(); {
			case r < 0.4:
				p2[t] = feasible[t][rng.Intn(len(feasible[t]))]
			case r < 0.5:
				p2[t] = -1
			case r < 0.8:
				k2[t] += rng.NormFloat64() * 0.2 * spread
			default:
				u := rng.Intn(n)
				k2[t], k2[u] = k2[u], k2[t]
			}
		}
		ms := dec.makespan(k2, p2)
		if ms <= cur {
			if ms < best-1e-9 {
				best = ms
				copy(bestKey, k2)
				copy(bestProc, p2)
				stale = 0
			}
			cur = ms
			curKey, k2 = k2, curKey
			curProc, p2 = p2, curProc
		}
		stale++
		if stale > 500 {
			// Restart from the best, shaken.
			copy(curKey, bestKey)
			copy(curProc, bestProc)
			for m := 0; m < 1+n/5; m++ {
				t := rng.Intn(n)
				curProc[t] = feasible[t][rng.Intn(len(feasible[t]))]
				curKey[t] += rng.NormFloat64() * 0.3 * spread
			}
			cur = dec.makespan(curKey, curProc)
			stale = 0
		}
	}
	if best >= base.Makespan {
		return base, nil
	}
	s := dec.schedule(bestKey, bestProc)
	s.Rank = bestKey
	if s.Makespan > base.Makespan {
		return nil, errors.New("inlay: internal error: decoded schedule worse than its makespan")
	}
	return s, nil
}

// decoder turns (priorities, processors) into a schedule by list
// scheduling with insertion.
type decoder struct {
	pb    *heft.Problem
	pred  [][]int // edge indices into each task
	succ  [][]int
	lanes []int
	// scratch
	slots []heft.Slot
	busy  [][]heft.Timeline // processor, lane
	indeg []int
	ready []int
	order []int
}

func newDecoder(pb *heft.Problem) (*decoder, error) {
	n := len(pb.Cost)
	d := &decoder{pb: pb, pred: make([][]int, n), succ: make([][]int, n)}
	for i, e := range pb.Edges {
		if e.From < 0 || e.From >= n || e.To < 0 || e.To >= n {
			return nil, fmt.Errorf("inlay: edge %d (%d -> %d) out of range", i, e.From, e.To)
		}
		d.pred[e.To] = append(d.pred[e.To], i)
		d.succ[e.From] = append(d.succ[e.From], i)
	}
	for p := 0; p < pb.Procs; p++ {
		k := 1
		if p < len(pb.Lanes) && pb.Lanes[p] > 1 {
			k = pb.Lanes[p]
		}
		d.lanes = append(d.lanes, k)
	}
	d.slots = make([]heft.Slot, n)
	d.indeg = make([]int, n)
	d.busy = make([][]heft.Timeline, pb.Procs)
	for p := range d.busy {
		d.busy[p] = make([]heft.Timeline, d.lanes[p])
	}
	return d, nil
}

func (d *decoder) comm(e, p, q int) float64 {
	if p == q || d.pb.Comm == nil {
		return 0
	}
	return d.pb.Comm(e, p, q)
}

// run decodes and returns the makespan; slots and order hold the schedule.
func (d *decoder) run(key []float64, proc []int) float64 {
	pb := d.pb
	n := len(pb.Cost)
	for p := range d.busy {
		for l := range d.busy[p] {
			d.busy[p][l].Reset()
		}
	}
	d.ready = d.ready[:0]
	d.order = d.order[:0]
	for t := 0; t < n; t++ {
		d.indeg[t] = len(d.pred[t])
		if d.indeg[t] == 0 {
			d.ready = append(d.ready, t)
		}
	}
	makespan := 0.0
	for len(d.ready) > 0 {
		// Highest priority among the ready, ties by task index.
		bi := 0
		for i, t := range d.ready {
			b := d.ready[bi]
			if key[t] > key[b] || key[t] == key[b] && t < b {
				bi = i
			}
		}
		t := d.ready[bi]
		d.ready[bi] = d.ready[len(d.ready)-1]
		d.ready = d.ready[:len(d.ready)-1]
		best := heft.Slot{Proc: -1}
		try := func(p int) {
			w := pb.Cost[t][p]
			if math.IsInf(w, 1) {
				return
			}
			ready := 0.0
			for _, e := range d.pred[t] {
				ps := d.slots[pb.Edges[e].From]
				ready = math.Max(ready, ps.Finish+d.comm(e, ps.Proc, p))
			}
			for l := range d.busy[p] {
				start := d.busy[p][l].Earliest(ready, w)
				if best.Proc < 0 || start+w < best.Finish {
					best = heft.Slot{Proc: p, Lane: l, Start: start, Finish: start + w}
				}
			}
		}
		if p := proc[t]; p >= 0 && !math.IsInf(pb.Cost[t][p], 1) {
			try(p)
		} else {
			for p := 0; p < pb.Procs; p++ {
				try(p)
			}
		}
		d.busy[best.Proc][best.Lane].Insert(best.Start, best.Finish)
		d.slots[t] = best
		d.order = append(d.order, t)
		makespan = math.Max(makespan, best.Finish)
		for _, e := range d.succ[t] {
			s := pb.Edges[e].To
			d.indeg[s]--
			if d.indeg[s] == 0 {
				d.ready = append(d.ready, s)
			}
		}
	}
	return makespan
}

func (d *decoder) makespan(key []float64, proc []int) float64 { return d.run(key, proc) }

func (d *decoder) schedule(key []float64, proc []int) *heft.Schedule {
	ms := d.run(key, proc)
	return &heft.Schedule{Slots: append([]heft.Slot(nil), d.slots...), Order: append([]int(nil), d.order...), Makespan: ms}
}
