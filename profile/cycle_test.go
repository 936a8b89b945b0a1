package profile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/workload"
)

func TestCycleRequestValidate(t *testing.T) {
	step := CycleStep{Model: []byte{1}, Processor: "cpu0", Inputs: []TensorSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{1, 4}}}}
	for _, tc := range []struct {
		name string
		req  CycleRequest
		want string
	}{
		{"fine", CycleRequest{Steps: []CycleStep{step}, Cycles: 1}, ""},
		{"no steps", CycleRequest{Cycles: 1}, "no steps"},
		{"no cycles", CycleRequest{Steps: []CycleStep{step}}, "cycles 0: want at least 1"},
		{"negative warmup", CycleRequest{Steps: []CycleStep{step}, Cycles: 1, Warmup: -1}, "warmup -1 is negative"},
		{"negative period", CycleRequest{Steps: []CycleStep{step}, Cycles: 1, Period: -1}, "period -1ns: want 0 to 10s"},
		{"period too long", CycleRequest{Steps: []CycleStep{step}, Cycles: 1, Period: time.Minute}, "period 1m0s"},
		{"too many steps", CycleRequest{Steps: make([]CycleStep, MaxCycleSteps+1), Cycles: 1}, "want at most"},
		{"step without a model", CycleRequest{Steps: []CycleStep{step, {Processor: "cpu0"}}, Cycles: 1}, "step 1: empty model"},
		{"step without a processor", CycleRequest{Steps: []CycleStep{{Model: []byte{1}}}, Cycles: 1}, "step 0: no processor given"},
		{"step with an unshaped input", CycleRequest{Steps: []CycleStep{{Model: []byte{1}, Processor: "cpu0", Inputs: []TensorSpec{{Name: "x", Shape: graph.Shape{-1}}}}}, Cycles: 1}, `input "x": shape`},
		{"order", CycleRequest{Steps: []CycleStep{step, step}, Cycles: 1, Period: 80 * ms,
			Order: []CycleRun{{Step: 1}, {Step: 0, At: 10 * ms}, {Step: 1, At: 10 * ms}, {Step: 1, At: 79 * ms}}}, ""},
		{"order of an unknown step", CycleRequest{Steps: []CycleStep{step}, Cycles: 1, Order: []CycleRun{{Step: 0}, {Step: 1}}}, "order[1]: step 1: want 0 to 0"},
		{"order going back", CycleRequest{Steps: []CycleStep{step}, Cycles: 1, Period: 80 * ms, Order: []CycleRun{{Step: 0, At: 20 * ms}, {Step: 0, At: 10 * ms}}}, "order[1]: at 10ms is before the run before it (20ms)"},
		{"order past the period", CycleRequest{Steps: []CycleStep{step}, Cycles: 1, Period: 80 * ms, Order: []CycleRun{{Step: 0, At: 80 * ms}}}, "order[0]: at 80ms: want less than the period (80ms)"},
		{"order released without a period", CycleRequest{Steps: []CycleStep{step}, Cycles: 1, Order: []CycleRun{{Step: 0, At: ms}}}, "want less than the period (0s)"},
		{"order leaving a step out", CycleRequest{Steps: []CycleStep{step, step}, Cycles: 1, Order: []CycleRun{{Step: 1}}}, "step 0 never runs in the order"},
		{"order too long", CycleRequest{Steps: []CycleStep{step}, Cycles: 1, Order: make([]CycleRun, MaxCycleRuns+1)}, "runs a round: want at most"},
	} {
		err := tc.req.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", tc.name, err, tc.want)
		}
	}
}

const ms = time.Millisecond

// A round is the shortest multiple of the longest period in which every
// group's requests come out a whole number within 10 % of its rate.
func TestWorkloadRound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		periods  []time.Duration
		round    time.Duration
		arrivals []int
	}{
		{"host_ocr_voice", []time.Duration{200 * ms, 80 * ms}, 400 * ms, []int{2, 5}},
		{"host_face_voice", []time.Duration{time.Second / 15, 80 * ms}, 320 * ms, []int{5, 4}},
		{"one group", []time.Duration{80 * ms}, 80 * ms, []int{1}},
		{"same periods", []time.Duration{50 * ms, 50 * ms}, 50 * ms, []int{1, 1}},
		{"a multiple", []time.Duration{30 * ms, 90 * ms}, 90 * ms, []int{3, 1}},
		// 700 and 1000 ms: no multiple of 1 s up to the bound (1 s) does
		// better than 1.43 requests rounded to 1.
		{"bounded", []time.Duration{700 * ms, time.Second}, time.Second, []int{1, 1}},
		{"near a multiple", []time.Duration{70 * ms, 100 * ms}, 200 * ms, []int{3, 2}},
	} {
		w := &workload.Workload{}
		for i, p := range tc.periods {
			w.Groups = append(w.Groups, &workload.Group{Name: fmt.Sprint("g", i), Period: p})
		}
		round, arrivals := workloadRound(w)
		if round != tc.round || !slices.Equal(arrivals, tc.arrivals) {
			t.Errorf("%s: round %v with %v requests, want %v with %v", tc.name, round, arrivals, tc.round, tc.arrivals)
		}
	}
}

// A round's order: requests in arrival order (ties in group order), each
// running its group's steps in plan order; a step of no group runs once at
// the start.
func TestCycleOrder(t *testing.T) {
	w := &workload.Workload{Groups: []*workload.Group{
		{Name: "ocr", Models: []string{"det", "rec"}, Period: 200 * ms},
		{Name: "voice", Models: []string{"vad"}, Period: 80 * ms},
	}}
	steps := []CycleJob{{Job: Job{Model: "det"}}, {Job: Job{Model: "det"}}, {Job: Job{Model: "vad"}}, {Job: Job{Model: "rec"}}, {Job: Job{Model: "lone"}}}
	got := cycleOrder(w, steps, 400*ms, []int{2, 5})
	want := []CycleRun{{Step: 4},
		{0, 0}, {1, 0}, {3, 0}, {2, 0},
		{2, 80 * ms}, {2, 160 * ms},
		{0, 200 * ms}, {1, 200 * ms}, {3, 200 * ms},
		{2, 240 * ms}, {2, 320 * ms}}
	if !slices.Equal(got, want) {
		t.Errorf("order\n%v, want\n%v", got, want)
	}
	req := CycleRequest{Steps: make([]CycleStep, len(steps)), Period: 400 * ms, Order: got, Cycles: 1}
	for i := range req.Steps {
		req.Steps[i] = CycleStep{Model: []byte{1}, Processor: "cpu0"}
	}
	if err := req.Validate(); err != nil {
		t.Errorf("the order does not validate: %v", err)
	}
}

// splitPlan is a plan of the mel workload's one model in two halves, the
// first on cpu1 and the second on cpu0 of the host preset.
func splitPlan(t *testing.T, n int) *plan.Plan {
	t.Helper()
	return &plan.Plan{Planner: "split", Platform: "host", Models: []plan.ModelPlan{{Model: "mel", Subgraphs: []plan.Subgraph{
		{Layers: graph.Range(0, n/2), Processor: "cpu1", Backend: LocalBackend, DType: "float32"},
		{Layers: graph.Range(n/2, n), Processor: "cpu0", Backend: LocalBackend, DType: "float32"},
	}}}}
}

// A plan's cycle lists its subgraphs in the plan's order, each keyed on
// its processor's twin (where it is measured) and run on the planned one.
func TestPlanCycles(t *testing.T) {
	w := melWorkload(t)
	pl := twoCoreHost(t)
	n := len(w.Models[0].Layers.Layers)
	cs, err := PlanCycles(w, pl, []*plan.Plan{splitPlan(t, n)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || len(cs[0].Steps) != 2 || cs[0].Plan != "split" || cs[0].Period != 80*time.Millisecond {
		t.Fatalf("cycles %+v", cs)
	}
	if want := []CycleRun{{Step: 0}, {Step: 1}}; !slices.Equal(cs[0].Order, want) {
		t.Errorf("order %v, want %v", cs[0].Order, want)
	}
	first, second := cs[0].Steps[0], cs[0].Steps[1]
	if first.On != 1 || second.On != 0 || first.Job.Config.Proc != 0 || second.Job.Config.Proc != 0 {
		t.Errorf("steps on %d and %d, keyed on %d and %d; want on 1 and 0, both keyed on the twin 0",
			first.On, second.On, first.Job.Config.Proc, second.Job.Config.Proc)
	}
	if first.Job.Set.Key() != graph.Range(0, n/2).Key() || first.Job.Kind != KindPlan {
		t.Errorf("first step %s (%s)", first.Job.Set.Key(), first.Job.Kind)
	}
	bad := splitPlan(t, n)
	bad.Models[0].Model = "nope"
	if _, err := PlanCycles(w, pl, []*plan.Plan{bad}); err == nil || !strings.Contains(err.Error(), `model "nope" is not in the workload`) {
		t.Errorf("plan of an unknown model: %v", err)
	}
}

// cycleDevice is a device that times cycles by a script: each step's
// figure is 100 µs times its position plus one; err fails the cycle.
type cycleDevice struct {
	takerDevice
	cycles [][]CycleStep
	orders [][]CycleRun
	err    error
}

func (d *cycleDevice) MeasureCycle(_ context.Context, req CycleRequest) ([]time.Duration, error) {
	if d.err != nil {
		return nil, d.err
	}
	d.cycles = append(d.cycles, req.Steps)
	d.orders = append(d.orders, req.Order)
	out := make([]time.Duration, len(req.Steps))
	for i := range out {
		out[i] = time.Duration(i+1) * 100 * time.Microsecond
	}
	return out, nil
}

func (d *cycleDevice) Measure(_ context.Context, req MeasureRequest) (Timing, error) {
	d.measured++
	return Timing{Median: time.Millisecond, Reps: req.Reps, Cold: 2 * time.Millisecond, ColdReps: req.Cold}, nil
}

type linkFault struct{}

func (linkFault) Error() string     { return "link down" }
func (linkFault) ModelFailed() bool { return false }

// The profiler times each plan's cycle after its jobs, on the planned
// processors, stores the figures under the twins' keys, skips a cycle it
// has, leaves out a subgraph whose measurement failed, notes a device
// that cannot time cycles and stops on a device fault; the estimator
// answers with the cycle figure before the cold one.
func TestProfilerCycles(t *testing.T) {
	w := melWorkload(t)
	pl := twoCoreHost(t)
	n := len(w.Models[0].Layers.Layers)
	plans := []*plan.Plan{splitPlan(t, n)}
	jobs, err := Jobs(w, pl, JobOptions{Plans: plans})
	if err != nil {
		t.Fatal(err)
	}
	cycles, err := PlanCycles(w, pl, plans)
	if err != nil {
		t.Fatal(err)
	}
	st := tempStore(t)
	dev := &cycleDevice{takerDevice: takerDevice{pl: pl, fields: []string{"cold", "cycle", ArrivalsField}, known: true}}
	p := &Profiler{Device: dev, Store: st, Reps: 1, Cold: 1, Cycles: cycles, CycleRuns: 3}
	ctx := context.Background()
	sum, err := p.Run(ctx, pl, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cycled != 2 || sum.CycleSteps != 2 || sum.CycleNote != "" || len(dev.cycles) != 1 {
		t.Fatalf("summary %+v after %d cycles", sum, len(dev.cycles))
	}
	if got := dev.cycles[0]; got[0].Processor != "cpu1" || got[1].Processor != "cpu0" {
		t.Errorf("cycle ran on %s, %s; want the planned cpu1, cpu0", got[0].Processor, got[1].Processor)
	}
	if !slices.Equal(dev.orders[0], cycles[0].Order) {
		t.Errorf("cycle's order %v, want the plan's %v", dev.orders[0], cycles[0].Order)
	}
	for i, s := range cycles[0].Steps {
		r, ok, err := st.Get(s.Job.Key("remote", pl))
		want := time.Duration(i+1) * 100 * time.Microsecond
		if err != nil || !ok || r.Cycle != want || r.CycleReps != 3 {
			t.Errorf("step %d stored %+v, %v, %v; want cycle %v over 3", i, r, ok, err, want)
		}
	}
	// The estimator answers with the cycle figures.
	est := NewEstimator(st, "remote", cost.NewAnalytic(pl))
	if est.Err() != nil || est.Cycled() != 2 {
		t.Fatalf("estimator: %v, %d cycled", est.Err(), est.Cycled())
	}
	lg := w.Models[0].Layers
	cfg := hw.Config{Proc: 1, Backend: LocalBackend, DType: graph.Float32}
	if d, err := est.Subgraph(lg, graph.Range(0, n/2), cfg); err != nil || d != 100*time.Microsecond {
		t.Errorf("estimate of the first half on cpu1: %v, %v; want its cycle figure 100µs", d, err)
	}
	// Stored: skipped.
	again, err := p.Run(ctx, pl, jobs)
	if err != nil || again.Cycled != 0 || len(dev.cycles) != 1 {
		t.Errorf("second run: %+v, %v, %d cycles; want the cycle skipped", again, err, len(dev.cycles))
	}
	// A measurement again clears the figure, and the cycle runs again.
	p.Force = true
	if again, err = p.Run(ctx, pl, jobs); err != nil || again.Cycled != 2 || len(dev.cycles) != 2 {
		t.Errorf("forced run: %+v, %v, %d cycles", again, err, len(dev.cycles))
	}
	p.Force = false
	// A failed measurement is left out of the cycle (here the other step
	// is measured again too, which clears its figure, so that the cycle
	// runs again).
	failed := cycles[0].Steps[0].Job.Key("remote", pl)
	if err := st.Put(Record{Key: failed, ModelName: "mel", Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(Record{Key: cycles[0].Steps[1].Job.Key("remote", pl), ModelName: "mel", Timing: Timing{Median: time.Millisecond, Reps: 1, Cold: time.Millisecond, ColdReps: 1}}); err != nil {
		t.Fatal(err)
	}
	if again, err = p.Run(ctx, pl, jobs[len(jobs)-1:]); err != nil || len(dev.cycles) != 3 || len(dev.cycles[2]) != 1 {
		t.Fatalf("cycle with a failed step: %+v, %v, %d cycles", again, err, len(dev.cycles))
	}
	if want := []CycleRun{{Step: 0}}; !slices.Equal(dev.orders[2], want) {
		t.Errorf("order without the failed step %v, want %v", dev.orders[2], want)
	}
	if err := st.Put(Record{Key: failed, ModelName: "mel", Timing: Timing{Median: time.Millisecond, Reps: 1, Cold: time.Millisecond, ColdReps: 1}}); err != nil {
		t.Fatal(err)
	}
	// A device that says it does not take cycles, or turns out not to,
	// gets none, and the run says so; a fault of the device stops it.
	for _, tc := range []struct {
		name   string
		fields []string
		err    error
		note   string
		fail   string
	}{
		{"agent without cycles", []string{"cold"}, nil, "does not time plans in their cycle", ""},
		{"old agent answering 404", nil, fmt.Errorf("%w (agent x)", ErrNoCycles), "does not time plans in their cycle", ""},
		{"agent before arrivals", []string{"cold", "cycle"}, nil, "not at its groups' arrivals (an agent before 1.3.0)", ""},
		{"a cycle that fails", []string{"cold", "cycle", ArrivalsField}, errors.New("step 0 on cpu1: boom"), "cycle of 2 subgraphs failed: step 0 on cpu1: boom", ""},
		{"link down", []string{"cold", "cycle", ArrivalsField}, linkFault{}, "", "link down"},
	} {
		d := &cycleDevice{takerDevice: takerDevice{pl: pl, fields: tc.fields, known: tc.fields != nil}, err: tc.err}
		q := &Profiler{Device: d, Store: st, Reps: 1, Cold: 1, Cycles: cycles, CycleRuns: 3, Force: true}
		s, err := q.Run(ctx, pl, jobs[len(jobs)-1:])
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.fail)
			}
			continue
		}
		if tc.name == "agent before arrivals" {
			if err != nil || !strings.Contains(s.CycleNote, tc.note) || s.Cycled != 2 || len(d.orders) != 1 || d.orders[0] != nil {
				t.Errorf("%s: %+v, %v, orders %v; want the note %q and a cycle without an order", tc.name, s, err, d.orders, tc.note)
			}
			continue
		}
		if err != nil || !strings.Contains(s.CycleNote, tc.note) || s.Cycled != 0 {
			t.Errorf("%s: %+v, %v; want the note %q", tc.name, s, err, tc.note)
		}
	}
}

// Local times a real plan's cycle on the host's two cores: one positive
// figure per step, in order.
func TestLocalMeasureCycle(t *testing.T) {
	w := melWorkload(t)
	pl := twoCoreHost(t)
	dev, err := NewLocal(assets.ORTLibrary(), pl)
	if err != nil {
		t.Fatal(err)
	}
	lg := w.Models[0].Layers
	n := len(lg.Layers)
	var req CycleRequest
	for _, s := range splitPlan(t, n).Models[0].Subgraphs {
		model, err := onnx.ExportSubgraph(lg, s.Layers)
		if err != nil {
			t.Fatal(err)
		}
		ins, err := SubgraphInputs(lg, s.Layers)
		if err != nil {
			t.Fatal(err)
		}
		req.Steps = append(req.Steps, CycleStep{Model: model, Inputs: ins, Processor: s.Processor})
	}
	req.Warmup, req.Cycles, req.Period = 1, 3, 30*time.Millisecond
	start := time.Now()
	meds, err := dev.MeasureCycle(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// Four rounds a period apart: three periods at least.
	if el := time.Since(start); el < 3*req.Period {
		t.Errorf("four rounds paced at %v took %v", req.Period, el)
	}
	if len(meds) != 2 || meds[0] <= 0 || meds[1] <= 0 {
		t.Errorf("figures %v", meds)
	}
	if s := dev.Speed(); s.Phases != 3 {
		t.Errorf("speed guard: %+v, want one phase per timed round", s)
	}
	// With an order, each run waits for its release: step 1 twice a
	// round, the last one 25 ms in, so four rounds take three periods and
	// 25 ms at least.
	ordered := req
	ordered.Order = []CycleRun{{Step: 1}, {Step: 0, At: 10 * ms}, {Step: 1, At: 25 * ms}}
	start = time.Now()
	meds, err = dev.MeasureCycle(context.Background(), ordered)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 3*req.Period+25*ms {
		t.Errorf("four ordered rounds took %v", el)
	}
	if len(meds) != 2 || meds[0] <= 0 || meds[1] <= 0 {
		t.Errorf("ordered figures %v", meds)
	}
	// A step the machine cannot run is one line naming it.
	bad := req
	bad.Steps = append([]CycleStep(nil), req.Steps...)
	bad.Steps[1].Backend = "qnn"
	if _, err := dev.MeasureCycle(context.Background(), bad); err == nil || !strings.Contains(err.Error(), `step 1 on cpu0: backend "qnn"`) {
		t.Errorf("step with another backend: %v", err)
	}
	bad.Steps[1] = CycleStep{Model: []byte("not onnx"), Inputs: req.Steps[1].Inputs, Processor: "cpu0"}
	if _, err := dev.MeasureCycle(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "step 1 on cpu0") {
		t.Errorf("step that is not a model: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := dev.MeasureCycle(ctx, req); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// twoCoreHost is the host preset; the test is skipped where it has one
// processor.
func twoCoreHost(t *testing.T) *hw.Platform {
	t.Helper()
	pl := hwtest.Preset(t, "host")
	if len(pl.Processors) < 2 {
		t.Skip("the host preset has one processor here")
	}
	return pl
}
