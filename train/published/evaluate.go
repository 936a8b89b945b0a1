package published

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/inlay-dev/inlay/internal/workpool"
	"github.com/inlay-dev/inlay/train"
)

// Start is where every fit starts: a neutral efficiency, so that no fit
// depends on parameters fitted to the rows it scores.
var Start = train.Efficiency{GEMM: 0.7, GEMMTraffic: 0.5, Memory: 0.7, Backward: 2, LaunchUs: 20, Link: 0.8, Network: 0.8, LinkLatencyUs: 2, ContextGB: 0, Fragmentation: 0}

// Row is one measurement and its prediction from a fit that never saw it.
type Row struct {
	Set, Label, Shape string
	GPU               string
	MeasuredS         float64
	PredictedS        float64
	// Err is PredictedS/MeasuredS − 1.
	Err float64
	// MeasuredMem and PredictedMem are bytes (0: not measured).
	MeasuredMem, PredictedMem, MemErr float64
}

// SetReport summarises one data set's held-out errors (absolute values).
type SetReport struct {
	Set                string
	N                  int
	Median, P95, Worst float64
	Mean               float64
	MemN               int
	MemMean, MemMedian float64
	// Kendall is the rank correlation between predicted and measured
	// times within each model shape (shapes with at least 3 rows), by
	// shape name; KendallMin the smallest.
	Kendall    []ShapeTau
	KendallMin float64
	// Folds says how the rows were held out.
	Folds string
	Rows  []Row
}

// ShapeTau is Kendall's τ within one model shape.
type ShapeTau struct {
	Shape string
	N     int
	Tau   float64
}

// FittedGPU is one GPU type's efficiency fitted to every case and profile
// of the type.
type FittedGPU struct {
	GPU     string
	Eff     train.Efficiency
	Sources []string
}

// Report is a cross-validated calibration.
type Report struct {
	Sets   []SetReport
	Fitted []FittedGPU
}

// CVOptions bound a cross-validation.
type CVOptions struct {
	Fit FitOptions
	// MaxLeaveOneOut is the most groups a type may have for leave-one-out;
	// larger sets use ten folds (group i in fold i mod 10). 0: 60.
	MaxLeaveOneOut int
	// Workers fit folds at once (0 or 1: one at a time). The result does
	// not depend on it.
	Workers int
	// Progress, when set, is told of each finished fit.
	Progress func(done, total int)
	// KeepFlagged fits and scores the rows the data's README flags.
	KeepFlagged bool
}

// CrossValidate fits each GPU type's efficiency with each group of its
// cases left out in turn (or ten folds) and predicts the left-out cases,
// then fits every type on everything (Report.Fitted). Types that only
// profiles cover are fitted to them, with no held-out rows.
func CrossValidate(cases []Case, layers []LayerCase, opt CVOptions) (*Report, error) {
	maxLOO := opt.MaxLeaveOneOut
	if maxLOO <= 0 {
		maxLOO = 60
	}
	if !opt.KeepFlagged {
		var kept []Case
		for _, c := range cases {
			if c.Flagged == "" {
				kept = append(kept, c)
			}
		}
		cases = kept
	}
	gpus := map[string]bool{}
	for _, c := range cases {
		gpus[c.GPU] = true
	}
	for _, l := range layers {
		gpus[l.GPU] = true
	}
	type job struct {
		gpu  string
		fold int // -1: the full fit
		keep []Case
		test []int
	}
	var jobs []job
	folds := map[string]string{}
	for _, g := range slices.Sorted(maps.Keys(gpus)) {
		var groups []string
		seen := map[string]int{}
		var idx []int
		for i, c := range cases {
			if c.GPU != g {
				continue
			}
			if _, ok := seen[c.Group]; !ok {
				seen[c.Group] = len(groups)
				groups = append(groups, c.Group)
			}
			idx = append(idx, i)
		}
		nf := len(groups)
		folds[g] = "leave-one-out"
		if nf > maxLOO {
			nf = 10
			folds[g] = "10-fold"
		}
		for f := 0; f < nf; f++ {
			j := job{gpu: g, fold: f}
			for _, i := range idx {
				if seen[cases[i].Group]%nf == f {
					j.test = append(j.test, i)
				} else {
					j.keep = append(j.keep, cases[i])
				}
			}
			jobs = append(jobs, j)
		}
		jobs = append(jobs, job{gpu: g, fold: -1, keep: casesOf(cases, g)})
	}
	effs := make([]train.Efficiency, len(jobs))
	errs := make([]error, len(jobs))
	var progress func(k, i int)
	if opt.Progress != nil {
		progress = func(k, _ int) { opt.Progress(k, len(jobs)) }
	}
	fit := func(i int) { effs[i], errs[i] = Fit(jobs[i].keep, layers, jobs[i].gpu, Start, opt.Fit) }
	_ = workpool.Each(context.Background(), len(jobs), opt.Workers, fit, progress)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rows := make([]Row, len(cases))
	rep := &Report{}
	for ji, j := range jobs {
		if j.fold < 0 {
			var src []string
			seenSet := map[string]bool{}
			for _, c := range j.keep {
				if !seenSet[c.Set] {
					seenSet[c.Set] = true
					src = append(src, c.Set)
				}
			}
			if len(j.keep) == 0 {
				src = append(src, "sailor-profiles")
			}
			rep.Fitted = append(rep.Fitted, FittedGPU{GPU: j.gpu, Eff: effs[ji], Sources: src})
			continue
		}
		for _, i := range j.test {
			c := &cases[i]
			s, mem, err := Predict(c, effs[ji])
			if err != nil {
				return nil, err
			}
			r := Row{Set: c.Set, Label: c.Label, Shape: c.Shape, GPU: c.GPU, MeasuredS: c.MeasuredS, PredictedS: s, Err: s/c.MeasuredS - 1}
			if c.MeasuredMemBytes > 0 {
				r.MeasuredMem, r.PredictedMem = c.MeasuredMemBytes, mem
				r.MemErr = mem/c.MeasuredMemBytes - 1
			}
			rows[i] = r
		}
	}
	bySet := map[string][]Row{}
	var order []string
	for i, r := range rows {
		if _, ok := bySet[r.Set]; !ok {
			order = append(order, r.Set)
		}
		bySet[r.Set] = append(bySet[r.Set], r)
		_ = i
	}
	for _, s := range order {
		sr := summarise(s, bySet[s])
		sr.Folds = folds[bySet[s][0].GPU]
		rep.Sets = append(rep.Sets, sr)
	}
	return rep, nil
}

func casesOf(cases []Case, gpu string) []Case {
	var out []Case
	for _, c := range cases {
		if c.GPU == gpu {
			out = append(out, c)
		}
	}
	return out
}

// summarise computes a set's error statistics.
func summarise(set string, rows []Row) SetReport {
	sr := SetReport{Set: set, N: len(rows), Rows: rows}
	abs := make([]float64, len(rows))
	var mem []float64
	for i, r := range rows {
		abs[i] = math.Abs(r.Err)
		sr.Mean += abs[i] / float64(len(rows))
		if r.MeasuredMem > 0 {
			mem = append(mem, math.Abs(r.MemErr))
		}
	}
	sort.Float64s(abs)
	sr.Median = quantile(abs, 0.5)
	sr.P95 = quantile(abs, 0.95)
	sr.Worst = abs[len(abs)-1]
	if len(mem) > 0 {
		sort.Float64s(mem)
		sr.MemN = len(mem)
		for _, v := range mem {
			sr.MemMean += v / float64(len(mem))
		}
		sr.MemMedian = quantile(mem, 0.5)
	}
	shapes := map[string][]Row{}
	for _, r := range rows {
		shapes[r.Shape] = append(shapes[r.Shape], r)
	}
	sr.KendallMin = math.NaN()
	for _, s := range slices.Sorted(maps.Keys(shapes)) {
		rs := shapes[s]
		if len(rs) < 3 {
			continue
		}
		tau := kendall(rs)
		sr.Kendall = append(sr.Kendall, ShapeTau{Shape: s, N: len(rs), Tau: tau})
		if math.IsNaN(sr.KendallMin) || tau < sr.KendallMin {
			sr.KendallMin = tau
		}
	}
	return sr
}

// quantile is the q-quantile of sorted xs (linear interpolation).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(xs)-1)
	return xs[lo] + (pos-float64(lo))*(xs[hi]-xs[lo])
}

// kendall is Kendall's τ-b between predicted and measured times.
func kendall(rows []Row) float64 {
	var conc, disc, tx, ty float64
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			dx := rows[i].PredictedS - rows[j].PredictedS
			dy := rows[i].MeasuredS - rows[j].MeasuredS
			switch {
			case dx == 0 && dy == 0:
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case (dx > 0) == (dy > 0):
				conc++
			default:
				disc++
			}
		}
	}
	den := math.Sqrt((conc + disc + tx) * (conc + disc + ty))
	if den == 0 {
		return 0
	}
	return (conc - disc) / den
}

// Target is a fidelity target of a data set.
type Target struct {
	Set, Metric string
	Limit       float64
	// AtLeast marks a lower bound (Kendall's τ); otherwise an upper bound.
	AtLeast bool
}

// Targets are the fidelity targets the project holds itself to.
var Targets = []Target{
	{"vtrain", "median", 0.05, false},
	{"vtrain", "p95", 0.12, false},
	{"vtrain", "kendall_min", 0.85, true},
	{"korthikanti", "worst", 0.05, false},
	{"sc21", "worst", 0.03, false},
	{"sailor", "median", 0.06, false},
	{"sailor", "mean", 0.08, false},
	{"sailor", "memory_mean", 0.06, false},
}

// Value returns the set's figure for a target metric.
func (s *SetReport) Value(metric string) float64 {
	switch metric {
	case "median":
		return s.Median
	case "p95":
		return s.P95
	case "worst":
		return s.Worst
	case "mean":
		return s.Mean
	case "memory_mean":
		return s.MemMean
	case "kendall_min":
		return s.KendallMin
	}
	return math.NaN()
}

// GoSource writes the fitted efficiencies as train/calibrated.go, with
// the command that produced them.
func (r *Report) GoSource(command string) string {
	var b strings.Builder
	b.WriteString("package train\n\n// Code generated by inlay train calibrate; DO NOT EDIT.\n//\n// Calibrated efficiencies per GPU type, fitted by\n//\n")
	for _, l := range strings.Split(command, "\n") {
		fmt.Fprintf(&b, "//\t%s\n", l)
	}
	b.WriteString("//\n// Each entry names the measurements it was fitted to.\n\nvar calibrated = map[string]Efficiency{\n")
	var launch, gemm, traffic, memory, back, lk, net, lat []float64
	for _, f := range r.Fitted {
		e := f.Eff
		fmt.Fprintf(&b, "\t// %s\n\t%q: {GEMM: %.4g, GEMMTraffic: %.4g, Memory: %.4g, Backward: %.4g, LaunchUs: %.4g, Link: %.4g, Network: %.4g, LinkLatencyUs: %.4g, ContextGB: %.4g, Fragmentation: %.4g},\n",
			strings.Join(f.Sources, ", "), f.GPU, e.GEMM, e.GEMMTraffic, e.Memory, e.Backward, e.LaunchUs, e.Link, e.Network, e.LinkLatencyUs, e.ContextGB, e.Fragmentation)
		gemm = append(gemm, e.GEMM)
		traffic = append(traffic, e.GEMMTraffic)
		memory = append(memory, e.Memory)
		back = append(back, e.Backward)
		launch = append(launch, e.LaunchUs)
		lk = append(lk, e.Link)
		net = append(net, e.Network)
		lat = append(lat, e.LinkLatencyUs)
	}
	b.WriteString("}\n\n// defaultEfficiency is the median of the fitted types' parameters, for\n// types without measurements.\nvar defaultEfficiency = Efficiency{")
	med := func(xs []float64) float64 {
		s := append([]float64(nil), xs...)
		sort.Float64s(s)
		return quantile(s, 0.5)
	}
	fmt.Fprintf(&b, "GEMM: %.4g, GEMMTraffic: %.4g, Memory: %.4g, Backward: %.4g, LaunchUs: %.4g, Link: %.4g, Network: %.4g, LinkLatencyUs: %.4g, ContextGB: 1, Fragmentation: 0.05}\n",
		med(gemm), med(traffic), med(memory), med(back), med(launch), med(lk), med(net), med(lat))
	b.WriteString(`
// calibratedEfficiency returns the fitted efficiency of the type called
// name, or DefaultEfficiency and false.
func calibratedEfficiency(name string) (Efficiency, bool) {
	if e, ok := calibrated[name]; ok {
		return e, true
	}
	return defaultEfficiency, false
}
`)
	return b.String()
}
