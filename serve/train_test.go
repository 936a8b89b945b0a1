package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/report/trainreport"
	"github.com/inlay-dev/inlay/train"
)

func TestTrainModels(t *testing.T) {
	s, _ := New(Config{})
	info := answer[TrainInfo](t, s.Handler(), "GET", "/api/train/models", "", "TrainInfo")
	if len(info.Models) != len(train.Presets()) || len(info.GPUs) != len(train.GPUs()) || !slices.Contains(info.Planners, "inlay") {
		t.Errorf("%d models, %d GPU types, planners %v; want the presets, the catalogue and inlay", len(info.Models), len(info.GPUs), info.Planners)
	}
}

// TestTrainPlan: each planner answers inlay train plan --json's plan file
// with the plan's timeline; the figures are the simulator's for the plan,
// and the plan reads back as --plan reads it.
func TestTrainPlan(t *testing.T) {
	s, _ := New(Config{})
	req := `{"model": "opt-350m", "gpus": "16xA100-40,16xV100-16", "planners": ["inlay", "megatron"], "budget_ms": 500}`
	out := answer[TrainCompare](t, s.Handler(), "POST", "/api/train/plan", req, "TrainCompare")
	if out.Model != "opt-350m" || out.GPUs != 32 || len(out.Plans) != 2 || out.Plans[0].Planner != "inlay" || out.Plans[1].Planner != "megatron" {
		t.Fatalf("answer for %s on %d GPUs with planners %v", out.Model, out.GPUs, out.Plans)
	}
	m, c, err := train.ResolveTarget(train.Spec{Model: "opt-350m", Gpus: "16xA100-40,16xV100-16"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range out.Plans {
		f, tl := p.Result, p.Timeline
		if p.Error != "" || f == nil || tl == nil {
			t.Fatalf("%s: %q", p.Planner, p.Error)
		}
		raw, _ := json.Marshal(f)
		plan, ok, err := train.ParsePlanJSON("plan.json", raw, &m)
		if !ok || err != nil {
			t.Fatalf("%s: the result does not read back as a plan: %v", p.Planner, err)
		}
		sim, err := train.Simulate(&m, c, plan, train.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if f.Planner != p.Planner || !f.Fits || !(f.TokensPerS > 0) || math.Abs(sim.TokensPerS-f.TokensPerS) > 1e-9*f.TokensPerS ||
			math.Abs(tl.IterationS-f.IterationS) > 1e-12 || !(f.Fraction > 0 && f.Fraction <= 1) || f.GPUs != plan.GPUs() {
			t.Errorf("%s: tokens/s %v (simulated again: %v), iteration %v s (timeline %v), fraction %v, fits %v", p.Planner, f.TokensPerS, sim.TokensPerS, f.IterationS, tl.IterationS, f.Fraction, f.Fits)
		}
		checkTimeline(t, p.Planner, tl, plan)
	}
}

// checkTimeline: every shown replica has its stages and tasks, ending by
// the iteration's end, and each stage's memory fits its GPU.
func checkTimeline(t *testing.T, name string, tl *TrainTimeline, plan *train.Plan) {
	t.Helper()
	like := 0
	for _, n := range tl.Like {
		like += n
	}
	if tl.Replicas != plan.DP() || len(tl.Shown) == 0 || (!tl.Truncated && like != tl.Replicas) || len(tl.Stages) != len(tl.Shown)*plan.PP() {
		t.Errorf("%s: %d replicas, shown %v standing for %v, %d stages", name, tl.Replicas, tl.Shown, tl.Like, len(tl.Stages))
	}
	kinds := map[string]int{}
	for _, sp := range tl.Spans {
		kinds[sp.Kind]++
		if !slices.Contains(tl.Shown, sp.Replica) || sp.End < sp.Start || sp.End > tl.IterationS*(1+1e-9) {
			t.Errorf("%s: span %+v outside the shown replicas or the iteration (%v s)", name, sp, tl.IterationS)
			break
		}
	}
	if kinds["forward"] == 0 || kinds["forward"] != kinds["backward"] {
		t.Errorf("%s: tasks by kind %v: want as many backward as forward tasks", name, kinds)
	}
	for _, st := range tl.Stages {
		m := st.Memory
		if !st.Fits || !(m.Total > 0) || m.Total > st.CapacityBytes || m.Parameters <= 0 {
			t.Errorf("%s: replica %d stage %d: memory %+v against %v bytes", name, st.Replica, st.Stage, m, st.CapacityBytes)
		}
	}
}

// TestTrainPlanFileSchema: the plan file inlay train plan --json writes
// (with --explain's notes) matches the schema the web API's result uses.
func TestTrainPlanFileSchema(t *testing.T) {
	res, err := app.TrainPlan(app.TrainPlanInput{Spec: train.Spec{Model: "opt-350m", Gpus: "8xA100-40,8xV100-16"}, Planner: "inlay", Budget: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := trainreport.JSON(&buf, res.File); err != nil {
		t.Fatal(err)
	}
	mustMatchSchema(t, "TrainPlanFile", buf.String())
}

// TestTrainPlanBadRequests: each bad request gets a 400 whose one line
// names the field.
func TestTrainPlanBadRequests(t *testing.T) {
	s, _ := New(Config{MaxBudget: 3 * time.Second})
	h := s.Handler()
	for _, tc := range []struct{ name, body, want string }{
		{"no model", `{"gpus": "8xA100-40"}`, "no model"},
		{"unknown model", `{"model": "gpt5", "gpus": "8xA100-40"}`, `model "gpt5": not a preset`},
		{"model file", `{"model": "/etc/m.yaml", "gpus": "8xA100-40"}`, "not a preset"},
		{"bad one-line model", `{"model": "gpt:hidden=x", "gpus": "8xA100-40"}`, "model:"},
		{"too many layers", `{"model": "gpt:hidden=64,layers=60000,heads=1,seq=128,vocab=1000", "gpus": "8xA100-40"}`, "60000 layers, over this server's limit of 256"},
		{"bad gpus", `{"model": "opt-350m", "gpus": "8xB9000"}`, `gpus: --gpus "8xB9000": unknown GPU type`},
		{"no gpus", `{"model": "opt-350m"}`, "gpus: --gpus: empty"},
		{"too many GPUs", `{"model": "opt-350m", "gpus": "1024xA100-40,1024xV100-16"}`, "2048 GPUs, over this server's limit of 1024"},
		{"servers not filled", `{"model": "opt-350m", "gpus": "12xA100-40"}`, "do not fill servers of 8"},
		{"unknown planner", `{"model": "opt-350m", "gpus": "8xA100-40", "planners": ["alpa"]}`, `planners: planner: unknown planner "alpa"`},
		{"objective", `{"model": "opt-350m", "gpus": "8xA100-40", "objective": "speed"}`, `objective "speed"`},
		{"cost without prices", `{"model": "opt-350m", "gpus": "8xA100-40", "objective": "cost"}`, "prices: objective cost and max_dollars_per_hour need a price per GPU-hour for A100-40"},
		{"bad price", `{"model": "opt-350m", "gpus": "8xA100-40", "prices": {"A100-40": -1}}`, "prices: A100-40 -1"},
		{"budget over cap", `{"model": "opt-350m", "gpus": "8xA100-40", "budget_ms": 4000}`, "budget_ms 4000 is over this server's limit of 3000 ms"},
		{"global batch", `{"model": "opt-350m", "gpus": "8xA100-40", "global_batch": 100000}`, "global_batch 100000"},
		{"unknown field", `{"model": "opt-350m", "gpus": "8xA100-40", "cluster": "x"}`, "unknown field"},
		{"input for a transformer", `{"model": "opt-350m", "input": "3x224x224", "gpus": "8xA100-40"}`, `input "3x224x224": only a zoo network (zoo:NAME) takes an input shape`},
		{"bad input", `{"model": "zoo:resnet50", "input": "3xbig", "gpus": "8xA100-40"}`, `--input "3xbig": want one sample's dimensions, e.g. 3x224x224`},
		{"input of the wrong channels", `{"model": "zoo:resnet50", "input": "4x224x224", "gpus": "8xA100-40"}`, "resnet50 takes input [N, 3, H, W]"},
		{"input too small", `{"model": "zoo:resnet50", "input": "3x8x8", "gpus": "8xA100-40"}`, "input size 8 is outside 32-4096"},
		{"fixed input", `{"model": "zoo:vit_b_16", "input": "3x256x256", "gpus": "8xA100-40"}`, "vit_b_16 takes only input"},
		{"unknown network", `{"model": "zoo:alexnet", "gpus": "8xA100-40"}`, `model "zoo:alexnet": unknown network "alexnet"`},
		{"network file", `{"model": "zoo:/tmp/m.onnx", "gpus": "8xA100-40"}`, "unknown network"},
	} {
		st, body := do(t, h, "POST", "/api/train/plan", tc.body)
		var e apiError
		if err := json.Unmarshal([]byte(body), &e); err != nil || st != 400 || !strings.Contains(e.Error, tc.want) || strings.Contains(e.Error, "\n") {
			t.Errorf("%s: %d %s, want 400 with %q", tc.name, st, body, tc.want)
		}
	}
}

// TestTrainPlanStream: with Accept: text/event-stream each planner's row
// comes as it ends, then the whole answer; a planner that finds no plan
// says why in its row while the others answer.
func TestTrainPlanStream(t *testing.T) {
	_, ts := testServer(t, Config{})
	// megatron takes one GPU type, and neither type alone holds Llama-3-8B's
	// training state (16 bytes a parameter, 128 GB: two A100-40s have 80 GB,
	// eight V100-16s 128 GB less the framework's share); together they do.
	body := `{"model": "llama-3-8b", "gpus": "2xA100-40,8xV100-16", "planners": ["megatron", "inlay"], "budget_ms": 300}`
	res, ch := streamPost(t, context.Background(), ts.URL+"/api/train/plan", body)
	defer res.Body.Close()
	var rows []TrainPlanned
	var out TrainCompare
	results := 0
	for ev := range ch {
		switch ev[0] {
		case "planner":
			var row struct {
				Index   int          `json:"index"`
				Planner TrainPlanned `json:"planner"`
			}
			if err := json.Unmarshal([]byte(ev[1]), &row); err != nil || row.Index != len(rows) || results > 0 {
				t.Fatalf("planner event %s (%v) after %d rows and %d results", ev[1], err, len(rows), results)
			}
			rows = append(rows, row.Planner)
		case "result":
			results++
			mustMatchSchema(t, "TrainCompare", ev[1])
			if err := json.Unmarshal([]byte(ev[1]), &out); err != nil {
				t.Fatal(err)
			}
		case "error":
			t.Fatal(ev[1])
		}
	}
	if len(rows) != 2 || results != 1 || len(out.Plans) != 2 {
		t.Fatalf("%d rows, %d results with %d plans; want 2, 1, 2", len(rows), results, len(out.Plans))
	}
	for i, p := range out.Plans {
		if p.Planner != rows[i].Planner || p.Error != rows[i].Error {
			t.Errorf("plan %d: %s %q, streamed as %s %q", i, p.Planner, p.Error, rows[i].Planner, rows[i].Error)
		}
	}
	if !strings.Contains(out.Plans[0].Error, "no plan") || out.Plans[0].Result != nil || out.Plans[1].Result == nil || !(out.Plans[1].Result.TokensPerS > 0) {
		t.Errorf("megatron: %q; inlay: %+v", out.Plans[0].Error, out.Plans[1].Result)
	}
}

// TestTimelineShowsKinds: replicas alike are drawn once, at most 8 kinds,
// and the tasks stop at 20000, each cut said.
func TestTimelineShowsKinds(t *testing.T) {
	r := &train.Result{IterationS: 1}
	for rep := 0; rep < 12; rep++ {
		for st := 0; st < 2; st++ {
			// Replicas 0–1 are alike, then every one is its own kind.
			r.Stages = append(r.Stages, train.StageResult{Replica: rep, Stage: st, GPU: "A100-40", TP: 1, ComputeS: float64(max(rep, 1))})
			r.Spans = append(r.Spans, train.Span{Replica: rep, Stage: st, Kind: "forward", End: 0.5}, train.Span{Replica: rep, Stage: st, Kind: "backward", Start: 0.5, End: 1})
		}
	}
	tl := timeline(r)
	if tl.Replicas != 12 || !slices.Equal(tl.Shown, []int{0, 2, 3, 4, 5, 6, 7, 8}) || !slices.Equal(tl.Like, []int{2, 1, 1, 1, 1, 1, 1, 1}) ||
		!tl.Truncated || len(tl.Stages) != 16 || len(tl.Spans) != 32 {
		t.Errorf("replicas %d, shown %v standing for %v, truncated %v, %d stages, %d tasks", tl.Replicas, tl.Shown, tl.Like, tl.Truncated, len(tl.Stages), len(tl.Spans))
	}
	// One replica with more tasks than the cap: its first 20000.
	one := &train.Result{IterationS: 1, Stages: []train.StageResult{{GPU: "A100-40", TP: 1}}}
	for i := 0; i < maxTrainSpans+10; i++ {
		one.Spans = append(one.Spans, train.Span{Kind: "forward", Micro: i})
	}
	tl = timeline(one)
	if len(tl.Spans) != maxTrainSpans || !tl.Truncated || tl.Spans[maxTrainSpans-1].Micro != maxTrainSpans-1 {
		t.Errorf("%d tasks, truncated %v", len(tl.Spans), tl.Truncated)
	}
}

// TestTrainPlanNetworkInput: a zoo network's input shape travels with the
// request to the planner; the plan's samples per second follow the work
// of the input asked for (four times the pixels, well fewer samples a
// second; not a quarter, as the small image's passes are partly bound by
// the host's kernel launches).
func TestTrainPlanNetworkInput(t *testing.T) {
	s, _ := New(Config{})
	rate := func(input string) float64 {
		t.Helper()
		req := `{"model": "zoo:resnet50", "gpus": "8xA100-40", "planners": ["inlay"], "budget_ms": 300, "input": "` + input + `"}`
		st, body := do(t, s.Handler(), "POST", "/api/train/plan", req)
		if st != 200 {
			t.Fatalf("input %q: %d %s", input, st, body)
		}
		mustMatchSchema(t, "TrainCompare", body)
		var out TrainCompare
		if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Plans) != 1 || out.Plans[0].Result == nil {
			t.Fatalf("input %q: %v %s", input, err, body)
		}
		return out.Plans[0].Result.SamplesPerS
	}
	def, big := rate(""), rate("3x448x448")
	if !(def > 0) || !(big > 0) || !(big < 0.75*def) {
		t.Errorf("samples/s at 224×224 %v, at 448×448 %v: want four times the work well below the default's rate", def, big)
	}
}
