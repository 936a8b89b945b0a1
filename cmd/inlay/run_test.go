package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/workload/workloadtest"
)

// runVoiceWorkload is the voice pipeline of the real models on the host.
const runVoiceWorkload = "platform: host\nmodels:\n" + workloadtest.VoiceModels + `groups:
  - name: voice
    models: [vad, melspec, speech_embed, wakeword]
    after: {speech_embed: [melspec], wakeword: [speech_embed]}
    period_ms: 40
`

// planVoice needs ONNX Runtime and the voice pipeline's models, writes
// runVoiceWorkload into a fresh folder and plans it with HEFT (the plan
// command given args besides). It returns the runtime library, the folder,
// the workload file and the plan file.
func planVoice(t *testing.T, args ...string) (lib, dir, wl, planFile string) {
	t.Helper()
	lib = assets.Require(t, assets.ORTLibrary())
	workloadtest.RequireVoice(t)
	dir = t.TempDir()
	wl = filepath.Join(dir, "voice.yaml")
	if err := os.WriteFile(wl, []byte(runVoiceWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	planFile = filepath.Join(dir, "plan.yaml")
	planArgs := append([]string{"plan", wl, "--planner", "heft", "-o", planFile}, args...)
	if out, err := runInlay(t, planArgs...); err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	return lib, dir, wl, planFile
}

// TestRunCommand plans the voice pipeline with HEFT, then runs the plan
// for a second: the JSON has every group's figures and the prediction.
func TestRunCommand(t *testing.T) {
	lib, dir, wl, planFile := planVoice(t)
	trace := filepath.Join(dir, "trace.json")
	out, err := runInlay(t, "run", wl, "--plan", planFile, "--duration", "1s", "--json", "--trace", trace, "--subgraphs", "--ort-lib", lib, "--profiles", "")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	var got struct {
		Subgraphs []struct {
			Group, Subgraph, Processor string
			PredictedMS                float64 `json:"predicted_ms"`
			PredictedRuns              int     `json:"predicted_runs"`
			MeasuredMS                 float64 `json:"measured_ms"`
			Runs                       int     `json:"runs"`
			Ratio                      float64 `json:"ratio"`
			AloneRuns                  int     `json:"alone_runs"`
			BesideRuns                 int     `json:"beside_runs"`
		} `json:"subgraphs"`
		Requests []struct {
			Group               string
			Predicted, Measured app.RequestParts
		} `json:"requests"`
		Groups []struct {
			Name                               string
			Requests, Completed, Late, Dropped int
			P50MS                              float64 `json:"p50_ms"`
			P99MS                              float64 `json:"p99_ms"`
			PredictedP50MS                     float64 `json:"predicted_p50_ms"`
			PredictedP99MS                     float64 `json:"predicted_p99_ms"`
		} `json:"groups"`
		ZeroCopy int64 `json:"zero_copy_handoffs"`
	}
	mustMatchOpenAPI(t, "RunResult", out)
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Groups) != 1 {
		t.Fatalf("groups: %s", out)
	}
	g := got.Groups[0]
	if g.Name != "voice" || g.Requests < 20 || g.Completed+g.Dropped != g.Requests || g.P50MS <= 0 || g.PredictedP50MS <= 0 || g.P99MS < g.P50MS {
		t.Errorf("voice: %+v", g)
	}
	// --subgraphs: every planned model's subgraphs, each run and
	// predicted, its runs split into alone and beside.
	models := map[string]bool{}
	for _, sg := range got.Subgraphs {
		models[strings.SplitN(sg.Subgraph, "[", 2)[0]] = true
		if sg.Group != "voice" || sg.Runs < 20 || sg.PredictedRuns < 20 || sg.MeasuredMS <= 0 || sg.PredictedMS <= 0 ||
			sg.AloneRuns+sg.BesideRuns != sg.Runs || sg.Ratio <= 0 || !strings.HasPrefix(sg.Processor, "cpu") {
			t.Errorf("subgraph %+v", sg)
		}
	}
	if len(models) != 4 {
		t.Errorf("--subgraphs covers models %v, want the 4 of the plan", models)
	}
	// and each group's requests split, predicted and measured: the run's
	// median latency from its spans is the group's p50 (both medians of
	// the same requests' arrival-to-last-end), and the parts add up to the
	// mean.
	if len(got.Requests) != 1 || got.Requests[0].Group != "voice" {
		t.Fatalf("requests: %+v", got.Requests)
	}
	for side, p := range map[string]app.RequestParts{"predicted": got.Requests[0].Predicted, "measured": got.Requests[0].Measured} {
		if sum := p.BeforeMs + p.WorkingMs + p.BetweenMs; p.Requests < 20 || p.WorkingMs <= 0 || p.BeforeMs < 0 || p.BetweenMs < 0 || sum < p.MeanMs-0.001 || sum > p.MeanMs+0.001 || p.P50Ms <= 0 {
			t.Errorf("requests, %s: %+v", side, p)
		}
	}
	if m := got.Requests[0].Measured; m.P50Ms < 0.5*g.P50MS || m.P50Ms > 2*g.P50MS {
		t.Errorf("requests' measured p50 %.3f ms against the group's %.3f ms", m.P50Ms, g.P50MS)
	}
	data, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(data), "speech_embed") {
		t.Errorf("trace: %v\n%.300s", err, data)
	}

	// A plan for cores this machine lacks is refused before anything runs.
	text, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.ReplaceAll(string(text), "processor: cpu", "processor: cpu9")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runInlay(t, "run", wl, "--plan", bad, "--duration", "1s", "--ort-lib", lib, "--profiles", "")
	if err == nil || !strings.Contains(err.Error(), "which platform host lacks") {
		t.Errorf("plan on missing cores: %v\n%s", err, out)
	}
}

// TestRunRecord records a run's in-situ subgraph times into a new store;
// simulate then predicts with them.
func TestRunRecord(t *testing.T) {
	lib, dir, wl, planFile := planVoice(t, "--profiles", "")
	if out, err := runInlay(t, "run", wl, "--plan", planFile, "--duration", "1s", "--record", "--ort-lib", lib, "--profiles", ""); err == nil {
		t.Errorf("--record without a store succeeded\n%s", out)
	}
	store := filepath.Join(dir, "p.db")
	out, err := runInlay(t, "run", wl, "--plan", planFile, "--duration", "1s", "--record", "--ort-lib", lib, "--profiles", store)
	if err != nil {
		t.Fatalf("run --record: %v\n%s", err, out)
	}
	p, err := plan.Load(planFile)
	if err != nil {
		t.Fatal(err)
	}
	subgraphs := 0
	for _, mp := range p.Models {
		subgraphs += len(mp.Subgraphs)
	}
	st, err := profile.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.InSituRecords(profile.LocalDeviceName())
	st.Close()
	if err != nil || len(recs) != subgraphs {
		t.Fatalf("in-situ records %d, %v; the plan has %d subgraphs\n%s", len(recs), err, subgraphs, out)
	}
	for _, r := range recs {
		if r.Typical <= 0 || r.Reps == 0 || r.Min > r.Typical || r.Typical > r.Max {
			t.Errorf("in-situ record %+v", r)
		}
	}
	out, err = runInlay(t, "simulate", wl, "--plan", planFile, "--scale", "1", "--profiles", store)
	if err != nil || !strings.Contains(out, fmt.Sprintf("%d in-situ measurement(s)", subgraphs)) {
		t.Errorf("simulate with the recorded store: %v\n%s", err, out)
	}

	// The claim of docs/results/running-for-real.md: after --record, the simulator's p50 is within
	// 15 % of a run's (measured over 20 s runs on a quiet machine). Here,
	// in a 2 s run on a machine the test suite shares, a loose check: the
	// prediction within a factor of 3 of the measured p50, per group (on
	// the 2-core development machine under a load of 30, ratios from 0.9
	// to 2.9 were seen; a prediction that ignored the record would be
	// off far more).
	// A run on a shared machine can be slowed by whatever else runs then:
	// the check fails only when two runs in a row are off.
	var off []string
	for attempt := 1; attempt <= 2; attempt++ {
		off = predictionOff(t, wl, planFile, lib, store)
		if len(off) == 0 {
			return
		}
		t.Logf("run %d: %s", attempt, strings.Join(off, "; "))
	}
	t.Errorf("after --record, in two runs: %s", strings.Join(off, "; "))
}

// predictionOff runs the plan for 2 s at half its nominal rate with the
// recorded store and returns,
// per group whose prediction is off from its measured p50 by more than 3x,
// one line saying so.
func predictionOff(t *testing.T, wl, planFile, lib, store string) []string {
	t.Helper()
	// Half the nominal rate: a run that falls behind (a busy neighbour
	// taking a core) queues its requests, and its p50 then measures the
	// queue, not the prediction.
	out, err := runInlay(t, "run", wl, "--plan", planFile, "--duration", "2s", "--scale", "0.5", "--json", "--ort-lib", lib, "--profiles", store)
	if err != nil {
		t.Fatalf("run with the recorded store: %v\n%s", err, out)
	}
	var rj struct {
		Lag    float64 `json:"predicted_arrival_lag_ms"`
		Groups []struct {
			Name           string  `json:"name"`
			P50MS          float64 `json:"p50_ms"`
			PredictedP50MS float64 `json:"predicted_p50_ms"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rj); err != nil || len(rj.Groups) == 0 {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	var off []string
	for _, g := range rj.Groups {
		r := g.PredictedP50MS / g.P50MS
		t.Logf("group %s: measured p50 %.3g ms, predicted %.3g ms with a recorded arrival lag of %.3g ms (ratio %.3f)", g.Name, g.P50MS, g.PredictedP50MS, rj.Lag, r)
		if !(r > 1.0/3 && r < 3) {
			off = append(off, fmt.Sprintf("group %s: predicted p50 %.3g ms against %.3g ms measured: off by more than 3x", g.Name, g.PredictedP50MS, g.P50MS))
		}
	}
	return off
}
