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
	"sync"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
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
	// Planners by registry name ("single:npu", "bestmap", "heft", "puzzle", "inlay").
	Planners []string
	// Scenarios is the number of random scenarios (ignored with Workloads).
	Scenarios int
	// Workloads, when set, are benched instead of random scenarios.
	Workloads []*workload.Workload
	Seed      int64
	Budget    time.Duration
	Evals     int
	Workers   int
	// Scenario shapes the random scenarios (Networks default: every zoo network).
	Scenario workload.ScenarioOptions
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
	Error        string  `json:"error,omitempty"`
}

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
	// cost model (sim.Bound.Proven).
	BoundProven bool            `json:"upper_bound_proven"`
	Results     []PlannerResult `json:"results"`
	Workload    string          `json:"-"`
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
	Scenarios   []ScenarioResult   `json:"scenarios"`
	Summary     map[string]Summary `json:"summary"`
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
	for i, name := range cfg.Planners {
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
			opt.Networks = zoo.Names()
		}
		build := zooCache()
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
		b, err := sim.UpperBound(w, cfg.Platform, cfg.Cost)
		if err != nil {
			return nil, fmt.Errorf("bench: scenario %d: %w", si, err)
		}
		sr.UpperBound, sr.BoundProven = b.Scale, b.Proven()
		judge := sim.NewEvaluator(w, cfg.Platform, cfg.Cost, sim.Options{Seed: cfg.Seed})
		poisson := sim.NewEvaluator(poissonOf(w), cfg.Platform, cfg.Cost, sim.Options{Seed: rep.PoissonSeed})
		for pi, pl := range planners {
			if cfg.Progress != nil {
				cfg.Progress(si, pi, cfg.Planners[pi])
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			req := &plan.Request{Workload: w, Platform: cfg.Platform, Cost: cfg.Cost, Seed: cfg.Seed,
				Budget: cfg.Budget, Evals: cfg.Evals, Workers: cfg.Workers}
			eval := &counting{e: sim.NewEvaluator(w, cfg.Platform, cfg.Cost, sim.Options{Seed: cfg.Seed})}
			start := time.Now()
			p, err := pl.Plan(ctx, req, eval)
			secs := time.Since(start).Seconds()
			res := PlannerResult{Planner: cfg.Planners[pi], SearchSeconds: round3(secs), Evals: eval.n}
			if err != nil {
				res.Error = err.Error()
			} else if s, err := judge.Evaluate(ctx, p); err != nil {
				res.Error = err.Error()
			} else if ps, err := poisson.Evaluate(ctx, p); err != nil {
				res.Error = "poisson judge: " + err.Error()
			} else {
				res.Scale, res.PoissonScale = s.Scale, ps.Scale
			}
			sr.Results = append(sr.Results, res)
		}
		rep.Scenarios = append(rep.Scenarios, sr)
		if cfg.Done != nil {
			cfg.Done(sr)
		}
	}
	rep.Summary = summarize(rep)
	return rep, nil
}

func summarize(rep *Report) map[string]Summary {
	out := map[string]Summary{}
	find := func(sr ScenarioResult, name string) (float64, bool) {
		r, ok := resultOf(sr, name)
		return r.Scale, ok
	}
	for _, name := range rep.Planners {
		var s Summary
		var logNPU, logBM, logPP, logBMP, frac, secs float64
		var nFrac int
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

// counting counts the evaluations a planner asks for.
type counting struct {
	e  plan.Evaluator
	n  int
	mu sync.Mutex
}

func (c *counting) Evaluate(ctx context.Context, p *plan.Plan) (plan.Score, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.e.Evaluate(ctx, p)
}

// zooCache builds each zoo network once.
func zooCache() workload.Builder {
	type entry struct {
		g  *graph.Model
		lg *graph.LayerGraph
	}
	cache := map[string]entry{}
	return func(name string) (*graph.Model, *graph.LayerGraph, error) {
		if e, ok := cache[name]; ok {
			return e.g, e.lg, nil
		}
		g, err := zoo.Build(name)
		if err != nil {
			return nil, nil, err
		}
		lg, err := graph.BuildLayers(g)
		if err != nil {
			return nil, nil, err
		}
		cache[name] = entry{g, lg}
		return g, lg, nil
	}
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
