package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
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
	// A second profile measures nothing it has: every chunk and layer
	// subgraph is already stored. Only the plan's own subgraphs may be
	// new, since the planner now plans with the measured store and may cut
	// the model elsewhere than the analytic model did.
	again, _, err := profileCLI(t, "profile", wl, "--profiles", store, "--reps", "2", "--warmup", "0", "--chunks", "3", "--planner", "bestmap")
	var total, chunks, layers, plans, measured, stored int
	if err == nil {
		line := again[strings.LastIndex(again[:max(strings.Index(again, " subgraphs to measure"), 0)], "\n")+1:]
		_, err = fmt.Sscanf(line, "%d subgraphs to measure (%d chunk, %d layer, %d plan)", &total, &chunks, &layers, &plans)
	}
	if i := strings.Index(again, "\nmeasured "); err == nil && i >= 0 {
		_, err = fmt.Sscanf(again[i+1:], "measured %d, already stored %d", &measured, &stored)
	}
	if err != nil || total == 0 || measured > plans || stored < chunks+layers || measured+stored != total {
		t.Errorf("second profile measured again (err %v; %d subgraphs, %d of them the plan's; measured %d, already stored %d):\n%s", err, total, plans, measured, stored, again)
	}

	out, errOut, err := profileCLI(t, "plan", wl, "--profiles", store, "--planner", "bestmap")
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	if !strings.Contains(errOut, "profiles: ") || !strings.Contains(errOut, "fell back to the calibrated model") || !strings.Contains(errOut, "with cold-cache figures") {
		t.Errorf("plan does not report its use of the store:\n%s", errOut)
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
