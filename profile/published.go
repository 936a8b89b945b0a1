package profile

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/stats"
	"github.com/inlay-dev/inlay/zoo"
)

// Published is one whole-model latency of a published measurement file
// (shared/measurements/README.md describes the columns).
type Published struct {
	// Line is the row's line in the file.
	Line int
	// Model is a zoo network's name; Input the shape measured.
	Model string
	Input graph.Shape
	// Precision is the processor data type the model ran in.
	Precision graph.DType
	// Processor is the processor's name or kind on the platform; Runtime
	// the software stack that ran it.
	Processor, Runtime string
	Latency            time.Duration
	// Layers* count the runtime's layers on each unit; LayersCPU > 0 means
	// some fell back to the CPU.
	LayersTotal, LayersNPU, LayersGPU, LayersCPU int
	PeakMemoryMB                                 float64
	// Device is the device measured (AI Hub's name; empty in a file of one
	// device); Network the publisher's name of the network or component.
	Device, Network string
}

// publishedColumns are the file's columns; the first six are required.
var publishedColumns = []string{"model", "input", "precision", "processor", "runtime", "latency_ms",
	"layers_total", "layers_npu", "layers_gpu", "layers_cpu", "peak_memory_mb"}

// ParsePublished reads a published-latency CSV: a header naming columns
// of publishedColumns (model, input, precision, processor, runtime and
// latency_ms required; any order), then one row per measurement. Every
// error is one line naming the file, the line and the column.
func ParsePublished(data []byte, file string) ([]Published, error) {
	return readCSV(data, file, publishedColumns, 6, func(row csvRow) (Published, error) {
		p := Published{Line: row.line, Model: row.at("model"), Processor: row.at("processor"), Runtime: row.at("runtime")}
		if err := row.need("model", "processor", "runtime"); err != nil {
			return Published{}, err
		}
		if _, err := zoo.Lookup(p.Model); err != nil {
			return Published{}, row.bad("model", "%s", strings.TrimPrefix(err.Error(), "zoo: "))
		}
		var err error
		if p.Input, err = graph.ParseShape(row.at("input")); err != nil || len(p.Input) == 0 {
			return Published{}, row.bad("input", "%q is not a shape like 1x3x224x224", row.at("input"))
		}
		if p.Precision, err = graph.ParseDType(row.at("precision")); err != nil {
			return Published{}, row.bad("precision", "%q is not a data type (float16, int8, ...)", row.at("precision"))
		}
		err = row.measures(&p, "latency_ms", "peak_memory_mb")
		return p, err
	})
}

// csvRow is one row of a published file: its line, and its fields by
// column name.
type csvRow struct {
	file string
	line int
	col  map[string]int
	rec  []string
}

// at is the row's field in column c, trimmed ("" when the file has no
// such column).
func (r csvRow) at(c string) string {
	if i, ok := r.col[c]; ok {
		return strings.TrimSpace(r.rec[i])
	}
	return ""
}

// bad is an error in column c of the row, one line naming the file, the
// line and the column.
func (r csvRow) bad(c, format string, args ...any) error {
	return fmt.Errorf("profile: %s:%d: %s: %s", r.file, r.line, c, fmt.Sprintf(format, args...))
}

// need is an error for the first of the columns whose field is empty.
func (r csvRow) need(columns ...string) error {
	for _, c := range columns {
		if r.at(c) == "" {
			return r.bad(c, "empty")
		}
	}
	return nil
}

// measures reads a row's latency (column latency, in milliseconds), its
// layer counts and its peak memory (column mem, in MB) into p.
func (r csvRow) measures(p *Published, latency, mem string) error {
	ms, err := strconv.ParseFloat(r.at(latency), 64)
	if err != nil || !(ms > 0) || ms > 1e7 {
		return r.bad(latency, "%q is not a positive number of milliseconds", r.at(latency))
	}
	p.Latency = time.Duration(math.Round(ms * 1e6))
	for _, c := range []struct {
		name string
		dst  *int
	}{{"layers_total", &p.LayersTotal}, {"layers_npu", &p.LayersNPU}, {"layers_gpu", &p.LayersGPU}, {"layers_cpu", &p.LayersCPU}} {
		if v := r.at(c.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return r.bad(c.name, "%q is not a count", v)
			}
			*c.dst = n
		}
	}
	if v := r.at(mem); v != "" {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 || math.IsInf(x, 0) {
			return r.bad(mem, "%q is not a size in MB", v)
		}
		p.PeakMemoryMB = x
	}
	return nil
}

// readCSV reads a published file: a header naming some of columns (the
// first required of them required; any order), then rows of as many
// fields, each made a Published by row. A file of no rows is an error.
func readCSV(data []byte, file string, columns []string, required int, row func(csvRow) (Published, error)) ([]Published, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("profile: %s: empty file (want a header: %s)", file, strings.Join(columns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("profile: %s: %s", file, csvErr(err))
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if !slices.Contains(columns, h) {
			return nil, fmt.Errorf("profile: %s:1: unknown column %q (columns: %s)", file, h, strings.Join(columns, ","))
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("profile: %s:1: column %q twice", file, h)
		}
		col[h] = i
	}
	for _, c := range columns[:required] {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("profile: %s:1: no column %q", file, c)
		}
	}
	var out []Published
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("profile: %s: %s", file, csvErr(err))
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			return nil, fmt.Errorf("profile: %s:%d: %d fields, the header has %d", file, line, len(rec), len(header))
		}
		p, err := row(csvRow{file: file, line: line, col: col, rec: rec})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("profile: %s: no rows", file)
	}
	return out, nil
}

func csvErr(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d: %v", pe.Line, pe.Err)
	}
	return err.Error()
}

// PublishedParams are the factors a whole-model fit adjusts for the
// first data type: the compute fractions of dense and depthwise
// convolutions and of element-wise work (the kinds of work the published
// networks separate: dense convolutions at their 32-channel-padded work,
// depthwise ones and activations on the vector units: YOLOv8's and
// EfficientNet's SiLU, whose sigmoid a float graph computes there), the
// memory bandwidth, and the dispatch and per-layer overheads. The other
// classes keep cost.DefaultEfficiency's fractions, and the fit uses no
// saturation size (HalfFLOPs 0): seven networks do not pin down more, and
// fitted, those factors explained one network's layers with another's
// (EfficientNet's squeeze-excitation pools and thin layers charged to
// Inception-v3's). The cache and boundary terms of a profile calibration
// stay off (whole-model figures cannot separate them).
var PublishedParams = []string{"compute.conv", "compute.depthwise", "compute.elementwise", "bandwidth_scale", "dispatch_overhead", "layer_overhead"}

// DeviceParams are the factors FitDevices fits for a device's first data
// type over every network at once: the classes that matter on an HTP
// (dense convolutions, depthwise ones, matrix products, element-wise
// work and activation lookups, normalisations and softmax-style
// reductions, pools and resizes), the data-movement rate (transposes,
// concatenations, resizes, relayouting reshapes: move_gbs), the
// bandwidth and the dispatch and per-layer launch costs. With every
// network of a device at hand there are rows enough for each.
var DeviceParams = []string{"compute.conv", "compute.depthwise", "compute.matmul", "compute.elementwise", "compute.norm", "compute.reduce", "compute.pool",
	"move_gbs", "peak_scale", "half_flops", "bandwidth_scale", "dispatch_overhead", "layer_overhead"}

// DeviceParamsOther are FitDevices' factors for the other data types,
// from the first type's fit: the integer multipliers' dense, depthwise
// and matrix fractions, the element-wise lookups, the data-movement and
// requantisation rates and the launch costs.
var DeviceParamsOther = []string{"compute.conv", "compute.depthwise", "compute.matmul", "compute.elementwise", "move_gbs", "requant_gbs", "peak_scale", "half_flops", "dispatch_overhead", "layer_overhead"}

// PublishedParamsOther are the factors fitted for the other data types,
// starting from the first one's fit: the dense convolutions' fraction
// (an integer type's convolutions run on other multipliers than a float
// type's), throughput, overheads and the requantisation rate per type;
// the other fractions and the bandwidth are the first type's (a few rows
// per type do not pin down more), except that an integer type starts its
// element-wise fraction from the default, not from a float type's fit: a
// quantized graph runs its activations as table lookups, which a float
// type's fraction does not describe (inherited, it put int8's held-out
// median at 23 %).
var PublishedParamsOther = []string{"compute.conv", "peak_scale", "dispatch_overhead", "layer_overhead", "requant_gbs"}

// DefaultPublishedPrior is FitPublished's regularisation toward the
// starting figures (CalibrateOptions.Prior).
var DefaultPublishedPrior = 0.02

// PublishedOptions tune FitPublished.
type PublishedOptions struct {
	// MaxEvals bounds the objective evaluations of each fit (0: 3000).
	MaxEvals int
	// Source names the file in the fitted figures' fitted_to.
	Source string
	// Params overrides PublishedParams (nil: PublishedParams).
	Params []string
	// Prior is CalibrateOptions.Prior of every fit (negative: none; 0:
	// DefaultPublishedPrior).
	Prior float64
	// Progress, when set, is called after each fit with the fits done and
	// their total (one per precision and one per model left out).
	Progress func(done, total int)
	// Runtime, when set, is the runtime the fit predicts: only its rows
	// are fitted and scored, and the other runtimes' rows of a model (those
	// without CPU layers) only widen its published spread (ModelError.Min,
	// Max). Empty: every runtime's rows are fitted.
	Runtime string
	// OtherParams overrides PublishedParamsOther (nil: PublishedParamsOther).
	OtherParams []string
	// Networks caches built networks across fits (nil: a fresh cache).
	Networks *Networks
}

// Networks caches the zoo networks a fit builds, by name and input, so
// that fits of several devices build each once.
type Networks struct {
	byKey map[string]*graph.LayerGraph
}

// NewNetworks returns an empty cache.
func NewNetworks() *Networks { return &Networks{byKey: map[string]*graph.LayerGraph{}} }

// Layers returns the layer graph of a zoo network at an input shape.
func (c *Networks) Layers(model string, in graph.Shape) (*graph.LayerGraph, error) {
	key := model + "@" + in.String()
	if lg, ok := c.byKey[key]; ok {
		return lg, nil
	}
	m, err := zoo.BuildWith(model, in)
	if err != nil {
		return nil, err
	}
	lg, err := graph.BuildLayers(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", model, err)
	}
	c.byKey[key] = lg
	return lg, nil
}

// RowPrediction is one row with the fit's predictions.
type RowPrediction struct {
	Row Published
	// Fitted is the prediction of the fit to every row of its precision;
	// Held the prediction of the fit that left the row's model out (0 for
	// rows not fitted, the CPU-fallback ones).
	Fitted, Held time.Duration
}

// ModelError is one model's leave-one-model-out error in one precision.
type ModelError struct {
	Model string
	// Measured is the median over the model's fitted runtimes, Min and Max
	// the published spread (every runtime's rows without CPU layers);
	// Runtimes counts the rows the spread spans.
	Measured, Min, Max time.Duration
	Runtimes           int
	// Held is the prediction of the fit to the other models, Error its
	// relative error against Measured.
	Held  time.Duration
	Error float64
}

// PrecisionFit is the fit of one data type.
type PrecisionFit struct {
	DType graph.DType
	// Efficiency is fitted to every row of the precision; Fit holds it as
	// a platform file writes it.
	Efficiency cost.Efficiency
	Fit        *hw.DTypeFit
	Rows       []RowPrediction
	// Models are the leave-one-model-out errors, in model order; Median
	// and Worst summarise them.
	Models        []ModelError
	Median, Worst float64
	// FitMedian is the in-sample median error of the models (the fit to
	// all rows against each model's median).
	FitMedian float64
}

// PublishedFit is FitPublished's result.
type PublishedFit struct {
	// Platform is a copy of the platform with the fitted figures on the
	// processor's data types (hw.DTypeSpec.Fit).
	Platform  *hw.Platform
	Processor string
	Fits      []PrecisionFit
	// Fallback are the rows with layers on the CPU, not fitted: each with
	// the prediction of its precision's fit for the NPU alone.
	Fallback []RowPrediction
}

// FitPublished fits one processor's analytic parameters to published
// whole-model latencies, separately per data type, with Calibrate (the
// fitting code of inlay profile's calibration, on PublishedParams): every
// row is a sample of the whole model on the processor the row names, in
// its precision; rows of a model's runtimes are separate samples, so the
// fit follows their spread. Rows with CPU layers are left out of the fit
// and reported apart. Each model is also left out once and predicted by
// the fit to the others (leave-one-model-out). The processor's starting
// point is its nominal figures (peak_gops, mem_bandwidth_gbs as the
// sustained rate, overheads) and cost.DefaultEfficiency's class
// fractions without a saturation size, whatever fitted figures the
// platform holds; the prior pulls the processor's figures toward their
// nominal values, not the class fractions.
func FitPublished(pl *hw.Platform, rows []Published, opt PublishedOptions) (*PublishedFit, error) {
	if len(rows) == 0 {
		return nil, errors.New("profile: no published rows")
	}
	if opt.MaxEvals <= 0 {
		opt.MaxEvals = 3000
	}
	switch {
	case opt.Prior == 0:
		opt.Prior = DefaultPublishedPrior
	case opt.Prior < 0:
		opt.Prior = 0
	}
	base := unfitted(pl)
	proc, err := base.Find(rows[0].Processor)
	if err != nil {
		return nil, fmt.Errorf("profile: line %d: %w", rows[0].Line, err)
	}
	pr := base.Processors[proc]
	nets := opt.Networks
	if nets == nil {
		nets = NewNetworks()
	}
	var samples, fallback []Sample
	var sampleRows, fallbackRows, spreadRows []Published
	for _, r := range rows {
		p, err := base.Find(r.Processor)
		if err != nil || p != proc {
			return nil, fmt.Errorf("profile: line %d: processor %q: every row must name the same processor (%s)", r.Line, r.Processor, pr.Name)
		}
		cfg := hw.Config{Proc: proc, Backend: base.DefaultConfig(proc).Backend, DType: r.Precision}
		if err := base.CheckConfig(cfg); err != nil {
			return nil, fmt.Errorf("profile: line %d: %w", r.Line, err)
		}
		if opt.Runtime != "" && r.Runtime != opt.Runtime {
			if r.LayersCPU == 0 {
				spreadRows = append(spreadRows, r)
			}
			continue
		}
		lg, err := nets.Layers(r.Model, r.Input)
		if err != nil {
			return nil, fmt.Errorf("profile: line %d: %w", r.Line, err)
		}
		s := Sample{Model: r.Model, LG: lg, Set: graph.Range(0, len(lg.Layers)), Config: cfg, Measured: r.Latency, Min: r.Latency}
		if r.LayersCPU > 0 {
			fallback, fallbackRows = append(fallback, s), append(fallbackRows, r)
			continue
		}
		samples, sampleRows = append(samples, s), append(sampleRows, r)
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("profile: no rows to fit (runtime %q, without CPU layers)", opt.Runtime)
	}
	params := opt.Params
	if params == nil {
		params = PublishedParams
	}
	otherNames := opt.OtherParams
	if otherNames == nil {
		otherNames = PublishedParamsOther
	}
	onChip := pr.OnChipBytes
	// Each whole network's terms on its configuration, built once: the
	// fits price them thousands of times (cost.Terms).
	type termsKey struct {
		lg  *graph.LayerGraph
		cfg hw.Config
	}
	terms := map[termsKey]*cost.Terms{}
	analytic := cost.NewAnalytic(base)
	termsOf := func(ss []Sample) ([]*cost.Terms, error) {
		out := make([]*cost.Terms, len(ss))
		for i, s := range ss {
			key := termsKey{s.LG, s.Config}
			t, ok := terms[key]
			if !ok {
				var err error
				if t, err = analytic.Terms(s.LG, s.Set, s.Config, onChip); err != nil {
					return nil, fmt.Errorf("profile: %s: %w", s.Model, err)
				}
				terms[key] = t
			}
			out[i] = t
		}
		return out, nil
	}
	// fitOf fits the samples from a starting point (nil: the defaults)
	// with the given factors.
	fitOf := func(ss []Sample, from *cost.Efficiency, names []string) (cost.Efficiency, error) {
		start := cost.DefaultEfficiency(pr.Kind)
		if from != nil {
			start = from.Clone()
			if len(ss) > 0 && !ss[0].Config.DType.IsFloat() { // see PublishedParamsOther
				start.Compute[cost.Elementwise] = cost.DefaultEfficiency(pr.Kind).Compute[cost.Elementwise]
			}
		} else {
			// The processor's mem_bandwidth_gbs is the sustained rate of
			// its DMA, which streams the weights: the fit starts there (and
			// the prior pulls toward it), not at a default efficiency's
			// share of it. No saturation size (PublishedParams).
			start.Memory, start.HalfFLOPs = 1, 0
		}
		ts, err := termsOf(ss)
		if err != nil {
			return cost.Efficiency{}, err
		}
		return fitTerms(pr, start, ss, ts, names, opt.MaxEvals, opt.Prior)
	}
	predict := func(e cost.Efficiency, ss []Sample) ([]time.Duration, error) {
		ts, err := termsOf(ss)
		if err != nil {
			return nil, err
		}
		out := make([]time.Duration, len(ss))
		for i, t := range ts {
			out[i] = t.Time(e)
		}
		return out, nil
	}
	res := &PublishedFit{Platform: clonePlatform(base), Processor: pr.Name}
	var dtypes []graph.DType
	count := map[graph.DType]int{}
	for _, s := range samples {
		if !slices.Contains(dtypes, s.Config.DType) {
			dtypes = append(dtypes, s.Config.DType)
		}
		count[s.Config.DType]++
	}
	// The type with the most rows first: the others start from its fit.
	sort.SliceStable(dtypes, func(i, j int) bool { return count[dtypes[i]] > count[dtypes[j]] })
	var first *cost.Efficiency
	firstHeld := map[string]cost.Efficiency{} // its fit without each model
	total, done := 0, 0
	for _, d := range dtypes {
		var ss []Sample
		for _, s := range samples {
			if s.Config.DType == d {
				ss = append(ss, s)
			}
		}
		total += 1 + len(modelNames(ss))
	}
	step := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	for _, d := range dtypes {
		var ss []Sample
		var rs []Published
		for i, s := range samples {
			if s.Config.DType == d {
				ss, rs = append(ss, s), append(rs, sampleRows[i])
			}
		}
		from, fitNames := first, otherNames
		if first == nil {
			fitNames = params
		}
		e, err := fitOf(ss, from, fitNames)
		if err != nil {
			return nil, err
		}
		step()
		fitted, err := predict(e, ss)
		if err != nil {
			return nil, err
		}
		pf := PrecisionFit{DType: d, Efficiency: e}
		for i := range ss {
			pf.Rows = append(pf.Rows, RowPrediction{Row: rs[i], Fitted: fitted[i]})
		}
		names := modelNames(ss)
		held := make([]time.Duration, len(ss))
		for _, name := range names {
			var train, test []Sample
			var testIdx []int
			for i, s := range ss {
				if s.Model == name {
					test, testIdx = append(test, s), append(testIdx, i)
				} else {
					train = append(train, s)
				}
			}
			if len(train) == 0 {
				return nil, fmt.Errorf("profile: %s: one model only; leaving it out leaves nothing to fit", d)
			}
			// Held out means from every fit: the first type's too.
			hfrom := from
			if from != nil {
				if fh, ok := firstHeld[name]; ok {
					hfrom = &fh
				}
			}
			eh, err := fitOf(train, hfrom, fitNames)
			if err != nil {
				return nil, err
			}
			if first == nil {
				firstHeld[name] = eh
			}
			step()
			ph, err := predict(eh, test)
			if err != nil {
				return nil, err
			}
			for k, i := range testIdx {
				held[i] = ph[k]
			}
		}
		var fitErrs []float64
		for _, name := range names {
			me := ModelError{Model: name}
			var meas []time.Duration
			var pred, fitPred time.Duration
			for i, s := range ss {
				if s.Model == name {
					meas = append(meas, s.Measured)
					pred, fitPred = held[i], fitted[i] // one model, one prediction
					pf.Rows[i].Held = held[i]
				}
			}
			all := append([]time.Duration(nil), meas...)
			for _, r := range spreadRows {
				if r.Model == name && r.Precision == d {
					all = append(all, r.Latency)
				}
			}
			me.Measured, me.Min, me.Max, me.Runtimes = stats.Median(meas), slices.Min(all), slices.Max(all), len(all)
			me.Held = pred
			me.Error = math.Abs(float64(pred-me.Measured)) / float64(me.Measured)
			fitErrs = append(fitErrs, math.Abs(float64(fitPred-me.Measured))/float64(me.Measured))
			pf.Models = append(pf.Models, me)
		}
		var errs []float64
		for _, me := range pf.Models {
			errs = append(errs, me.Error)
		}
		pf.Median, pf.Worst = stats.Median(errs), maxF(errs)
		pf.FitMedian = stats.Median(fitErrs)
		pf.Fit = cost.DTypeFitOf(pr, specOf(pr, d), e, fittedTo(opt.Source, d, len(ss), len(names)))
		pf.Fit.HeldOut = heldOutLine(pf, opt.Runtime)
		res.Fits = append(res.Fits, pf)
		setFit(res.Platform.Processors[proc], d, pf.Fit)
		if first == nil {
			first = &pf.Efficiency
		}
	}
	for i, s := range fallback {
		rp := RowPrediction{Row: fallbackRows[i]}
		for _, pf := range res.Fits {
			if pf.DType == s.Config.DType {
				p, err := predict(pf.Efficiency, []Sample{s})
				if err != nil {
					return nil, err
				}
				rp.Fitted = p[0]
			}
		}
		res.Fallback = append(res.Fallback, rp)
	}
	return res, nil
}

// heldOutLine summarises a fit's leave-one-model-out errors for the
// platform file (hw.DTypeFit.HeldOut).
func heldOutLine(pf PrecisionFit, runtime string) string {
	worst := ""
	for _, m := range pf.Models {
		if m.Error == pf.Worst {
			worst = m.Model
		}
	}
	against := "each model's runtimes' median"
	if runtime != "" {
		against = runtime
	}
	return fmt.Sprintf("leave one model out against %s: median %.1f %%, worst %.1f %% (%s) over %d models", against, 100*pf.Median, 100*pf.Worst, worst, len(pf.Models))
}

func fittedTo(src string, d graph.DType, rows, models int) string {
	if src == "" {
		src = "published measurements"
	}
	return fmt.Sprintf("%s: %d %s rows of %d models", src, rows, d, models)
}

// unfitted copies a platform without fitted figures on any data type.
func unfitted(pl *hw.Platform) *hw.Platform {
	cp := clonePlatform(pl)
	for _, pr := range cp.Processors {
		for i := range pr.DTypes {
			pr.DTypes[i].Fit = nil
		}
	}
	return cp
}

// clonePlatform copies a platform deeply enough to change its processors'
// data types.
func clonePlatform(pl *hw.Platform) *hw.Platform {
	cp := *pl
	cp.Processors = make([]*hw.Processor, len(pl.Processors))
	for i, pr := range pl.Processors {
		c := *pr
		c.DTypes = append([]hw.DTypeSpec(nil), pr.DTypes...)
		cp.Processors[i] = &c
	}
	return &cp
}

func specOf(pr *hw.Processor, d graph.DType) hw.DTypeSpec {
	for _, ds := range pr.DTypes {
		if ds.DType == d {
			return ds
		}
	}
	return hw.DTypeSpec{DType: d, PeakGOPS: 1}
}

func setFit(pr *hw.Processor, d graph.DType, f *hw.DTypeFit) {
	for i := range pr.DTypes {
		if pr.DTypes[i].DType == d {
			pr.DTypes[i].Fit = f
		}
	}
}

// modelNames are the samples' models, sorted.
func modelNames(ss []Sample) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s.Model] {
			seen[s.Model] = true
			out = append(out, s.Model)
		}
	}
	sort.Strings(out)
	return out
}

func maxF(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// fitTerms fits factors, from start, to whole-network samples priced by
// their terms: the coordinate search of Calibrate on the mean |ln
// predicted − ln measured| over the samples, plus prior × (ln(fitted /
// start))² for each fitted factor other than the class fractions. The
// factors not named keep their starting values; requant_gbs and move_gbs
// start at 10 GB/s when unset and named.
func fitTerms(pr *hw.Processor, start cost.Efficiency, ss []Sample, ts []*cost.Terms, names []string, maxEvals int, prior float64) (cost.Efficiency, error) {
	eff := start.Clone()
	startScales(&eff, pr)
	if eff.RequantGBs <= 0 && slices.Contains(names, "requant_gbs") {
		eff.RequantGBs = 10
	}
	if eff.MoveGBs <= 0 && slices.Contains(names, "move_gbs") {
		eff.MoveGBs = 10
	}
	if eff.HalfFLOPs <= 0 && slices.Contains(names, "half_flops") {
		eff.HalfFLOPs = 1e6
	}
	var all []param
	for _, c := range cost.OpClasses {
		all = append(all, classParam(c))
	}
	all = append(all, sharedParams...)
	all = append(all, optionalParams...)
	params := selectParams(all, names)
	logMeas := make([]float64, len(ss))
	for i, s := range ss {
		logMeas[i] = math.Log(float64(s.Measured))
	}
	center := eff.Clone()
	evals := 0
	objective := func(e cost.Efficiency) (float64, error) {
		evals++
		var sum float64
		for i, t := range ts {
			sum += math.Abs(math.Log(math.Max(float64(t.Time(e)), 1)) - logMeas[i])
		}
		sum /= float64(len(ts))
		for _, p := range params {
			if strings.HasPrefix(p.name, "compute.") {
				continue
			}
			if c, v := p.get(&center), p.get(&e); c > 0 && v > 0 {
				d := math.Log(v / c)
				sum += prior * d * d
			}
		}
		return sum, nil
	}
	return coordinateSearch(eff, params, objective, func() bool { return evals < maxEvals })
}
