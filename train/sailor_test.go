package train

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/fuzzcheck"
)

const sailorDir = "sailor/sailor/Planner/simulations/validation/clariden/"

func TestSailorPlan(t *testing.T) {
	path := assets.RequireTraining(t, sailorDir+"OPT-350/N8/plan_config_N8_D2.json")
	m, _ := Preset("opt-350m")
	p, info, err := LoadPlan(path, &m)
	if err != nil {
		t.Fatal(err)
	}
	if p.PP() != 4 || p.DP() != 2 || p.MicroBatch != 8 || p.GlobalBatch != 512 || p.Precision != "tf32" ||
		p.Stages[0] != (LayerRange{0, 3}) || p.Stages[3] != (LayerRange{18, 23}) || p.Replicas[0].Stages[0] != (Placement{GPU: "GH200-96", TP: 4}) {
		t.Errorf("plan %+v", p)
	}
	if info.Nodes != 8 || info.MeasuredIterationS != 2.69795 || info.GPUsPerNode["GH200-96"] != 4 {
		t.Errorf("info %+v", info)
	}
	c, err := SailorCluster(p, info)
	if err != nil {
		t.Fatal(err)
	}
	if c.GPUs("GH200-96") != 32 || c.Groups[0].GPUsPerNode != 4 || c.Groups[0].IntraGBs != 250.6 || c.NetworkGBs != 92.55 {
		t.Errorf("cluster %+v", c)
	}
	r, err := Simulate(&m, c, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := r.IterationS/info.MeasuredIterationS - 1; e < -0.25 || e > 0.25 {
		t.Errorf("predicted %.2f s against the measured %.2f s", r.IterationS, info.MeasuredIterationS)
	}
	// the plan files with the layer typo (README: layer 19 missing, 29
	// twice) are refused with the place
	bad := assets.RequireTraining(t, sailorDir+"GPT-NEO/N8/plan_config_N8_D2.json")
	neo, _ := Preset("gpt-neo-2.7b")
	if _, _, err := LoadPlan(bad, &neo); err == nil || !strings.Contains(err.Error(), "layers_per_stage[2]") {
		t.Errorf("got %v", err)
	}
}

func TestSailorPlanErrors(t *testing.T) {
	m, _ := Preset("opt-350m")
	stage := `[[[["GH-96", 4, "z"]], 4]]`
	for _, tc := range []struct{ name, json, want string }{
		{"syntax", `{"pipeline_list": [}`, "line 1"},
		{"mbs", `{"pipeline_list": [{"num_stages": 1, "layers_per_stage": [[0]], "tmp_per_stage": [` + stage + `], "dp": [1]}], "gbs": 1}`, "mbs"},
		{"uncovered", `{"pipeline_list": [{"num_stages": 1, "layers_per_stage": [[0,1,2]], "tmp_per_stage": [` + stage + `], "dp": [1]}], "mbs": 1, "gbs": 1}`, "layer 3 is not covered"},
		{"gpu", `{"pipeline_list": [{"num_stages": 1, "layers_per_stage": [[` + seq(26) + `]], "tmp_per_stage": [[[[["H9", 4, "z"]], 4]]], "dp": [1]}], "mbs": 1, "gbs": 1}`, `unknown GPU type "H9"`},
		{"tp", `{"pipeline_list": [{"num_stages": 1, "layers_per_stage": [[` + seq(26) + `]], "tmp_per_stage": [[[[["GH-96", 4, "z"]], 3]]], "dp": [1]}], "mbs": 1, "gbs": 1}`, "does not divide the 16 attention heads"},
		{"nodes", `{"pipeline_list": [{"num_stages": 1, "layers_per_stage": [[` + seq(26) + `]], "tmp_per_stage": [` + stage + `], "dp": [1]}], "mbs": 1, "gbs": 1, "N": 3}`, "N: 3 nodes, but the stages' GPUs fill 1"},
	} {
		_, _, err := ParseSailorPlan("s.json", []byte(tc.json), &m)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "s.json") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.name, err, tc.want)
		}
	}
}

func seq(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(i)
	}
	return strings.Join(parts, ",")
}

func FuzzSailorParse(f *testing.F) {
	if data, err := os.ReadFile("../../shared/training/" + sailorDir + "OPT-350/N4/plan_config_N4_D2.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"pipeline_list": [{"num_stages": 1, "layers_per_stage": [[` + seq(26) + `]], "tmp_per_stage": [[[[["GH-96", 4, "z"]], 4]]], "dp": [1]}], "mbs": 1, "gbs": 1, "N": 1}`))
	f.Add([]byte(`{}`))
	m, _ := Preset("opt-350m")
	f.Fuzz(func(t *testing.T, data []byte) {
		p, info, err := ParseSailorPlan("f.json", data, &m)
		if err != nil {
			fuzzcheck.OneLine(t, err)
			return
		}
		if p.GPUs() > 4096 || p.GlobalBatch > 1<<14 {
			return
		}
		c, err := SailorCluster(p, info)
		if err != nil {
			return
		}
		_, err = Simulate(&m, c, p, Options{})
		fuzzcheck.OneLine(t, err)
	})
}
