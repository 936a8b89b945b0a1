package sim

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/graph/graphtest"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/workload"
)

// chainModel is in → L0 → L1 → ... → out, each tensor 1 MB (float32 ×
// 250000), each node a Conv (one layer each).
func chainModel(name string, n int) *graph.Model {
	return graphtest.Chain(name, n, graph.Shape{1, 250000}, graph.Work{MACs: 1, FLOPs: 2})
}

// handSetup: P0 in domain d0, P1 in d1, a 1 GB/s link with 0.5 ms latency
// (a 1 MB copy takes 1.5 ms); model a (2 layers) and b (1 layer) in one
// group; layer times a: L0 3 ms on P0, L1 4 ms on P1; b: L0 5 ms on P1.
func handSetup(shared bool, after bool) (*workload.Workload, *hw.Platform, *testEstimator) {
	pl := &hw.Platform{Name: "hand", Domains: []hw.Domain{{Name: "d0"}, {Name: "d1"}},
		Links: []hw.Link{{From: "d0", To: "d1", BandwidthGBs: 1, Latency: 500 * time.Microsecond, Shared: shared}}}
	for i, d := range []string{"d0", "d1"} {
		pl.Processors = append(pl.Processors, &hw.Processor{Name: "P" + string(rune('0'+i)), Kind: "cpu",
			Backends: []string{"ort-cpu"}, DTypes: []hw.DTypeSpec{{DType: graph.Float32, PeakGOPS: 10}}, Concurrency: 1, Domain: d})
	}
	est := &testEstimator{pl: pl, base: map[*graph.LayerGraph][][]time.Duration{},
		unsupported: map[*graph.LayerGraph][][]bool{}, overhead: []time.Duration{0, 0}}
	w := &workload.Workload{Platform: "hand"}
	for _, spec := range []struct {
		name  string
		times [][]time.Duration
	}{
		{"a", [][]time.Duration{{3 * ms, 3 * ms}, {4 * ms, 4 * ms}}},
		{"b", [][]time.Duration{{5 * ms, 5 * ms}}},
	} {
		g := chainModel(spec.name, len(spec.times))
		lg, err := graph.BuildLayers(g)
		if err != nil {
			panic(err)
		}
		est.base[lg] = spec.times
		est.unsupported[lg] = make([][]bool, len(spec.times))
		for i := range spec.times {
			est.unsupported[lg][i] = []bool{false, spec.name == "a" && i == 0}
		}
		w.Models = append(w.Models, &workload.Model{Name: spec.name, Graph: g, Layers: lg})
	}
	g := &workload.Group{Name: "g", Models: []string{"a", "b"}, Period: 100 * ms, Deadline: 100 * ms, Arrival: workload.Periodic}
	if after {
		g.After = map[string][]string{"b": {"a"}}
	}
	w.Groups = []*workload.Group{g}
	return w, pl, est
}

func handPlan() *plan.Plan {
	sg := func(layers graph.LayerSet, proc string) plan.Subgraph {
		return plan.Subgraph{Layers: layers, Processor: proc, Backend: "ort-cpu", DType: "float32"}
	}
	return &plan.Plan{Planner: "hand", Models: []plan.ModelPlan{
		{Model: "a", Priority: 1, Subgraphs: []plan.Subgraph{sg(graph.LayerSet{0}, "P0"), sg(graph.LayerSet{1}, "P1")}},
		{Model: "b", Priority: 0, Subgraphs: []plan.Subgraph{sg(graph.LayerSet{0}, "P1")}},
	}}
}

// TestCompileHandSchedules checks the schedules of the hand setup; with
// handOff, the estimator prices a hand-off (0.25 ms on one processor, 1 ms
// across): it lands on the job after a cut, once, priced on the processor
// the data came from (a transfer's: the producer's), and on a model's
// source after the models it waits for; a job without dependencies pays
// the estimator's start figure (from processor -1), 0 or, with start,
// 0.5 ms.
func TestCompileHandSchedules(t *testing.T) {
	tests := []struct {
		name    string
		shared  bool
		after   bool
		handOff bool
		start   time.Duration
		// curve prices a hand-off across by the run of the job before
		// it: a sixth of it (curveHandOff).
		curve bool
		want  []string
	}{
		{
			// a[0] on P0 [0,3]; the 1 MB copy [3,4.5]; P1 runs b (priority 0)
			// [0,5], then a[1] [5,9].
			name: "transfer", want: []string{"P0 a[0] r0 0-3", "P1 b[0] r0 0-5", "d0-d1 a[0]>[1] r0 3-4.5", "P1 a[1] r0 5-9"},
		},
		{
			// b after a: b waits for a's last subgraph: a[1] [4.5,8.5], b [8.5,13.5].
			name: "after", after: true,
			want: []string{"P0 a[0] r0 0-3", "d0-d1 a[0]>[1] r0 3-4.5", "P1 a[1] r0 4.5-8.5", "P1 b[0] r0 8.5-13.5"},
		},
		{
			// a[1] waits for a[0] (P0, through the copy): 4 ms + 1 ms
			// across; b has no dependency: none. A span starts after its
			// hand-off (the processor is held from 5): a[1] 6-10.
			name: "transfer, hand-off", handOff: true,
			want: []string{"P0 a[0] r0 0-3", "P1 b[0] r0 0-5", "d0-d1 a[0]>[1] r0 3-4.5", "P1 a[1] r0 6-10"},
		},
		{
			// b after a: its dependency a[1] ran on P1, its own processor:
			// 5 ms + 0.25 ms.
			name: "after, hand-off", after: true, handOff: true,
			want: []string{"P0 a[0] r0 0-3", "d0-d1 a[0]>[1] r0 3-4.5", "P1 a[1] r0 5.5-9.5", "P1 b[0] r0 9.75-14.75"},
		},
		{
			// The sources a[0] and b[0] start on the arrival: 0.5 ms each;
			// a[1] as before (1 ms across).
			name: "transfer, hand-off, start", handOff: true, start: 500 * time.Microsecond,
			want: []string{"P0 a[0] r0 0.5-3.5", "P1 b[0] r0 0.5-5.5", "d0-d1 a[0]>[1] r0 3.5-5", "P1 a[1] r0 6.5-10.5"},
		},
		{
			// b waits for a: only a[0] pays the start; b the 0.25 ms after
			// a[1] on its own processor.
			name: "after, hand-off, start", after: true, handOff: true, start: 500 * time.Microsecond,
			want: []string{"P0 a[0] r0 0.5-3.5", "d0-d1 a[0]>[1] r0 3.5-5", "P1 a[1] r0 6-10", "P1 b[0] r0 10.25-15.25"},
		},
		{
			// With the curve, a[1] pays a sixth of a[0]'s 3 ms across (0.5
			// ms, not 1): P1 is free at 5, a[1] 5.5-9.5.
			name: "transfer, hand-off, curve", handOff: true, curve: true,
			want: []string{"P0 a[0] r0 0-3", "P1 b[0] r0 0-5", "d0-d1 a[0]>[1] r0 3-4.5", "P1 a[1] r0 5.5-9.5"},
		},
		{
			// a[1] after the copy and 0.5 ms: 5-9; b after a[1] on its
			// own processor pays the same-processor 0.25 ms, not the curve.
			name: "after, hand-off, curve", after: true, handOff: true, curve: true,
			want: []string{"P0 a[0] r0 0-3", "d0-d1 a[0]>[1] r0 3-4.5", "P1 a[1] r0 5-9", "P1 b[0] r0 9.25-14.25"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, pl, te := handSetup(tc.shared, tc.after)
			var est cost.Estimator = te
			if tc.handOff {
				est = handOffEstimator{te, 250 * time.Microsecond, time.Millisecond, tc.start}
			}
			if tc.curve {
				est = curveHandOff{est.(handOffEstimator)}
			}
			prog, err := Compile(w, pl, est, handPlan())
			if err != nil {
				t.Fatal(err)
			}
			res := one(t, prog)
			got := spanLines(res)
			sortByStart(got, res)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("schedule\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	sg := func(layers graph.LayerSet, proc string) plan.Subgraph {
		return plan.Subgraph{Layers: layers, Processor: proc}
	}
	tests := []struct {
		name string
		edit func(p *plan.Plan)
		want string
	}{
		{"missing model", func(p *plan.Plan) { p.Models = p.Models[:1] }, `no subgraphs for model "b"`},
		{"unknown model", func(p *plan.Plan) { p.Models = append(p.Models, plan.ModelPlan{Model: "zz"}) }, `model "zz", which the workload lacks`},
		{"layer twice", func(p *plan.Plan) { p.Models[0].Subgraphs[1].Layers = graph.LayerSet{0, 1} }, "layer 0 is in subgraphs 0 and 1"},
		{"layer missing", func(p *plan.Plan) { p.Models[0].Subgraphs = p.Models[0].Subgraphs[:1] }, "layer 1 (a_t1) is in no subgraph"},
		{"layer range", func(p *plan.Plan) { p.Models[1].Subgraphs[0].Layers = graph.LayerSet{0, 4} }, "layer 4 out of range"},
		{"unknown processor", func(p *plan.Plan) { p.Models[1].Subgraphs[0].Processor = "tpu" }, `unknown processor "tpu"`},
		{"unsupported", func(p *plan.Plan) { p.Models[0].Subgraphs[0].Processor = "P1" }, "unsupported"},
		{"listing order", func(p *plan.Plan) {
			p.Models[0].Subgraphs = []plan.Subgraph{sg(graph.LayerSet{1}, "P1"), sg(graph.LayerSet{0}, "P0")}
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, pl, est := handSetup(false, false)
			p := handPlan()
			tc.edit(p)
			_, err := Compile(w, pl, est, p)
			if tc.want == "" {
				// Listing order is not dependency order; Compile orders by
				// the layer graph, so this is fine.
				if err != nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile = %v, want an error containing %q", err, tc.want)
			}
			if tc.name == "unsupported" && !errors.Is(err, cost.ErrUnsupported) {
				t.Errorf("error %v does not wrap cost.ErrUnsupported", err)
			}
		})
	}
}

func TestNonConvexSubgraphIsACycle(t *testing.T) {
	// a has three layers 0 → 1 → 2; the subgraph {0, 2} around {1} on
	// another processor is not convex: the two subgraphs wait for each other.
	w, pl, est := handSetup(false, false)
	g := chainModel("a", 3)
	lg, _ := graph.BuildLayers(g)
	est.base[lg] = [][]time.Duration{{ms, ms}, {ms, ms}, {ms, ms}}
	est.unsupported[lg] = [][]bool{{false, false}, {false, false}, {false, false}}
	w.Models[0] = &workload.Model{Name: "a", Graph: g, Layers: lg}
	p := handPlan()
	p.Models[0].Subgraphs = []plan.Subgraph{
		{Layers: graph.LayerSet{0, 2}, Processor: "P0"}, {Layers: graph.LayerSet{1}, Processor: "P1"},
	}
	_, err := Compile(w, pl, est, p)
	if err == nil || !strings.Contains(err.Error(), "depends on itself") {
		t.Fatalf("Compile = %v, want a cycle error", err)
	}
}

func TestEvaluator(t *testing.T) {
	w, pl, est := handSetup(true, false)
	ev := NewEvaluator(w, pl, est, Options{Seed: 1})
	prog, err := Compile(w, pl, est, handPlan())
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := MaxSustainableScale(prog, Options{Seed: 1, NoSpans: true})
	if err != nil {
		t.Fatal(err)
	}
	// Concurrent evaluations agree with each other and with the direct call.
	var wg sync.WaitGroup
	scores := make([]plan.Score, 8)
	errs := make([]error, 8)
	for i := range scores {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			scores[i], errs[i] = ev.Evaluate(context.Background(), handPlan())
		}(i)
	}
	wg.Wait()
	for i, s := range scores {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if s.Scale != want || !s.Feasible {
			t.Errorf("evaluation %d: %+v, want scale %v feasible", i, s, want)
		}
	}
	// P1 carries 9 ms per 100 ms request: the load limit is 100/9 and the
	// deadline (100 ms) is loose, so the answer is near it.
	if lim := 100.0 / 9; want > lim || want < lim*0.5 {
		t.Errorf("scale %v, want close below the load limit %v", want, lim)
	}
	b, err := ratebound.Upper(w, pl, est)
	if err != nil {
		t.Fatal(err)
	}
	if want > b.Scale {
		t.Errorf("scale %v above the bound %v", want, b.Scale)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ev.Evaluate(ctx, handPlan()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled evaluation: %v", err)
	}
	// Infeasible: a deadline below a's critical-path bound (0.7 of its
	// 7 ms of layers: the test estimator's per-layer lower bound).
	w.Groups[0].Deadline = 4 * ms
	s, err := NewEvaluator(w, pl, est, Options{}).Evaluate(context.Background(), handPlan())
	if err != nil {
		t.Fatal(err)
	}
	if s.Scale != 0 || s.Feasible || !strings.Contains(s.Reason, "infeasible") {
		t.Errorf("score %+v, want infeasible with a reason", s)
	}
	if b, _ := ratebound.Upper(w, pl, est); b.Scale != 0 || !strings.Contains(b.Why, "critical path 4.899998ms") {
		t.Errorf("bound %+v, want 0 by the 4.9 ms critical path", b)
	}
	t.Logf("infeasible reason: %s", s.Reason)
}

// handOffEstimator is testEstimator with a hand-off: same on one
// processor, cross between two.
type handOffEstimator struct {
	*testEstimator
	same, cross time.Duration
	// start is the hand-off before a model's source subgraph (from -1).
	start time.Duration
}

func (h handOffEstimator) HandOff(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config, from int) time.Duration {
	switch from {
	case on.Proc:
		return h.same
	case -1:
		return h.start
	}
	return h.cross
}

// curveHandOff is handOffEstimator with a hand-off curve: across, a
// sixth of the run of the job before.
type curveHandOff struct{ handOffEstimator }

func (c curveHandOff) CrossAfter(ran time.Duration) (time.Duration, bool) { return ran / 6, true }

// countingHandOff is handOffEstimator counting the hand-offs asked of it.
type countingHandOff struct {
	handOffEstimator
	calls *atomic.Int64
}

func (c countingHandOff) HandOff(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config, from int) time.Duration {
	c.calls.Add(1)
	return c.handOffEstimator.HandOff(lg, set, on, from)
}

// TestCachedHandOff checks that the evaluator's cache asks the base for
// each hand-off once (per subgraph, configuration and processor it comes
// from), and that programs compiled through it are the base's.
func TestCachedHandOff(t *testing.T) {
	w, pl, te := handSetup(false, true)
	calls := &atomic.Int64{}
	base := countingHandOff{handOffEstimator{te, 250 * time.Microsecond, time.Millisecond, 0}, calls}
	want, err := Compile(w, pl, base, handPlan())
	if err != nil {
		t.Fatal(err)
	}
	direct := calls.Load()
	if direct == 0 {
		t.Fatal("the plan prices no hand-off")
	}
	c := newCachedEstimator(base)
	for i := 0; i < 3; i++ {
		got, err := Compile(w, pl, c, handPlan())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Program, want.Program) {
			t.Fatalf("compile %d through the cache differs:\n got %+v\nwant %+v", i, got.Program.Jobs, want.Program.Jobs)
		}
	}
	if n := calls.Load() - direct; n != direct {
		t.Errorf("three compiles through the cache asked the base %d hand-offs, want %d (the first compile's)", n, direct)
	}
	// Another processor the dependency came from is another answer.
	lg := w.Model("a").Layers
	on := hw.Config{Proc: 1, Backend: "ort-cpu", DType: graph.Float32}
	if same, cross := c.HandOff(lg, graph.LayerSet{1}, on, 1), c.HandOff(lg, graph.LayerSet{1}, on, 0); same != 250*time.Microsecond || cross != time.Millisecond {
		t.Errorf("cached hand-offs: same %v, cross %v; want 250µs, 1ms", same, cross)
	}
	// The curve is the base's, through the cache, and none without one.
	if d, ok := newCachedEstimator(curveHandOff{base.handOffEstimator}).CrossAfter(3 * time.Millisecond); !ok || d != 500*time.Microsecond {
		t.Errorf("cached curve after 3ms: %v, %v; want the base's 500µs", d, ok)
	}
	if _, ok := c.CrossAfter(time.Millisecond); ok {
		t.Error("a base without a curve answered one through the cache")
	}
	// A base without hand-offs prices none, and is not asked.
	if h := newCachedEstimator(te).HandOff(lg, graph.LayerSet{1}, on, 0); h != 0 {
		t.Errorf("base without hand-offs: %v", h)
	}
}
