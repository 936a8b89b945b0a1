package dispatch

import (
	"errors"
	"fmt"
	"time"
)

// Proc is a processor as the dispatcher sees it: a non-preemptive server
// that runs up to Concurrency compute jobs at once.
type Proc struct {
	Name        string
	Concurrency int
}

// Link is a copy channel between two processors' memory domains. A Shared
// link carries one transfer at a time (FIFO); an unshared one any number.
type Link struct {
	Name   string
	Shared bool
}

// JobKind says whether a job computes on a processor or copies on a link.
type JobKind uint8

const (
	// Compute runs one planned subgraph on a processor.
	Compute JobKind = iota
	// Transfer copies a subgraph's outputs to another processor over a link.
	Transfer
)

func (k JobKind) String() string {
	switch k {
	case Compute:
		return "compute"
	case Transfer:
		return "transfer"
	}
	return fmt.Sprintf("JobKind(%d)", uint8(k))
}

// Job is one unit of work a request instantiates.
type Job struct {
	Kind JobKind
	// Model is the index into Program.Models of the model the job belongs to.
	Model int
	// Subgraph is the index of the job's subgraph in its model's plan (for a
	// transfer: the subgraph that receives the data).
	Subgraph int
	// Label names the job in traces ("mobilenet_v2[0-41]").
	Label string
	// Proc is the processor of a compute job; -1 for transfers.
	Proc int
	// Link is the link of a transfer job; -1 for compute jobs.
	Link int
	// Duration is the compiled estimate. The dispatcher ignores it; the
	// simulator uses it as the job's service time.
	Duration time.Duration
	// HandOff is the part of Duration that is the runtime's hand-off
	// before the work (cost.HandOffEstimator; 0 ≤ HandOff ≤ Duration): the
	// processor is held for it, but the simulator's span of the job starts
	// after it, as a run's span starts when its worker does.
	HandOff time.Duration
	// Bytes a transfer copies (0 for compute jobs).
	Bytes int64
	// Deps are the jobs (of the same group) that must complete first.
	Deps []int
}

// Model is one model of a group, as planned.
type Model struct {
	Name string
	// Group is the index into Program.Groups.
	Group int
	// Priority orders the model's jobs in processor queues; lower runs first.
	Priority int
	// Jobs are the model's job IDs, ascending.
	Jobs []int
}

// Group is a set of models released together by one request.
type Group struct {
	Name string
	// Models are indices into Program.Models, in a dependency-respecting order.
	Models []int
	// Period is the nominal inter-arrival time at rate scale 1.
	Period time.Duration
	// Deadline is the allowed latency from arrival to the group's last job done.
	Deadline time.Duration
	// Poisson arrivals (exponential inter-arrival times with mean Period)
	// instead of periodic ones.
	Poisson bool
	// Jobs are the group's job IDs, ascending.
	Jobs []int
}

// Program is a compiled plan: everything the dispatcher (and the simulator)
// needs, as plain data. Indices are positions in the slices.
type Program struct {
	Procs  []Proc
	Links  []Link
	Models []Model
	Groups []Group
	Jobs   []Job
}

// ErrProgram is wrapped by every structural error Validate reports.
var ErrProgram = errors.New("dispatch: invalid program")

// Validate checks the program's structure: indices in range, concurrency at
// least 1, hand-offs within their jobs' durations, every job in exactly
// one model and group, dependencies within the job's group, and no
// dependency cycle.
func (p *Program) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrProgram, fmt.Sprintf(format, args...))
	}
	for i, pr := range p.Procs {
		if pr.Concurrency < 1 {
			return bad("processor %d (%q): concurrency %d < 1", i, pr.Name, pr.Concurrency)
		}
	}
	for i, g := range p.Groups {
		if g.Period <= 0 {
			return bad("group %q: period %v must be positive", g.Name, g.Period)
		}
		if g.Deadline <= 0 {
			return bad("group %q: deadline %v must be positive", g.Name, g.Deadline)
		}
		for _, m := range g.Models {
			if m < 0 || m >= len(p.Models) || p.Models[m].Group != i {
				return bad("group %q: model index %d is not one of its models", g.Name, m)
			}
		}
	}
	jobModel := make([]int, len(p.Jobs))
	for i := range jobModel {
		jobModel[i] = -1
	}
	for mi, m := range p.Models {
		if m.Group < 0 || m.Group >= len(p.Groups) {
			return bad("model %q: group %d out of range", m.Name, m.Group)
		}
		for _, j := range m.Jobs {
			if j < 0 || j >= len(p.Jobs) {
				return bad("model %q: job %d out of range", m.Name, j)
			}
			if jobModel[j] >= 0 {
				return bad("job %d is in models %q and %q", j, p.Models[jobModel[j]].Name, m.Name)
			}
			jobModel[j] = mi
		}
	}
	jobGroup := make([]int, len(p.Jobs))
	for i := range jobGroup {
		jobGroup[i] = -1
	}
	for gi, g := range p.Groups {
		for _, j := range g.Jobs {
			if j < 0 || j >= len(p.Jobs) {
				return bad("group %q: job %d out of range", g.Name, j)
			}
			if jobGroup[j] >= 0 {
				return bad("job %d is in two groups", j)
			}
			jobGroup[j] = gi
		}
	}
	for ji, j := range p.Jobs {
		if j.HandOff < 0 || j.HandOff > j.Duration {
			return bad("job %d (%q): hand-off %v outside [0, duration %v]", ji, j.Label, j.HandOff, j.Duration)
		}
		if jobModel[ji] != j.Model {
			return bad("job %d (%q): model %d does not list it", ji, j.Label, j.Model)
		}
		if jobGroup[ji] != p.Models[j.Model].Group {
			return bad("job %d (%q): not listed by its model's group", ji, j.Label)
		}
		switch j.Kind {
		case Compute:
			if j.Proc < 0 || j.Proc >= len(p.Procs) {
				return bad("job %d (%q): processor %d out of range", ji, j.Label, j.Proc)
			}
		case Transfer:
			if j.Link < 0 || j.Link >= len(p.Links) {
				return bad("job %d (%q): link %d out of range", ji, j.Label, j.Link)
			}
		default:
			return bad("job %d (%q): unknown kind %d", ji, j.Label, j.Kind)
		}
		if j.Duration < 0 {
			return bad("job %d (%q): negative duration %v", ji, j.Label, j.Duration)
		}
		for _, d := range j.Deps {
			if d < 0 || d >= len(p.Jobs) || d == ji {
				return bad("job %d (%q): dependency %d out of range", ji, j.Label, d)
			}
			if jobGroup[d] != jobGroup[ji] {
				return bad("job %d (%q): dependency %d is in another group", ji, j.Label, d)
			}
		}
	}
	// Cycle check: Kahn's algorithm over all jobs.
	indeg := make([]int, len(p.Jobs))
	succs := make([][]int, len(p.Jobs))
	for ji, j := range p.Jobs {
		for _, d := range j.Deps {
			indeg[ji]++
			succs[d] = append(succs[d], ji)
		}
	}
	var stack []int
	for ji := range p.Jobs {
		if indeg[ji] == 0 {
			stack = append(stack, ji)
		}
	}
	seen := 0
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		seen++
		for _, s := range succs[x] {
			if indeg[s]--; indeg[s] == 0 {
				stack = append(stack, s)
			}
		}
	}
	if seen != len(p.Jobs) {
		for ji := range p.Jobs {
			if indeg[ji] > 0 {
				return bad("dependency cycle through job %d (%q)", ji, p.Jobs[ji].Label)
			}
		}
	}
	return nil
}
