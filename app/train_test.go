package app

import (
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/train"
)

func TestTrainPlan(t *testing.T) {
	in := TrainPlanInput{Spec: train.Spec{Model: "opt-350m", Gpus: "16xA100-40,16xV100-16", GPUsPerNode: 8, InterGbps: 800},
		Planner: "inlay", Objective: "throughput", GlobalBatch: 256, Export: "ranks"}
	res, err := TrainPlan(in)
	if err != nil {
		t.Fatal(err)
	}
	pf := res.File
	if pf.Planner != "inlay" || !pf.Fits || !(pf.TokensPerS > 0) || pf.BoundTokensPerS < pf.TokensPerS || pf.GPUs <= 0 ||
		res.Result.Plan == nil || res.Result.Plan.GlobalBatch != 256 || len(res.Export) == 0 {
		t.Errorf("plan file %+v, export %d bytes", pf, len(res.Export))
	}
	for _, tc := range []struct {
		edit func(*TrainPlanInput)
		want string
	}{
		{func(in *TrainPlanInput) { in.Planner = "nope" }, "nope"},
		{func(in *TrainPlanInput) { in.Prices = "X=1" }, `--prices "X=1"`},
		{func(in *TrainPlanInput) { in.Export = "nope" }, "nope"},
	} {
		bad := in
		tc.edit(&bad)
		if _, err := TrainPlan(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func TestParsePrices(t *testing.T) {
	p, err := ParsePrices("A100-40=2, V100-16=1.5")
	if err != nil || len(p) != 2 || p["V100-16"] != 1.5 {
		t.Errorf("%v %v", p, err)
	}
	for _, bad := range []string{"A100-40", "A100-40=0", "A100-40=x", "NOPE=1"} {
		if _, err := ParsePrices(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if p, err := ParsePrices(""); err != nil || len(p) != 0 {
		t.Errorf("empty: %v %v", p, err)
	}
}

func TestTrainBenchOnly(t *testing.T) {
	if rows := TrainBench("inlay", "no such scenario", 0); len(rows) != 0 {
		t.Errorf("%d rows", len(rows))
	}
}

func TestTrainCalibrateNeedsData(t *testing.T) {
	if _, err := TrainCalibrate(TrainCalibrateInput{}); err == nil || !strings.Contains(err.Error(), "--published") {
		t.Errorf("got %v", err)
	}
}
