// Package siabench runs Sia's benchmark (package sia's files) with every
// adaptive policy side by side: the Philly and Helios workloads with
// adaptive jobs (Sia's Table 3) and the Philly workloads with rigid jobs
// (Sia's Figure 1), averaged over the workload files, each policy at its
// own round length or one given, with mixed-type gangs off and (for the
// policies that can form them) on, beside a proven lower bound on the
// average JCT and the published figures.
//
// The same rows come from any set of adaptive workloads on any adaptive
// cluster (Config.Sets: a trace of jobs given as models, say).
//
// Each simulation is deterministic; simulations go to Workers goroutines
// and results come back in task order.
package siabench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/policy/adaptreg"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/internal/workpool"
)

// Experiments.
const (
	Philly = "sia-philly" // DIR/workloads/philly, adaptive jobs
	Helios = "sia-helios" // DIR/workloads/saturn, adaptive jobs
	Rigid  = "sia-rigid"  // DIR/workloads/philly, every job rigid
)

// Experiments lists them.
var Experiments = []string{Philly, Helios, Rigid}

// Config configures a bench: Sia's experiments on Bench, or (Bench nil)
// the Sets on Cluster.
type Config struct {
	Bench       *sia.Bench
	Experiments []string
	Cluster     *adapt.Cluster
	Sets        []Set
	Policies    []string
	// Round in seconds for every policy (0: each policy's own).
	Round float64
	// Scale multiplies the cluster's servers and the workloads' jobs.
	Scale int
	// Files, when positive, runs only the first Files workloads of each
	// experiment.
	Files   int
	Seed    uint64
	Workers int
	// Clock times the policies' rounds (nil: no solve times).
	Clock func() time.Time
	// Progress is called after each simulation, one call at a time.
	Progress func(done, total int, what string)
}

// Row is one policy's figures on one experiment, averaged over workloads.
type Row struct {
	Policy         string  `json:"policy"`
	RoundSeconds   float64 `json:"round_seconds"`
	Mixed          bool    `json:"mixed"`
	AvgJCT         float64 `json:"avg_jct_hours"`
	P99JCT         float64 `json:"p99_jct_hours"`
	Makespan       float64 `json:"makespan_hours"`
	GPUHoursPerJob float64 `json:"gpu_hours_per_job"`
	RestartsPerJob float64 `json:"restarts_per_job"`
	SolveP50       float64 `json:"solve_seconds_p50"`
	// Not in the JSON shape: the p95 solve time, the published average JCT
	// (0: none), the share of job-rounds on mixed gangs, per-workload
	// average JCTs and failures.
	SolveP95   float64   `json:"-"`
	Published  float64   `json:"-"`
	MixedShare float64   `json:"-"`
	PerFile    []float64 `json:"-"`
	Failed     []string  `json:"-"`
}

// Experiment is one experiment's rows.
type Experiment struct {
	Name       string  `json:"name"`
	LowerBound float64 `json:"lower_bound_avg_jct_hours"`
	// SingleTypeBound holds for the rows without mixed gangs (LowerBound
	// holds for every row).
	SingleTypeBound float64 `json:"lower_bound_single_type_avg_jct_hours"`
	// BoundBy says which bound binds: the time-indexed LP
	// (adapt.LPBound) or the isolated per-job one (adapt.LowerBound),
	// per workload file.
	BoundBy string   `json:"lower_bound_by"`
	Rows    []Row    `json:"policies"`
	Files   []string `json:"-"`
	Jobs    int      `json:"-"`
}

// Set is one experiment's workloads, each a list of jobs, named.
type Set struct {
	Name  string
	Files []string
	Jobs  [][]adapt.Job
}

// Report is the bench's outcome.
type Report struct {
	Experiments []Experiment `json:"experiments"`
}

// published are the paper's average JCTs (Table 3, Figure 1), hours.
func published(b *sia.Bench, exp, policy string) float64 {
	want := map[string]string{"sia": "Sia", "pollux": "Pollux", "gavel-tj": "Gavel+TJ"}[policy]
	for _, p := range b.Published {
		switch {
		case exp == Philly && p.Source == "table3" && p.Trace == "Philly" && p.Policy == want,
			exp == Helios && p.Source == "table3" && p.Trace == "Helios" && p.Policy == want,
			exp == Rigid && p.Source == "figure1" && p.Setting == "heterogeneous+rigid" && (p.Policy == want || p.Policy+"+TJ" == want):
			return p.AvgJCT
		}
	}
	return 0
}

type variant struct {
	policy string
	round  float64
	mixed  bool
}

type task struct {
	exp  int
	v    int
	file int
}

// Run runs the bench.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	var variants []variant
	for _, name := range cfg.Policies {
		f, err := adaptreg.Lookup(name)
		if err != nil {
			return nil, err
		}
		r := f.Round
		if cfg.Round > 0 {
			r = cfg.Round
		}
		variants = append(variants, variant{name, r, false})
		if f.New(adaptreg.Options{}).Mixed() {
			variants = append(variants, variant{name, r, true})
		}
	}
	if cfg.Bench == nil {
		return runSets(ctx, cfg, cfg.Cluster, cfg.Sets, variants, func(string, string) float64 { return 0 })
	}
	cl, sets, err := Prepare(cfg.Bench, cfg.Experiments, cfg.Scale, cfg.Files)
	if err != nil {
		return nil, err
	}
	b := cfg.Bench
	return runSets(ctx, cfg, cl, sets, variants, func(exp, policy string) float64 { return published(b, exp, policy) })
}

// Prepare is Sia's cluster scaled by scale (its servers; at least 1) and
// the experiments' workloads on it (the jobs copied scale times), the
// first files of each when files is positive.
func Prepare(b *sia.Bench, experiments []string, scale, files int) (*adapt.Cluster, []Set, error) {
	scale = max(scale, 1)
	sc := b.Cluster.Scaled(scale)
	cl := adapt.FromSia(sc)
	models, err := adapt.Models(b, sc)
	if err != nil {
		return nil, nil, err
	}
	var sets []Set
	for _, name := range experiments {
		set := map[string]string{Philly: "philly", Helios: "saturn", Rigid: "philly"}[name]
		if set == "" {
			return nil, nil, fmt.Errorf("unknown experiment %q (%s, %s, %s)", name, Philly, Helios, Rigid)
		}
		names, ws, err := b.Workloads(set)
		if err != nil {
			return nil, nil, err
		}
		if files > 0 && len(ws) > files {
			names, ws = names[:files], ws[:files]
		}
		var force *adapt.Kind
		if name == Rigid {
			k := adapt.Rigid
			force = &k
		}
		st := Set{Name: name, Files: names}
		for i, w := range ws {
			file := fmt.Sprintf("%s/workloads/%s/%s.csv", b.Dir, set, names[i])
			js, err := adapt.Jobs(file, w, models, cl, force, scale)
			if err != nil {
				return nil, nil, err
			}
			st.Jobs = append(st.Jobs, js)
		}
		sets = append(sets, st)
	}
	return cl, sets, nil
}

// runSets runs every variant on every workload of the sets on cluster
// cl, and averages each variant's figures over a set's workloads beside
// the set's lower bound and the published figure (0: none).
func runSets(ctx context.Context, cfg Config, cl *adapt.Cluster, sets []Set, variants []variant, published func(exp, policy string) float64) (*Report, error) {
	rep := &Report{}
	for _, st := range sets {
		ex := Experiment{Name: st.Name, Files: st.Files}
		var lpFiles int
		var lpErr error
		for _, js := range st.Jobs {
			ex.Jobs += len(js)
			// The bound with mixed gangs holds for every row.
			for _, mixed := range []bool{true, false} {
				b, byLP, err := bound(ctx, cl, js, minRound(variants), mixed)
				if err != nil {
					lpErr = err
				}
				if mixed {
					ex.LowerBound += b / float64(len(st.Jobs))
					if byLP {
						lpFiles++
					}
				} else {
					ex.SingleTypeBound += b / float64(len(st.Jobs))
				}
			}
		}
		ex.BoundBy = fmt.Sprintf("time-indexed LP on %d of %d workloads, else isolated jobs", lpFiles, len(st.Jobs))
		if lpErr != nil {
			ex.BoundBy += fmt.Sprintf(" (LP: %v)", lpErr)
		}
		rep.Experiments = append(rep.Experiments, ex)
	}
	var tasks []task
	for e := range sets {
		for v := range variants {
			for f := range sets[e].Jobs {
				tasks = append(tasks, task{e, v, f})
			}
		}
	}
	type out struct {
		res *adapt.Result
		err error
	}
	results := make([]out, len(tasks))
	run := func(i int) {
		t := tasks[i]
		v := variants[t.v]
		f, _ := adaptreg.Lookup(v.policy)
		p := f.New(adaptreg.Options{Seed: cfg.Seed})
		res, err := adapt.Simulate(ctx, adapt.Config{Cluster: cl, Round: v.round, Mixed: v.mixed, Split: goodput.Proportional, Clock: cfg.Clock}, sets[t.exp].Jobs[t.file], p)
		results[i] = out{res, err}
	}
	var progress func(k, i int)
	if cfg.Progress != nil {
		progress = func(k, i int) {
			t := tasks[i]
			v := variants[t.v]
			cfg.Progress(k, len(tasks), fmt.Sprintf("%s %s %gs mixed=%v %s", sets[t.exp].Name, v.policy, v.round, v.mixed, rep.Experiments[t.exp].Files[t.file]))
		}
	}
	if err := workpool.Each(ctx, len(tasks), cfg.Workers, run, progress); err != nil {
		return nil, err
	}
	for e := range rep.Experiments {
		ex := &rep.Experiments[e]
		for v, vr := range variants {
			row := Row{Policy: vr.policy, RoundSeconds: vr.round, Mixed: vr.mixed, Published: published(ex.Name, vr.policy)}
			var solve []float64
			ok, rounds, mixedRounds := 0, 0, 0
			for i, t := range tasks {
				if t.exp != e || t.v != v {
					continue
				}
				r := results[i]
				if r.err != nil {
					row.Failed = append(row.Failed, fmt.Sprintf("%s: %v", ex.Files[t.file], r.err))
					row.PerFile = append(row.PerFile, math.NaN())
					continue
				}
				ok++
				row.AvgJCT += r.res.AvgJCT
				row.P99JCT += r.res.P99JCT
				row.Makespan += r.res.Makespan
				row.GPUHoursPerJob += r.res.GPUHoursPerJob
				row.RestartsPerJob += r.res.RestartsPerJob
				row.PerFile = append(row.PerFile, r.res.AvgJCT)
				solve = append(solve, r.res.Solve...)
				rounds += r.res.Rounds
				mixedRounds += r.res.MixedRounds
			}
			if ok > 0 {
				k := float64(ok)
				row.AvgJCT /= k
				row.P99JCT /= k
				row.Makespan /= k
				row.GPUHoursPerJob /= k
				row.RestartsPerJob /= k
			}
			sort.Float64s(solve)
			row.SolveP50 = adapt.Percentile(solve, 50)
			row.SolveP95 = adapt.Percentile(solve, 95)
			if rounds > 0 {
				row.MixedShare = float64(mixedRounds) / float64(rounds)
			}
			ex.Rows = append(ex.Rows, row)
		}
	}
	return rep, nil
}

// bound is the larger of the isolated per-job bound and the time-indexed
// LP's on one workload, and whether the LP's is the larger. Where the LP
// cannot be solved (no CBC, say) the isolated bound stands and the error
// comes back beside it.
func bound(ctx context.Context, cl *adapt.Cluster, js []adapt.Job, round float64, mixed bool) (float64, bool, error) {
	iso := adapt.LowerBound(cl, js, round, mixed)
	lp, err := adapt.LPBound(ctx, cl, js, round, mixed, adapt.LPOptions{})
	if err != nil {
		return iso, false, err
	}
	return math.Max(iso, lp), lp > iso, nil
}

func minRound(vs []variant) float64 {
	r := math.Inf(1)
	for _, v := range vs {
		r = math.Min(r, v.round)
	}
	if math.IsInf(r, 1) {
		return 60
	}
	return r
}
