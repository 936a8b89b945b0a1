// Package bench runs Gavel's simulation experiments with every policy side
// by side: continuous arrivals (average JCT over a window of job IDs
// against input rate, single-GPU and multi-GPU traces, seeds averaged) and
// the static makespan experiment (N jobs at time 0) beside two proven lower
// bounds (package bound). As in Gavel, the static trace holds multi-GPU
// jobs ("static-multiple").
//
// Each run is deterministic; runs go to Workers goroutines and results come
// back in task order, so the report does not depend on the worker count.
package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/cluster/bound"
	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/internal/workpool"
)

// Experiments.
const (
	Single = "single" // single-GPU jobs, continuous arrivals
	Multi  = "multi"  // multi-GPU jobs, continuous arrivals
	Static = "static" // N jobs at time 0, makespan
)

// Published are Gavel's figures (averages over seeds 0-2, decoded from the
// figures in its repository) at the rates and size the issue names: for the
// continuous experiments, average JCT in hours; for the static one, the
// makespan in hours. Keyed by experiment, then inlay's policy name.
var Published = map[string]struct {
	At      float64
	Figures map[string]float64
}{
	Single: {5.6, map[string]float64{"las": 91.3, "gandiva": 39.5, "gavel": 26.4, "gavel-ss": 19.1}},
	Multi:  {2.6, map[string]float64{"las": 72.4, "gandiva": 58.0, "gavel": 32.5, "gavel-ss": 25.5}},
	Static: {500, map[string]float64{"fifo": 426.6, "gandiva": 263.9, "gavel-makespan": 169.4, "gavel-makespan-ss": 168.1}},
}

// Config configures a bench.
type Config struct {
	Cluster *hw.Platform
	Table   *throughput.Table
	// Policies for the continuous experiments and for the static one.
	Policies, StaticPolicies []string
	Seeds                    []uint64
	// Rates in jobs per hour, per continuous experiment.
	SingleRates, MultiRates []float64
	// StaticJobs is N of the static experiment (0: skip it).
	StaticJobs int
	// Window of job IDs measured in the continuous experiments; TailHours
	// of arrivals are generated after its last job.
	Window    [2]int
	TailHours float64
	Sched     sched.Config
	Registry  registry.Options
	Workers   int
	// Progress is called after each run (from worker goroutines, one at a
	// time).
	Progress func(done, total int, what string)
}

// Run is one simulation of the bench.
type Run struct {
	Experiment string      `json:"experiment"`
	Rate       float64     `json:"rate,omitempty"` // jobs/h; N for static
	Seed       uint64      `json:"seed"`
	Policy     string      `json:"policy"`
	Result     *sim.Result `json:"result,omitempty"`
	Err        string      `json:"error,omitempty"`
	// Wall is the run's wall-clock time in seconds (not deterministic).
	Wall float64 `json:"wall_s"`
}

// Row aggregates the runs of one (experiment, rate, policy) over seeds.
type Row struct {
	Experiment string    `json:"experiment"`
	Rate       float64   `json:"rate"`
	Policy     string    `json:"policy"`
	PerSeed    []float64 `json:"per_seed"` // avg JCT (h) or makespan (h)
	Mean       float64   `json:"mean"`
	// Published is Gavel's figure for the row, 0 when it has none.
	Published float64 `json:"published,omitempty"`
	Exhausted int     `json:"exhausted_runs,omitempty"`
	Failed    int     `json:"failed_runs,omitempty"`
	// Fallbacks sums the runs' allocations that fell back because the
	// policy's LP failed (sim.Result.Fallbacks).
	Fallbacks int     `json:"fallbacks,omitempty"`
	Wall      float64 `json:"wall_s"`
}

// Bound is the static experiment's lower bounds for one seed, in hours.
type Bound struct {
	Seed    uint64  `json:"seed"`
	Longest float64 `json:"longest_job_hours"`
	Fluid   float64 `json:"fluid_lp_hours"`
	// SharingValid says whether Longest also bounds space-sharing
	// schedules on this table (no pair figure beats the alone one).
	SharingValid bool   `json:"longest_bounds_space_sharing"`
	Err          string `json:"error,omitempty"`
}

// JCTBound is a proven lower bound on the average JCT of a continuous
// run's window: every job takes at least its steps over its fastest alone
// throughput (sharing never makes a job faster when the table's pair
// figures never beat the alone ones, which SharingValid records).
type JCTBound struct {
	Experiment   string  `json:"experiment"`
	Rate         float64 `json:"rate"`
	Seed         uint64  `json:"seed"`
	Hours        float64 `json:"avg_jct_bound_hours"`
	SharingValid bool    `json:"bounds_space_sharing"`
}

// Report is a bench's outcome.
type Report struct {
	Cluster   string     `json:"cluster"`
	Window    [2]int     `json:"window"`
	Rows      []Row      `json:"rows"`
	Bounds    []Bound    `json:"bounds,omitempty"`
	JCTBounds []JCTBound `json:"jct_bounds,omitempty"`
	Runs      []Run      `json:"runs"`
}

type task struct {
	exp    string
	rate   float64
	seed   uint64
	policy string
}

// Bench runs every task and aggregates.
func Bench(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Window[1] < cfg.Window[0] {
		return nil, fmt.Errorf("cluster/bench: bad window %v", cfg.Window)
	}
	for _, p := range append(append([]string(nil), cfg.Policies...), cfg.StaticPolicies...) {
		if _, err := registry.New(p, cfg.Registry); err != nil {
			return nil, err
		}
	}
	var tasks []task
	for _, exp := range []string{Single, Multi} {
		rates := cfg.SingleRates
		if exp == Multi {
			rates = cfg.MultiRates
		}
		for _, r := range rates {
			if !(r > 0) {
				return nil, fmt.Errorf("cluster/bench: rate %g must be positive", r)
			}
			for _, p := range cfg.Policies {
				for _, s := range cfg.Seeds {
					tasks = append(tasks, task{exp, r, s, p})
				}
			}
		}
	}
	if cfg.StaticJobs > 0 {
		for _, p := range cfg.StaticPolicies {
			for _, s := range cfg.Seeds {
				tasks = append(tasks, task{Static, float64(cfg.StaticJobs), s, p})
			}
		}
	}
	rep := &Report{Cluster: cfg.Cluster.Name, Window: cfg.Window, Runs: make([]Run, len(tasks))}
	// Traces are shared by the policies of one (experiment, rate, seed).
	traces := map[task][]job.Job{}
	var tmu sync.Mutex
	trace := func(t task) ([]job.Job, error) {
		k := task{t.exp, t.rate, t.seed, ""}
		tmu.Lock()
		defer tmu.Unlock()
		if j, ok := traces[k]; ok {
			return j, nil
		}
		// Gavel's makespan experiment is "static-multiple": its sweep runs
		// with --generate-multi-gpu-jobs (EXPERIMENTS.md), so the static
		// trace has multi-GPU jobs too.
		g := job.GenConfig{Seed: t.seed, MultiGPU: t.exp == Multi || t.exp == Static}
		if t.exp == Static {
			g.Static, g.Jobs = true, int(t.rate)
		} else {
			g.Rate = t.rate
			g.Jobs = cfg.Window[1] + 1 + int(math.Ceil(t.rate*cfg.TailHours))
		}
		j, err := job.Generate(g, cfg.Table)
		if err == nil {
			traces[k] = j
		}
		return j, err
	}
	run := func(i int) { rep.Runs[i] = runOne(ctx, cfg, tasks[i], trace) }
	var progress func(k, i int)
	if cfg.Progress != nil {
		progress = func(k, i int) {
			t := tasks[i]
			cfg.Progress(k, len(tasks), fmt.Sprintf("%s %g %s seed %d", t.exp, t.rate, t.policy, t.seed))
		}
	}
	if err := workpool.Each(ctx, len(tasks), cfg.Workers, run, progress); err != nil {
		return nil, err
	}
	rep.Rows = aggregate(rep.Runs)
	valid, _ := bound.PairsNeverFaster(cfg.Table)
	seen := map[task]bool{}
	for _, t := range tasks {
		k := task{t.exp, t.rate, t.seed, ""}
		if t.exp == Static || seen[k] {
			continue
		}
		seen[k] = true
		jobs, err := trace(k)
		if err != nil {
			continue
		}
		if h, err := jctBound(cfg, jobs); err == nil {
			rep.JCTBounds = append(rep.JCTBounds, JCTBound{Experiment: t.exp, Rate: t.rate, Seed: t.seed, Hours: h, SharingValid: valid})
		}
	}
	if cfg.StaticJobs > 0 {
		for _, s := range cfg.Seeds {
			rep.Bounds = append(rep.Bounds, staticBound(ctx, cfg, s, trace))
		}
	}
	return rep, nil
}

func runOne(ctx context.Context, cfg Config, t task, trace func(task) ([]job.Job, error)) Run {
	r := Run{Experiment: t.exp, Rate: t.rate, Seed: t.seed, Policy: t.policy}
	jobs, err := trace(t)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	opts := cfg.Registry
	opts.Seed = t.seed
	p, err := registry.New(t.policy, opts)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	sc := cfg.Sched
	sc.Seed = t.seed
	simCfg := sim.Config{Sched: sc}
	if t.exp != Static {
		simCfg.Window, simCfg.StopAtWindow = cfg.Window, true
	}
	start := nowSeconds()
	res, err := sim.Run(ctx, simCfg, jobs, cfg.Cluster, cfg.Table, p)
	r.Wall = nowSeconds() - start
	if err != nil {
		r.Err = err.Error()
		return r
	}
	res.PerJob = nil
	r.Result = res
	return r
}

func aggregate(runs []Run) []Row {
	type key struct {
		exp    string
		rate   float64
		policy string
	}
	idx := map[key]int{}
	var rows []Row
	for _, r := range runs {
		k := key{r.Experiment, r.Rate, r.Policy}
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, Row{Experiment: r.Experiment, Rate: r.Rate, Policy: r.Policy})
			if pub, ok := Published[r.Experiment]; ok && pub.At == r.Rate {
				rows[i].Published = pub.Figures[r.Policy]
			}
		}
		row := &rows[i]
		row.Wall += r.Wall
		if r.Result == nil {
			row.Failed++
			continue
		}
		v := r.Result.AvgJCT
		if r.Experiment == Static {
			v = r.Result.Makespan
		}
		if r.Result.Exhausted {
			row.Exhausted++
		}
		row.Fallbacks += r.Result.Fallbacks
		row.PerSeed = append(row.PerSeed, v)
	}
	for i := range rows {
		s := 0.0
		for _, v := range rows[i].PerSeed {
			s += v
		}
		if n := len(rows[i].PerSeed); n > 0 {
			rows[i].Mean = s / float64(n)
		}
	}
	sort.SliceStable(rows, func(a, b int) bool {
		x, y := rows[a], rows[b]
		if x.Experiment != y.Experiment {
			return expOrder(x.Experiment) < expOrder(y.Experiment)
		}
		return x.Rate < y.Rate
	})
	return rows
}

func expOrder(e string) int {
	switch e {
	case Single:
		return 0
	case Multi:
		return 1
	}
	return 2
}

func staticBound(ctx context.Context, cfg Config, seed uint64, trace func(task) ([]job.Job, error)) Bound {
	b := Bound{Seed: seed}
	jobs, err := trace(task{Static, float64(cfg.StaticJobs), seed, ""})
	if err != nil {
		b.Err = err.Error()
		return b
	}
	pc, err := sched.ClusterView(cfg.Cluster, cfg.Table)
	if err != nil {
		b.Err = err.Error()
		return b
	}
	s := &policy.State{C: pc, Table: cfg.Table}
	for i := range jobs {
		row, err := cfg.Table.Resolve(jobs[i].Type, jobs[i].GPUs)
		if err != nil {
			b.Err = err.Error()
			return b
		}
		s.Jobs = append(s.Jobs, policy.Job{ID: i, Row: row, GPUs: jobs[i].GPUs, Weight: 1, Steps: jobs[i].Steps, Remaining: jobs[i].Steps, Last: -1})
	}
	b.Longest = bound.Longest(s) / 3600
	b.SharingValid, _ = bound.PairsNeverFaster(cfg.Table)
	f, err := bound.Fluid(ctx, s, cfg.Registry.LP.Solve)
	if err != nil {
		b.Err = err.Error()
	}
	b.Fluid = f / 3600
	return b
}

// jctBound is the mean over the window of each job's steps over its
// fastest alone throughput on a type with enough GPUs, in hours.
func jctBound(cfg Config, jobs []job.Job) (float64, error) {
	pc, err := sched.ClusterView(cfg.Cluster, cfg.Table)
	if err != nil {
		return 0, err
	}
	sum, n := 0.0, 0
	for i := cfg.Window[0]; i <= cfg.Window[1] && i < len(jobs); i++ {
		row, err := cfg.Table.Resolve(jobs[i].Type, jobs[i].GPUs)
		if err != nil {
			return 0, err
		}
		best := 0.0
		for g, c := range pc.Count {
			if c >= jobs[i].GPUs {
				best = math.Max(best, cfg.Table.Alone(row, g))
			}
		}
		if best > 0 {
			sum += jobs[i].Steps / best
			n++
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("cluster/bench: empty window")
	}
	return sum / float64(n) / 3600, nil
}

func nowSeconds() float64 { return float64(time.Now().UnixNano()) / 1e9 }
