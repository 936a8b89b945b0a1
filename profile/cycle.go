package profile

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

// The cycle figure: a subgraph's time inside its plan.
//
// A cold figure (Timing.Cold) is a subgraph's time after the caches were
// emptied. In a plan, what ran on the processors between two runs of a
// subgraph is the plan's other subgraphs, and when the plan's weights and
// activations together fit in the shared cache, much of the subgraph's
// own stays there: on the 2-core host the held-out face plan's small
// subgraphs ran at 0.26–0.66 of their cold figures in a real run, and the
// camera group was over-predicted by 10–22 % in every series (README,
// "Slow spells"). Which part stays depends on the plan, not on the
// subgraph, so no per-subgraph figure taken alone can say it.
//
// A cycle reproduces it: the plan's subgraphs run one after another, each
// on the processor the plan put it on, in the plan's order (models in
// plan order, a model's subgraphs in its order), round after round, a
// round starting every period of the workload's most frequent group (the
// rest of the period idle), as its requests arrive. Every run after the
// first rounds follows the plan's other subgraphs and the idle time, as
// it does in a steady run of the plan, and the median of a subgraph's
// timed runs is its cycle figure (Timing.Cycle), which the estimator
// answers with before the cold one. The idle time matters: on a virtual
// machine the host's other tenants use the caches while the guest idles,
// and on the eighth session's host a cycle run back to back predicted the
// held-out face plan 15–58 % short, where its cold figures were −30 to
// +22 % off. What a cycle leaves out the estimator adds as
// before: the runtime's hand-off between dependent subgraphs, the wake-up
// of a processor that idled (Estimator.HandOff), and the contention of
// subgraphs that overlap in time (the cycle runs one at a time).

// CycleStep is one subgraph of a cycle, on the processor it runs on.
type CycleStep struct {
	Model                     []byte
	Inputs                    []TensorSpec
	Processor, Backend, DType string
}

// CycleRequest asks a device to time a plan's subgraphs in its cycle:
// Warmup untimed rounds, then Cycles timed ones, each round running every
// step once, in order, and starting Period after the one before began
// (at once when that one took longer; 0: back to back).
type CycleRequest struct {
	Steps          []CycleStep
	Warmup, Cycles int
	Period         time.Duration
}

// MaxCyclePeriod bounds a cycle's period.
const MaxCyclePeriod = 10 * time.Second

// MaxCycleSteps bounds a cycle's steps.
const MaxCycleSteps = 4096

// Validate checks a request's fields (not the models themselves).
func (r CycleRequest) Validate() error {
	switch {
	case len(r.Steps) == 0:
		return fmt.Errorf("profile: cycle: no steps")
	case len(r.Steps) > MaxCycleSteps:
		return fmt.Errorf("profile: cycle: %d steps: want at most %d", len(r.Steps), MaxCycleSteps)
	case r.Cycles < 1:
		return fmt.Errorf("profile: cycle: cycles %d: want at least 1", r.Cycles)
	case r.Warmup < 0:
		return fmt.Errorf("profile: cycle: warmup %d is negative", r.Warmup)
	case r.Period < 0 || r.Period > MaxCyclePeriod:
		return fmt.Errorf("profile: cycle: period %v: want 0 to %v", r.Period, MaxCyclePeriod)
	}
	for i, s := range r.Steps {
		req := MeasureRequest{Model: s.Model, Inputs: s.Inputs, Processor: s.Processor, Backend: s.Backend, DType: s.DType, Reps: 1}
		if err := req.Validate(); err != nil {
			return fmt.Errorf("profile: cycle: step %d: %s", i, strings.TrimPrefix(err.Error(), "profile: measure: "))
		}
	}
	return nil
}

// CycleMeasurer is a Device that can time a plan's cycle (Local; an agent
// from 1.2.0, whose MeasureFields list "cycle"). MeasureCycle answers the
// median of each step's timed runs, in step order.
type CycleMeasurer interface {
	MeasureCycle(ctx context.Context, req CycleRequest) ([]time.Duration, error)
}

var _ CycleMeasurer = (*Local)(nil)

// ErrNoCycles is what a CycleMeasurer's error wraps when its device turns
// out not to time cycles (an agent older than the endpoint): the profiler
// notes it and goes on.
var ErrNoCycles = errors.New("the device does not time plans in their cycle")

// MeasureCycle times the request's cycle on this machine. Each processor
// of the steps gets its own thread, pinned to its cores, that creates its
// steps' sessions (so that ONNX Runtime's threads inherit the pinning) and
// runs them when the driver hands them over, one at a time. Each timed
// round is one phase of the speed guard on every core the steps use: it
// waits for them to be at normal speed before, and a round that ends in a
// slow spell is timed again.
func (l *Local) MeasureCycle(ctx context.Context, req CycleRequest) ([]time.Duration, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	type stepOn struct {
		proc  int
		names []string
		outs  []string
		data  []*graph.Data
	}
	steps := make([]stepOn, len(req.Steps))
	var procs []int
	rng := rand.New(rand.NewSource(1))
	for i, s := range req.Steps {
		proc, err := l.pl.Find(s.Processor)
		if err != nil {
			return nil, fmt.Errorf("profile: cycle: step %d: %w", i, err)
		}
		pr := l.pl.Processors[proc]
		if err := localConfig(s.Backend, s.DType); err != nil {
			return nil, fmt.Errorf("profile: cycle: step %d on %s: %w", i, pr.Name, err)
		}
		outs, err := graphOutputs(s.Model)
		if err != nil {
			return nil, fmt.Errorf("profile: cycle: step %d on %s: %w", i, pr.Name, err)
		}
		st := stepOn{proc: int(proc), outs: outs}
		for _, in := range s.Inputs {
			st.names = append(st.names, in.Name)
			st.data = append(st.data, ort.RandomData(in.DType, in.Shape, rng))
		}
		steps[i] = st
		if !slices.Contains(procs, int(proc)) {
			procs = append(procs, int(proc))
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()

	// One worker per processor. A job is a step to run (timed), or a
	// speed check of the worker's core (step -1).
	type job struct {
		step int
		done chan<- jobDone
	}
	workers := map[int]chan job{}
	ready := make(chan error, len(procs))
	stop := make(chan struct{})
	exited := make(chan struct{}, len(procs))
	for _, p := range procs {
		pr := l.pl.Processors[p]
		jobs := make(chan job)
		workers[p] = jobs
		go func() {
			defer func() { exited <- struct{}{} }()
			release, err := pinThread(pr.Cores)
			if err != nil {
				ready <- fmt.Errorf("profile: cycle: pin %s to cores %v: %w", pr.Name, pr.Cores, err)
				return
			}
			defer release()
			threads := max(len(pr.Cores), 1)
			sessions := map[int]*ort.Session{}
			defer func() {
				for _, s := range sessions {
					s.Close()
				}
			}()
			for i, st := range steps {
				if st.proc != p {
					continue
				}
				s, err := l.rt.NewSession(req.Steps[i].Model, st.names, st.outs, ort.SessionOptions{IntraOpThreads: threads, InterOpThreads: 1})
				if err != nil {
					ready <- fmt.Errorf("profile: cycle: step %d on %s: %w", i, pr.Name, err)
					return
				}
				sessions[i] = s
			}
			ready <- nil
			core := -1
			if len(pr.Cores) > 0 {
				core = pr.Cores[0]
			}
			for {
				select {
				case <-stop:
					return
				case j := <-jobs:
					if j.step < 0 {
						j.done <- jobDone{fast: l.speed.check(core)}
						continue
					}
					start := time.Now()
					_, err := sessions[j.step].Run(steps[j.step].data)
					d := time.Since(start)
					if err != nil {
						err = fmt.Errorf("profile: cycle: step %d on %s: %w", j.step, pr.Name, err)
					}
					j.done <- jobDone{d: d, err: err}
				}
			}
		}()
	}
	shutdown := func() {
		close(stop)
		for range procs {
			<-exited
		}
	}
	for range procs {
		if err := <-ready; err != nil {
			shutdown()
			return nil, err
		}
	}
	defer shutdown()

	done := make(chan jobDone, 1)
	var began time.Time
	// pace waits until the period since the last round began is over.
	pace := func() error {
		if !began.IsZero() && req.Period > 0 {
			if rest := req.Period - time.Since(began); rest > 0 {
				if err := sleepCtx(ctx, rest); err != nil {
					return err
				}
			}
		}
		began = time.Now()
		return nil
	}
	round := func(times []time.Duration) error {
		for i, st := range steps {
			if err := ctx.Err(); err != nil {
				return err
			}
			workers[st.proc] <- job{step: i, done: done}
			r := <-done
			if r.err != nil {
				return r.err
			}
			if times != nil {
				times[i] = r.d
			}
		}
		return nil
	}
	checkCore := func(p int) bool {
		workers[p] <- job{step: -1, done: done}
		return (<-done).fast
	}
	for w := 0; w < req.Warmup; w++ {
		if err := pace(); err != nil {
			return nil, err
		}
		if err := round(nil); err != nil {
			return nil, err
		}
	}
	samples := make([][]time.Duration, len(steps))
	times := make([]time.Duration, len(steps))
	for c := 0; c < req.Cycles; c++ {
		// The guard's checks before the round come after the idle
		// time, as a request's wake-up does (which Estimator.HandOff
		// charges apart).
		if err := pace(); err != nil {
			return nil, err
		}
		if err := l.speed.phaseOn(ctx, procs, checkCore, func() error { return round(times) }); err != nil {
			return nil, err
		}
		for i, d := range times {
			samples[i] = append(samples[i], d)
		}
	}
	out := make([]time.Duration, len(steps))
	for i, s := range samples {
		out[i] = Summarize(s).Median
	}
	return out, nil
}

type jobDone struct {
	d    time.Duration
	err  error
	fast bool
}

// Cycle is one plan's cycle: its subgraphs in the plan's order, each as a
// job (the subgraph measured on its processor class's first processor,
// whose key its figure is stored under) and the processor the plan put it
// on, which the cycle runs it on.
type Cycle struct {
	Plan  string
	Steps []CycleJob
	// Period is the shortest period of the workload's groups: a round
	// starts every Period (CycleRequest.Period).
	Period time.Duration
}

// CycleJob is one step of a Cycle.
type CycleJob struct {
	Job Job
	// On is the planned processor.
	On hw.ProcID
}

// PlanCycles lists the cycles of plans for workload w on platform pl: for
// each plan, its subgraphs in the plan's order (see Cycle).
func PlanCycles(w *workload.Workload, pl *hw.Platform, plans []*plan.Plan) ([]Cycle, error) {
	twins := Twins(pl)
	var out []Cycle
	for _, p := range plans {
		pjs, err := planJobs(w, pl, p)
		if err != nil {
			return nil, err
		}
		c := Cycle{Plan: p.Planner, Period: shortestPeriod(w)}
		for _, j := range pjs {
			on := j.Config.Proc
			j.Config.Proc = twins[on]
			c.Steps = append(c.Steps, CycleJob{Job: j, On: on})
		}
		out = append(out, c)
	}
	return out, nil
}

// shortestPeriod is the period of the workload's most frequent group (0
// when it has none), at most MaxCyclePeriod.
func shortestPeriod(w *workload.Workload) time.Duration {
	var p time.Duration
	for _, g := range w.Groups {
		if g.Period > 0 && (p == 0 || g.Period < p) {
			p = g.Period
		}
	}
	return min(p, MaxCyclePeriod)
}

// planJobs lists a plan's subgraphs as plan jobs on the configurations the
// plan chose (its processors, not their twins), in the plan's order.
func planJobs(w *workload.Workload, pl *hw.Platform, p *plan.Plan) ([]Job, error) {
	var out []Job
	for _, mp := range p.Models {
		m := w.Model(mp.Model)
		if m == nil || m.Layers == nil {
			return nil, fmt.Errorf("profile: plan %s: model %q is not in the workload", p.Planner, mp.Model)
		}
		for _, sg := range mp.Subgraphs {
			cfg, err := sg.Config(pl)
			if err != nil {
				return nil, fmt.Errorf("profile: plan %s: model %s: %w", p.Planner, mp.Model, err)
			}
			ins, err := SubgraphInputs(m.Layers, sg.Layers)
			if err != nil {
				return nil, fmt.Errorf("profile: model %s: %w", m.Name, err)
			}
			out = append(out, Job{Model: m.Name, LG: m.Layers, Set: sg.Layers, Config: cfg, Kind: KindPlan, Inputs: ins})
		}
	}
	return out, nil
}

// runCycles times p.Cycles (see Profiler.Cycles) and stores each step's
// figure under its job's key. A cycle whose steps all have a cycle figure
// already is skipped (unless Force); a step whose measurement failed, or
// is missing, is left out of its cycle (it could not run in it). A cycle
// the device fails is noted in s.CycleNote, and the run goes on, unless
// the failure is the device's or the link's (deviceFault), or ctx ended.
func (p *Profiler) runCycles(ctx context.Context, device string, pl *hw.Platform, s *Summary) error {
	if p.CycleRuns <= 0 || len(p.Cycles) == 0 {
		return nil
	}
	cm, ok := p.Device.(CycleMeasurer)
	if ft, isFT := p.Device.(FieldTaker); ok && isFT {
		if takes, known := ft.Takes("cycle"); known && !takes {
			ok = false
		}
	}
	if !ok {
		s.CycleNote = fmt.Sprintf("device %s does not time plans in their cycle (an agent before 1.2.0): its plan subgraphs keep their cold figures", device)
		return nil
	}
	for _, c := range p.Cycles {
		var req CycleRequest
		var keys []Key
		all := true
		for _, st := range c.Steps {
			k := st.Job.Key(device, pl)
			r, found, err := p.Store.Get(k)
			if err != nil {
				return err
			}
			if !found || r.Error != "" {
				continue
			}
			all = all && r.CycleReps > 0
			model, err := onnx.ExportSubgraph(st.Job.LG, st.Job.Set)
			if err != nil {
				continue // its measurement would have failed too
			}
			req.Steps = append(req.Steps, CycleStep{Model: model, Inputs: st.Job.Inputs, Processor: pl.Processors[st.On].Name,
				Backend: k.Backend, DType: k.DType})
			keys = append(keys, k)
		}
		if len(keys) == 0 || all && !p.Force {
			continue
		}
		req.Warmup, req.Cycles, req.Period = max(p.Warmup, 1), p.CycleRuns, c.Period
		meds, err := cm.MeasureCycle(ctx, req)
		if errors.Is(err, ErrNoCycles) {
			s.CycleNote = fmt.Sprintf("device %s: %v: its plan subgraphs keep their cold figures", device, err)
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var df deviceFault
			if errors.As(err, &df) && !df.ModelFailed() {
				return fmt.Errorf("profile: device %s: %w", device, err)
			}
			s.CycleNote = fmt.Sprintf("plan %s: cycle of %d subgraphs failed: %v", c.Plan, len(keys), err)
			continue
		}
		if len(meds) != len(keys) {
			return fmt.Errorf("profile: device %s: cycle of plan %s: %d figures for %d subgraphs", device, c.Plan, len(meds), len(keys))
		}
		s.CycleSteps += len(keys)
		seen := map[Key]bool{}
		for i, k := range keys {
			if seen[k] || meds[i] <= 0 {
				continue // a subgraph twice in one plan keeps its first step's figure
			}
			seen[k] = true
			if err := p.Store.PutCycle(k, meds[i], req.Cycles); err != nil {
				return err
			}
			s.Cycled++
		}
	}
	return nil
}
