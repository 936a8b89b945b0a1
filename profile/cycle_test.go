package profile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/plan"
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
	pl, err := hw.Preset("host")
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Processors) < 2 {
		t.Skip("the host preset has one processor here")
	}
	n := len(w.Models[0].Layers.Layers)
	cs, err := PlanCycles(w, pl, []*plan.Plan{splitPlan(t, n)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || len(cs[0].Steps) != 2 || cs[0].Plan != "split" || cs[0].Period != 80*time.Millisecond {
		t.Fatalf("cycles %+v", cs)
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
	err    error
}

func (d *cycleDevice) MeasureCycle(_ context.Context, req CycleRequest) ([]time.Duration, error) {
	if d.err != nil {
		return nil, d.err
	}
	d.cycles = append(d.cycles, req.Steps)
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
	pl, err := hw.Preset("host")
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Processors) < 2 {
		t.Skip("the host preset has one processor here")
	}
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
	st, err := Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dev := &cycleDevice{takerDevice: takerDevice{pl: pl, fields: []string{"cold", "cycle"}, known: true}}
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
		{"a cycle that fails", []string{"cold", "cycle"}, errors.New("step 0 on cpu1: boom"), "cycle of 2 subgraphs failed: step 0 on cpu1: boom", ""},
		{"link down", []string{"cold", "cycle"}, linkFault{}, "", "link down"},
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
		if err != nil || !strings.Contains(s.CycleNote, tc.note) || s.Cycled != 0 {
			t.Errorf("%s: %+v, %v; want the note %q", tc.name, s, err, tc.note)
		}
	}
}

// Local times a real plan's cycle on the host's two cores: one positive
// figure per step, in order.
func TestLocalMeasureCycle(t *testing.T) {
	w := melWorkload(t)
	pl, err := hw.Preset("host")
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Processors) < 2 {
		t.Skip("the host preset has one processor here")
	}
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
