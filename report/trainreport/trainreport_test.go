package trainreport

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/train/planner"
	"github.com/inlay-dev/inlay/train/published"
)

func TestCalibration(t *testing.T) {
	r := &published.Report{Sets: []published.SetReport{{Set: "sc21", N: 3, Folds: "leave-one-out", Median: 0.01, P95: 0.02, Worst: 0.04, Mean: 0.02}},
		Fitted: []published.FittedGPU{{GPU: "A100-80", Sources: []string{"sc21"}}}}
	doc := Calibration(r)
	if len(doc.Sets) != 1 || doc.Sets[0].KendallMin != nil || len(doc.Fitted) != 1 ||
		len(doc.Targets) != 1 || doc.Targets[0].Metric != "worst" || doc.Targets[0].Met {
		t.Errorf("%+v", doc)
	}
	var b bytes.Buffer
	if err := WriteCalibration(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"targets:", "sc21", "≤ 3.0%", "fitted on every row:", "A100-80"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}

func TestPlanAndBench(t *testing.T) {
	m, c, err := train.ResolveTarget(train.Spec{Model: "opt-350m", Gpus: "16xA100-40,16xV100-16", GPUsPerNode: 8, InterGbps: 800})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := planner.New("inlay")
	if err != nil {
		t.Fatal(err)
	}
	o := planner.Options{Objective: "throughput", GlobalBatch: 256}
	res, err := pl.Plan(&m, c, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WritePlan(&b, planner.File(&m, c, o, res), res, true); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.HasPrefix(out, "planner inlay: ") || !strings.Contains(out, "binding overall: ") ||
		strings.Count(out, "\n") < 8+len(res.Plan.Stages) {
		t.Errorf("plan:\n%s", out)
	}
	b.Reset()
	rows := []planner.BenchRow{{Scenario: "s", Planner: "p", Error: "no plan"}, {Scenario: "s", Planner: "q", TokensPerS: 10, Fraction: 0.5, GPUs: 8, Shape: "pp1"}}
	if err := WriteBench(&b, rows); err != nil || !strings.Contains(b.String(), "no plan") || !strings.Contains(b.String(), "50.0 %") {
		t.Errorf("bench: %v\n%s", err, b.String())
	}
	b.Reset()
	if err := JSON(&b, Models()); err != nil {
		t.Fatal(err)
	}
	var doc ModelsDoc
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Models) != len(train.Presets()) || len(doc.GPUs) != len(train.GPUs()) ||
		len(doc.Networks) != len(train.Networks()) || len(doc.Networks) == 0 {
		t.Errorf("models: %v", err)
	}
	if n := doc.Networks[0]; n.Name != "zoo:mobilenet_v2" || n.Input != "3x224x224" || len(n.InputShape) != 3 || n.Params == 0 {
		t.Errorf("the first graph network: %+v", n)
	}
	b.Reset()
	if err := WriteModels(&b); err != nil || !strings.Contains(b.String(), "GRAPH NETWORK") ||
		!regexp.MustCompile(`(?m)^zoo:resnet50 +3x224x224 +25\.6 M +8\.22 +56$`).MatchString(b.String()) ||
		!regexp.MustCompile(`(?m)^zoo:vit_b_16 +3x224x224 \(only\) `).MatchString(b.String()) {
		t.Errorf("models:\n%s", b.String())
	}
}
