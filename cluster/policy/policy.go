// Package policy is the API of cluster scheduling policies: the state a
// policy sees (active jobs, the cluster's GPU counts, the throughput table)
// and the allocation it returns (for every job, or pair of jobs sharing
// GPUs, the fraction of time it should hold each GPU type).
//
// A policy is a pure function of its state and its own seeded memory: no
// clocks, no goroutines left running, no Kubernetes. The round-based
// mechanism (package sched) turns allocations into per-round placements;
// the simulator (package sim) and the Kubernetes scheduler drive the same
// mechanism. Implementations live in sub-packages and the registry
// (package policy/registry) names them.
package policy

import (
	"context"
	"sort"

	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// Job is a policy's view of one active job.
type Job struct {
	ID  int
	Row throughput.ID // the job's row in the table (type × GPUs)
	// GPUs is the scale factor; Weight the priority weight (> 0).
	GPUs   int
	Weight float64
	// Arrival and the state's Now are seconds of virtual time.
	Arrival float64
	// Steps is the total; Remaining what is left.
	Steps, Remaining float64
	// Attained is the GPU-seconds of service received so far.
	Attained float64
	// Last is the GPU column the job ran on in the previous round (-1:
	// none).
	Last int
	// CPUs and MemoryGiB are per-GPU demands (0: none).
	CPUs, MemoryGiB float64
	// Elastic is the job's GPU range, if it has one.
	Elastic *job.Elastic
	// Job is the trace job the task belongs to (its ID for plain jobs; for
	// a DAG job's stages, the job's). Downstream is the most best-type
	// seconds of work on any path of stages after this one (0 for plain
	// jobs): the critical-path length a DAG policy ranks by.
	Job        int
	Downstream float64
	// LastGPUs is the number of GPUs it ran on in the previous round (0:
	// it did not run).
	LastGPUs int
	// Chunk, when above 1, is how many of the job's GPUs must sit on one
	// server together (the GPUs of one Kubernetes pod): the mechanism
	// places them in whole chunks, and leaves the job out of a round in
	// which the free GPUs of its type are too scattered for that. 0 or 1:
	// any split.
	Chunk int
}

// Cluster is what a policy knows of the cluster: per column of the table,
// the number of GPUs and their price, and the CPU cores and memory that the
// servers of that GPU type hold in all.
type Cluster struct {
	GPUs   []string
	Count  []int
	Price  []float64 // dollars per GPU-hour; 0: unknown
	CPUs   []float64
	Memory []float64 // GiB
	// PerServer is the largest GPU count of one server per column.
	PerServer []int
}

// Total is the number of GPUs of every type.
func (c *Cluster) Total() int {
	n := 0
	for _, k := range c.Count {
		n += k
	}
	return n
}

// State is a policy's input.
type State struct {
	Now   float64
	Jobs  []Job // sorted by ID
	C     *Cluster
	Table *throughput.Table
}

// Alone is job j's throughput on column g when it runs alone.
func (s *State) Alone(j *Job, g int) float64 { return s.Table.Alone(j.Row, g) }

// Fastest returns the column where job j runs fastest alone among those
// with at least its GPUs left (-1: none).
func (s *State) Fastest(j *Job, left []int) int {
	pick := -1
	for g := range left {
		if left[g] >= j.GPUs && s.Alone(j, g) > 0 && (pick < 0 || s.Alone(j, g) > s.Alone(j, pick)) {
			pick = g
		}
	}
	return pick
}

// Best is job j's fastest alone throughput over the types that hold at
// least its GPUs (0: it runs nowhere).
func (s *State) Best(j *Job) float64 {
	b := 0.0
	for g, c := range s.C.Count {
		if c >= j.GPUs && s.Alone(j, g) > b {
			b = s.Alone(j, g)
		}
	}
	return b
}

// Entry is one line of an allocation: job A alone (B = -1), or jobs A and
// B sharing GPUs, and per column the fraction of time it should hold that
// type (0 ≤ X[g] ≤ 1, Σ over the entries that hold a job ≤ 1).
type Entry struct {
	A, B int
	X    []float64
	// GPUs, when positive, runs the entry on that many GPUs instead of the
	// jobs' own scale factor (moldable and elastic jobs).
	GPUs int
}

// Pair reports whether the entry is two jobs sharing GPUs.
func (e *Entry) Pair() bool { return e.B >= 0 }

// Allocation is a policy's output. Entries are sorted by (A, B).
type Allocation struct {
	Entries []Entry
	// Note is a short explanation for logs and reports ("LP optimal, 412
	// variables").
	Note string
	// Fallback, when set, says that the policy's own method failed (an LP
	// solver killed after its time limit) and why; the entries are then
	// the cheaper allocation the policy documents for that case. The
	// mechanism counts these.
	Fallback string
}

// Sort orders the entries by (A, B).
func (a *Allocation) Sort() {
	sort.Slice(a.Entries, func(i, k int) bool {
		x, y := a.Entries[i], a.Entries[k]
		if x.A != y.A {
			return x.A < y.A
		}
		return x.B < y.B
	})
}

// Traits say how the mechanism should drive a policy.
type Traits struct {
	// Agnostic policies ignore GPU types: the mechanism visits the types in
	// a seeded random order each round, as Gavel's does.
	Agnostic bool
	// SpaceSharing policies may return pair entries.
	SpaceSharing bool
	// EventDriven policies are asked again at every arrival and completion
	// and their entries run until the next event, not in fixed rounds.
	EventDriven bool
	// EveryRound policies are asked again every round (their priorities
	// move with service received, as Tiresias's do).
	EveryRound bool
	// EveryEvent policies are asked again at every arrival and completion,
	// without the mechanism's least interval between recomputations.
	EveryEvent bool
	// Sticky: an entry with X[g] = 1 keeps its GPUs across rounds (FIFO-like
	// policies run jobs to completion).
	Sticky bool
	// OnlyAllocated: an entry runs only on the types where its share is
	// positive, and a job the allocation lacks does not run (Gavel's rule
	// for its FIFO policies: no entry with priority 0 is scheduled).
	OnlyAllocated bool
}

// Policy computes allocations. Allocate must be deterministic for a given
// state and history of calls; it may keep memory between calls (Gandiva's
// pairings) and must not do I/O except through the LP solver it was built
// with.
type Policy interface {
	Name() string
	Traits() Traits
	Allocate(ctx context.Context, s *State) (*Allocation, error)
}

// ScaledRate is job j's rate on n GPUs of column g, where rate gives a
// row's rate on a column (alone, or spread): j's own row when n is its
// scale factor, else the table's row for its type at n GPUs, else its
// one-GPU rate times its speedup profile at n, else linear interpolation
// between the table's rows for the nearest scale factors below and above n
// (above the largest, that row's rate: no extrapolation).
func ScaledRate(t *throughput.Table, j *Job, g, n int, rate func(throughput.ID, int) float64) float64 {
	if n == j.GPUs || n <= 0 {
		return rate(j.Row, g)
	}
	k := t.Key(j.Row)
	if id, ok := t.Lookup(throughput.Key{JobType: k.JobType, Scale: n}); ok {
		return rate(id, g)
	}
	if e := j.Elastic; e != nil && len(e.Speedup) >= n {
		if one, ok := t.Lookup(throughput.Key{JobType: k.JobType, Scale: 1}); ok {
			return rate(one, g) * e.Speedup[n-1]
		}
	}
	lo, hi := 0, 0
	for _, sc := range t.Scales(k.JobType) {
		if sc < n {
			lo = sc
		} else if sc > n && hi == 0 {
			hi = sc
		}
	}
	at := func(sc int) float64 {
		id, _ := t.Lookup(throughput.Key{JobType: k.JobType, Scale: sc})
		return rate(id, g)
	}
	switch {
	case lo > 0 && hi > 0:
		a, b := at(lo), at(hi)
		return a + (b-a)*float64(n-lo)/float64(hi-lo)
	case lo > 0:
		return at(lo)
	case hi > 0:
		return at(hi) * float64(n) / float64(hi)
	}
	return 0
}
