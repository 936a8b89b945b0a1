package profile

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/workload"
)

// target is the figure fitted to: the median, or the minimum.
func (s Sample) target(useMin bool) time.Duration {
	if useMin && s.Min > 0 {
		return s.Min
	}
	return s.Measured
}

// ColdSamples returns the samples with cold runs, each with its cold
// median as its median and minimum (so that any fit aims at it): what
// Calibrate fits to for a model whose fallback figures must match the cold
// figures the estimator answers with.
func ColdSamples(samples []Sample) []Sample {
	var out []Sample
	for _, s := range samples {
		if s.Cold > 0 {
			s.Measured, s.Min = s.Cold, s.Cold
			out = append(out, s)
		}
	}
	return out
}

// Sample is one measured subgraph matched to a loaded model.
type Sample struct {
	// Model is the workload model's name (for reports).
	Model  string
	LG     *graph.LayerGraph
	Set    graph.LayerSet
	Config hw.Config
	// Measured is the measurement's median, Min its fastest run, Cold
	// the median of its cold runs (0: none).
	Measured, Min, Cold time.Duration
}

// Samples returns the device's usable measurements (no error recorded) of
// the workload's models, matched by content hash and input shapes, on the
// platform's processors, ordered as the store orders them. Rows of other
// models, shapes or processors are left out.
func Samples(st *Store, device string, pl *hw.Platform, w *workload.Workload) ([]Sample, error) {
	recs, err := st.Records(device)
	if err != nil {
		return nil, err
	}
	type ref struct {
		name string
		lg   *graph.LayerGraph
	}
	byID := map[string][]ref{}
	seen := map[*graph.LayerGraph]bool{}
	for _, m := range w.Models {
		if m.Layers == nil || seen[m.Layers] {
			continue
		}
		seen[m.Layers] = true
		id := ModelID(m.Graph)
		byID[id] = append(byID[id], ref{m.Name, m.Layers})
	}
	procs := map[string]int{}
	for i, pr := range pl.Processors {
		procs[pr.Name] = i
	}
	var out []Sample
	for _, r := range recs {
		if r.Error != "" || r.Reps == 0 || r.Median <= 0 {
			continue
		}
		refs := byID[r.Model]
		proc, ok := procs[r.Processor]
		if len(refs) == 0 || !ok {
			continue
		}
		set, err := graph.ParseLayerSet(r.Layers)
		if err != nil || len(set) == 0 {
			continue
		}
		dt, err := graph.ParseDType(r.DType)
		if err != nil {
			continue
		}
		cfg := hw.Config{Proc: proc, Backend: r.Backend, DType: dt}
		if pl.CheckConfig(cfg) != nil {
			continue
		}
		for _, rf := range refs {
			if set[len(set)-1] >= len(rf.lg.Layers) {
				continue
			}
			ins, err := SubgraphInputs(rf.lg, set)
			if err != nil || ShapesKey(ins) != r.Shapes {
				continue
			}
			out = append(out, Sample{Model: rf.name, LG: rf.lg, Set: set, Config: cfg, Measured: r.Median, Min: r.Min, Cold: r.Cold})
			break
		}
	}
	return out, nil
}

// CalibrateOptions tune Calibrate.
type CalibrateOptions struct {
	// Folds is the number of cross-validation folds the multi-layer
	// subgraphs are dealt into (0: 5; each fold keeps out every sample
	// that shares a layer with its held-back subgraphs, so with fewer
	// folds little is left to fit). Each fold is held back from one fit
	// and scored with it, so every multi-layer subgraph is held back once;
	// with fewer than two of them, single layers are dealt instead. Every
	// sample that shares a layer with a held-back subgraph (its layers
	// measured alone, an overlapping subgraph) stays out of that fit too
	// (ClassFit.Excluded counts them), so the held-back error is the
	// model's on layers it was not fitted to. The factors kept are fitted
	// to all the samples. 1 skips the cross-validation.
	Folds int
	// Seed deals the folds.
	Seed int64
	// MaxEvals bounds the objective evaluations per class (0: 10000).
	MaxEvals int
	// UseMin fits to and scores against each measurement's fastest run
	// instead of its median: on a machine shared with other work,
	// interference only ever adds time, so the minimum is the steadier
	// figure of what the subgraph itself costs.
	UseMin bool
	// Params names the factors to fit (nil: all of them): the names of
	// sharedParams, "compute.CLASS", or "compute.*" for every class the
	// samples exercise. The others keep their starting values.
	Params []string
	// Prior, when positive, regularises the fit toward its starting point:
	// the objective adds Prior × (ln(fitted/start))² for each fitted
	// factor, so that a factor the samples barely pin down stays near its
	// nominal figure instead of wandering to a bound (0: no penalty).
	Prior float64
	// PriorSkipClasses leaves the class fractions (compute.*) out of the
	// prior: where their starting values are cost.DefaultEfficiency's
	// generic guesses rather than figures of the processor, the prior
	// holds only the processor's nominal figures (throughput, bandwidth,
	// overheads, sizes).
	PriorSkipClasses bool
}

// selectParams keeps the parameters opt.Params names (all when nil).
func selectParams(params []param, names []string) []param {
	if names == nil {
		return params
	}
	var out []param
	for _, p := range params {
		for _, n := range names {
			if n == p.name || n == "compute.*" && strings.HasPrefix(p.name, "compute.") {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// ClassFit is the calibration of one processor class (see Twins).
type ClassFit struct {
	// Processor is the class's first processor; Members lists them all.
	Processor string
	Members   []string
	// Before and After are the factors before and after the fit.
	Before, After cost.Efficiency
	// Fit counts the samples the kept factors are fitted to; Held the
	// subgraphs scored while held back (over all folds); Excluded the
	// samples left out of a fold's training because they share a layer
	// with one of its held-back subgraphs (over all folds).
	Fit, Held, Excluded int
	// MAPEBefore and MAPEAfter are the mean absolute percentage errors (as
	// fractions) on the held-back subgraphs, each predicted by the fit it
	// was held back from, against the figure fitted to (medians, or
	// minimums with UseMin); FitMAPEBefore and FitMAPEAfter are the errors
	// of the kept factors on all the samples they were fitted to. MedianMAPEBefore and MedianMAPEAfter are the
	// held-back errors against the medians in either case.
	MAPEBefore, MAPEAfter             float64
	FitMAPEBefore, FitMAPEAfter       float64
	MedianMAPEBefore, MedianMAPEAfter float64
	// Cold corrects the fitted figures to cold-cache ones (fitted to the
	// samples with cold runs: Sample.Cold); ColdMAPEBefore and
	// ColdMAPEAfter are the held-back errors against the cold figures of
	// the fitted factors without and with it (each fold's correction
	// fitted to its training samples).
	Cold                          ColdFit
	ColdMAPEBefore, ColdMAPEAfter float64
	// Evals counts objective evaluations.
	Evals int
}

// Calibration is the result of Calibrate.
type Calibration struct {
	// Efficiency holds every processor's factors in ID order: fitted for
	// classes with samples, the starting ones elsewhere.
	Efficiency []cost.Efficiency
	// Classes lists the fitted classes in processor order.
	Classes []ClassFit
}

// Calibrate fits each processor class's efficiency factors, starting from
// start (nil: cost.DefaultEfficiency of each kind), to the samples: a
// bounded coordinate search in log space minimising the weighted mean of
// |ln predicted − ln measured| (robust to the odd disturbed measurement),
// where single layers weigh 0.3 in all and multi-layer subgraphs 0.7 (the
// latter are what a planner asks about). Fitted: the compute efficiency of every
// operator class the samples exercise, the memory efficiency, the
// saturation size HalfFLOPs, the dispatch and layer overheads and the
// scales of the processor's peak and bandwidth, a cache (its size and
// speed-up) and the cost of the copies in and out of a subgraph. Samples
// the analytic model cannot run (unsupported nodes) are left out. Classes
// without samples keep their starting factors. Deterministic for a given
// input.
func Calibrate(pl *hw.Platform, start []cost.Efficiency, samples []Sample, opt CalibrateOptions) (*Calibration, error) {
	if pl == nil {
		return nil, errors.New("profile: calibrate: no platform")
	}
	if start == nil {
		start = make([]cost.Efficiency, len(pl.Processors))
		for i, pr := range pl.Processors {
			start[i] = cost.DefaultEfficiency(pr.Kind)
		}
	}
	if len(start) != len(pl.Processors) {
		return nil, fmt.Errorf("profile: calibrate: %d efficiency sets for %d processors", len(start), len(pl.Processors))
	}
	if opt.Folds <= 0 {
		opt.Folds = 5
	}
	if opt.MaxEvals <= 0 {
		opt.MaxEvals = 10000
	}
	twins := Twins(pl)
	res := &Calibration{Efficiency: make([]cost.Efficiency, len(start))}
	for i := range start {
		res.Efficiency[i] = start[i].Clone()
	}
	byClass := map[int][]Sample{}
	for _, s := range samples {
		if s.Min <= 0 || s.Min > s.Measured {
			s.Min = s.Measured
		}
		if s.Config.Proc < 0 || s.Config.Proc >= len(pl.Processors) || s.Measured <= 0 {
			continue
		}
		rep := twins[s.Config.Proc]
		s.Config.Proc = rep
		byClass[rep] = append(byClass[rep], s)
	}
	for rep := range pl.Processors {
		ss := byClass[rep]
		if twins[rep] != rep || len(ss) == 0 {
			continue
		}
		cf, err := fitClass(pl, start, rep, ss, opt)
		if err != nil {
			return nil, err
		}
		if cf == nil {
			continue
		}
		for i, t := range twins {
			if t == rep {
				cf.Members = append(cf.Members, pl.Processors[i].Name)
				res.Efficiency[i] = cf.After.Clone()
			}
		}
		res.Classes = append(res.Classes, *cf)
	}
	return res, nil
}

// param is one fitted factor, in log space.
type param struct {
	name   string
	lo, hi float64 // bounds of the factor (not its log)
	get    func(e *cost.Efficiency) float64
	set    func(e *cost.Efficiency, v float64)
}

// fieldParam is the factor a field of the efficiency holds (an integer
// or a duration taken as a float).
func fieldParam[T ~float64 | ~int64](name string, lo, hi float64, field func(e *cost.Efficiency) *T) param {
	return param{name: name, lo: lo, hi: hi,
		get: func(e *cost.Efficiency) float64 { return float64(*field(e)) },
		set: func(e *cost.Efficiency, v float64) { *field(e) = T(v) }}
}

func classParam(c cost.OpClass) param {
	return param{name: "compute." + string(c), lo: 1e-4, hi: 1,
		get: func(e *cost.Efficiency) float64 { return e.Of(c) },
		set: func(e *cost.Efficiency, v float64) { e.Compute[c] = v }}
}

func peakScale(e *cost.Efficiency) float64 {
	if e.PeakScale > 0 {
		return e.PeakScale
	}
	return 1
}

type predictor struct {
	pl    *hw.Platform
	start []cost.Efficiency
	rep   int
}

// predict returns each sample's predicted time with eff on the class's
// processor; ok is false when a sample cannot run there.
func (p predictor) predict(eff cost.Efficiency, ss []Sample) ([]float64, error) {
	effs := make([]cost.Efficiency, len(p.start))
	copy(effs, p.start)
	effs[p.rep] = eff
	a, err := cost.NewCalibrated(p.pl, effs)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(ss))
	for i, s := range ss {
		d, err := a.Subgraph(s.LG, s.Set, s.Config)
		if err != nil {
			return nil, err
		}
		out[i] = math.Max(float64(d), 1)
	}
	return out, nil
}

func fitClass(pl *hw.Platform, start []cost.Efficiency, rep int, all []Sample, opt CalibrateOptions) (*ClassFit, error) {
	pr := pl.Processors[rep]
	pd := predictor{pl: pl, start: start, rep: rep}
	before := start[rep].Clone()
	// Drop what the model cannot run there.
	base, err := cost.NewCalibrated(pl, start)
	if err != nil {
		return nil, fmt.Errorf("profile: calibrate %s: %w", pr.Name, err)
	}
	var ss []Sample
	for _, s := range all {
		if _, err := base.Subgraph(s.LG, s.Set, s.Config); err == nil {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return nil, nil
	}
	sort.SliceStable(ss, func(i, j int) bool {
		a, b := ss[i], ss[j]
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Config != b.Config {
			return a.Config.String() < b.Config.String()
		}
		return a.Set.Key() < b.Set.Key()
	})
	// Cross-validation over the multi-layer subgraphs (single layers when
	// there are fewer than two): each fold is held back from one fit and
	// scored with it, so every such subgraph is held back once, and every
	// sample that shares a layer with a held-back one stays out of that
	// fit's training (heldOut).
	// A whole model is never held back: it shares a layer with every
	// other sample of its model, so holding it back would leave none of
	// them to train on.
	var singles, multis []int
	for i, s := range ss {
		switch {
		case len(s.Set) == 1:
			singles = append(singles, i)
		case len(s.Set) < len(s.LG.Layers):
			multis = append(multis, i)
		}
	}
	pool := multis
	if len(multis) < 2 {
		pool = singles
	}
	folds := min(opt.Folds, len(pool))
	cf := &ClassFit{Processor: pr.Name, Before: before}
	if folds >= 2 {
		rng := rand.New(rand.NewSource(opt.Seed))
		perm := rng.Perm(len(pool))
		var held []Sample
		var predBefore, predAfter, predCold []float64
		for f := 0; f < folds; f++ {
			out := map[int]bool{}
			for k, idx := range perm {
				if k%folds == f {
					out[pool[idx]] = true
				}
			}
			train, test := heldOut(ss, out)
			if len(train) == 0 {
				continue // nothing shares no layer with this fold: no fit to score it with
			}
			cf.Excluded += len(ss) - len(train) - len(test)
			eff, evals, err := fitEfficiency(pd, before, train, opt)
			if err != nil {
				return nil, fmt.Errorf("profile: calibrate %s: %w", pr.Name, err)
			}
			cf.Evals += evals
			pb, pa, err := pd.predictBoth(before, eff, test)
			if err != nil {
				return nil, fmt.Errorf("profile: calibrate %s: %w", pr.Name, err)
			}
			held = append(held, test...)
			predBefore = append(predBefore, pb...)
			predAfter = append(predAfter, pa...)
			pt, err := pd.predict(eff, train)
			if err != nil {
				return nil, fmt.Errorf("profile: calibrate %s: %w", pr.Name, err)
			}
			fc := fitCold(pt, train)
			for _, p := range pa {
				predCold = append(predCold, p*fc.Factor(time.Duration(p)))
			}
		}
		cf.ColdMAPEBefore = coldMAPE(ColdFit{}, predAfter, held)
		cf.ColdMAPEAfter = coldMAPE(ColdFit{}, predCold, held)
		cf.Held = len(held)
		cf.MAPEBefore = mapeOf(predBefore, held, opt.UseMin)
		cf.MAPEAfter = mapeOf(predAfter, held, opt.UseMin)
		cf.MedianMAPEBefore = mapeOf(predBefore, held, false)
		cf.MedianMAPEAfter = mapeOf(predAfter, held, false)
	}
	// The factors kept are fitted to everything.
	eff, evals, err := fitEfficiency(pd, before, ss, opt)
	if err != nil {
		return nil, fmt.Errorf("profile: calibrate %s: %w", pr.Name, err)
	}
	cf.After, cf.Fit, cf.Evals = eff, len(ss), cf.Evals+evals
	pb, pa, err := pd.predictBoth(before, eff, ss)
	if err != nil {
		return nil, fmt.Errorf("profile: calibrate %s: %w", pr.Name, err)
	}
	cf.FitMAPEBefore, cf.FitMAPEAfter = mapeOf(pb, ss, opt.UseMin), mapeOf(pa, ss, opt.UseMin)
	cf.Cold = fitCold(pa, ss)
	return cf, nil
}

// predictBoth predicts the samples with the factors before and after a
// fit.
func (p predictor) predictBoth(before, after cost.Efficiency, ss []Sample) (pb, pa []float64, err error) {
	if pb, err = p.predict(before, ss); err != nil {
		return nil, nil, err
	}
	if pa, err = p.predict(after, ss); err != nil {
		return nil, nil, err
	}
	return pb, pa, nil
}

// fitEfficiency fits the factors, from before, to the samples (see
// Calibrate) and returns them with the number of objective evaluations.
func fitEfficiency(pd predictor, before cost.Efficiency, fit []Sample, opt CalibrateOptions) (cost.Efficiency, int, error) {
	weights, logMeas := sampleWeights(fit, opt.UseMin)
	eff, all := startingPoint(before, pd.pl.Processors[pd.rep], fit)
	if opt.Params != nil {
		all = append(all, optionalParams...)
		if eff.OnChipBytes <= 0 {
			eff.OnChipBytes = max(pd.pl.Processors[pd.rep].OnChipBytes, 64<<10)
		}
		if eff.RequantGBs <= 0 && slices.Contains(opt.Params, "requant_gbs") {
			eff.RequantGBs = 10
		}
	}
	params := selectParams(all, opt.Params)
	if opt.Params != nil {
		// Factors not fitted keep their starting values, not the search's
		// defaults (a cache or boundary term nobody asked for stays off).
		for _, p := range sharedParams {
			if !slices.ContainsFunc(params, func(q param) bool { return q.name == p.name }) {
				p.set(&eff, p.get(&before))
			}
		}
	}
	evals := 0
	center := eff.Clone() // the prior's centre: the search's start
	objective := func(e cost.Efficiency) (float64, error) {
		evals++
		pred, err := pd.predict(e, fit)
		if err != nil {
			return 0, err
		}
		var sum float64
		for i, p := range pred {
			sum += weights[i] * math.Abs(math.Log(p)-logMeas[i])
		}
		if opt.Prior > 0 {
			for _, p := range params {
				if opt.PriorSkipClasses && strings.HasPrefix(p.name, "compute.") {
					continue
				}
				if c, v := p.get(&center), p.get(&e); c > 0 && v > 0 {
					d := math.Log(v / c)
					sum += opt.Prior * d * d
				}
			}
		}
		return sum, nil
	}
	eff, err := coordinateSearch(eff, params, objective, func() bool { return evals < opt.MaxEvals })
	return eff, evals, err
}

// sampleWeights are the fit's weights (single layers 30 %, multi-layer
// subgraphs 70 %, each sample alike within its kind; all alike when one
// kind is missing) and the log of each sample's target figure.
func sampleWeights(fit []Sample, useMin bool) (weights, logMeas []float64) {
	nSingle, nMulti := 0, 0
	for _, s := range fit {
		if len(s.Set) == 1 {
			nSingle++
		} else {
			nMulti++
		}
	}
	weights = make([]float64, len(fit))
	logMeas = make([]float64, len(fit))
	for i, s := range fit {
		switch {
		case nSingle == 0 || nMulti == 0:
			weights[i] = 1 / float64(len(fit))
		case len(s.Set) == 1:
			weights[i] = 0.3 / float64(nSingle)
		default:
			weights[i] = 0.7 / float64(nMulti)
		}
		logMeas[i] = math.Log(float64(s.target(useMin)))
	}
	return weights, logMeas
}

// startingPoint is the search's start: before, with defaults for the
// factors it leaves unset on processor pr, and the parameters to fit —
// the compute efficiency of each operator class the samples exercise,
// then the shared factors (sharedParams).
func startingPoint(before cost.Efficiency, pr *hw.Processor, fit []Sample) (cost.Efficiency, []param) {
	used := map[cost.OpClass]bool{}
	for _, s := range fit {
		m := s.LG.Model
		for _, id := range s.LG.Nodes(s.Set) {
			if n := m.Nodes[id]; n.Work.FLOPs > 0 {
				used[cost.Classify(m, n)] = true
			}
		}
	}
	eff := before.Clone()
	var params []param
	for _, c := range cost.OpClasses {
		if used[c] {
			if _, ok := eff.Compute[c]; !ok {
				eff.Compute[c] = eff.Of(c)
			}
			params = append(params, classParam(c))
		}
	}
	startScales(&eff, pr)
	if eff.CacheBytes <= 0 || eff.CacheBandwidthScale <= 0 {
		eff.CacheBytes, eff.CacheBandwidthScale = max(pr.OnChipBytes, 1<<20), 4
	}
	if eff.BoundaryGBs <= 0 {
		eff.BoundaryGBs = 100
	}
	if eff.HalfFLOPs <= 0 {
		eff.HalfFLOPs = 1e5
	}
	return eff, append(params, sharedParams...)
}

// startScales gives the scales and overheads a fit starts from where eff
// has none: scales of 1, the processor's overheads (at least 1 µs per
// dispatch and 100 ns per layer).
func startScales(eff *cost.Efficiency, pr *hw.Processor) {
	if eff.PeakScale <= 0 {
		eff.PeakScale = 1
	}
	if eff.BandwidthScale <= 0 {
		eff.BandwidthScale = 1
	}
	if eff.DispatchOverhead <= 0 {
		eff.DispatchOverhead = max(pr.DispatchOverhead, time.Microsecond)
	}
	if eff.LayerOverhead <= 0 {
		eff.LayerOverhead = max(pr.LayerOverhead, 100*time.Nanosecond)
	}
}

// sharedParams are the factors every fit adjusts, with their ranges.
var sharedParams = []param{
	fieldParam("peak_scale", 0.05, 20, func(e *cost.Efficiency) *float64 { return &e.PeakScale }),
	fieldParam("bandwidth_scale", 0.05, 100, func(e *cost.Efficiency) *float64 { return &e.BandwidthScale }),
	fieldParam("cache_bytes", 16<<10, 1<<30, func(e *cost.Efficiency) *int64 { return &e.CacheBytes }),
	fieldParam("cache_bandwidth_scale", 1, 1000, func(e *cost.Efficiency) *float64 { return &e.CacheBandwidthScale }),
	fieldParam("boundary_gbs", 0.1, 1000, func(e *cost.Efficiency) *float64 { return &e.BoundaryGBs }),
	fieldParam("half_flops", 1e2, 1e10, func(e *cost.Efficiency) *float64 { return &e.HalfFLOPs }),
	fieldParam("memory", 1e-3, 1, func(e *cost.Efficiency) *float64 { return &e.Memory }),
	fieldParam("dispatch_overhead", 100, 1e8, func(e *cost.Efficiency) *time.Duration { return &e.DispatchOverhead }),
	fieldParam("layer_overhead", 10, 1e7, func(e *cost.Efficiency) *time.Duration { return &e.LayerOverhead }),
}

// optionalParams are fitted only when CalibrateOptions.Params names them.
var optionalParams = []param{
	// The share of on-chip memory a tensor between two layers gets.
	fieldParam("on_chip_bytes", 16<<10, 1<<30, func(e *cost.Efficiency) *int64 { return &e.OnChipBytes }),
	// The rate of an integer type's requantisation passes.
	fieldParam("requant_gbs", 0.1, 1000, func(e *cost.Efficiency) *float64 { return &e.RequantGBs }),
	// The rate of the data-movement operators (cost.Efficiency.MoveGBs).
	fieldParam("move_gbs", 0.1, 10000, func(e *cost.Efficiency) *float64 { return &e.MoveGBs }),
}

// coordinateSearch minimises objective from eff: each parameter in turn
// is multiplied or divided by e^step while that helps; the step halves
// when nothing does. A few restarts from the best point with a full step
// get it out of the shallow local minima that the max() and the cache
// threshold make. It stops early once more() is false.
func coordinateSearch(eff cost.Efficiency, params []param, objective func(cost.Efficiency) (float64, error), more func() bool) (cost.Efficiency, error) {
	best, err := objective(eff)
	if err != nil {
		return eff, err
	}
	for round := 0; round < 3 && more(); round++ {
		start := best
		for step := math.Log(4); step > 0.005 && more(); {
			improved := false
			for _, p := range params {
				for _, dir := range []float64{1, -1} {
					cur := p.get(&eff)
					next := math.Min(p.hi, math.Max(p.lo, cur*math.Exp(dir*step)))
					if next == cur {
						continue
					}
					cand := eff.Clone()
					p.set(&cand, next)
					v, err := objective(cand)
					if err != nil {
						return eff, err
					}
					if v < best-1e-12 {
						best, eff, improved = v, cand, true
						break
					}
				}
			}
			if !improved {
				step /= 2
			}
		}
		if best > start-1e-9 {
			break
		}
	}
	return eff, nil
}

// mapeOf is the mean absolute percentage error (a fraction) of
// predictions (ns) against the samples' medians or minimums; 0 for none.
func mapeOf(pred []float64, ss []Sample, useMin bool) float64 {
	if len(ss) == 0 {
		return 0
	}
	var sum float64
	for i, s := range ss {
		m := float64(s.target(useMin))
		sum += math.Abs(pred[i]-m) / m
	}
	return sum / float64(len(ss))
}

// MAPE is the mean absolute percentage error (a fraction) of an
// estimator's predictions over samples; samples it cannot run are skipped.
func MAPE(est cost.Estimator, ss []Sample) (float64, int) {
	var sum float64
	n := 0
	for _, s := range ss {
		d, err := est.Subgraph(s.LG, s.Set, s.Config)
		if err != nil {
			continue
		}
		m := float64(s.Measured)
		sum += math.Abs(float64(d)-m) / m
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// heldOut splits the samples for one fold: test holds the samples whose
// index is in out, train every other sample that shares no layer (of the
// same layer graph) with a test sample. A held-back subgraph's layers,
// measured alone or inside other subgraphs, so never train the fit that
// predicts it.
func heldOut(ss []Sample, out map[int]bool) (train, test []Sample) {
	type layerRef struct {
		lg    *graph.LayerGraph
		layer int
	}
	held := map[layerRef]bool{}
	for i, s := range ss {
		if out[i] {
			test = append(test, s)
			for _, l := range s.Set {
				held[layerRef{s.LG, l}] = true
			}
		}
	}
	for i, s := range ss {
		if out[i] {
			continue
		}
		touches := false
		for _, l := range s.Set {
			if held[layerRef{s.LG, l}] {
				touches = true
				break
			}
		}
		if !touches {
			train = append(train, s)
		}
	}
	return train, test
}
