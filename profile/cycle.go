package profile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
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
// camera group was over-predicted by 10–22 % in every series
// (docs/results/contention-log.md, "Slow spells"). Which part stays depends on the
// plan, not on the subgraph, so no per-subgraph figure taken alone can
// say it.
//
// A cycle reproduces it: the plan's subgraphs run one at a time, each on
// the processor the plan put it on, round after round. A round is a time
// in which every group's requests arrive a whole number of times at about
// their rates (host_ocr_voice: 400 ms, two ocr requests and five voice
// ones), the requests evenly spread in it, each running its group's
// subgraphs in the plan's order (models in plan order, a model's subgraphs
// in its order) when it arrives, the rest of the round idle. Every run
// after the first rounds follows what the workload runs before it, as in
// a steady run of the plan, and the median of a subgraph's timed runs is
// its cycle figure (Timing.Cycle), which the estimator answers with before
// the cold one. Both the rates and the idle time matter. On the eighth
// session's host a cycle run back to back predicted the held-out face
// plan 15–58 % short (its cold figures −30 to +22 %): on a virtual machine
// the host's other tenants use the caches while the guest idles. And a
// cycle that ran every group once a round (paced at the most frequent
// group's period) put host_ocr_voice's ocr chain 4–26 % short, where a run
// has two and a half voice requests for each ocr one. What a cycle leaves
// out the estimator adds as
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
// Warmup untimed rounds, then Cycles timed ones, each round starting
// Period after the one before began (at once when that one took longer;
// 0: back to back). A round runs Order, one run at a time; without an
// Order it runs every step once, in step order.
type CycleRequest struct {
	Steps          []CycleStep
	Warmup, Cycles int
	Period         time.Duration
	// Order is a round's runs: each a step, not started before At after
	// the round began (nor before the run before it ended). At does not
	// decrease along Order and is less than Period (0 when Period is);
	// every step runs at least once a round. A step's figure is the
	// median of all its timed runs.
	Order []CycleRun
}

// CycleRun is one run of a round: step Step, released At after the round
// began (a request's arrival).
type CycleRun struct {
	Step int
	At   time.Duration
}

// ArrivalsField is the measure field (FieldTaker) of a device whose
// cycles take an Order: agents from 1.3.0.
const ArrivalsField = "arrivals"

// MaxCycleRuns bounds a round's runs (CycleRequest.Order).
const MaxCycleRuns = 4 * MaxCycleSteps

// order is the round's runs: r.Order, or every step once at 0.
func (r CycleRequest) order() []CycleRun {
	if len(r.Order) > 0 {
		return r.Order
	}
	out := make([]CycleRun, len(r.Steps))
	for i := range out {
		out[i].Step = i
	}
	return out
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
	if len(r.Order) > MaxCycleRuns {
		return fmt.Errorf("profile: cycle: %d runs a round: want at most %d", len(r.Order), MaxCycleRuns)
	}
	if len(r.Order) > 0 {
		runs := make([]int, len(r.Steps))
		var at time.Duration
		for i, o := range r.Order {
			switch {
			case o.Step < 0 || o.Step >= len(r.Steps):
				return fmt.Errorf("profile: cycle: order[%d]: step %d: want 0 to %d", i, o.Step, len(r.Steps)-1)
			case o.At < at:
				return fmt.Errorf("profile: cycle: order[%d]: at %v is before the run before it (%v)", i, o.At, at)
			case o.At > 0 && o.At >= r.Period:
				return fmt.Errorf("profile: cycle: order[%d]: at %v: want less than the period (%v)", i, o.At, r.Period)
			}
			at = o.At
			runs[o.Step]++
		}
		if i := slices.Index(runs, 0); i >= 0 {
			return fmt.Errorf("profile: cycle: step %d never runs in the order", i)
		}
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

	order := req.order()
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
		return nil
	}
	// round runs the order once, each run at its release; times (nil
	// in warm-up rounds) gets each run's time.
	round := func(times []time.Duration) error {
		began = time.Now()
		for i, o := range order {
			if err := ctx.Err(); err != nil {
				return err
			}
			if rest := o.At - time.Since(began); o.At > 0 && rest > 0 {
				if err := sleepCtx(ctx, rest); err != nil {
					return err
				}
			}
			workers[steps[o.Step].proc] <- job{step: o.Step, done: done}
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
	times := make([]time.Duration, len(order))
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
			samples[order[i].Step] = append(samples[order[i].Step], d)
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
	// Period is a round's length (CycleRequest.Period): a time in which
	// every group's requests arrive a whole number of times, near their
	// rates (see workloadRound).
	Period time.Duration
	// Order is a round's runs (CycleRequest.Order; Step indexes Steps):
	// each group's requests at their arrivals in the round, evenly spread,
	// a request running the steps of the group's models in plan order.
	Order []CycleRun
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
	period, arrivals := workloadRound(w)
	var out []Cycle
	for _, p := range plans {
		pjs, err := planJobs(w, pl, p)
		if err != nil {
			return nil, err
		}
		c := Cycle{Plan: p.Planner, Period: period}
		for _, j := range pjs {
			on := j.Config.Proc
			j.Config.Proc = twins[on]
			c.Steps = append(c.Steps, CycleJob{Job: j, On: on})
		}
		c.Order = cycleOrder(w, c.Steps, period, arrivals)
		out = append(out, c)
	}
	return out, nil
}

// cycleOrder lists a round's runs: group g's arrivals[g] requests at
// i·period/arrivals[g], all the groups' requests in the order of their
// arrivals (a tie in group order), each running the steps of its group's
// models in step (plan) order. A step no group runs runs once at 0, so
// that every step has a figure.
func cycleOrder(w *workload.Workload, steps []CycleJob, period time.Duration, arrivals []int) []CycleRun {
	type req struct {
		at    time.Duration
		group int
	}
	var reqs []req
	for g, n := range arrivals {
		for i := 0; i < n; i++ {
			reqs = append(reqs, req{at: time.Duration(int64(period) * int64(i) / int64(n)), group: g})
		}
	}
	slices.SortStableFunc(reqs, func(a, b req) int { return cmp.Compare(a.at, b.at) })
	ran := make([]bool, len(steps))
	runs := make([][]int, len(w.Groups)) // each group's steps, in step order
	for g, grp := range w.Groups {
		for i, st := range steps {
			if slices.Contains(grp.Models, st.Job.Model) {
				runs[g] = append(runs[g], i)
				ran[i] = true
			}
		}
	}
	var out []CycleRun
	for _, r := range reqs {
		for _, i := range runs[r.group] {
			out = append(out, CycleRun{Step: i, At: r.at})
		}
	}
	var lone []CycleRun
	for i, r := range ran {
		if !r {
			lone = append(lone, CycleRun{Step: i})
		}
	}
	return append(lone, out...)
}

// roundTolerance is how far a group's requests a round may be from its
// rate: a round is long enough that round(length/period) is within it of
// length/period for every group.
const roundTolerance = 0.1

// maxRound bounds a round's length: the rounds of a cycle are timed one by
// one as guard phases, and a longer round meets more slow spells.
const maxRound = time.Second

// workloadRound picks a cycle's round for w: the shortest multiple of the
// longest group period (at most maxRound, and at least one period) in
// which every group's requests, rounded to a whole number, are within
// roundTolerance of its rate (the closest such multiple when none is), and
// each group's requests in it (at least 1). host_ocr_voice's 200 and 80 ms
// give 400 ms, 2 and 5 requests; host_face_voice's 66.7 and 80 ms give
// 320 ms, 5 and 4.
func workloadRound(w *workload.Workload) (time.Duration, []int) {
	var long time.Duration
	for _, g := range w.Groups {
		long = max(long, min(g.Period, MaxCyclePeriod))
	}
	if long <= 0 {
		return 0, make([]int, len(w.Groups))
	}
	best, bestErr := long, math.Inf(1)
	for k := 1; k == 1 || time.Duration(k)*long <= maxRound; k++ {
		h := time.Duration(k) * long
		worst := 0.0
		for _, g := range w.Groups {
			_, off := requestsIn(h, g.Period)
			worst = max(worst, off)
		}
		if worst < bestErr {
			best, bestErr = h, worst
		}
		if worst <= roundTolerance {
			break
		}
	}
	arrivals := make([]int, len(w.Groups))
	for i, g := range w.Groups {
		arrivals[i], _ = requestsIn(best, g.Period)
	}
	return best, arrivals
}

// requestsIn is how many requests of a group with period p a round of
// length h holds (h/p rounded, at least 1; 1 without a period), and how
// far that is from h/p, relative to it (0 without a period).
func requestsIn(h, p time.Duration) (int, float64) {
	if p <= 0 {
		return 1, 0
	}
	x := float64(h) / float64(p)
	n := math.Max(1, math.Round(x))
	return int(n), math.Abs(n-x) / x
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
	// An agent before 1.3.0 times a round as every step once.
	arrivals := true
	if ft, isFT := p.Device.(FieldTaker); isFT {
		if takes, known := ft.Takes(ArrivalsField); known && !takes {
			arrivals = false
			s.CycleNote = fmt.Sprintf("device %s times a cycle's round as each plan subgraph once, not at its groups' arrivals (an agent before 1.3.0)", device)
		}
	}
	for _, c := range p.Cycles {
		var req CycleRequest
		var keys []Key
		all := true
		in := make([]int, len(c.Steps)) // c.Steps[i] is req.Steps[in[i]], or left out (-1)
		for i, st := range c.Steps {
			in[i] = -1
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
			in[i] = len(keys)
			keys = append(keys, k)
		}
		if len(keys) == 0 || all && !p.Force {
			continue
		}
		req.Warmup, req.Cycles, req.Period = max(p.Warmup, 1), p.CycleRuns, c.Period
		if arrivals {
			for _, o := range c.Order {
				if o.Step >= 0 && o.Step < len(in) && in[o.Step] >= 0 {
					req.Order = append(req.Order, CycleRun{Step: in[o.Step], At: o.At})
				}
			}
		}
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
