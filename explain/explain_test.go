package explain_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/explain"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/graph/graphtest"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/bestmap"
	"github.com/inlay-dev/inlay/search/heft"
	"github.com/inlay-dev/inlay/search/inlay"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// chain is in → L0 → … → out, one Conv per layer.
func chain(name string, n int) *graph.Model {
	return graphtest.Chain(name, n, graph.Shape{1, 64, 32, 32}, graph.Work{MACs: 1e7, FLOPs: 2e7})
}

// threeProcs is a CPU, an NPU without Conv and a float16-only GPU in one
// domain, and a workload of one three-layer float32 Conv chain.
func threeProcs(t *testing.T) (*hw.Platform, *workload.Workload, *graph.LayerGraph, cost.Estimator) {
	t.Helper()
	pl := &hw.Platform{Name: "three", Domains: []hw.Domain{{Name: "d"}}}
	for _, p := range []struct {
		name, kind string
		dt         graph.DType
		unsupp     []string
	}{{"cpu", "cpu", graph.Float32, nil}, {"npu", "npu", graph.Float32, []string{"Conv"}}, {"gpu", "gpu", graph.Float16, nil}} {
		pl.Processors = append(pl.Processors, &hw.Processor{Name: p.name, Kind: p.kind, Backends: []string{"b"},
			DTypes: []hw.DTypeSpec{{DType: p.dt, PeakGOPS: 100}}, Concurrency: 1, Domain: "d", MemBandwidthGBs: 10,
			DispatchOverhead: 50 * time.Microsecond, Support: hw.Support{Unsupported: p.unsupp}})
	}
	g := chain("m", 3)
	lg, err := graph.BuildLayers(g)
	if err != nil {
		t.Fatal(err)
	}
	w := &workload.Workload{Models: []*workload.Model{{Name: "m", Graph: g, Layers: lg, Zoo: "m", Precision: []graph.DType{graph.Float32}}},
		Groups: []*workload.Group{{Name: "g", Models: []string{"m"}, Period: 100 * time.Millisecond, Deadline: 100 * time.Millisecond, Arrival: workload.Periodic}}}
	est := cost.NewAnalytic(pl)
	return pl, w, lg, est
}

func TestExplain(t *testing.T) {
	pl, w, lg, est := threeProcs(t)
	p := &plan.Plan{Planner: "hand", Models: []plan.ModelPlan{{Model: "m", Subgraphs: []plan.Subgraph{
		{Layers: graph.NewLayerSet(0, 1), Processor: "cpu", Backend: "b", DType: "float32"},
		{Layers: graph.NewLayerSet(2), Processor: "cpu", Backend: "b", DType: "float32"},
	}}}}
	ex, err := explain.Explain(w, pl, est, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Models) != 1 || len(ex.Models[0].Subgraphs) != 2 {
		t.Fatalf("explanation shape %+v", ex)
	}
	s := ex.Models[0].Subgraphs[0]
	byName := map[string]explain.Candidate{}
	for _, c := range s.Options {
		byName[c.Processor] = c
	}
	if c := byName["npu"]; c.Filter != explain.FilterSupport || !strings.Contains(c.Why, "Conv") {
		t.Errorf("npu: filter %q (%s), want operator support naming Conv", c.Filter, c.Why)
	}
	if c := byName["gpu"]; c.Filter != explain.FilterPrecision || !strings.Contains(c.Why, "float32") {
		t.Errorf("gpu: filter %q (%s), want precision", c.Filter, c.Why)
	}
	cpu := byName["cpu"]
	if !cpu.Chosen || cpu.Filter != "" {
		t.Fatalf("cpu: %+v, want the chosen, unfiltered candidate", cpu)
	}
	var names []string
	for _, sc := range cpu.Scores {
		names = append(names, sc.Name)
	}
	if got := strings.Join(names, ","); got != "time,transfer,finish,load,max load" {
		t.Errorf("score chain %s", got)
	}
	cfg, _ := p.Models[0].Subgraphs[0].Config(pl)
	want, _ := est.Subgraph(lg, graph.NewLayerSet(0, 1), cfg)
	if got := cpu.Score(explain.ScoreTime); math.Abs(got-float64(want)/1e6) > 1e-9 {
		t.Errorf("time %g ms, estimator %v", got, want)
	}
	// The chosen candidate's max load is the plan's: its inverse is the
	// simulator's load limit.
	prog, err := sim.Compile(w, pl, est, p)
	if err != nil {
		t.Fatal(err)
	}
	limit, _ := sim.LoadLimit(prog.Program)
	if got := 1 / cpu.Score(explain.ScoreMaxLoad); math.Abs(got-limit) > 1e-6*limit {
		t.Errorf("1/max load %g, load limit %g", got, limit)
	}
	// The second subgraph finishes after the first.
	second := ex.Models[0].Subgraphs[1].Options[0]
	if second.Score(explain.ScoreFinish) <= cpu.Score(explain.ScoreFinish) {
		t.Errorf("finish of the second subgraph %g not after the first's %g", second.Score(explain.ScoreFinish), cpu.Score(explain.ScoreFinish))
	}
	b, err := json.Marshal(ex)
	if err != nil || !strings.Contains(string(b), `"name":"max load"`) || !strings.Contains(string(b), `"filter":"precision"`) {
		t.Errorf("JSON %s (%v)", b, err)
	}
	if tabs := ex.Tables(); len(tabs) != 2 || len(tabs[0].Rows) != 3 || tabs[0].Rows[0][0] != "*" {
		t.Errorf("tables %+v", tabs)
	}
}

// A processor whose memory_mib cannot take a subgraph's weights is
// excluded by the memory filter; one with room is scored.
func TestExplainMemoryFilter(t *testing.T) {
	const mib = 1 << 20
	pl := &hw.Platform{Name: "two", Domains: []hw.Domain{{Name: "d"}}}
	for _, name := range []string{"big", "small", "roomy"} {
		pl.Processors = append(pl.Processors, &hw.Processor{Name: name, Kind: "cpu", Backends: []string{"b"},
			DTypes: []hw.DTypeSpec{{DType: graph.Float32, PeakGOPS: 100}}, Concurrency: 1, Domain: "d", MemBandwidthGBs: 10})
	}
	pl.Processors[1].MemoryBytes = 3 * mib
	pl.Processors[2].MemoryBytes = 64 * mib
	g := chain("m", 2)
	lg, err := graph.BuildLayers(g)
	if err != nil {
		t.Fatal(err)
	}
	for l := range lg.Layers {
		lg.Layers[l].Work.WeightBytes, lg.Layers[l].Work.DType = 2*mib, graph.Float32
	}
	w := &workload.Workload{Models: []*workload.Model{{Name: "m", Graph: g, Layers: lg, Zoo: "m"}},
		Groups: []*workload.Group{{Name: "g", Models: []string{"m"}, Period: 100 * time.Millisecond, Deadline: 100 * time.Millisecond, Arrival: workload.Periodic}}}
	p := &plan.Plan{Planner: "hand", Models: []plan.ModelPlan{{Model: "m", Subgraphs: []plan.Subgraph{
		{Layers: graph.NewLayerSet(0, 1), Processor: "big", Backend: "b", DType: "float32"},
	}}}}
	ex, err := explain.Explain(w, pl, cost.NewAnalytic(pl), p)
	if err != nil {
		t.Fatal(err)
	}
	opts := ex.Models[0].Subgraphs[0].Options
	if c := opts[1]; c.Filter != explain.FilterMemory || !strings.Contains(c.Why, `processor "small" (memory_mib) at 4.0 MiB of 3.0 MiB`) {
		t.Errorf("small: filter %q why %q, want excluded by memory", c.Filter, c.Why)
	}
	if c := opts[2]; c.Filter != "" || len(c.Scores) == 0 {
		t.Errorf("roomy: filter %q (%s), scores %v: want scored", c.Filter, c.Why, c.Scores)
	}
}

// TestExplainShowsRecordedDecisions: a planner that records its decisions
// is explained by them (its own figures and words), a plan without records
// by the what-if chain, labelled as such.
func TestExplainShowsRecordedDecisions(t *testing.T) {
	pl, w, _, est := threeProcs(t)
	req := &plan.Request{Workload: w, Platform: pl, Cost: est}
	for _, tc := range []struct {
		planner plan.Planner
		step    string
		scores  string
	}{
		{heft.Planner{}, "earliest finish of layer", "time,finish"},
		{bestmap.Planner{}, "fastest whole-model configuration", "time"},
	} {
		p, err := tc.planner.Plan(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := explain.Explain(w, pl, est, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ex.Models[0].Subgraphs {
			if !s.Recorded || !strings.HasPrefix(s.Step, tc.step) {
				t.Errorf("%s [%s]: recorded %v, step %q; want the planner's record (%s…)", p.Planner, s.Layers, s.Recorded, s.Step, tc.step)
			}
			for _, c := range s.Options {
				var names []string
				for _, sc := range c.Scores {
					names = append(names, sc.Name)
				}
				switch {
				case c.Processor == "cpu" && (!c.Chosen || strings.Join(names, ",") != tc.scores):
					t.Errorf("%s: cpu %+v, want chosen with scores %s", p.Planner, c, tc.scores)
				case c.Processor != "cpu" && (c.Filter == "" || c.Why == ""):
					t.Errorf("%s: %s %+v, want excluded with a reason", p.Planner, c.Processor, c)
				}
			}
		}
		if tb := ex.Tables(); len(tb) == 0 || !strings.Contains(tb[0].Caption, tc.step) || tb[0].Header[3] != "time ms" {
			t.Errorf("%s: tables %+v", p.Planner, tb)
		}
	}
	// A search planner records how it chose the whole plan, and for each
	// subgraph the best scale of the plans it evaluated with the
	// subgraph's first layer on each processor: the chosen one's is the
	// plan's own (it is the best), no other beats it.
	searchReq := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Evals: 8}
	ev := sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1})
	sp, err := inlay.New(inlay.Options{}).Plan(context.Background(), searchReq, ev)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ev.Evaluate(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	sel := sp.Selection
	if sel == nil || sel.Evaluated < 1 || sel.Evaluated > 8 || sel.Scale != sc.Scale || sel.Phase == "" {
		t.Fatalf("inlay's selection %+v, want 1 to 8 plans evaluated, scale %v and the phase that found it", sel, sc.Scale)
	}
	ex, err := explain.Explain(w, pl, est, sp)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Selection != sel {
		t.Errorf("explanation's selection %+v, want the plan's", ex.Selection)
	}
	for _, s := range ex.Models[0].Subgraphs {
		if !s.Recorded || !strings.HasPrefix(s.Step, "best simulated scale of the") {
			t.Errorf("search plan [%s]: recorded %v, step %q", s.Layers, s.Recorded, s.Step)
		}
		for _, c := range s.Options {
			v := c.Score(plan.ScoreBestScale)
			switch {
			case c.Chosen && v != sel.Scale:
				t.Errorf("[%s] chosen %s: best scale %v, want the plan's %v", s.Layers, c.Processor, v, sel.Scale)
			case !c.Chosen && v > sel.Scale:
				t.Errorf("[%s] %s: best scale %v above the chosen plan's %v", s.Layers, c.Processor, v, sel.Scale)
			case math.IsNaN(v) && c.Filter != plan.FilterUntried:
				t.Errorf("[%s] %s: no score and filter %q, want %q", s.Layers, c.Processor, c.Filter, plan.FilterUntried)
			}
		}
	}
	hand := &plan.Plan{Planner: "hand", Models: []plan.ModelPlan{{Model: "m", Subgraphs: []plan.Subgraph{
		{Layers: graph.NewLayerSet(0, 1, 2), Processor: "cpu", Backend: "b", DType: "float32"}}}}}
	ex, err = explain.Explain(w, pl, est, hand)
	if err != nil {
		t.Fatal(err)
	}
	if s := ex.Models[0].Subgraphs[0]; s.Recorded || !strings.HasPrefix(s.Step, "what-if") {
		t.Errorf("unrecorded plan: recorded %v, step %q; want a labelled what-if", s.Recorded, s.Step)
	}
}
