// Package adapt simulates a heterogeneous GPU cluster running jobs that
// adapt: each round a policy gives every active job an allocation (GPU
// counts per type, possibly of several types at once) and, for adaptive
// jobs, a batch size; the mechanism places the GPUs on servers, charges a
// restart (the model's checkpoint-restore delay) when a job's servers
// change, and advances every job by its goodput (package goodput) until
// the next round. Jobs are rigid (GPUs and batch size fixed), scale-gpus
// (batch size fixed, GPU count free) or adaptive (both free), as Sia's
// workloads label them.
//
// The simulator is deterministic: it reads no clock (solve times come
// from Config.Clock when one is given) and iterates in job order.
package adapt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/internal/stats"
)

// Kind is how a job may change.
type Kind int

const (
	Adaptive  Kind = iota // GPU count and batch size
	ScaleGPUs             // GPU count; batch size fixed
	Rigid                 // neither
)

func (k Kind) String() string { return [...]string{"adaptive", "scale-gpus", "rigid"}[k] }

// ParseKind reads a workload's category.
func ParseKind(s string) (Kind, error) {
	switch s {
	case "", "adaptive":
		return Adaptive, nil
	case "scale-gpus":
		return ScaleGPUs, nil
	case "rigid":
		return Rigid, nil
	}
	return 0, fmt.Errorf("unknown job category %q (adaptive, scale-gpus, rigid)", s)
}

// Type is one GPU type of the cluster.
type Type struct {
	Name    string
	PerNode int
	Nodes   int
}

// Cluster is the GPU types, in the order the models' fits use.
type Cluster struct {
	Types []Type
}

// GPUs is the count of type t.
func (c *Cluster) GPUs(t int) int { return c.Types[t].PerNode * c.Types[t].Nodes }

// Total is every GPU.
func (c *Cluster) Total() int {
	n := 0
	for t := range c.Types {
		n += c.GPUs(t)
	}
	return n
}

// FromSia is the cluster of cluster.json (already scaled).
func FromSia(c *sia.Cluster) *Cluster {
	out := &Cluster{}
	for _, t := range c.NodeTypes {
		out.Types = append(out.Types, Type{Name: t.PaperName, PerNode: t.PerNode, Nodes: t.Nodes})
	}
	return out
}

// MaxJobGPUs is the most GPUs one job may hold (Sia's configurations end
// at 64).
const MaxJobGPUs = 64

// Configs are the GPU counts a job may take on one type, as Sia's
// configurations: 1, 2, 4, … up to a server, then whole servers, up to
// MaxJobGPUs and the type's size.
func (c *Cluster) Configs(t int) []int {
	per, total := c.Types[t].PerNode, c.GPUs(t)
	var out []int
	for n := 1; n < per && n <= total; n *= 2 {
		out = append(out, n)
	}
	for n := per; n <= total && n <= MaxJobGPUs; n += per {
		out = append(out, n)
	}
	return out
}

// MinNodes is the fewest servers of type t that hold n GPUs.
func (c *Cluster) MinNodes(t, n int) int {
	return (n + c.Types[t].PerNode - 1) / c.Types[t].PerNode
}

// Job is one job of a workload.
type Job struct {
	ID      int
	Name    string
	Model   *goodput.Model
	Arrival float64
	// GPUs and Batch are the job's requested configuration (TunedJobs).
	GPUs  int
	Batch float64
	Kind  Kind
}

// View is a policy's view of an active job.
type View struct {
	*Job
	Progress float64
	// Alloc is what the job holds now (nil: nothing); Batch its batch size.
	Alloc    goodput.Alloc
	BatchNow float64
	Restarts int
	// Know is what the job's measurements so far tell of its scaling.
	Know goodput.Knowledge
	// LastType is the type it last ran on (-1: never ran).
	LastType int
	// Attained is its GPU-seconds so far; Ran the seconds it held GPUs.
	Attained, Ran float64
}

// Remaining is the progress left.
func (v *View) Remaining() float64 { return math.Max(v.Model.Eff.Target-v.Progress, 0) }

// State is a policy's input.
type State struct {
	Now, Round float64
	Cluster    *Cluster
	Jobs       []View // by ID
	// Mixed allows allocations of several GPU types at once.
	Mixed bool
	Split goodput.Split
	cache map[estKey][2]float64
}

// Decision is a policy's choice for one job: an allocation (nil: none)
// and a batch size (ignored for rigid and scale-gpus jobs).
type Decision struct {
	Alloc goodput.Alloc
	Batch float64
}

// Policy decides each round. Allocate returns one decision per state job,
// in order; the counts per type must fit the cluster. It must be
// deterministic for a given history of states.
type Policy interface {
	Name() string
	// Mixed reports whether the policy can give mixed-type gangs.
	Mixed() bool
	Allocate(ctx context.Context, s *State) ([]Decision, error)
}

// Config configures a simulation.
type Config struct {
	Cluster *Cluster
	Round   float64 // seconds
	Mixed   bool
	Split   goodput.Split
	// MaxHours stops a simulation whose jobs are not done by then
	// (default 2000 h).
	MaxHours float64
	// Clock, when set, times each Allocate call (wall-clock seconds).
	Clock func() time.Time
}

// JobResult is one job's outcome.
type JobResult struct {
	Name       string  `json:"name"`
	JCT        float64 `json:"jct_s"`
	Restarts   int     `json:"restarts"`
	GPUSeconds float64 `json:"gpu_seconds"`
}

// Result is a simulation's outcome.
type Result struct {
	Jobs []JobResult `json:"jobs"`
	// Hours.
	AvgJCT, P99JCT, Makespan float64
	GPUHoursPerJob           float64
	RestartsPerJob           float64
	Rounds                   int
	// Solve are the wall-clock seconds of each Allocate call (with a
	// Clock).
	Solve []float64 `json:"-"`
	// MixedRounds counts job-rounds spent on mixed-type gangs.
	MixedRounds int
}

// Restarts is the restarts of every job.
func (r *Result) Restarts() int {
	return stats.SumBy(r.Jobs, func(j JobResult) int { return j.Restarts })
}

// ErrStuck says a simulation did not finish.
var ErrStuck = errors.New("jobs left unfinished at the simulation's time limit")

// Run is one job in the mechanism: what the policy sees of it (View) and
// where it runs. The simulator and the Kubernetes scheduler keep one for
// each job they know.
type Run struct {
	View
	// Done and Finish: the job reached its target progress, at Finish
	// (seconds).
	Done   bool
	Finish float64
	// Delay is the restart delay left, seconds.
	Delay      float64
	GPUSeconds float64
	// placement is where it runs: (type, server) → GPUs; pending is this
	// round's, set by Mechanism.Decide.
	placement, pending map[[2]int]int
	started            bool
	// lastAlloc and lastPlacement are what a finished job held (Unfinish).
	lastAlloc     goodput.Alloc
	lastPlacement map[[2]int]int
}

// NewRun is a job not yet run.
func NewRun(j *Job) *Run {
	return &Run{View: View{Job: j, LastType: -1, Know: goodput.Knowledge{Agnostic: -1}}}
}

// Placed is where this round's decision puts the job: (type, server) →
// GPUs, servers numbered within their type (nil when it does not run).
func (r *Run) Placed() map[[2]int]int { return r.pending }

// Changes reports whether running decision d (after Mechanism.Decide)
// restarts the job: its GPU counts or its servers change. A job's first
// start counts as a change (it pays the restart delay) but not as a
// restart.
func (r *Run) Changes(d Decision) bool {
	return len(d.Alloc) > 0 && (!SameCounts(r.Alloc, d.Alloc) || !samePlacement(r.placement, r.pending))
}

// Stop records a round in which the job holds nothing (preempted, or
// still waiting).
func (r *Run) Stop() { r.Alloc, r.placement, r.Delay = nil, nil, 0 }

// Mechanism is one round of the adaptive mechanism: it asks the policy for
// every active job's decision, checks the decisions and places them on
// servers. The simulator (Simulate) and the Kubernetes scheduler run the
// same step; each then carries the decisions out its own way (Run.Advance
// in the simulator, Jobs and pods on Kubernetes).
type Mechanism struct {
	Cluster *Cluster
	Round   float64
	Mixed   bool
	Split   goodput.Split
	Policy  Policy
	// Clock, when set, times each Allocate call.
	Clock func() time.Time
	free  [][]int
}

// Decide returns the policy's decisions for active (one each, in order)
// at now, checked and placed: each part's Nodes is the count of servers
// it spans, and each run's Placed its servers. solve is the Allocate
// call's wall-clock seconds (0 without a Clock).
func (m *Mechanism) Decide(ctx context.Context, now float64, active []*Run) (ds []Decision, solve float64, err error) {
	c, p := m.Cluster, m.Policy
	st := &State{Now: now, Round: m.Round, Cluster: c, Mixed: m.Mixed, Split: m.Split}
	for _, r := range active {
		if len(r.Model.Fits) != len(c.Types) {
			return nil, 0, fmt.Errorf("adapt: job %s: model fitted for %d GPU types, cluster has %d", r.Name, len(r.Model.Fits), len(c.Types))
		}
		st.Jobs = append(st.Jobs, r.View)
	}
	var t0 time.Time
	if m.Clock != nil {
		t0 = m.Clock()
	}
	ds, err = p.Allocate(ctx, st)
	if err != nil {
		return nil, 0, fmt.Errorf("adapt: %s at %.0f s: %w", p.Name(), now, err)
	}
	if m.Clock != nil {
		solve = m.Clock().Sub(t0).Seconds()
	}
	if len(ds) != len(active) {
		return nil, 0, fmt.Errorf("adapt: %s returned %d decisions for %d jobs", p.Name(), len(ds), len(active))
	}
	if err := check(c, active, ds, m.Mixed); err != nil {
		return nil, 0, fmt.Errorf("adapt: %s at %.0f s: %w", p.Name(), now, err)
	}
	if m.free == nil {
		m.free = make([][]int, len(c.Types))
	}
	place(c, m.free, active, ds)
	return ds, solve, nil
}

// Simulate runs jobs (in arrival order) under policy p.
func Simulate(ctx context.Context, cfg Config, jobs []Job, p Policy) (*Result, error) {
	if cfg.Round <= 0 {
		return nil, fmt.Errorf("adapt: round must be positive")
	}
	if cfg.MaxHours <= 0 {
		cfg.MaxHours = 2000
	}
	c := cfg.Cluster
	rs := make([]*Run, len(jobs))
	for i := range jobs {
		rs[i] = NewRun(&jobs[i])
		if len(jobs[i].Model.Fits) != len(c.Types) {
			return nil, fmt.Errorf("adapt: job %s: model fitted for %d GPU types, cluster has %d", jobs[i].Name, len(jobs[i].Model.Fits), len(c.Types))
		}
	}
	m := &Mechanism{Cluster: c, Round: cfg.Round, Mixed: cfg.Mixed, Split: cfg.Split, Policy: p, Clock: cfg.Clock}
	res := &Result{}
	left := len(jobs)
	now := 0.0
	for left > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if now > cfg.MaxHours*3600 {
			return nil, fmt.Errorf("adapt: %s: %d of %d %w (%.0f h)", p.Name(), left, len(jobs), ErrStuck, cfg.MaxHours)
		}
		var active []*Run
		for _, r := range rs {
			if !r.Done && r.Arrival <= now {
				active = append(active, r)
			}
		}
		if len(active) == 0 { // idle: skip to the round after the next arrival
			next := math.Inf(1)
			for _, r := range rs {
				if !r.Done {
					next = math.Min(next, r.Arrival)
				}
			}
			now = math.Ceil(next/cfg.Round) * cfg.Round
			continue
		}
		ds, solve, err := m.Decide(ctx, now, active)
		if err != nil {
			return nil, err
		}
		if cfg.Clock != nil {
			res.Solve = append(res.Solve, solve)
		}
		res.Rounds++
		end := now + cfg.Round
		for i, r := range active {
			d := ds[i]
			if len(d.Alloc) == 0 { // preempted, or still waiting
				r.Stop()
				continue
			}
			if len(d.Alloc) > 1 {
				res.MixedRounds++
			}
			r.Advance(now, end, d, cfg.Split)
			if r.Done {
				left--
			}
		}
		now = end
	}
	n := float64(len(jobs))
	var jcts []float64
	for _, r := range rs {
		jr := JobResult{Name: r.Name, JCT: r.Finish - r.Arrival, Restarts: r.Restarts, GPUSeconds: r.GPUSeconds}
		res.Jobs = append(res.Jobs, jr)
		jcts = append(jcts, jr.JCT)
		res.AvgJCT += jr.JCT / 3600 / n
		res.GPUHoursPerJob += jr.GPUSeconds / 3600 / n
		res.RestartsPerJob += float64(jr.Restarts) / n
		res.Makespan = math.Max(res.Makespan, r.Finish/3600)
	}
	res.P99JCT = Percentile(jcts, 99) / 3600
	return res, nil
}

// Percentile is the nearest-rank p-th percentile (0 for none).
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// check validates decisions: counts fit each type, types run the model,
// rigid jobs keep their GPUs, mixed only when allowed.
func check(c *Cluster, active []*Run, ds []Decision, mixed bool) error {
	used := make([]int, len(c.Types))
	for i, d := range ds {
		if len(d.Alloc) == 0 {
			continue
		}
		j := active[i]
		if len(d.Alloc) > 1 && !mixed {
			return fmt.Errorf("job %s: mixed-type allocation with mixed gangs off", j.Name)
		}
		if !j.Model.Runs(d.Alloc) {
			return fmt.Errorf("job %s: allocation on a GPU type its model has no profile for", j.Name)
		}
		for _, p := range d.Alloc {
			used[p.Type] += p.GPUs
		}
		if j.Kind == Rigid && d.Alloc.GPUs() != j.GPUs {
			return fmt.Errorf("job %s: rigid job given %d GPUs, wants %d", j.Name, d.Alloc.GPUs(), j.GPUs)
		}
		if n := d.Alloc.GPUs(); n > MaxJobGPUs && n > j.GPUs {
			return fmt.Errorf("job %s: %d GPUs, more than %d", j.Name, n, MaxJobGPUs)
		}
		if j.Kind == Adaptive {
			lo, hi := j.Model.BatchRange(d.Alloc)
			if !(d.Batch >= lo*(1-1e-9) && d.Batch <= hi*(1+1e-9)) {
				return fmt.Errorf("job %s: batch size %g outside %g..%g", j.Name, d.Batch, lo, hi)
			}
		}
	}
	for t, u := range used {
		if u > c.GPUs(t) {
			return fmt.Errorf("%d %s GPUs allocated, the cluster has %d", u, c.Types[t].Name, c.GPUs(t))
		}
	}
	return nil
}

// place maps every decision's parts onto servers: a job whose counts are
// unchanged keeps its servers; the others take whole free servers for
// whole-server parts, then the fullest server that holds the rest, else
// the emptiest ones. It sets each part's Nodes to the servers used.
func place(c *Cluster, free [][]int, active []*Run, ds []Decision) {
	for t := range c.Types {
		free[t] = free[t][:0]
		for range c.Types[t].Nodes {
			free[t] = append(free[t], c.Types[t].PerNode)
		}
	}
	keep := make([]bool, len(active))
	for i, r := range active {
		if len(ds[i].Alloc) > 0 && SameCounts(r.Alloc, ds[i].Alloc) && r.placement != nil {
			keep[i] = true
			for k, n := range r.placement {
				free[k[0]][k[1]] -= n
			}
			ds[i].Alloc = append(goodput.Alloc(nil), r.Alloc...)
		}
	}
	order := make([]int, 0, len(active))
	for i := range active {
		if !keep[i] && len(ds[i].Alloc) > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return ds[order[a]].Alloc.GPUs() > ds[order[b]].Alloc.GPUs() })
	for _, i := range order {
		pl := map[[2]int]int{}
		alloc := append(goodput.Alloc(nil), ds[i].Alloc...)
		for pi := range alloc {
			p := &alloc[pi]
			t, need, per := p.Type, p.GPUs, c.Types[p.Type].PerNode
			nodes := 0
			take := func(node, n int) {
				free[t][node] -= n
				pl[[2]int{t, node}] += n
				need -= n
				nodes++
			}
			for node := 0; need >= per && node < len(free[t]); node++ {
				if free[t][node] == per {
					take(node, per)
				}
			}
			for need > 0 {
				best := -1
				for node, f := range free[t] { // fullest server that holds the rest
					if f >= need && (best < 0 || f < free[t][best]) {
						best = node
					}
				}
				if best < 0 { // else the emptiest
					for node, f := range free[t] {
						if f > 0 && (best < 0 || f > free[t][best]) {
							best = node
						}
					}
				}
				if best < 0 {
					break // cannot happen after check
				}
				take(best, min(need, free[t][best]))
			}
			p.Nodes = nodes
		}
		ds[i].Alloc = alloc
		active[i].pending = pl
	}
	for i := range active {
		if keep[i] {
			active[i].pending = active[i].placement
		} else if len(ds[i].Alloc) == 0 {
			active[i].pending = nil
		}
	}
}

// SameCounts reports whether a and b hold the same GPU counts of the same
// types (servers aside).
func SameCounts(a, b goodput.Alloc) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].GPUs != b[i].GPUs {
			return false
		}
	}
	return true
}

// Advance runs the job over [from, to) on decision d (placed by
// Mechanism.Decide), at its goodput: a change of GPUs or servers first
// costs the model's restart delay.
func (r *Run) Advance(from, to float64, d Decision, split goodput.Split) {
	if r.Changes(d) {
		if r.started {
			r.Restarts++
		}
		r.started = true
		r.Delay = r.Model.Restart
	}
	r.placement = r.pending
	r.Alloc = d.Alloc
	switch r.Kind {
	case Adaptive:
		r.BatchNow = d.Batch
	default:
		r.BatchNow = r.Batch
	}
	if len(d.Alloc) == 1 {
		r.LastType = d.Alloc[0].Type
	}
	gpus := float64(d.Alloc.GPUs())
	t := from
	wait := math.Min(r.Delay, to-t)
	r.Delay -= wait
	t += wait
	r.Progress, t, r.Done = Train(r.Model, d.Alloc, r.BatchNow, r.Progress, t, to, split)
	if r.Done {
		r.Finish = t
	}
	r.Ran += t - from
	r.Attained += gpus * (t - from)
	r.GPUSeconds += gpus * (t - from)
	if len(d.Alloc) == 1 && d.Alloc[0].GPUs > 1 {
		r.Know.Multi |= 1 << uint(d.Alloc[0].Type)
	}
	if r.Done {
		r.lastAlloc, r.lastPlacement = r.Alloc, r.placement
		r.Alloc, r.placement = nil, nil
	}
}

// Train runs a job of model m on a at total batch M from progress p over
// [from, to) at its goodput, epoch by epoch (the statistical efficiency
// changes at each): it returns the progress reached, the time it stopped
// (to, or when it reached the target) and whether it did. The simulator
// and the Kubernetes replay's workload both train this way.
func Train(m *goodput.Model, a goodput.Alloc, M, p, from, to float64, split goodput.Split) (progress, at float64, done bool) {
	t := from
	for t < to && !done {
		g := m.Goodput(a, M, p, goodput.Truth, split)
		if !(g > 0) {
			break
		}
		target := math.Min(m.Eff.Target, m.Eff.NextEpoch(p))
		need := (target - p) / g
		if t+need >= to {
			p += g * (to - t)
			t = to
			break
		}
		t += need
		p = target
		if p >= m.Eff.Target*(1-1e-12) {
			done = true
		}
	}
	return p, t, done
}

func samePlacement(a, b map[[2]int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Unfinish reopens a job that Advance finished (the Kubernetes scheduler's
// estimate, which only the Job's completion confirms): its progress is
// left short of the target by a share reserve, and it keeps its GPUs.
func (r *Run) Unfinish(reserve float64) {
	if !r.Done {
		return
	}
	r.Done, r.Finish = false, 0
	r.Progress = r.Model.Eff.Target * (1 - reserve)
	r.Alloc, r.placement = r.lastAlloc, r.lastPlacement
}
