package planner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/inlay-dev/inlay/train"
)

func setup(t testing.TB, model, gpus string) (*train.Model, *train.Cluster) {
	t.Helper()
	m, err := train.ResolveModel(model)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Scenario{Model: model, GPUs: gpus}.Cluster()
	if err != nil {
		t.Fatal(err)
	}
	return &m, c
}

// TestPlannersFitAndStayUnderBound checks every planner on small cases:
// the plan fits, the simulator agrees, and the bound is above it.
func TestPlannersFitAndStayUnderBound(t *testing.T) {
	for _, tc := range [][2]string{{"opt-350m", "16xA100-40,16xV100-16"}, {"gpt-neo-2.7b", "8xA100-40,24xV100-16"}, {"opt-350m", "16xA100-40"}} {
		m, c := setup(t, tc[0], tc[1])
		for _, name := range Names() {
			pl, _ := New(name)
			res, err := pl.Plan(m, c, Options{GlobalBatch: 256})
			if err != nil {
				t.Fatalf("%s %v: %v", name, tc, err)
			}
			if !res.Sim.Fits || !train.Fits(m, c, res.Plan) {
				t.Errorf("%s %v: plan does not fit", name, tc)
			}
			again, err := train.Simulate(m, c, res.Plan, train.Options{})
			if err != nil || again.TokensPerS != res.Sim.TokensPerS {
				t.Errorf("%s %v: simulate again: %v", name, tc, err)
			}
			if res.Bound.TokensPerS < res.Sim.TokensPerS {
				t.Errorf("%s %v: bound %.0f below the plan's %.0f", name, tc, res.Bound.TokensPerS, res.Sim.TokensPerS)
			}
		}
	}
}

// TestInlayNotBelowBaselinesSmall checks that inlay is at least as fast as
// megatron on a homogeneous cluster.
func TestInlayNotBelowMegatronHomogeneous(t *testing.T) {
	m, c := setup(t, "gpt-neo-2.7b", "32xA100-40")
	a, err := Inlay{}.Plan(m, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Megatron{}.Plan(m, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Sim.TokensPerS < b.Sim.TokensPerS {
		t.Errorf("inlay %.0f < megatron %.0f", a.Sim.TokensPerS, b.Sim.TokensPerS)
	}
}

func TestInlayDeterministic(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40,16xV100-16")
	// a budget far beyond the search keeps the loop from being cut short
	o := Options{GlobalBatch: 256, Budget: 1 << 40}
	a, err := Inlay{}.Plan(m, c, o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Inlay{}.Plan(m, c, o)
	if !reflect.DeepEqual(a.Plan, b.Plan) {
		t.Errorf("two runs gave different plans:\n%s\n%s", Shape(a.Plan), Shape(b.Plan))
	}
}

func TestCapsAndCost(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40,16xV100-16")
	res, err := Inlay{}.Plan(m, c, Options{GlobalBatch: 256, MaxGPUs: 12})
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.GPUs() > 12 {
		t.Errorf("plan uses %d GPUs, cap 12", res.Plan.GPUs())
	}
	prices := map[string]float64{"A100-40": 4, "V100-16": 1}
	res, err = Inlay{}.Plan(m, c, Options{GlobalBatch: 256, Objective: "cost", Prices: prices, MaxDollarsPerHour: 20})
	if err != nil {
		t.Fatal(err)
	}
	if d := dollarsPerHour(res.Plan, prices); d > 20 {
		t.Errorf("plan costs $%.2f an hour, cap $20", d)
	}
	if _, err := (Inlay{}).Plan(m, c, Options{Objective: "cost"}); err == nil {
		t.Error("cost without prices: no error")
	}
}

// TestExportForms exports plans in every form; Export runs the
// consumer's checks, and a broken form must fail them.
func TestExportForms(t *testing.T) {
	m, c := setup(t, "gpt-neo-2.7b", "32xA100-40")
	p, err := train.Uniform(m, "A100-40", 2, 4, 4, 2, 64)
	if err != nil {
		t.Fatal(err)
	}
	p.Stages = ranges([]int{7, 9, 9, 7})
	p.Zero = 1
	for _, f := range ExportFormats {
		data, err := Export(f, m, c, p)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(data) == 0 {
			t.Fatalf("%s: empty", f)
		}
	}
	mega, _ := Export("megatron", m, c, p)
	for _, bad := range []string{"--num-layerz 32", "--decoder-first-pipeline-num-layers 8"} {
		if CheckExport("megatron", m, c, p, append(append([]byte{}, mega...), []byte("\n"+bad)...)) == nil {
			t.Errorf("megatron check passed with %q", bad)
		}
	}
	ds, _ := Export("deepspeed", m, c, p)
	var cfg map[string]any
	_ = json.Unmarshal(ds, &cfg)
	cfg["gradient_accumulation_steps"] = 3.0
	bad, _ := json.Marshal(cfg)
	if CheckExport("deepspeed", m, c, p, bad) == nil {
		t.Error("deepspeed check passed a broken batch")
	}
	// middle stages that differ cannot go to Megatron-LM
	p.Stages = ranges([]int{8, 7, 9, 8})
	if _, err := Export("megatron", m, c, p); err == nil {
		t.Error("uneven middle stages exported to Megatron-LM")
	}
}

// TestHeterogeneousExport: an unlike-replica plan goes to the per-rank
// file and Sailor only when its batch is even.
func TestHeterogeneousExport(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40,16xV100-16")
	res, err := Inlay{}.Plan(m, c, Options{GlobalBatch: 256})
	if err != nil {
		t.Fatal(err)
	}
	data, err := Export("ranks", m, c, res.Plan)
	if err != nil {
		t.Fatal(err)
	}
	var f RankFile
	if err := json.Unmarshal(data, &f); err != nil || f.WorldSize != res.Plan.GPUs() {
		t.Fatalf("ranks: %v, world %d", err, f.WorldSize)
	}
	if _, err := Export("megatron", m, c, res.Plan); err == nil && len(c.Types()) > 1 && len(planTypes(res.Plan)) > 1 {
		t.Error("a plan of two GPU types exported to Megatron-LM")
	}
}

func planTypes(p *train.Plan) map[string]bool {
	out := map[string]bool{}
	p.EachGroup(func(gpu string, _, _ int) { out[gpu] = true })
	return out
}

// TestPlanFileRoundTrip writes the plan file and reads it back as
// simulate --plan does.
func TestPlanFileRoundTrip(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40,16xV100-16")
	res, err := Inlay{}.Plan(m, c, Options{GlobalBatch: 256})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(File(m, c, Options{}, res))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, info, err := train.LoadPlan(path, m)
	if err != nil || info != nil {
		t.Fatalf("load: %v (sailor info %v)", err, info)
	}
	if !reflect.DeepEqual(p, res.Plan) {
		t.Errorf("read back a different plan:\n%+v\n%+v", p, res.Plan)
	}
}

func TestRegistry(t *testing.T) {
	if fmt.Sprint(Names()) != "[amp inlay megatron metis]" {
		t.Errorf("names %v", Names())
	}
	if _, err := New("nope"); err == nil {
		t.Error("unknown planner: no error")
	}
}

func benchInlay(b *testing.B, model, gpus string) {
	m, c := setup(b, model, gpus)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := (Inlay{}).Plan(m, c, Options{Budget: 1 << 40}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInlayTwoTypes256(b *testing.B) {
	for _, m := range []string{"opt-350m", "gpt-neo-2.7b", "llama-3-8b"} {
		b.Run(m, func(b *testing.B) { benchInlay(b, m, "256xA100-40,256xV100-16") })
	}
}

func BenchmarkInlayThreeTypes256(b *testing.B) {
	benchInlay(b, "gpt-neo-2.7b", "256xA100-40,256xV100-16,256xRTX-2080Ti")
}

func TestJobThroughputCached(t *testing.T) {
	m, _ := train.Preset("opt-350m")
	j := &JobThroughput{Model: m, Options: Options{GlobalBatch: 128}}
	a := Allocation{GPUs: map[string]int{"A100-40": 8, "V100-16": 8}}
	v1, err := j.TokensPerS(a)
	if err != nil || v1 <= 0 {
		t.Fatalf("%v, %v", v1, err)
	}
	v2, _ := j.TokensPerS(Allocation{GPUs: map[string]int{"V100-16": 8, "A100-40": 8, "H100-SXM": 0}})
	if v2 != v1 || j.Plans != 1 {
		t.Errorf("same allocation planned again: %v %v, %d runs", v1, v2, j.Plans)
	}
	small, _ := j.TokensPerS(Allocation{GPUs: map[string]int{"A100-40": 8}})
	if small <= 0 || small > v1 {
		t.Errorf("8 A100s give %v, 8 A100s and 8 V100s %v", small, v1)
	}
	if z, _ := j.TokensPerS(Allocation{}); z != 0 {
		t.Errorf("empty allocation: %v", z)
	}
}
