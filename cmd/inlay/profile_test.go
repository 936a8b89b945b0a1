package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/agent"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
)

// profileCLI runs inlay with args and returns stdout and stderr.
func profileCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// TestProfileCommand profiles a small real model into a fresh store, then
// plans with the store: the planner's cost model answers from it and says
// how many subgraphs fell back to the calibrated model.
func TestProfileCommand(t *testing.T) {
	assets.Require(t, assets.ORTLibrary())
	model := assets.Require(t, assets.ModelPath("melspectrogram.onnx"))
	dir := t.TempDir()
	wl := filepath.Join(dir, "mel.yaml")
	text := fmt.Sprintf("platform: host\nmodels:\n  - {name: mel, onnx: %q, inputs: {input: [1, 1280]}}\ngroups:\n  - {name: voice, models: [mel], period_ms: 80}\n", model)
	if err := os.WriteFile(wl, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "profiles.db")

	out, _, err := profileCLI(t, "profile", wl, "--profiles", store, "--reps", "2", "--warmup", "0", "--chunks", "3", "--planner", "bestmap")
	if err != nil {
		t.Fatalf("profile: %v\n%s", err, out)
	}
	// With cold runs (the default --cold), the calibration fits a cold
	// correction.
	// It measures the runtime's hand-off first (two processors on host;
	// one core: it says why not).
	for _, want := range []string{"hand-off", "subgraphs to measure", "measured", "failed 0", "calibration on", "cold-cache correction", "MAPE AFTER"} {
		if !strings.Contains(out, want) {
			t.Errorf("profile output lacks %q:\n%s", want, out)
		}
	}
	// Device in the loop: the planner plans again with the measurements
	// until its plan's subgraphs are all measured (or --rounds runs out,
	// which it says).
	converged := strings.Contains(out, "every subgraph measured (after ")
	if !converged && !strings.Contains(out, "still changed in round") {
		t.Errorf("profile does not say whether the plans made from its measurements were measured:\n%s", out)
	}
	// A second profile measures nothing it has: every chunk and layer
	// subgraph is already stored, and so are the plan's own subgraphs when
	// the first one's rounds ended with all of them measured (the planner
	// is deterministic, and the store and its calibration are what they
	// were). Otherwise only the plan's subgraphs may be new.
	// It times the plan in its cycle too (--cycles), which the first did
	// not, and plan answers with those figures.
	again, _, err := profileCLI(t, "profile", wl, "--profiles", store, "--reps", "2", "--warmup", "0", "--chunks", "3", "--planner", "bestmap", "--cycles", "2")
	if !strings.Contains(again, "cycle figures: ") || !strings.Contains(again, "timed in their plan's cycle (") {
		t.Errorf("profile --cycles 2 does not say it timed the plan's cycle:\n%s", again)
	}
	var total, chunks, layers, plans, measured, stored int
	if err == nil {
		line := again[strings.LastIndex(again[:max(strings.Index(again, " subgraphs to measure"), 0)], "\n")+1:]
		_, err = fmt.Sscanf(line, "%d subgraphs to measure (%d chunk, %d layer, %d plan)", &total, &chunks, &layers, &plans)
	}
	if i := strings.Index(again, "\nmeasured "); err == nil && i >= 0 {
		_, err = fmt.Sscanf(again[i+1:], "measured %d, already stored %d", &measured, &stored)
	}
	if err != nil || total == 0 || measured > plans || (converged && measured != 0) || stored < chunks+layers || measured+stored != total {
		t.Errorf("second profile measured again (err %v; %d subgraphs, %d of them the plan's; measured %d, already stored %d):\n%s", err, total, plans, measured, stored, again)
	}

	out, errOut, err := profileCLI(t, "plan", wl, "--profiles", store, "--planner", "bestmap")
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	if !strings.Contains(errOut, "profiles: ") || !strings.Contains(errOut, "fell back to the calibrated model") || !strings.Contains(errOut, "with cold-cache figures") ||
		!strings.Contains(errOut, "answered with their plan-cycle figures") {
		t.Errorf("plan does not report its use of the store:\n%s", errOut)
	}

	// run --probe (the default with a store of this machine): the plan's
	// subgraphs timed before the run against their profiled figures, and
	// a prediction at that speed beside the profile's.
	planFile := filepath.Join(dir, "plan.yaml")
	if out, _, err := profileCLI(t, "plan", wl, "--profiles", store, "--planner", "bestmap", "-o", planFile); err != nil {
		t.Fatalf("plan -o: %v\n%s", err, out)
	}
	out, _, err = profileCLI(t, "run", wl, "--plan", planFile, "--profiles", store, "--duration", "1s", "--json")
	if err != nil {
		t.Fatalf("run --probe: %v\n%s", err, out)
	}
	var rj struct {
		Lag    float64 `json:"predicted_arrival_lag_ms"`
		Groups []struct {
			PredictedNowP50MS float64 `json:"predicted_now_p50_ms"`
			PredictedP50MS    float64 `json:"predicted_p50_ms"`
		}
		Probe *struct {
			Processors []struct {
				Processor string
				Ratio     float64
			}
			Subgraphs []struct {
				Subgraph   string
				ProfiledMS float64 `json:"profiled_ms"`
				NowMS      float64 `json:"now_ms"`
				Ratio      float64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rj); err != nil {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	if rj.Probe == nil || len(rj.Probe.Subgraphs) == 0 || len(rj.Probe.Processors) == 0 || len(rj.Groups) != 1 || rj.Groups[0].PredictedNowP50MS <= 0 {
		t.Fatalf("run --probe: no probe or prediction at speed now:\n%s", out)
	}
	for _, sg := range rj.Probe.Subgraphs {
		if sg.ProfiledMS <= 0 || sg.NowMS <= 0 || sg.Ratio <= 0 || !strings.HasPrefix(sg.Subgraph, "mel[") {
			t.Errorf("probed subgraph %+v", sg)
		}
	}
	// The prediction adds the delay to a request's first subgraph that the
	// profile's hand-off probe measured pinned, one of its two ways of
	// waiting (which one depends on the cores the plan holds).
	st, err := profile.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	hos, err := st.HandOffs(profile.LocalDeviceName())
	st.Close()
	if err != nil || len(hos) != 2 || !hos[1].Pinned || hos[1].SleepRequests == 0 || hos[1].PollRequests == 0 {
		t.Fatalf("the profile's hand-offs %+v, %v: want both pinnings, pinned with both ways' start delays", hos, err)
	}
	if rj.Lag != msOf(hos[1].SleepStart) && rj.Lag != msOf(hos[1].PollStart) {
		t.Errorf("run predicted with a start delay of %v ms; the probe measured %v sleeping, %v polling", rj.Lag, hos[1].SleepStart, hos[1].PollStart)
	}
	if out, _, err = profileCLI(t, "run", wl, "--plan", planFile, "--profiles", store, "--duration", "1s", "--json", "--probe=false"); err != nil || strings.Contains(out, "predicted_now_p50_ms") {
		t.Errorf("run --probe=false: %v\n%s", err, out)
	}

	cal, _, err := profileCLI(t, "calibrate", wl, "--profiles", store, "--fit-on", "median")
	if err != nil || !strings.Contains(cal, "fitted to each measurement's median") || !strings.Contains(cal, "conv") {
		t.Errorf("calibrate (err %v):\n%s", err, cal)
	}
	if _, _, err := profileCLI(t, "calibrate", wl, "--profiles", store, "--fit-on", "warmest"); err == nil || !strings.Contains(err.Error(), "want min, median or cold") {
		t.Errorf("calibrate --fit-on warmest: %v", err)
	}
}

func TestProfilesFlagErrors(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("platform: host\nmodels:\n  - {name: a, zoo: mobilenet_v2}\ngroups:\n  - {name: g, models: [a], period_ms: 100}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("junk "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing store", []string{"plan", wl, "--planner", "bestmap", "--profiles", filepath.Join(dir, "none.db")}, "no such file"},
		{"not a store", []string{"plan", wl, "--planner", "bestmap", "--profiles", junk}, "not a profile store"},
		{"calibrate without measurements", []string{"calibrate", wl, "--profiles", filepath.Join(dir, "empty.db")}, "no measurements"},
		{"no rounds", []string{"profile", wl, "--rounds", "0", "--profiles", filepath.Join(dir, "r.db")}, "--rounds 0: want at least 1"},
		{"measuring another platform here", []string{"profile", wl, "--platform", "phone", "--profiles", filepath.Join(dir, "x.db")}, "not a set of this machine's cores"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := profileCLI(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
}

// TestProbeHandOffsErrors checks which probe errors profile goes on from:
// runtime.ErrNoProbePair (however it is worded, and through an agent) and
// an agent without the endpoint; any other error stops it, even one whose
// text says "fewer than two".
func TestProbeHandOffsErrors(t *testing.T) {
	st, err := profile.Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	failing := func(err error) func(context.Context, bool) (runtime.HandOffProbe, error) {
		return func(context.Context, bool) (runtime.HandOffProbe, error) { return runtime.HandOffProbe{}, err }
	}
	for _, tc := range []struct {
		name string
		err  error
		goOn bool
	}{
		{"no pair", fmt.Errorf("runtime: hand-off probe: platform p: %w", runtime.ErrNoProbePair), true},
		{"no pair, through an agent", &agent.StatusError{Op: "handoff", Status: 422, Code: agent.CodeNoProbePair, Message: "x"}, true},
		{"agent without the endpoint", &agent.StatusError{Op: "handoff", Status: 404, Code: agent.CodeNotFound, Message: "x"}, true},
		{"other failure", errors.New("runtime: hand-off probe: fewer than two requests completed"), false},
		{"agent failure", &agent.StatusError{Op: "handoff", Status: 422, Code: agent.CodeMeasureFailed, Message: "fewer than two"}, false},
	} {
		var out bytes.Buffer
		err := probeHandOffs(context.Background(), &out, st, "dev", failing(tc.err))
		if tc.goOn && (err != nil || !strings.Contains(out.String(), "hand-off: not measured")) {
			t.Errorf("%s: %v, output %q; want it reported and skipped", tc.name, err, out.String())
		}
		if !tc.goOn && (err == nil || out.Len() != 0) {
			t.Errorf("%s: %v, output %q; want the error", tc.name, err, out.String())
		}
	}
	if hos, err := st.HandOffs("dev"); err != nil || len(hos) != 0 {
		t.Errorf("failed probes stored %+v, %v", hos, err)
	}
	// A probe that works is stored per pinning.
	var asked []bool
	ok := func(_ context.Context, unpinned bool) (runtime.HandOffProbe, error) {
		asked = append(asked, unpinned)
		starts := runtime.StartDelays{Poll: 90 * time.Microsecond, PollRequests: 30}
		if !unpinned {
			starts.Sleep, starts.SleepRequests = 318*time.Microsecond, 30
		}
		return runtime.HandOffProbe{Same: 5 * time.Microsecond, Cross: 70 * time.Microsecond, Samples: 30, Procs: [2]string{"cpu0", "cpu1"}, Starts: starts}, nil
	}
	var out bytes.Buffer
	if err := probeHandOffs(context.Background(), &out, st, "dev", ok); err != nil {
		t.Fatal(err)
	}
	hos, err := st.HandOffs("dev")
	if err != nil || len(hos) != 2 || fmt.Sprint(asked) != "[false true]" || hos[1].Cross != 70*time.Microsecond || !strings.Contains(out.String(), "cpu0 to cpu1 70µs") {
		t.Errorf("stored %+v (%v) after probes %v; output %q", hos, err, asked, out.String())
	}
	// With the delays to a request's first subgraph the probe saw, by
	// pinning and way of waiting.
	if hos[1].SleepStart != 318*time.Microsecond || hos[1].SleepRequests != 30 || hos[0].SleepRequests != 0 || hos[0].PollRequests != 30 ||
		!strings.Contains(out.String(), "pinned: same processor 5µs, cpu0 to cpu1 70µs, arrival to first subgraph 318µs with the loop sleeping, 90µs polling") {
		t.Errorf("stored start delays %+v; output %q", hos, out.String())
	}
}
