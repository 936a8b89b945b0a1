package profile

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/workload/workloadtest"
)

// hostLocal is the host preset and a local device on it.
func hostLocal(tb testing.TB) (*hw.Platform, *Local) {
	tb.Helper()
	pl := hwtest.Preset(tb, "host")
	dev, err := NewLocal(assets.ORTLibrary(), pl)
	if err != nil {
		tb.Fatal(err)
	}
	return pl, dev
}

// tempStore is a new store in a temporary folder, closed when the test
// ends.
func tempStore(tb testing.TB) *Store {
	tb.Helper()
	st, err := Open(filepath.Join(tb.TempDir(), "p.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// melWorkload writes a workload of the real mel-spectrogram model on the
// host platform into a temporary folder and loads it.
func melWorkload(t *testing.T) *workload.Workload {
	t.Helper()
	assets.Require(t, assets.ORTLibrary())
	w, err := workload.Load(workloadtest.MelFile(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestLocalMeasure(t *testing.T) {
	w := melWorkload(t)
	lg := w.Models[0].Layers
	pl, dev := hostLocal(t)
	ctx := context.Background()
	info, err := dev.Info(ctx)
	if err != nil || info.Name == "" || info.ORTVersion == "" || info.Platform != pl {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	set := graph.Range(0, len(lg.Layers))
	model, err := onnx.ExportSubgraph(lg, set)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := SubgraphInputs(lg, set)
	if err != nil {
		t.Fatal(err)
	}
	req := MeasureRequest{Model: model, Inputs: ins, Processor: pl.Processors[len(pl.Processors)-1].Name, Warmup: 1, Reps: 4}
	tm, err := dev.Measure(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if tm.Reps != 4 || tm.Min <= 0 || tm.Min > tm.Median || tm.Median > tm.P90 || tm.P90 > tm.Max {
		t.Errorf("Timing %+v is not ordered min ≤ median ≤ p90 ≤ max over 4 runs", tm)
	}
	if tm.ColdReps != 0 || tm.Cold != 0 {
		t.Errorf("cold runs %d (%v) when none were asked for", tm.ColdReps, tm.Cold)
	}
	if tm.IdleReps != 0 || tm.Idle != 0 {
		t.Errorf("idle runs %d (%v) when none were asked for", tm.IdleReps, tm.Idle)
	}
	cold := req
	cold.Cold, cold.Idle = 3, 2
	began := time.Now()
	tc, err := dev.Measure(ctx, cold)
	if err != nil {
		t.Fatal(err)
	}
	// A cold or idle run is timed like the others (no bound on how much
	// slower it is: that depends on the machine); each idle run sleeps
	// IdleGap first.
	if tc.ColdReps != 3 || tc.Cold <= 0 || tc.Reps != 4 || tc.IdleReps != 2 || tc.Idle <= 0 {
		t.Errorf("with 3 cold runs and 2 idle ones: %+v", tc)
	}
	if took := time.Since(began); took < 2*IdleGap {
		t.Errorf("two idle runs took %v in all, less than their two sleeps of %v", took, IdleGap)
	}
	t.Logf("mel on %s: median %v back to back, %v cold, %v after idling", req.Processor, tc.Median, tc.Cold, tc.Idle)

	bad := func(f func(r *MeasureRequest)) MeasureRequest {
		r := req
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name string
		req  MeasureRequest
		want string
	}{
		{"unknown processor", bad(func(r *MeasureRequest) { r.Processor = "npu7" }), "npu7"},
		{"other backend", bad(func(r *MeasureRequest) { r.Backend = "qnn-htp" }), "qnn-htp"},
		{"other dtype", bad(func(r *MeasureRequest) { r.DType = "int8" }), "int8"},
		{"no reps", bad(func(r *MeasureRequest) { r.Reps = 0 }), "reps"},
		{"negative cold runs", bad(func(r *MeasureRequest) { r.Cold = -1 }), "cold runs"},
		{"negative idle runs", bad(func(r *MeasureRequest) { r.Idle = -1 }), "idle runs"},
		{"garbage model", bad(func(r *MeasureRequest) { r.Model = []byte("not onnx") }), "profile: measure"},
		{"wrong input", bad(func(r *MeasureRequest) {
			r.Inputs = []TensorSpec{{Name: "nope", DType: graph.Float32, Shape: graph.Shape{1}}}
		}), "not among the inputs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dev.Measure(ctx, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Measure error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestProfileEndToEnd profiles one small real model on the host: every
// layer and a few runs of layers, then again (all skipped), then
// calibrates and answers from the store.
func TestProfileEndToEnd(t *testing.T) {
	w := melWorkload(t)
	pl, dev := hostLocal(t)
	st := tempStore(t)
	jobs, err := Jobs(w, pl, JobOptions{Chunks: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := len(w.Models[0].Layers.Layers)
	if len(jobs) < n+1 {
		t.Fatalf("%d jobs for %d layers", len(jobs), n)
	}
	for _, j := range jobs {
		if j.Config.Proc != 0 {
			t.Fatalf("job on processor %d: only the first of the twin cores is measured", j.Config.Proc)
		}
	}
	calls := 0
	p := &Profiler{Device: dev, Store: st, Warmup: 1, Reps: 3, Progress: func(done, total int, j Job) { calls++ }}
	ctx := context.Background()
	sum, err := p.Run(ctx, pl, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Measured+sum.Failed != len(jobs) || sum.Skipped != 0 || calls != len(jobs) {
		t.Errorf("first run: %+v, %d progress calls, %d jobs", sum, calls, len(jobs))
	}
	if sum.Measured < n {
		t.Errorf("measured %d of %d jobs; failures: %v", sum.Measured, len(jobs), sum.Failures)
	}
	again, err := p.Run(ctx, pl, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if again.Skipped != len(jobs) || again.Measured != 0 {
		t.Errorf("second run measured again: %+v", again)
	}
	// Asking for cold runs measures again what was stored without them
	// (not what failed), and then has them.
	p.Cold = 1
	cold, err := p.Run(ctx, pl, jobs[:2])
	if err != nil {
		t.Fatal(err)
	}
	if cold.Measured+cold.Failed != 2 || cold.Skipped != 0 {
		t.Errorf("run with cold runs over 2 jobs stored without them: %+v", cold)
	}
	for _, j := range jobs[:2] {
		if r, ok, err := st.Get(j.Key(sum.Device, pl)); err != nil || !ok || (r.Error == "" && r.ColdReps != 1) {
			t.Errorf("%s after the cold run: %+v, %v, %v", j.Set.Key(), r, ok, err)
		}
	}
	// Asking for idle runs measures again a plan's subgraph stored without
	// them, and no layer or chunk (both have their cold runs from above).
	p.Cold, p.Idle = 1, 1
	asPlan := jobs[1]
	asPlan.Kind = KindPlan
	idle, err := p.Run(ctx, pl, []Job{jobs[0], asPlan})
	if err != nil {
		t.Fatal(err)
	}
	if idle.Measured+idle.Failed != 1 || idle.Skipped != 1 {
		t.Errorf("run with idle runs over a layer and a plan subgraph: %+v, want the plan's measured again", idle)
	}
	if r, ok, err := st.Get(asPlan.Key(sum.Device, pl)); err != nil || !ok || (r.Error == "" && r.IdleReps != 1) {
		t.Errorf("plan subgraph %s after the idle run: %+v, %v, %v", asPlan.Set.Key(), r, ok, err)
	}
	p.Cold, p.Idle = 0, 0

	samples, err := Samples(st, sum.Device, pl, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != sum.Measured {
		t.Errorf("%d samples for %d measurements", len(samples), sum.Measured)
	}
	cal, err := Calibrate(pl, nil, samples, CalibrateOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Classes) != 1 {
		t.Fatalf("%d classes calibrated", len(cal.Classes))
	}
	t.Logf("mel: held-back MAPE %.3f -> %.3f", cal.Classes[0].MAPEBefore, cal.Classes[0].MAPEAfter)

	// The whole model, measured as a chunk, is answered from the store on
	// every core.
	est := NewEstimator(st, sum.Device, mustCalibrated(t, pl, cal))
	lg := w.Models[0].Layers
	whole := graph.Range(0, n)
	for proc := range pl.Processors {
		if _, err := est.Subgraph(lg, whole, pl.DefaultConfig(proc)); err != nil {
			t.Fatal(err)
		}
	}
	if est.Hits() != 1 || est.Misses() != 0 {
		t.Errorf("whole model: hits %d, misses %d; want 1, 0", est.Hits(), est.Misses())
	}

	p.Cold, p.Idle = 1, 1
	// A plan's subgraph stored as failed is not measured again for its
	// idle runs: it would fail again.
	failed := jobs[2]
	failed.Kind = KindPlan
	if err := st.Put(Record{Key: failed.Key(sum.Device, pl), ModelName: failed.Model, Error: "profile: measure on cpu0: boom"}); err != nil {
		t.Fatal(err)
	}
	if again, err := p.Run(ctx, pl, []Job{failed}); err != nil || again.Skipped != 1 || again.Measured+again.Failed != 0 {
		t.Errorf("run with idle runs over a failed plan subgraph: %+v, %v; want it skipped", again, err)
	}
}
