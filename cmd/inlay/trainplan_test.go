package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainPlanJSONRoundTrip: plan --json, then simulate --plan on the
// file gives the same throughput.
func TestTrainPlanJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	gpus := "16xA100-40,16xV100-16"
	out, err := runInlay(t, "train", "plan", "--model", "opt-350m", "--gpus", gpus, "--global-batch", "256", "--json")
	if err != nil {
		t.Fatal(err, out)
	}
	mustMatchOpenAPI(t, "TrainPlanFile", out)
	var pf struct {
		Planner    string          `json:"planner"`
		TokensPerS float64         `json:"tokens_per_s"`
		Bound      float64         `json:"bound_tokens_per_s"`
		Fits       bool            `json:"fits"`
		Search     *float64        `json:"search_seconds"`
		Peak       float64         `json:"peak_memory_bytes"`
		IterationS float64         `json:"iteration_s"`
		Plan       json.RawMessage `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &pf); err != nil {
		t.Fatal(err)
	}
	if pf.Planner != "inlay" || !pf.Fits || pf.TokensPerS <= 0 || pf.Bound < pf.TokensPerS || pf.Search == nil || pf.Peak <= 0 || pf.IterationS <= 0 {
		t.Fatalf("plan file %+v", pf)
	}
	path := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	sim, err := runInlay(t, "train", "simulate", "--model", "opt-350m", "--gpus", gpus, "--plan", path, "--json")
	if err != nil {
		t.Fatal(err, sim)
	}
	var res struct {
		TokensPerS float64 `json:"tokens_per_s"`
	}
	if err := json.Unmarshal([]byte(sim), &res); err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.TokensPerS-pf.TokensPerS) > 1e-6*pf.TokensPerS {
		t.Errorf("simulate --plan: %v tokens/s, plan said %v", res.TokensPerS, pf.TokensPerS)
	}
	ranks := filepath.Join(dir, "ranks.json")
	if out, err := runInlay(t, "train", "plan", "--model", "opt-350m", "--gpus", gpus, "--global-batch", "256", "--explain", "--export", "ranks", "-o", ranks); err != nil || !strings.Contains(out, "binding") {
		t.Fatalf("explain/export: %v\n%s", err, out)
	}
	if _, err := runInlay(t, "train", "plan", "--model", "opt-350m", "--gpus", gpus, "--planner", "nope"); err == nil {
		t.Error("unknown planner: no error")
	}
}

// TestTrainPlanStageGroups: metis's plan with per-stage data parallelism
// matches the schema, simulates again to the same throughput from its
// file and from its YAML form, exports to the per-rank file, and the
// engines' forms refuse it in one line.
func TestTrainPlanStageGroups(t *testing.T) {
	dir := t.TempDir()
	gpus := "16xA100-40,48xV100-16"
	out, err := runInlay(t, "train", "plan", "--model", "gpt-neo-2.7b", "--gpus", gpus, "--global-batch", "256", "--planner", "metis", "--json")
	if err != nil {
		t.Fatal(err, out)
	}
	mustMatchOpenAPI(t, "TrainPlanFile", out)
	var pf struct {
		TokensPerS float64 `json:"tokens_per_s"`
		Plan       struct {
			Groups []json.RawMessage `json:"groups"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &pf); err != nil || len(pf.Plan.Groups) == 0 {
		t.Fatalf("%v: no groups in %s", err, out)
	}
	path := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	sim, err := runInlay(t, "train", "simulate", "--model", "gpt-neo-2.7b", "--gpus", gpus, "--plan", path, "--json")
	if err != nil {
		t.Fatal(err, sim)
	}
	mustMatchOpenAPI(t, "TrainResult", sim)
	var res struct {
		TokensPerS float64 `json:"tokens_per_s"`
	}
	if err := json.Unmarshal([]byte(sim), &res); err != nil || math.Abs(res.TokensPerS-pf.TokensPerS) > 1e-6*pf.TokensPerS {
		t.Errorf("simulate --plan: %v tokens/s (%v), plan said %v", res.TokensPerS, err, pf.TokensPerS)
	}
	if out, err := runInlay(t, "train", "plan", "--model", "gpt-neo-2.7b", "--gpus", gpus, "--global-batch", "256", "--planner", "metis", "--export", "ranks", "-o", filepath.Join(dir, "ranks.json")); err != nil {
		t.Errorf("export ranks: %v\n%s", err, out)
	}
	out, err = runInlay(t, "train", "plan", "--model", "gpt-neo-2.7b", "--gpus", gpus, "--global-batch", "256", "--planner", "metis", "--export", "megatron", "-o", filepath.Join(dir, "args.txt"))
	if err == nil || !strings.Contains(err.Error()+out, "--export ranks") {
		t.Errorf("export megatron: %v\n%s", err, out)
	}
}
