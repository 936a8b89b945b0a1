package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/workload/workloadtest"
)

// TestProfileCommand profiles a small real model into a fresh store, then
// plans with the store: the planner's cost model answers from it and says
// how many subgraphs fell back to the calibrated model.
func TestProfileCommand(t *testing.T) {
	assets.Require(t, assets.ORTLibrary())
	dir := t.TempDir()
	wl := workloadtest.MelFile(t, dir)
	store := filepath.Join(dir, "profiles.db")

	// The loop itself is app.Profile's (app.TestProfileLoop); here the
	// command wires it: a profile, then one that also times the plan's
	// cycle, which plan then answers with.
	out, _, err := runInlaySplit(t, "profile", wl, "--profiles", store, "--reps", "2", "--warmup", "0", "--chunks", "3", "--planner", "bestmap")
	if err != nil || !strings.HasPrefix(out, "profiling "+wl+" on host") {
		t.Fatalf("profile: %v\n%s", err, out)
	}
	if again, _, err := runInlaySplit(t, "profile", wl, "--profiles", store, "--reps", "2", "--warmup", "0", "--chunks", "3", "--planner", "bestmap", "--cycles", "2"); err != nil {
		t.Fatalf("profile --cycles 2: %v\n%s", err, again)
	}

	out, errOut, err := runInlaySplit(t, "plan", wl, "--profiles", store, "--planner", "bestmap")
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
	if out, _, err := runInlaySplit(t, "plan", wl, "--profiles", store, "--planner", "bestmap", "-o", planFile); err != nil {
		t.Fatalf("plan -o: %v\n%s", err, out)
	}
	out, _, err = runInlaySplit(t, "run", wl, "--plan", planFile, "--profiles", store, "--duration", "1s", "--json")
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
	if out, _, err = runInlaySplit(t, "run", wl, "--plan", planFile, "--profiles", store, "--duration", "1s", "--json", "--probe=false"); err != nil || strings.Contains(out, "predicted_now_p50_ms") {
		t.Errorf("run --probe=false: %v\n%s", err, out)
	}

	cal, _, err := runInlaySplit(t, "calibrate", wl, "--profiles", store, "--fit-on", "median")
	if err != nil || !strings.Contains(cal, "fitted to each measurement's median") || !strings.Contains(cal, "conv") {
		t.Errorf("calibrate (err %v):\n%s", err, cal)
	}
	if _, _, err := runInlaySplit(t, "calibrate", wl, "--profiles", store, "--fit-on", "warmest"); err == nil || !strings.Contains(err.Error(), "want min, median or cold") {
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
			_, _, err := runInlaySplit(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
}

// msOf is d in milliseconds, as the run's JSON gives times.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
