package plan

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/graph/graphtest"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/workload"
)

// testWorkload has one model "m" of 3 chain layers, a side layer (3) and a
// join (4): edges 0->1->2->4, 0->3->4.
func testWorkload(t testing.TB) *workload.Workload {
	t.Helper()
	gm := graphtest.Branched("chain", 3, graph.Shape{1, 4}, graph.Work{MACs: 16})
	lg, err := graph.BuildLayers(gm)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Layers) != 5 {
		t.Fatalf("test model has %d layers, want 5", len(lg.Layers))
	}
	return &workload.Workload{
		Models: []*workload.Model{{Name: "m", Graph: gm, Layers: lg, Source: "test"}},
		Groups: []*workload.Group{{Name: "g", Models: []string{"m"}, After: map[string][]string{}, Period: 1e7, Deadline: 1e7, Arrival: "periodic"}},
	}
}

// testPlatform has a CPU that runs everything and an NPU without Gemm.
func testPlatform() *hw.Platform {
	return &hw.Platform{
		Name: "test",
		Processors: []*hw.Processor{
			{Name: "cpu0", Kind: "cpu", Backends: []string{"xnnpack", "ort-cpu"}, DTypes: []hw.DTypeSpec{{DType: graph.Float32, PeakGOPS: 10}}, Concurrency: 1, Domain: "dram"},
			{Name: "npu0", Kind: "npu", Backends: []string{"qnn-htp"}, DTypes: []hw.DTypeSpec{{DType: graph.Int8, PeakGOPS: 100}, {DType: graph.Float16, PeakGOPS: 50}},
				Concurrency: 1, Domain: "dram", Support: hw.Support{Unsupported: []string{"Gemm"}}},
		},
		Domains: []hw.Domain{{Name: "dram"}},
	}
}

func sub(key, proc string) Subgraph {
	s, err := graph.ParseLayerSet(key)
	if err != nil {
		panic(err)
	}
	return Subgraph{Layers: s, Processor: proc}
}

func f16(s Subgraph) Subgraph { s.DType = "float16"; return s }

// TestValidatePrecision: a workload's precision: list lets a float model
// run in int8.
func TestValidatePrecision(t *testing.T) {
	w, pl := testWorkload(t), testPlatform()
	w.Models[0].Precision = []graph.DType{graph.Int8, graph.Float32}
	p := &Plan{Models: []ModelPlan{{Model: "m", Subgraphs: []Subgraph{sub("0-2", "npu0"), sub("3-4", "cpu0")}}}}
	if err := p.Validate(w, pl); err != nil {
		t.Fatalf("rejected with int8 allowed: %v", err)
	}
	p.Models[0].Subgraphs[0] = f16(p.Models[0].Subgraphs[0])
	if err := p.Validate(w, pl); err == nil || !strings.Contains(err.Error(), "data type float16 is not allowed") {
		t.Fatalf("float16 with precision [int8, float32]: got %v", err)
	}
}

func TestValidate(t *testing.T) {
	w, pl := testWorkload(t), testPlatform()
	tests := []struct {
		name string
		subs []Subgraph
		want string // "" for valid
	}{
		{"all on cpu", []Subgraph{sub("0-4", "cpu0")}, ""},
		{"npu with gemm fallback", []Subgraph{f16(sub("0-2", "npu0")), sub("3", "cpu0"), f16(sub("4", "npu0"))}, ""},
		{"int8 for a float model", []Subgraph{{Layers: graph.Range(0, 3), Processor: "npu0", DType: "int8"}, sub("3-4", "cpu0")},
			`subgraph 0 (layers 0-2): data type int8 is not allowed for model "m" (precision: float32, float16)`},
		{"processor default not allowed", []Subgraph{sub("0-2", "npu0"), sub("3-4", "cpu0")}, `the subgraph gives no dtype, so it runs in npu0's default`},
		{"with backend and dtype", []Subgraph{{Layers: graph.Range(0, 5), Processor: "cpu0", Backend: "ort-cpu", DType: "float32"}}, ""},
		{"unknown processor", []Subgraph{sub("0-4", "gpu9")}, `subgraph 0 (layers 0-4): unknown processor "gpu9" (platform test has cpu0, npu0)`},
		{"unknown backend", []Subgraph{{Layers: graph.Range(0, 5), Processor: "cpu0", Backend: "cuda"}}, `processor cpu0 has no backend "cuda"`},
		{"unknown dtype", []Subgraph{{Layers: graph.Range(0, 5), Processor: "cpu0", DType: "int8"}}, `processor cpu0 has no data type "int8"`},
		{"bad dtype name", []Subgraph{{Layers: graph.Range(0, 5), Processor: "cpu0", DType: "f32"}}, `no data type "f32"`},
		{"layer twice", []Subgraph{sub("0-3", "cpu0"), sub("3-4", "cpu0")}, "subgraph 1 (layers 3-4): layer 3 is in subgraph 0 too"},
		{"layer missing", []Subgraph{sub("0-2", "cpu0"), sub("4", "cpu0")}, "layers 3 are in no subgraph"},
		{"layer out of range", []Subgraph{sub("0-5", "cpu0")}, "layer 5 out of range (the model has layers 0-4)"},
		{"not convex", []Subgraph{sub("0,2-4", "cpu0"), sub("1", "cpu0")}, "subgraph 0 (layers 0,2-4): not convex: path 0 -> 1 (outside) -> 2"},
		{"unsupported operator", []Subgraph{f16(sub("0-4", "npu0"))}, "subgraph 0 (layers 0-4): layer 3: hw: npu0 cannot run Gemm node"},
		{"order not topological", []Subgraph{sub("4", "cpu0"), sub("0-3", "cpu0")}, "subgraph 1 (layer 2) feeds subgraph 0 (layer 4), which is listed before it"},
		{"no subgraphs", nil, `model "m": no subgraphs`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{Models: []ModelPlan{{Model: "m", Subgraphs: tc.subs}}}
			err := p.Validate(w, pl)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		p    *Plan
		want string
	}{
		{"unknown model", &Plan{Models: []ModelPlan{{Model: "m", Subgraphs: []Subgraph{sub("0-4", "cpu0")}}, {Model: "x"}}}, `unknown model "x"`},
		{"model not planned", &Plan{}, `model "m" is not planned`},
		{"model twice", &Plan{Models: []ModelPlan{{Model: "m", Subgraphs: []Subgraph{sub("0-4", "cpu0")}}, {Model: "m", Subgraphs: []Subgraph{sub("0-4", "cpu0")}}}}, `model "m" planned twice`},
	} {
		if err := tc.p.Validate(w, pl); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestConfig(t *testing.T) {
	pl := testPlatform()
	cfg, err := Subgraph{Processor: "npu0"}.Config(pl)
	if err != nil || cfg != (hw.Config{Proc: 1, Backend: "qnn-htp", DType: graph.Int8}) {
		t.Errorf("default config = %v, %v", cfg, err)
	}
	cfg, err = Subgraph{Processor: "npu0", DType: "float16"}.Config(pl)
	if err != nil || cfg.DType != graph.Float16 {
		t.Errorf("float16 config = %v, %v", cfg, err)
	}
}

func TestRoundTrip(t *testing.T) {
	p := &Plan{Planner: "heft", Platform: "phone", Models: []ModelPlan{
		{Model: "det", Priority: 1, Subgraphs: []Subgraph{
			{Layers: graph.NewLayerSet(0, 1, 2, 4), Processor: "npu", Backend: "qnn-htp", DType: "int8"},
			{Layers: graph.NewLayerSet(3), Processor: "cpu", Backend: "xnnpack", DType: "float32"},
		}},
		{Model: "face", Subgraphs: []Subgraph{{Layers: graph.Range(0, 7), Processor: "gpu"}}},
	}}
	dir := t.TempDir()
	for _, name := range []string{"p.yaml", "p.yml", "p.json"} {
		path := filepath.Join(dir, name)
		if err := p.Save(path); err != nil {
			t.Fatal(err)
		}
		back, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, p) {
			data, _ := os.ReadFile(path)
			t.Errorf("%s: round trip changed the plan:\n%s\n%+v", name, data, back)
		}
	}
	data, _ := p.Encode(YAML)
	if !strings.Contains(string(data), `- {layers: '0-2,4', processor: npu, backend: qnn-htp, dtype: int8}`) {
		t.Errorf("YAML does not show layer keys:\n%s", data)
	}
	if err := p.Save(filepath.Join(dir, "p.txt")); err == nil {
		t.Error("saved with an unknown extension")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		data string
		want string
	}{
		{"malformed yaml", YAML, "models: [", "plan: p: "},
		{"unknown field yaml", YAML, "models:\n  - model: m\n    prio: 1\n", "line 3: field prio not found"},
		{"unknown field json", JSON, `{"models": [{"model": "m", "subgraphs": [{"layers": "0", "processor": "c", "colour": 1}]}]}`, `unknown field "colour"`},
		{"bad layers", YAML, "models:\n  - model: m\n    subgraphs: [{layers: 3-1, processor: c}]\n", `model "m": subgraph 0: bad layer range "3-1"`},
		{"empty layers", YAML, "models:\n  - model: m\n    subgraphs: [{layers: '', processor: c}]\n", `subgraph 0: no layers`},
		{"no processor", YAML, "models:\n  - model: m\n    subgraphs: [{layers: '0'}]\n", `subgraph 0 (layers 0): no processor`},
		{"layer twice", YAML, "models:\n  - model: m\n    subgraphs: [{layers: '0-2', processor: c}, {layers: '2', processor: c}]\n", `subgraph 1: layer 2 is in subgraph 0 too`},
		{"model twice", JSON, `{"models": [{"model": "m", "subgraphs": [{"layers": "0", "processor": "c"}]}, {"model": "m"}]}`, `model "m" planned twice`},
		{"no model name", JSON, `{"models": [{"subgraphs": []}]}`, `models[0]: no model name`},
		{"no subgraphs", JSON, `{"models": [{"model": "m"}]}`, `model "m": no subgraphs`},
		{"json syntax", JSON, "{\n\"models\": [,]}", "p: line 2: invalid character"},
		{"json type", JSON, "{\"models\": [{\"model\": \"m\", \"priority\": \"high\"}]}", "line 1: models.priority: want int, got string"},
		{"trailing json", JSON, `{"models": []} []`, "data after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.data), tc.f, "p")
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tc.want)
			}
		})
	}
	if _, err := Load("plan.toml"); err == nil || !strings.Contains(err.Error(), "unknown extension") {
		t.Errorf("Load(plan.toml) = %v", err)
	}
}

func FuzzPlanParse(f *testing.F) {
	f.Add([]byte("planner: heft\nmodels:\n  - model: m\n    priority: 2\n    subgraphs: [{layers: '0-2,4', processor: npu, backend: qnn-htp, dtype: int8}]\n"), false)
	f.Add([]byte(`{"models": [{"model": "m", "subgraphs": [{"layers": "0-3", "processor": "cpu"}]}]}`), true)
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		format := YAML
		if isJSON {
			format = JSON
		}
		p, err := Parse(data, format, "f")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			return
		}
		// A parsed plan encodes and parses back to itself.
		for _, f2 := range []Format{YAML, JSON} {
			out, err := p.Encode(f2)
			if err != nil {
				t.Fatalf("encode %s: %v", f2, err)
			}
			back, err := Parse(out, f2, "back")
			if err != nil {
				t.Fatalf("%s round trip: %v\n%s", f2, err, out)
			}
			if !reflect.DeepEqual(back, p) {
				t.Fatalf("%s round trip changed the plan:\n%s", f2, out)
			}
		}
		// Validation of arbitrary plans against a fixed model never panics.
		_ = p.Validate(testWorkload(t), testPlatform())
	})
}
