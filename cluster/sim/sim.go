// Package sim simulates a cluster in virtual time around the round-based
// mechanism (package sched): jobs arrive from a trace, each round's
// placements run for the round (360 s by default) or until the next event
// (event-driven mode), and the metrics Gavel reports come out — average and
// percentile job completion time over a window of job IDs, makespan,
// utilisation per GPU type, finish-time fairness, and a timeline per job.
//
// The simulator is deterministic: the same trace, cluster, policy and seed
// give the same result. It reads no clock and starts no goroutine.
package sim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// Config configures a simulation.
type Config struct {
	Sched sched.Config
	// EventDriven runs placements until the next arrival or completion
	// instead of in fixed rounds (policies that say so are always run this
	// way).
	EventDriven bool
	// Preempt is the time in seconds a job loses when it resumes on other
	// GPUs than it last ran on (checkpoint and restore; Gavel charges none).
	Preempt float64
	// Window is the range of job IDs the metrics average over, inclusive;
	// {0, 0} with First > Last means all jobs. With StopAtWindow the
	// simulation ends when every window job has finished.
	Window       [2]int
	StopAtWindow bool
	// Timeline keeps every job's spans.
	Timeline bool
	// Horizon bounds virtual time in seconds (default 10 years).
	Horizon float64
	// Progress, when set, is called after every round with the jobs done
	// so far (the simulator's only side channel; it must not block long).
	Progress func(done, total int)
}

// Span is a stretch of time a job ran.
type Span struct {
	Start   float64 `json:"start_s"`
	End     float64 `json:"end_s"`
	GPU     string  `json:"gpu"`
	Servers []int   `json:"servers"` // node index per GPU
	With    int     `json:"with"`    // the job it shared the GPUs with, -1: none
}

// JobResult is what happened to one job.
type JobResult struct {
	ID      int     `json:"id"`
	Type    string  `json:"type"`
	GPUs    int     `json:"gpus"`
	Arrival float64 `json:"arrival_s"`
	Start   float64 `json:"start_s"`
	Finish  float64 `json:"finish_s"` // -1: did not finish
	// JCT is Finish − Arrival in seconds.
	JCT float64 `json:"jct_s"`
	// FTF is the finish-time fairness ρ: JCT over the time the job would
	// take alone on a 1/n share of the cluster, n the mean number of
	// active jobs over its life.
	FTF   float64 `json:"ftf"`
	Spans []Span  `json:"spans,omitempty"`
}

// JobLine is a job's life for the web API's timeline (Outcome): its
// JobResult in hours.
type JobLine struct {
	ID       int       `json:"id"`
	Type     string    `json:"type"`
	GPUs     int       `json:"gpus"`
	ArrivalH float64   `json:"arrival_h"`
	FinishH  float64   `json:"finish_h"` // -1: did not finish
	Spans    []SpanRun `json:"spans"`
}

// SpanRun is a Span in hours: a stretch a job ran on one GPU type.
type SpanRun struct {
	StartH float64 `json:"start_h"`
	EndH   float64 `json:"end_h"`
	GPU    string  `json:"gpu"`
	Shared bool    `json:"shared,omitempty"`
}

// Result is a simulation's outcome. Times are in hours where the name says
// so, seconds otherwise.
type Result struct {
	Policy  string `json:"policy"`
	Cluster string `json:"cluster"`
	// Jobs is the number of jobs in the window that finished.
	Jobs        int                `json:"jobs"`
	Window      [2]int             `json:"window"`
	AvgJCT      float64            `json:"avg_jct_hours"`
	P50JCT      float64            `json:"p50_jct_hours"`
	P90JCT      float64            `json:"p90_jct_hours"`
	P99JCT      float64            `json:"p99_jct_hours"`
	Makespan    float64            `json:"makespan_hours"`
	Utilization map[string]float64 `json:"utilization"`
	AvgFTF      float64            `json:"avg_ftf"`
	MaxFTF      float64            `json:"max_ftf"`
	Unfinished  int                `json:"unfinished"`
	Rounds      int                `json:"rounds"`
	Recomputes  int                `json:"recomputes"`
	Preemptions int                `json:"preemptions"`
	// Fallbacks counts the allocations for which the policy's own method
	// failed (an LP killed after its time limit) and it returned its
	// documented cheaper allocation instead; FirstFallback says why the
	// first did.
	Fallbacks     int    `json:"fallbacks"`
	FirstFallback string `json:"first_fallback,omitempty"`
	// Exhausted is true when the trace ran out of arrivals before the
	// window's jobs finished (the tail then ran on a draining cluster).
	Exhausted bool        `json:"arrivals_exhausted,omitempty"`
	PerJob    []JobResult `json:"per_job,omitempty"`
	// GPUCount is the cluster's GPUs per type, for pictures.
	GPUCount map[string]int `json:"gpu_count"`
}

// runJob is one task: a job, or one stage of a DAG job. Tasks 0..n-1 are
// the trace's jobs (a DAG job's first stage); later ones the other stages.
type runJob struct {
	j       *job.Job // the trace job the task belongs to
	parent  int      // its index
	typ     string
	gpus    int
	steps   float64
	row     throughput.ID
	succ    []int // tasks released when this one ends
	deps    int   // unfinished predecessors
	down    float64
	root    bool  // a DAG root stage other than the first
	roots   []int // on a job's first task: its other root stages
	started bool
	start   float64
	finish  float64
	// activeAt is the integral of the active-job count at arrival.
	activeAt    float64
	activeStart float64 // when it was added
	nAvg        float64
	spans       []Span
}

// Run simulates jobs (in arrival order, IDs 0..n-1) on cluster c with the
// throughput table t under policy p.
func Run(ctx context.Context, cfg Config, jobs []job.Job, c *hw.Platform, t *throughput.Table, p policy.Policy) (*Result, error) {
	if len(jobs) == 0 {
		return nil, fmt.Errorf("cluster/sim: no jobs")
	}
	mech, err := sched.New(cfg.Sched, p, c, t)
	if err != nil {
		return nil, err
	}
	pc := mech.Cluster()
	round := cfg.Sched.Round
	if round == 0 {
		round = 360
	}
	horizon := cfg.Horizon
	if horizon == 0 {
		horizon = 10 * 365 * 24 * 3600
	}
	first, last := cfg.Window[0], cfg.Window[1]
	if first > last || (first == 0 && last == 0) {
		first, last = 0, len(jobs)-1
	}
	if first < 0 || last >= len(jobs) {
		return nil, fmt.Errorf("cluster/sim: window %d:%d outside the trace's jobs 0:%d", first, last, len(jobs)-1)
	}
	event := cfg.EventDriven || p.Traits().EventDriven
	rj, err := tasks(jobs, t, pc)
	if err != nil {
		return nil, err
	}
	left := make([]int, len(jobs)) // unfinished tasks per job
	for i := range rj {
		left[rj[i].parent]++
	}
	var ready []int // tasks released by completions
	var active sched.ActiveTime
	add := func(id int, at float64) {
		x := &rj[id]
		x.activeAt = active.At(at, mech.Active())
		x.activeStart = at
		j := x.j
		mech.Add(policy.Job{ID: id, Row: x.row, GPUs: x.gpus, Weight: j.PriorityWeight(), Arrival: at,
			Steps: x.steps, Remaining: x.steps, CPUs: j.CPUs, MemoryGiB: j.MemoryGiB, Elastic: j.Elastic, Job: x.parent, Downstream: x.down})
	}
	res := &Result{Policy: p.Name(), Cluster: c.Name, Window: [2]int{first, last}, Utilization: map[string]float64{}, GPUCount: map[string]int{}}
	busy := make([]float64, len(pc.GPUs))
	next := 0 // next arrival
	now := jobs[0].Arrival
	startTime := now
	active.Start(now)
	windowLeft := last - first + 1
	done := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for next < len(jobs) && jobs[next].Arrival <= now {
			add(next, jobs[next].Arrival)
			for _, id := range rj[next].roots {
				add(id, jobs[next].Arrival)
			}
			next++
		}
		for _, id := range ready {
			add(id, rj[id].start)
		}
		ready = ready[:0]
		if cfg.StopAtWindow && windowLeft == 0 {
			break
		}
		if mech.Active() == 0 {
			if next >= len(jobs) {
				break
			}
			active.Advance(jobs[next].Arrival, 0)
			now = jobs[next].Arrival
			continue
		}
		if now-startTime > horizon {
			break
		}
		r, err := mech.Plan(ctx, now)
		if err != nil {
			return nil, err
		}
		res.Rounds++
		if r.Recomputed {
			res.Recomputes++
		}
		if r.Fallback != "" {
			if res.Fallbacks == 0 {
				res.FirstFallback = r.Fallback
			}
			res.Fallbacks++
		}
		if len(r.Placed) == 0 {
			// Nothing runs until the allocation is recomputed: wait for the
			// next arrival or the end of the reset interval.
			wait := now + round
			if next < len(jobs) && jobs[next].Arrival < wait {
				wait = jobs[next].Arrival
			}
			active.Advance(wait, mech.Active())
			now = wait
			continue
		}
		// Length of this round.
		length := round
		if event {
			length = math.Inf(1)
			if next < len(jobs) {
				length = jobs[next].Arrival - now
			}
			for _, pl := range r.Placed {
				for k, id := range []int{pl.A, pl.B} {
					if id < 0 {
						continue
					}
					pre := 0.0
					if pl.Moved[k] {
						pre = cfg.Preempt
					}
					length = math.Min(length, sched.TimeToFinish(mech.Job(id).Remaining, pl.Rate[k], pre))
				}
			}
			if math.IsInf(length, 1) || length <= 0 {
				length = math.Max(length, 1e-6)
				if math.IsInf(length, 1) {
					length = round
				}
			}
		}
		end := now
		type outcome struct {
			progress [2]sched.Progress
			ran      float64
		}
		outs := make([]outcome, len(r.Placed))
		for i, pl := range r.Placed {
			var o outcome
			for k, id := range []int{pl.A, pl.B} {
				if id < 0 {
					continue
				}
				jb := mech.Job(id)
				st := sched.Stretch{Start: now, Length: length, Rate: pl.Rate[k], Remaining: jb.Remaining, Total: jb.Steps, Capped: event}
				if pl.Moved[k] {
					st.Preempt = cfg.Preempt
					res.Preemptions++
				}
				o.progress[k] = sched.Account(st)
				o.ran = math.Max(o.ran, o.progress[k].Ran(st))
			}
			outs[i] = o
			end = math.Max(end, now+o.ran)
		}
		if event {
			end = now + length
		}
		active.Advance(now, mech.Active())
		var finished []int
		for i, pl := range r.Placed {
			o := outs[i]
			busy[pl.GPU] += o.ran * float64(len(pl.Servers))
			mech.Done(pl, o.ran, [2]float64{o.progress[0].Steps, o.progress[1].Steps})
			for k, id := range []int{pl.A, pl.B} {
				if id < 0 {
					continue
				}
				x := &rj[id]
				if !x.started {
					x.started, x.start = true, now
				}
				if cfg.Timeline {
					with := pl.B
					if k == 1 {
						with = pl.A
					}
					x.spans = appendSpan(x.spans, Span{Start: now, End: o.progress[k].End, GPU: pc.GPUs[pl.GPU], Servers: pl.Servers, With: with})
				}
				if o.progress[k].Finished {
					x.finish = o.progress[k].End
					finished = append(finished, id)
				}
			}
		}
		sort.Ints(finished)
		for _, id := range finished {
			x := &rj[id]
			// Mean active jobs over the job's life, up to this round.
			integral := active.At(x.finish, mech.Active()) - x.activeAt
			if life := x.finish - x.activeStart; life > 0 {
				x.nAvg = integral / life
			}
			mech.Remove(id)
			for _, sid := range x.succ {
				if rj[sid].deps--; rj[sid].deps == 0 {
					rj[sid].start = x.finish // release time, until it starts
					ready = append(ready, sid)
				}
			}
			if left[x.parent]--; left[x.parent] == 0 {
				done++
				if x.parent >= first && x.parent <= last {
					windowLeft--
				}
			}
		}
		if cfg.Progress != nil {
			cfg.Progress(done, len(jobs))
		}
		now = end
	}
	// The window's last jobs should finish while arrivals still come, as
	// in Gavel's simulator, which generates jobs until they do.
	res.Exhausted = cfg.StopAtWindow && next >= len(jobs)
	finishMetrics(res, rj, len(jobs), first, last, pc, t, busy, startTime, now, cfg.Timeline)
	return res, nil
}

// tasks expands the trace into tasks: job i is task i (its first stage
// for a DAG job); the other stages follow from n on, with their
// predecessors counted and each task's downstream critical path (the most
// best-type seconds of work after it) computed.
func tasks(jobs []job.Job, t *throughput.Table, pc *policy.Cluster) ([]runJob, error) {
	rj := make([]runJob, len(jobs))
	resolve := func(i int, typ string, gpus int, steps float64) (runJob, error) {
		row, err := t.Resolve(typ, gpus)
		if err != nil {
			return runJob{}, fmt.Errorf("cluster/sim: job %d: %w", i, err)
		}
		return runJob{j: &jobs[i], parent: i, typ: typ, gpus: gpus, steps: steps, row: row, finish: -1}, nil
	}
	best := func(x *runJob) float64 {
		b := 0.0
		for g, c := range pc.Count {
			if c >= x.gpus {
				b = math.Max(b, t.Alone(x.row, g))
			}
		}
		if b == 0 {
			return 0
		}
		return x.steps / b
	}
	for i := range jobs {
		if jobs[i].ID != i {
			return nil, fmt.Errorf("cluster/sim: job %d has ID %d (IDs must be positions)", i, jobs[i].ID)
		}
		j := &jobs[i]
		if len(j.Stages) == 0 {
			x, err := resolve(i, j.Type, j.GPUs, j.Steps)
			if err != nil {
				return nil, err
			}
			rj[i] = x
			continue
		}
		ids := map[string]int{}
		for k, st := range j.Stages {
			x, err := resolve(i, st.Type, st.GPUs, st.Steps)
			if err != nil {
				return nil, err
			}
			id := i
			if k == 0 {
				rj[i] = x
			} else {
				id = len(rj)
				x.root = len(st.After) == 0
				rj = append(rj, x)
				if x.root {
					rj[i].roots = append(rj[i].roots, id)
				}
			}
			ids[st.Name] = id
			for _, a := range st.After {
				p := ids[a]
				rj[p].succ = append(rj[p].succ, id)
				rj[id].deps++
			}
		}
	}
	// Downstream critical path: stages are listed in dependency order, so
	// a reverse pass over each DAG's tasks sees successors first.
	for i := len(rj) - 1; i >= 0; i-- {
		for _, sid := range rj[i].succ {
			rj[i].down = math.Max(rj[i].down, best(&rj[sid])+rj[sid].down)
		}
	}
	return rj, nil
}

// appendSpan merges a span into the previous one when it continues it.
func appendSpan(s []Span, sp Span) []Span {
	if n := len(s); n > 0 {
		p := &s[n-1]
		if math.Abs(p.End-sp.Start) < 1e-6 && p.GPU == sp.GPU && p.With == sp.With && slices.Equal(p.Servers, sp.Servers) {
			p.End = sp.End
			return s
		}
	}
	return append(s, sp)
}

func finishMetrics(res *Result, rj []runJob, n, first, last int, pc *policy.Cluster, t *throughput.Table, busy []float64, start, end float64, timeline bool) {
	var jcts, ftfs []float64
	lastFinish := start
	total := 0
	for g, c := range pc.Count {
		if c > 0 {
			res.GPUCount[pc.GPUs[g]] = c
			total += c
		}
	}
	extra := map[int][]int{}
	for id := n; id < len(rj); id++ {
		extra[rj[id].parent] = append(extra[rj[id].parent], id)
	}
	for i := 0; i < n; i++ {
		x := &rj[i]
		jr := JobResult{ID: i, Type: x.j.Type, GPUs: x.j.GPUs, Arrival: x.j.Arrival, Start: -1, Finish: -1, JCT: -1}
		finish, done, iso := x.finish, x.finish >= 0, isoTime(x, pc, t)
		if x.started {
			jr.Start = x.start
		}
		spans := x.spans
		for _, id := range extra[i] {
			y := &rj[id]
			done = done && y.finish >= 0
			finish = math.Max(finish, y.finish)
			iso += isoTime(y, pc, t)
			if y.started && (jr.Start < 0 || y.start < jr.Start) {
				jr.Start = y.start
			}
			spans = append(spans, y.spans...)
		}
		if done {
			jr.Finish = finish
			jr.JCT = finish - x.j.Arrival
			lastFinish = math.Max(lastFinish, finish)
			if iso > 0 {
				jr.FTF = jr.JCT / iso
			}
		}
		if timeline {
			jr.Spans = spans
		}
		if i >= first && i <= last {
			if done {
				jcts = append(jcts, jr.JCT)
				ftfs = append(ftfs, jr.FTF)
			} else {
				res.Unfinished++
			}
		}
		res.PerJob = append(res.PerJob, jr)
	}
	res.SetJCTs(jcts, ftfs)
	res.Makespan = (lastFinish - start) / 3600
	span := math.Max(end, lastFinish) - start
	for g, c := range pc.Count {
		if c > 0 && span > 0 {
			res.Utilization[pc.GPUs[g]] = busy[g] / (float64(c) * span)
		}
	}
}

// isoTime is the task's isolated time (sched.IsolatedTime): alone on a
// 1/n share of the cluster, n the mean number of active tasks over its
// life; 0 while it has not finished.
func isoTime(x *runJob, pc *policy.Cluster, t *throughput.Table) float64 {
	if x.finish < 0 {
		return 0
	}
	alone := make([]float64, len(pc.Count))
	for g := range alone {
		alone[g] = t.Alone(x.row, g)
	}
	return sched.IsolatedTime(x.steps, x.gpus, x.nAvg, pc.Count, alone)
}

// SetJCTs fills the result's JCT and finish-time-fairness figures from the
// window's finished jobs: jcts in seconds (sorted here, in place), ftfs as
// ratios. Jobs is the number of JCTs; the JCT figures are in hours. Shared
// by the simulator and the Kubernetes replay, so both report alike.
func (res *Result) SetJCTs(jcts, ftfs []float64) {
	res.Jobs = len(jcts)
	res.AvgJCT = mean(jcts) / 3600
	sort.Float64s(jcts)
	res.P50JCT = percentile(jcts, 0.50) / 3600
	res.P90JCT = percentile(jcts, 0.90) / 3600
	res.P99JCT = percentile(jcts, 0.99) / 3600
	res.AvgFTF = mean(ftfs)
	for _, f := range ftfs {
		res.MaxFTF = math.Max(res.MaxFTF, f)
	}
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// percentile of sorted v by linear interpolation between closest ranks.
func percentile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	pos := q * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(v)-1)
	return v[lo] + (v[hi]-v[lo])*(pos-float64(lo))
}
