// Package bench reproduces Puzzle's experiment (arXiv 2508.17764, §6): K
// random scenarios drawn from the nine zoo networks (or given workload
// files), every planner on every scenario under the same budget, the
// simulator's max sustainable rate scale of each plan beside the proven
// upper bound, and a summary of geometric-mean ratios to the NPU-only and
// Best Mapping baselines.
//
// Fairness: every planner gets the same request (seed, wall-clock budget,
// evaluation budget, workers) and its own fresh evaluator; the plan it
// returns is re-scored by one common evaluator, so no planner profits from
// its own evaluator's state.
//
// Two judges. The first is the planners' own training signal: the same
// deterministic simulator, seed and arrivals they optimised against. The
// second is not: every group's arrivals become Poisson, drawn from
// PoissonSeed(seed), which no planner is given. A planner that overfits
// its evaluator (a plan tuned to the periodic critical instant) shows up
// as a drop from the first figure to the second (Summary's
// GeomeanPoissonVsPeriodic).
package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/stats"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
)

// Config is one bench run.
type Config struct {
	Platform *hw.Platform
	// Cost defaults to the platform's analytic model.
	Cost cost.Estimator
	// Planners by registry name ("single:npu", "bestmap", "heft", "puzzle",
	// "inlay"). A name ending in BlindSuffix ("inlay+blind") is that
	// planner searching with the contention-blind simulator
	// (sim.Options.NoContention) while the judges keep the contention
	// model: the two entries side by side say what contention-aware
	// scoring gains.
	Planners []string
	// Scenarios is the number of random scenarios (ignored with Workloads).
	Scenarios int
	// Workloads, when set, are benched instead of random scenarios.
	Workloads []*workload.Workload
	Seed      int64
	Budget    time.Duration
	Evals     int
	Workers   int
	// Scenario shapes the random scenarios (Networks default: zoo.BenchNetworks).
	Scenario workload.ScenarioOptions
	// Repeats runs every planner this many times per scenario (0 or 1:
	// once), repeat r with planner seed Seed+r; a result's Scale is the
	// median over the repeats, with their min and max beside it.
	Repeats int
	// Versus lists planner pairs {a, b} whose ratio a/b (medians) is
	// reported by number of models (Report.Versus).
	Versus [][2]string
	// Progress, when set, is told when a planner starts on a scenario.
	Progress func(scenario, planner int, name string)
	// Done, when set, is given each scenario's results as soon as its
	// last planner has been scored (a table can fill as the run goes).
	Done func(ScenarioResult)
}

// PlannerResult is one planner on one scenario.
type PlannerResult struct {
	Planner       string  `json:"planner"`
	Scale         float64 `json:"max_rate_scale"`
	SearchSeconds float64 `json:"search_seconds"`
	Evals         int     `json:"evals,omitempty"`
	// PoissonScale is the plan's max sustainable scale on Poisson
	// arrivals from the unseen seed (see the package doc).
	PoissonScale float64 `json:"poisson_max_rate_scale"`
	// Repeats holds each repeat's scale (Config.Repeats > 1); Min and Max
	// their extremes (Scale is their median).
	Repeats []float64 `json:"repeat_scales,omitempty"`
	Min     float64   `json:"min_max_rate_scale,omitempty"`
	Max     float64   `json:"max_max_rate_scale,omitempty"`
	// MILPBound is an exact planner's proven bound on every plan's scale
	// (plan.Proof.ScaleBound; the tightest over repeats), 0 for the others.
	MILPBound float64 `json:"milp_bound_scale,omitempty"`
	// MILPGap is the exact planner's own gap between its incumbent and
	// bound (the median over repeats).
	MILPGap float64 `json:"milp_gap,omitempty"`
	// MILPNote is the exact planner's note on how its proof came about
	// (plan.Proof.Note, of the last repeat).
	MILPNote string `json:"milp_note,omitempty"`
	Error    string `json:"error,omitempty"`
}

// BlindSuffix marks a planner entry that searches without the contention
// model (Config.Planners).
const BlindSuffix = "+blind"

// PoissonSeed is the seed of the Poisson judge's arrivals for a bench
// seed: one the planners are never given.
func PoissonSeed(seed int64) int64 { return seed + 1<<20 }

// poissonOf is w with every group's arrivals Poisson.
func poissonOf(w *workload.Workload) *workload.Workload {
	c := *w
	c.Groups = make([]*workload.Group, len(w.Groups))
	for i, g := range w.Groups {
		gc := *g
		gc.Arrival = workload.Poisson
		c.Groups[i] = &gc
	}
	return &c
}

// ScenarioResult is one scenario.
type ScenarioResult struct {
	Index      int        `json:"index"`
	Models     []string   `json:"models"`
	Groups     [][]string `json:"groups"`
	RatesHz    []float64  `json:"rates_hz"`
	UpperBound float64    `json:"upper_bound_scale"`
	// BoundProven is false when the bound is only an estimate for the
	// cost model (ratebound.Bound.Proven).
	BoundProven bool `json:"upper_bound_proven"`
	// BestBound is the tightest proven bound: the least of UpperBound and
	// every exact planner's MILPBound.
	BestBound float64         `json:"best_bound_scale"`
	Results   []PlannerResult `json:"results"`
	Workload  string          `json:"-"`
}

// Summary aggregates one planner over all scenarios.
type Summary struct {
	GeomeanVsSingleNPU float64 `json:"geomean_vs_single_npu"`
	GeomeanVsBestmap   float64 `json:"geomean_vs_bestmap"`
	MeanFractionBound  float64 `json:"mean_fraction_of_bound"`
	MeanSearchSeconds  float64 `json:"mean_search_seconds"`
	// GeomeanPoissonVsPeriodic is the geometric mean of each plan's
	// Poisson-judged scale over its periodic one (plans with both
	// positive; CountedPoisson of them); GeomeanVsBestmapPoisson is the
	// ratio to Best Mapping under the Poisson judge.
	GeomeanPoissonVsPeriodic float64 `json:"geomean_poisson_vs_periodic"`
	CountedPoisson           int     `json:"counted_poisson"`
	GeomeanVsBestmapPoisson  float64 `json:"geomean_vs_bestmap_poisson"`
	CountedVsBestmapPoisson  int     `json:"counted_vs_bestmap_poisson"`
	// Counted says over how many scenarios each ratio was taken (those
	// whose baseline sustains a positive scale).
	CountedVsSingleNPU int `json:"counted_vs_single_npu"`
	CountedVsBestmap   int `json:"counted_vs_bestmap"`
	// MeanGapToBest is the mean over scenarios of (BestBound − Scale) /
	// BestBound: how far the planner is from the tightest proven bound.
	MeanGapToBest float64 `json:"mean_gap_to_best_bound"`
	// VsBestmapMin and VsBestmapMax are the least and greatest geomean
	// ratio to bestmap over the repeats, each repeat's plans against the
	// median bestmap (Config.Repeats > 1).
	VsBestmapMin float64 `json:"geomean_vs_bestmap_min,omitempty"`
	VsBestmapMax float64 `json:"geomean_vs_bestmap_max,omitempty"`
}

// Versus is the ratio of two planners' scales by number of models.
type Versus struct {
	A, B string
	// Rows: one per model-count bucket ("3", "4-6", "7-9", else the
	// count), then "all".
	Rows []VersusRow
}

// VersusRow is the geometric mean of A's median scale over B's over the
// scenarios of a bucket (N of them, both positive), with the least and
// greatest per-repeat geomean (repeat r of A against repeat r of B).
type VersusRow struct {
	Models  string  `json:"models"`
	N       int     `json:"n"`
	Geomean float64 `json:"geomean"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
}

// Report is a bench run's result.
type Report struct {
	Platform string   `json:"platform"`
	Planners []string `json:"planners"`
	Seed     int64    `json:"seed"`
	// PoissonSeed is the Poisson judge's seed (PoissonSeed(Seed)).
	PoissonSeed int64              `json:"poisson_seed"`
	Budget      string             `json:"budget,omitempty"`
	Evals       int                `json:"evals,omitempty"`
	Repeats     int                `json:"repeats,omitempty"`
	Scenarios   []ScenarioResult   `json:"scenarios"`
	Summary     map[string]Summary `json:"summary"`
	Versus      []Versus           `json:"versus,omitempty"`
}

// Run benches every planner on every scenario.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Platform == nil {
		return nil, fmt.Errorf("bench: no platform")
	}
	if cfg.Cost == nil {
		cfg.Cost = cost.NewAnalytic(cfg.Platform)
	}
	if len(cfg.Planners) == 0 {
		return nil, fmt.Errorf("bench: no planners")
	}
	planners := make([]plan.Planner, len(cfg.Planners))
	blind := make([]bool, len(cfg.Planners))
	for i, name := range cfg.Planners {
		name, blind[i] = strings.CutSuffix(name, BlindSuffix)
		p, err := search.New(name)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		planners[i] = p
	}
	works := cfg.Workloads
	if len(works) == 0 {
		if cfg.Scenarios <= 0 {
			return nil, fmt.Errorf("bench: no scenarios")
		}
		opt := cfg.Scenario
		if len(opt.Networks) == 0 {
			opt.Networks = zoo.BenchNetworks()
		}
		build := zoo.CachedLayers()
		rng := rand.New(rand.NewSource(cfg.Seed))
		for k := 0; k < cfg.Scenarios; k++ {
			w, err := workload.Scenario(rng, opt, build)
			if err != nil {
				return nil, err
			}
			w.Platform = cfg.Platform.Name
			works = append(works, w)
		}
	}
	rep := &Report{Platform: cfg.Platform.Name, Planners: cfg.Planners, Seed: cfg.Seed, PoissonSeed: PoissonSeed(cfg.Seed), Evals: cfg.Evals, Summary: map[string]Summary{}}
	if cfg.Budget > 0 {
		rep.Budget = cfg.Budget.String()
	}
	for si, w := range works {
		sr := ScenarioResult{Index: si, Workload: w.YAML()}
		for _, m := range w.Models {
			sr.Models = append(sr.Models, m.Name)
		}
		for _, g := range w.Groups {
			sr.Groups = append(sr.Groups, g.Models)
			sr.RatesHz = append(sr.RatesHz, round3(g.RateHz()))
		}
		b, err := ratebound.Upper(w, cfg.Platform, cfg.Cost)
		if err != nil {
			return nil, fmt.Errorf("bench: scenario %d: %w", si, err)
		}
		sr.UpperBound, sr.BoundProven = b.Scale, b.Proven()
		judge := sim.NewEvaluator(w, cfg.Platform, cfg.Cost, sim.Options{Seed: cfg.Seed})
		poisson := sim.NewEvaluator(poissonOf(w), cfg.Platform, cfg.Cost, sim.Options{Seed: rep.PoissonSeed})
		repeats := max(cfg.Repeats, 1)
		sr.BestBound = sr.UpperBound
		for pi, pl := range planners {
			if cfg.Progress != nil {
				cfg.Progress(si, pi, cfg.Planners[pi])
			}
			res := PlannerResult{Planner: cfg.Planners[pi]}
			var scales, poissons, secs, gaps []float64
			for r := range repeats {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				req := &plan.Request{Workload: w, Platform: cfg.Platform, Cost: cfg.Cost, Seed: cfg.Seed + int64(r),
					Budget: cfg.Budget, Evals: cfg.Evals, Workers: cfg.Workers}
				eval := &plan.Counting{E: sim.NewEvaluator(w, cfg.Platform, cfg.Cost, sim.Options{Seed: cfg.Seed, NoContention: blind[pi]})}
				start := time.Now()
				p, proof, err := plan.PlanWithProof(ctx, pl, req, eval)
				secs = append(secs, time.Since(start).Seconds())
				res.Evals += eval.Count()
				if err != nil {
					res.Error = err.Error()
					break
				}
				if proof != nil && proof.ScaleBound > 0 && !math.IsInf(proof.ScaleBound, 0) {
					if res.MILPBound == 0 || proof.ScaleBound < res.MILPBound {
						res.MILPBound = proof.ScaleBound
					}
					gaps = append(gaps, proof.Gap)
				}
				if proof != nil {
					res.MILPNote = proof.Note
				}
				if s, err := judge.Evaluate(ctx, p); err != nil {
					res.Error = err.Error()
					break
				} else if ps, err := poisson.Evaluate(ctx, p); err != nil {
					res.Error = "poisson judge: " + err.Error()
					break
				} else {
					scales, poissons = append(scales, s.Scale), append(poissons, ps.Scale)
				}
			}
			res.SearchSeconds = round3(stats.Mean(secs))
			if res.Error == "" {
				res.Scale, res.PoissonScale = stats.Median(scales), stats.Median(poissons)
				if repeats > 1 {
					res.Repeats = scales
					res.Min, res.Max = slices.Min(scales), slices.Max(scales)
				}
				if len(gaps) > 0 {
					res.MILPGap = stats.Median(gaps)
				}
				if res.MILPBound > 0 {
					sr.BestBound = math.Min(sr.BestBound, res.MILPBound)
				}
			}
			res.Evals /= repeats
			sr.Results = append(sr.Results, res)
		}
		rep.Scenarios = append(rep.Scenarios, sr)
		if cfg.Done != nil {
			cfg.Done(sr)
		}
	}
	if cfg.Repeats > 1 {
		rep.Repeats = cfg.Repeats
	}
	rep.Summary = summarize(rep)
	for _, v := range cfg.Versus {
		rep.Versus = append(rep.Versus, versus(rep, v[0], v[1]))
	}
	return rep, nil
}

// bucket names a scenario's model count as the rows do.
func bucket(n int) string {
	switch {
	case n == 3:
		return "3"
	case n >= 4 && n <= 6:
		return "4-6"
	case n >= 7 && n <= 9:
		return "7-9"
	}
	return fmt.Sprint(n)
}

// versus computes the ratio of a over b by model-count bucket.
func versus(rep *Report, a, b string) Versus {
	v := Versus{A: a, B: b}
	type acc struct {
		log   float64
		n     int
		perRe map[int]float64
		perN  map[int]int
	}
	accs := map[string]*acc{}
	var order []string
	add := func(key string, ra, rb PlannerResult) {
		ac := accs[key]
		if ac == nil {
			ac = &acc{perRe: map[int]float64{}, perN: map[int]int{}}
			accs[key] = ac
			order = append(order, key)
		}
		ac.log += math.Log(ra.Scale / rb.Scale)
		ac.n++
		for r := range min(len(ra.Repeats), len(rb.Repeats)) {
			if ra.Repeats[r] > 0 && rb.Repeats[r] > 0 {
				ac.perRe[r] += math.Log(ra.Repeats[r] / rb.Repeats[r])
				ac.perN[r]++
			}
		}
	}
	for _, sr := range rep.Scenarios {
		ra, oka := resultOf(sr, a)
		rb, okb := resultOf(sr, b)
		if !oka || !okb || ra.Scale <= 0 || rb.Scale <= 0 {
			continue
		}
		add(bucket(len(sr.Models)), ra, rb)
	}
	sort.Strings(order)
	all := &acc{perRe: map[int]float64{}, perN: map[int]int{}}
	for _, key := range order {
		ac := accs[key]
		row := VersusRow{Models: key, N: ac.n, Geomean: round3(math.Exp(ac.log / float64(ac.n)))}
		row.Min, row.Max = spread(ac.perRe, ac.perN, row.Geomean)
		v.Rows = append(v.Rows, row)
		all.log += ac.log
		all.n += ac.n
		for r, l := range ac.perRe {
			all.perRe[r] += l
			all.perN[r] += ac.perN[r]
		}
	}
	if all.n > 0 {
		row := VersusRow{Models: "all", N: all.n, Geomean: round3(math.Exp(all.log / float64(all.n)))}
		row.Min, row.Max = spread(all.perRe, all.perN, row.Geomean)
		v.Rows = append(v.Rows, row)
	}
	return v
}

// spread is the least and greatest per-repeat geomean (def when there are
// no repeats).
func spread(logs map[int]float64, ns map[int]int, def float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for r, l := range logs {
		if ns[r] == 0 {
			continue
		}
		g := round3(math.Exp(l / float64(ns[r])))
		lo, hi = math.Min(lo, g), math.Max(hi, g)
	}
	if math.IsInf(lo, 1) {
		return def, def
	}
	return lo, hi
}

func summarize(rep *Report) map[string]Summary {
	out := map[string]Summary{}
	find := func(sr ScenarioResult, name string) (float64, bool) {
		r, ok := resultOf(sr, name)
		return r.Scale, ok
	}
	for _, name := range rep.Planners {
		var s Summary
		var logNPU, logBM, logPP, logBMP, frac, secs, gap float64
		var nFrac, nGap int
		perRe, perN := map[int]float64{}, map[int]int{}
		for _, sr := range rep.Scenarios {
			me, ok := find(sr, name)
			for _, r := range sr.Results {
				if r.Planner == name {
					secs += r.SearchSeconds
				}
			}
			if !ok {
				continue
			}
			if base, ok := find(sr, "single:npu"); ok && base > 0 && me > 0 {
				logNPU += math.Log(me / base)
				s.CountedVsSingleNPU++
			}
			if base, ok := find(sr, "bestmap"); ok && base > 0 && me > 0 {
				logBM += math.Log(me / base)
				s.CountedVsBestmap++
				mine, _ := resultOf(sr, name)
				for r, x := range mine.Repeats {
					if x > 0 {
						perRe[r] += math.Log(x / base)
						perN[r]++
					}
				}
			}
			if sr.BestBound > 0 && !math.IsInf(sr.BestBound, 0) {
				gap += math.Max(0, (sr.BestBound-me)/sr.BestBound)
				nGap++
			}
			if sr.UpperBound > 0 {
				frac += me / sr.UpperBound
				nFrac++
			}
			mine, _ := resultOf(sr, name)
			if me > 0 && mine.PoissonScale > 0 {
				logPP += math.Log(mine.PoissonScale / me)
				s.CountedPoisson++
			}
			if base, ok := resultOf(sr, "bestmap"); ok && base.PoissonScale > 0 && mine.PoissonScale > 0 {
				logBMP += math.Log(mine.PoissonScale / base.PoissonScale)
				s.CountedVsBestmapPoisson++
			}
		}
		if s.CountedPoisson > 0 {
			s.GeomeanPoissonVsPeriodic = round3(math.Exp(logPP / float64(s.CountedPoisson)))
		}
		if s.CountedVsBestmapPoisson > 0 {
			s.GeomeanVsBestmapPoisson = round3(math.Exp(logBMP / float64(s.CountedVsBestmapPoisson)))
		}
		if s.CountedVsSingleNPU > 0 {
			s.GeomeanVsSingleNPU = round3(math.Exp(logNPU / float64(s.CountedVsSingleNPU)))
		}
		if s.CountedVsBestmap > 0 {
			s.GeomeanVsBestmap = round3(math.Exp(logBM / float64(s.CountedVsBestmap)))
			if len(perN) > 0 {
				s.VsBestmapMin, s.VsBestmapMax = spread(perRe, perN, s.GeomeanVsBestmap)
			}
		}
		if nGap > 0 {
			s.MeanGapToBest = round3(gap / float64(nGap))
		}
		if nFrac > 0 {
			s.MeanFractionBound = round3(frac / float64(nFrac))
		}
		if len(rep.Scenarios) > 0 {
			s.MeanSearchSeconds = round3(secs / float64(len(rep.Scenarios)))
		}
		out[name] = s
	}
	return out
}

// resultOf is the named planner's result in a scenario, when it has one
// without error.
func resultOf(sr ScenarioResult, name string) (PlannerResult, bool) {
	for _, r := range sr.Results {
		if r.Planner == name && r.Error == "" {
			return r, true
		}
	}
	return PlannerResult{}, false
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
