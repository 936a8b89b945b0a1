package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/workload/workloadtest"
)

// TestProbeHandOffs checks which probe errors the loop goes on from:
// runtime.ErrNoProbePair (however it is worded) and ErrNoHandOff; any
// other error stops it, even one whose text says "fewer than two". A
// probe that works is stored per pinning.
func TestProbeHandOffs(t *testing.T) {
	st, err := profile.Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	failing := func(err error) HandOffProber {
		return func(context.Context, bool) (runtime.HandOffProbe, error) { return runtime.HandOffProbe{}, err }
	}
	for _, tc := range []struct {
		name string
		err  error
		goOn bool
	}{
		{"no pair", fmt.Errorf("runtime: hand-off probe: platform p: %w", runtime.ErrNoProbePair), true},
		{"no endpoint", fmt.Errorf("%w: agent: handoff: 404", ErrNoHandOff), true},
		{"other failure", errors.New("runtime: hand-off probe: fewer than two requests completed"), false},
	} {
		r, err := probeHandOffs(context.Background(), st, "dev", failing(tc.err))
		if tc.goOn && (err != nil || r.Skipped == "" || len(r.Probes) != 0) {
			t.Errorf("%s: %+v, %v; want it skipped with the reason", tc.name, r, err)
		}
		if !tc.goOn && err == nil {
			t.Errorf("%s: %+v; want the error", tc.name, r)
		}
	}
	if hos, err := st.HandOffs("dev"); err != nil || len(hos) != 0 {
		t.Errorf("failed probes stored %+v, %v", hos, err)
	}
	var asked []bool
	ok := func(_ context.Context, unpinned bool) (runtime.HandOffProbe, error) {
		asked = append(asked, unpinned)
		starts := runtime.StartDelays{Poll: 90 * time.Microsecond, PollRequests: 30}
		if !unpinned {
			starts.Sleep, starts.SleepRequests = 318*time.Microsecond, 30
		}
		return runtime.HandOffProbe{Same: 5 * time.Microsecond, Cross: 70 * time.Microsecond, Samples: 30, Procs: [2]string{"cpu0", "cpu1"}, Starts: starts}, nil
	}
	r, err := probeHandOffs(context.Background(), st, "dev", ok)
	if err != nil || r.Skipped != "" || len(r.Probes) != 2 || r.Probes[0].Unpinned || !r.Probes[1].Unpinned || r.Probes[0].Cross != 70*time.Microsecond {
		t.Fatalf("probes %+v, %v", r, err)
	}
	hos, err := st.HandOffs("dev")
	if err != nil || len(hos) != 2 || fmt.Sprint(asked) != "[false true]" || hos[1].Cross != 70*time.Microsecond {
		t.Errorf("stored %+v (%v) after probes %v", hos, err, asked)
	}
	// With the delays to a request's first subgraph the probe saw, by
	// pinning and way of waiting.
	if hos[1].SleepStart != 318*time.Microsecond || hos[1].SleepRequests != 30 || hos[0].SleepRequests != 0 || hos[0].PollRequests != 30 {
		t.Errorf("stored start delays %+v", hos)
	}
}

// TestProfileLoop profiles a small real model into a fresh store on this
// machine: the hand-off first, then the layers, chunks and the planner's
// subgraphs, round after round until the plans settle, and a calibration
// with a cold-cache correction. A second profile measures nothing it has
// and times the plan in its cycle.
func TestProfileLoop(t *testing.T) {
	lib := assets.Require(t, assets.ORTLibrary())
	dir := t.TempDir()
	wl := workloadtest.MelFile(t, dir)
	w, err := workload.Load(wl)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := hw.Choose("", w.Platform)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "profiles.db")
	st, err := profile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	profileOnce := func(cycles int) *ProfileResult {
		t.Helper()
		dev, err := profile.NewLocal(lib, pl)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Profile(context.Background(), ProfileInput{Workload: w, Platform: pl, Device: dev, Store: st, Profiles: path,
			HandOff: func(ctx context.Context, unpinned bool) (runtime.HandOffProbe, error) {
				return runtime.ProbeHandOff(ctx, runtime.ProbeConfig{Platform: pl, Library: lib, NoPin: unpinned})
			},
			Reps: 2, Cold: 5, Idle: 5, Chunks: 3, Cycles: cycles, Planners: []string{"bestmap"}, Budget: time.Second, Rounds: 6, Corun: true, Seed: 1,
			Calibration: CalibrateOptions{Folds: 5, Seed: 1, FitOn: "min"}})
		if err != nil {
			t.Fatalf("profile: %v", err)
		}
		return r
	}
	first := profileOnce(0)
	// Two processors on host: both pinnings measured; one core: skipped
	// with the reason.
	if len(first.HandOff.Probes) != 2 && first.HandOff.Skipped == "" {
		t.Errorf("hand-off: %+v", first.HandOff)
	}
	counts := map[string]int{}
	for _, k := range first.Kinds {
		counts[k.Kind] = k.Count
	}
	r1 := first.Rounds[0]
	if first.Jobs == 0 || counts[profile.KindPlan] == 0 || r1.Failed != 0 || r1.Measured == 0 || r1.Measured+r1.Skipped != first.Jobs {
		t.Errorf("first round %+v of %d jobs (%v)", r1.Summary, first.Jobs, first.Kinds)
	}
	// Device in the loop: the plans settle (every subgraph measured) or the
	// rounds run out, and it says which.
	if (first.Settled == 0) == !first.StillChanging || first.Settled > 0 && first.Settled != len(first.Rounds) {
		t.Errorf("settled in round %d, still changing %v, after %d rounds", first.Settled, first.StillChanging, len(first.Rounds))
	}
	cal := first.Calibration
	if cal == nil || cal.Fit == nil || len(cal.Fit.Classes) == 0 || cal.Fit.Classes[0].Cold.Samples == 0 {
		t.Fatalf("calibration %+v: want a fit with a cold-cache correction", cal)
	}
	again := profileOnce(2)
	r2 := again.Rounds[0]
	// Everything but the plan's subgraphs is stored; those too when the
	// first profile's rounds settled (the planner is deterministic, and
	// the store and its calibration are what they were).
	if r2.Measured > counts[profile.KindPlan] || first.Settled > 0 && r2.Measured != 0 || r2.Measured+r2.Skipped != again.Jobs {
		t.Errorf("second profile measured again: %+v of %d jobs (first settled in round %d)", r2.Summary, again.Jobs, first.Settled)
	}
	if r2.Cycled == 0 || r2.CycleSteps == 0 {
		t.Errorf("second profile with cycles: %+v; want the plan timed in its cycle", r2.Summary)
	}
}
