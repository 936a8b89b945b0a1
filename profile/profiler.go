package profile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// Job kinds.
const (
	KindLayer = "layer" // one layer alone
	KindChunk = "chunk" // a contiguous run of layers, for calibration
	KindPlan  = "plan"  // a subgraph of a planner's plan
)

// Job is one subgraph to measure on one configuration.
type Job struct {
	// Model is the workload model's name.
	Model  string
	LG     *graph.LayerGraph
	Set    graph.LayerSet
	Config hw.Config
	Kind   string
	// Inputs are the subgraph's boundary inputs.
	Inputs []TensorSpec
	// Beside are, for a plan's subgraph, the plan's subgraphs on the
	// processors that share a resource with its own, by processor name
	// (the co-run profile's real neighbours).
	Beside map[string][]Job
}

// JobOptions say what Jobs lists besides every single layer.
type JobOptions struct {
	// Plans whose subgraphs are measured too.
	Plans []*plan.Plan
	// Chunks is how many contiguous runs of layers (of random lengths, the
	// whole model among them) are measured per model, for calibration.
	Chunks int
	// Seed picks the chunks.
	Seed int64
}

// Jobs lists what to measure for a workload on a platform: every single
// layer of every model, opt.Chunks runs of consecutive layers per model and
// the subgraphs of opt.Plans, each on every configuration of every
// processor class's first processor (see Twins; a plan's subgraph on the
// configuration the plan chose, moved to its class's first processor).
// Subgraphs a processor cannot run, and duplicates, are left out. The
// order is deterministic: models in workload order, plans last.
func Jobs(w *workload.Workload, pl *hw.Platform, opt JobOptions) ([]Job, error) {
	twins := Twins(pl)
	support := cost.NewAnalytic(pl)
	seen := map[string]int{} // job index by subgraph
	var jobs []Job
	planned := -1 // the job the last add that returned true added or updated
	// add appends a job unless it is unsupported or listed; added says
	// whether it did.
	add := func(name string, lg *graph.LayerGraph, set graph.LayerSet, cfg hw.Config, kind string) (added bool, err error) {
		cfg.Proc = twins[cfg.Proc]
		if _, err := support.Subgraph(lg, set, cfg); err != nil {
			if errors.Is(err, cost.ErrUnsupported) {
				return false, nil
			}
			return false, fmt.Errorf("profile: model %s: layers %s: %w", name, set.Key(), err)
		}
		ins, err := SubgraphInputs(lg, set)
		if err != nil {
			return false, fmt.Errorf("profile: model %s: %w", name, err)
		}
		k := fmt.Sprintf("%s|%s|%s|%s", ModelID(lg.Model), set.Key(), cfg, ShapesKey(ins))
		if i, ok := seen[k]; ok {
			// A plan's subgraph listed before as a layer or chunk (a whole
			// model) becomes a plan job, so that it gets its co-run profile.
			if kind == KindPlan && jobs[i].Kind != KindPlan {
				jobs[i].Kind = KindPlan
				planned = i
				return true, nil
			}
			return false, nil
		}
		seen[k] = len(jobs)
		planned = len(jobs)
		jobs = append(jobs, Job{Model: name, LG: lg, Set: set, Config: cfg, Kind: kind, Inputs: ins})
		return true, nil
	}
	var configs []hw.Config
	for i := range pl.Processors {
		if twins[i] == i {
			configs = append(configs, pl.Configs(i)...)
		}
	}
	rng := rand.New(rand.NewSource(opt.Seed))
	for _, m := range w.Models {
		lg := m.Layers
		if lg == nil {
			return nil, fmt.Errorf("profile: model %s is not loaded", m.Name)
		}
		n := len(lg.Layers)
		for _, cfg := range configs {
			if !m.Allows(cfg.DType) {
				continue // the planner never runs it so
			}
			for l := 0; l < n; l++ {
				if _, err := add(m.Name, lg, graph.LayerSet{l}, cfg, KindLayer); err != nil {
					return nil, err
				}
			}
		}
		for _, set := range chunks(rng, n, opt.Chunks) {
			for _, cfg := range configs {
				if !m.Allows(cfg.DType) {
					continue
				}
				if _, err := add(m.Name, lg, set, cfg, KindChunk); err != nil {
					return nil, err
				}
			}
		}
	}
	sharers := pl.Sharers()
	shares := func(a, b int) bool { return sharesAny(sharers[a], sharers[b]) }
	for _, p := range opt.Plans {
		// placed are the plan's subgraphs with their planned processor;
		// index is the job each added (-1: listed before or unsupported).
		type placed struct {
			proc, index int
			job         Job
		}
		pjs, err := planJobs(w, pl, p)
		if err != nil {
			return nil, err
		}
		var subs []placed
		for _, pj := range pjs {
			added, err := add(pj.Model, pj.LG, pj.Set, pj.Config, KindPlan)
			if err != nil {
				return nil, err
			}
			pc := placed{proc: pj.Config.Proc, index: -1, job: pj}
			if added {
				pc.index = planned
			}
			subs = append(subs, pc)
		}
		for _, s := range subs {
			if s.index < 0 {
				continue
			}
			for _, o := range subs {
				if o.proc != s.proc && shares(o.proc, s.proc) {
					j := &jobs[s.index]
					if j.Beside == nil {
						j.Beside = map[string][]Job{}
					}
					// s is measured on its twin: a neighbour planned on
					// the twin runs on s's own processor instead.
					on := o.proc
					if on == twins[s.proc] {
						on = s.proc
					}
					name := pl.Processors[on].Name
					j.Beside[name] = append(j.Beside[name], o.job)
				}
			}
		}
	}
	return jobs, nil
}

// chunks picks k runs of consecutive layer IDs out of n (IDs are in a
// topological order, so such a run is convex): the whole model first, then
// runs of log-uniform lengths from 2 layers up.
func chunks(rng *rand.Rand, n, k int) []graph.LayerSet {
	if k <= 0 || n < 2 {
		return nil
	}
	out := []graph.LayerSet{graph.Range(0, n)}
	for len(out) < k && n > 2 {
		length := int(math.Round(math.Exp(rng.Float64() * math.Log(float64(n-1)))))
		length = min(max(length, 2), n-1)
		from := rng.Intn(n - length + 1)
		out = append(out, graph.Range(from, from+length))
	}
	return out
}

// Profiler measures jobs on a device and stores the results.
type Profiler struct {
	Device Device
	Store  *Store
	// Warmup and Reps per measurement (Reps ≥ 1), and Cold runs after
	// evicting the caches (MeasureRequest.Cold).
	Warmup, Reps, Cold int
	// Idle runs, for a plan's subgraphs only (KindPlan): timed after
	// evicting the caches and idling (MeasureRequest.Idle), so that the
	// estimator can charge a subgraph that starts on an idle processor
	// what waking it costs (Estimator.HandOff).
	Idle int
	// Force measures again what the store already holds.
	Force bool
	// Corun adds the co-run profile to each plan subgraph's measurement
	// (see MeasureCorun): beside the streaming kernel at CorunDuties on
	// every neighbour, and beside the plan's subgraphs there.
	Corun bool
	// Cycles are the plans' cycles to time after the jobs (PlanCycles),
	// CycleRuns timed rounds each (after Warmup untimed ones; none when
	// 0), which set their subgraphs' cycle figures (Timing.Cycle). A
	// device that is not a CycleMeasurer, or says it does not take
	// "cycle" (FieldTaker), gets none: Summary.CycleNote says so.
	Cycles    []Cycle
	CycleRuns int
	// Progress, when not nil, is called after each job (skipped ones too).
	Progress func(done, total int, j Job)
}

// Summary counts what Run did.
type Summary struct {
	Jobs, Skipped, Measured, Failed int
	// Coruns counts the co-run profiles stored.
	Coruns int
	// Cycled counts the subgraphs given a cycle figure, CycleSteps the
	// steps of the cycles timed; CycleNote says why cycles were not
	// timed, or one failed (empty when all went well).
	Cycled, CycleSteps int
	CycleNote          string
	// Failures holds the first few failures' messages.
	Failures []string
	// Device is the device's name.
	Device  string
	Elapsed time.Duration
}

// Key is the store key of a job measured on a device.
func (j Job) Key(device string, pl *hw.Platform) Key {
	return Key{Device: device, Model: ModelID(j.LG.Model), Layers: j.Set.Key(),
		Processor: pl.Processors[j.Config.Proc].Name, Backend: j.Config.Backend, DType: j.Config.DType.String(),
		Shapes: ShapesKey(j.Inputs)}
}

// Run measures the jobs that the store lacks for the device (all of them
// with Force) one after another and stores each result as it comes, so an
// interrupted run keeps what it measured. A subgraph that cannot be
// exported or run is stored with its error and counted as failed; the run
// goes on. An error with a ModelFailed() bool method that returns false (a
// device or link fault, as package agent reports) stops the run. It stops early, with ctx's error, when ctx ends. The jobs'
// processors are looked up by name on pl, the platform they were made for.
func (p *Profiler) Run(ctx context.Context, pl *hw.Platform, jobs []Job) (Summary, error) {
	start := time.Now()
	if p.Reps < 1 {
		return Summary{}, fmt.Errorf("profile: reps %d: want at least 1", p.Reps)
	}
	if p.Cold < 0 {
		return Summary{}, fmt.Errorf("profile: cold runs %d: want 0 or more", p.Cold)
	}
	if p.Idle < 0 {
		return Summary{}, fmt.Errorf("profile: idle runs %d: want 0 or more", p.Idle)
	}
	info, err := p.Device.Info(ctx)
	if err != nil {
		return Summary{}, fmt.Errorf("profile: device: %w", err)
	}
	s := Summary{Jobs: len(jobs), Device: info.Name}
	if err := p.checkFields(info.Name, jobs); err != nil {
		return s, err
	}
	if err := p.Store.PutDevice(info.Name, pl.Name, info.ORTVersion); err != nil {
		return s, err
	}
	hasCorun := map[Key]bool{}
	if p.Corun {
		cs, err := p.Store.Coruns(info.Name)
		if err != nil {
			return s, err
		}
		for _, c := range cs {
			hasCorun[c.Key] = true
		}
	}
	analytic := cost.NewAnalytic(pl)
	for i, j := range jobs {
		if err := ctx.Err(); err != nil {
			s.Elapsed = time.Since(start)
			return s, err
		}
		k := j.Key(info.Name, pl)
		if !p.Force {
			// A stored measurement without the cold or idle runs asked
			// for is measured again.
			if r, ok, err := p.Store.Get(k); err != nil {
				return s, err
			} else if ok && (r.Error != "" || (p.Cold == 0 || r.ColdReps > 0) && (p.idleRuns(j) == 0 || r.IdleReps > 0)) && !(p.wantsCorun(j) && r.Error == "" && !hasCorun[k]) {
				s.Skipped++
				p.progress(i+1, len(jobs), j)
				continue
			}
		}
		rec := Record{Key: k, ModelName: j.Model, ORTVersion: info.ORTVersion}
		t, conds, err := p.measure(ctx, pl, j, k)
		if err != nil {
			if ctx.Err() != nil {
				s.Elapsed = time.Since(start)
				return s, ctx.Err()
			}
			var df deviceFault
			if errors.As(err, &df) && !df.ModelFailed() {
				s.Elapsed = time.Since(start)
				return s, fmt.Errorf("profile: device %s: %w", info.Name, err)
			}
			rec.Error = err.Error()
			s.Failed++
			if len(s.Failures) < 5 {
				s.Failures = append(s.Failures, fmt.Sprintf("%s layers %s on %s: %v", j.Model, j.Set.Key(), k.Processor, err))
			}
		} else {
			rec.Timing = t
			s.Measured++
		}
		if err := p.Store.Put(rec); err != nil {
			return s, err
		}
		if err == nil && len(conds) > 0 && len(t.Corun) == len(conds) {
			c := corunProfile(pl, analytic, j, k, t, conds)
			if err := p.Store.PutCorun(c); err != nil {
				return s, err
			}
			s.Coruns++
		}
		p.progress(i+1, len(jobs), j)
	}
	err = p.runCycles(ctx, info.Name, pl, &s)
	s.Elapsed = time.Since(start)
	return s, err
}

// deviceFault is an error that tells the subgraph's faults (ModelFailed)
// from the device's or the link's, as package agent's errors do; Run stops
// on the latter instead of recording every subgraph as failed.
type deviceFault interface {
	error
	ModelFailed() bool
}

func (p *Profiler) progress(done, total int, j Job) {
	if p.Progress != nil {
		p.Progress(done, total, j)
	}
}

func (p *Profiler) measure(ctx context.Context, pl *hw.Platform, j Job, k Key) (Timing, []corunCond, error) {
	model, err := onnx.ExportSubgraph(j.LG, j.Set)
	if err != nil {
		return Timing{}, nil, err
	}
	var conds []corunCond
	if p.wantsCorun(j) {
		if conds, err = corunConditions(pl, j, k.Processor); err != nil {
			return Timing{}, nil, err
		}
	}
	req := MeasureRequest{Model: model, Inputs: j.Inputs, Processor: k.Processor,
		Backend: k.Backend, DType: k.DType, Warmup: p.Warmup, Reps: p.Reps, Cold: p.Cold, Idle: p.idleRuns(j)}
	for _, c := range conds {
		req.Corun = append(req.Corun, c.CorunCondition)
	}
	t, err := p.Device.Measure(ctx, req)
	return t, conds, err
}

// checkFields stops a run before it starts when the device says it does
// not take an optional field the jobs will ask for (see FieldTaker), so
// that an older agent fails at once, not after every layer and chunk.
func (p *Profiler) checkFields(device string, jobs []Job) error {
	ft, ok := p.Device.(FieldTaker)
	if !ok {
		return nil
	}
	asks := map[string]bool{"cold": p.Cold > 0}
	for _, j := range jobs {
		asks["idle"] = asks["idle"] || p.idleRuns(j) > 0
		asks["corun"] = asks["corun"] || p.wantsCorun(j)
	}
	for _, f := range []struct{ field, what, flag string }{
		{"cold", "cold runs", "--cold 0"}, {"idle", "idle runs", "--idle 0"}, {"corun", "co-run conditions", "--corun=false"},
	} {
		if takes, known := ft.Takes(f.field); asks[f.field] && known && !takes {
			return fmt.Errorf("profile: device %s does not take %s: update its agent, or profile with %s", device, f.what, f.flag)
		}
	}
	return nil
}

// idleRuns is the number of idle runs the job gets: Idle for a plan's
// subgraph when there are cold runs (the wake-up is the idle figure above
// the cold one), none for the calibration's layers and chunks.
func (p *Profiler) idleRuns(j Job) int {
	if j.Kind == KindPlan && p.Cold > 0 {
		return p.Idle
	}
	return 0
}

// wantsCorun reports whether the job gets a co-run profile: a plan's
// subgraph, when Corun is on.
func (p *Profiler) wantsCorun(j Job) bool { return p.Corun && j.Kind == KindPlan }

// KindCount is how many jobs of one kind a list holds.
type KindCount struct {
	Kind  string
	Count int
}

// CountKinds counts jobs per kind, sorted by kind, for reports.
func CountKinds(jobs []Job) []KindCount {
	counts := map[string]int{}
	for _, j := range jobs {
		counts[j.Kind]++
	}
	out := make([]KindCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, KindCount{k, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}
