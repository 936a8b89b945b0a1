package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inlay train simulate --json prints the fields scripts read; a plan that
// does not fit gets its time with fits false and the reason; bad input is
// one line.
func TestTrainSimulateCLI(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, error) { return runInlay(t, args...) }
	out, err := run("train", "simulate", "--model", "gpt:hidden=12288,layers=96,heads=96,seq=2048,vocab=51200",
		"--gpus", "512xA100-80", "--gpus-per-node", "8", "--intra-gbps", "150", "--inter-gbps", "800",
		"--tp", "8", "--pp", "16", "--dp", "4", "--micro-batch", "6", "--global-batch", "1536",
		"--recompute", "none", "--schedule", "1f1b", "--zero", "0", "--json",
		"--trace", filepath.Join(dir, "t.json"), "--gantt", filepath.Join(dir, "g.svg"))
	if err != nil {
		t.Fatal(err)
	}
	mustMatchOpenAPI(t, "TrainResult", out)
	var res struct {
		IterationS      float64 `json:"iteration_s"`
		TokensPerS      float64 `json:"tokens_per_s"`
		MFU             float64 `json:"mfu"`
		PeakMemoryBytes float64 `json:"peak_memory_bytes"`
		Fits            *bool   `json:"fits"`
		Reason          string  `json:"reason"`
		Stages          []struct {
			GPU    string          `json:"gpu"`
			Layers json.RawMessage `json:"layers"`
			TimeS  float64         `json:"time_s"`
			Memory struct {
				Total float64 `json:"total"`
			} `json:"memory"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if res.IterationS <= 0 || res.TokensPerS <= 0 || res.MFU <= 0 || res.Fits == nil || *res.Fits || res.Reason == "" ||
		len(res.Stages) != 64 || res.Stages[0].GPU != "A100-80" || res.Stages[0].Memory.Total != res.PeakMemoryBytes {
		t.Errorf("got %+v", res)
	}
	for _, f := range []string{"t.json", "g.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := run("train", "simulate", "--model", "gpt3-1t", "--gpus", "64xA100-80", "--tp", "3"); err == nil ||
		!strings.Contains(err.Error(), "tp: 3 does not divide the 160 attention heads") || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v", err)
	}
	out, err = run("train", "models")
	if err != nil || !strings.Contains(out, "llama-3-70b") || !strings.Contains(out, "GH200-96") || !strings.Contains(out, "zoo:resnet50") {
		t.Errorf("models: %v\n%s", err, out)
	}
}

// --cp splits each stage's sequence over cp × tp GPUs: the JSON's stages
// carry it (from the flag or the plan file), the world size counts it, and
// the flag overrides a plan file's cp.
func TestTrainSimulateCP(t *testing.T) {
	var res struct {
		Stages []struct {
			CP int `json:"cp"`
			TP int `json:"tp"`
		} `json:"stages"`
	}
	for _, args := range [][]string{
		{"--tp", "4", "--cp", "2", "--micro-batch", "1", "--global-batch", "8"},
		{"--plan", "../../examples/train/llama-3-8b-32k-tp4-cp2.yaml"},
	} {
		out, err := runInlay(t, append([]string{"train", "simulate", "--model", "llama-3-8b", "--gpus", "8xA100-80", "--json"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Stages) != 1 || res.Stages[0].CP != 2 {
			t.Errorf("%v: stages %+v (%v)\n%s", args, res.Stages, err, out)
		}
	}
	if _, err := runInlay(t, "train", "simulate", "--model", "llama-3-8b", "--gpus", "8xA100-80", "--tp", "4", "--cp", "4"); err == nil ||
		!strings.Contains(err.Error(), "cp 4") {
		t.Errorf("tp 4 × cp 4 on 8 GPUs: %v", err)
	}
	if _, err := runInlay(t, "train", "simulate", "--model", "llama-3-8b", "--gpus", "8xA100-80", "--plan", "../../examples/train/llama-3-8b-32k-tp8.yaml", "--cp", "2"); err == nil ||
		!strings.Contains(err.Error(), "16 GPUs") {
		t.Errorf("the tp 8 plan with --cp 2 on 8 GPUs: %v", err)
	}
}

// A CNN from the zoo trains from the same commands: samples/s in the text
// and the JSON (tokens/s kept), --input sizes it, tensor parallelism on
// it and an unknown network are one line.
func TestTrainGraphCLI(t *testing.T) {
	out, err := runInlay(t, "train", "simulate", "--model", "zoo:resnet50", "--gpus", "8xV100-16", "--micro-batch", "64",
		"--precision", "fp16", "--optimizer", "sgd", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		TokensPerS  float64 `json:"tokens_per_s"`
		SamplesPerS float64 `json:"samples_per_s"`
		Fits        bool    `json:"fits"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if res.SamplesPerS <= 0 || res.SamplesPerS != res.TokensPerS || !res.Fits {
		t.Errorf("got %+v", res)
	}
	small, err := runInlay(t, "train", "memory", "--model", "resnet18", "--input", "3x32x32", "--gpus", "1xV100-16", "--micro-batch", "128")
	if err != nil || !strings.Contains(small, "every GPU fits") {
		t.Errorf("memory at 32×32: %v\n%s", err, small)
	}
	text, err := runInlay(t, "train", "plan", "--model", "resnet50", "--gpus", "8xV100-16", "--global-batch", "512")
	if err != nil || !strings.Contains(text, "samples/s") || strings.Contains(text, "tokens/s") {
		t.Errorf("plan: %v\n%s", err, text)
	}
	for _, c := range [][]string{
		{"--model", "resnet50", "--tp", "2"},
		{"--model", "zoo:resnet5"},
		{"--model", filepath.Join(t.TempDir(), "missing.onnx")},
	} {
		_, err := runInlay(t, append([]string{"train", "simulate", "--gpus", "8xV100-16"}, c...)...)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v", c, err)
		}
	}
}
