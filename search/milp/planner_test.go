package milp_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/graph/graphtest"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/bestmap"
	"github.com/inlay-dev/inlay/search/milp"
	"github.com/inlay-dev/inlay/search/space"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/solver"
	"github.com/inlay-dev/inlay/solver/solvertest"
	"github.com/inlay-dev/inlay/workload"
)

const ms = time.Millisecond

// additive is an estimator whose subgraph time is the dispatch overhead
// plus its layers' times, so its lower bounds are exact.
type additive struct {
	pl       *hw.Platform
	times    map[*graph.LayerGraph][][]time.Duration // [layer][proc]
	dispatch time.Duration
}

func (a *additive) Subgraph(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (time.Duration, error) {
	d := a.dispatch
	for _, l := range set {
		t := a.times[lg][l][on.Proc]
		if t < 0 {
			return 0, cost.ErrUnsupported
		}
		d += t
	}
	return d, nil
}

func (a *additive) Transfer(bytes int64, from, to int) time.Duration {
	return a.pl.Transfer(bytes, from, to)
}

func (a *additive) LayerLowerBound(lg *graph.LayerGraph, l int, on hw.Config) (time.Duration, error) {
	t := a.times[lg][l][on.Proc]
	if t < 0 {
		return 0, cost.ErrUnsupported
	}
	return t, nil
}

func (a *additive) DispatchLowerBound(int) time.Duration { return a.dispatch }

// chain is in → L0 → … → out, one Conv per layer.
func chain(name string, n int) *graph.Model {
	return graphtest.Chain(name, n, graph.Shape{1, 1000}, graph.Work{MACs: 1, FLOPs: 2})
}

// handInstance: processors P0 and P1 in one memory domain, a dispatch
// overhead δ per subgraph, models a and b of one layer each in one group
// at rate r. With a on P0 and b on P1 the loads are r(a0+δ) and r(b1+δ);
// the optimum is the least over the four assignments of the larger load.
func handInstance(t *testing.T, a0, a1, b0, b1, delta time.Duration, rate float64) (*workload.Workload, *hw.Platform, *additive) {
	t.Helper()
	pl := &hw.Platform{Name: "hand", Domains: []hw.Domain{{Name: "d"}}}
	for _, n := range []string{"P0", "P1"} {
		pl.Processors = append(pl.Processors, &hw.Processor{Name: n, Kind: "cpu", Backends: []string{"ort-cpu"},
			DTypes: []hw.DTypeSpec{{DType: graph.Float32, PeakGOPS: 10}}, Concurrency: 1, Domain: "d"})
	}
	est := &additive{pl: pl, times: map[*graph.LayerGraph][][]time.Duration{}, dispatch: delta}
	w := &workload.Workload{Platform: "hand"}
	for _, spec := range []struct {
		name string
		t    []time.Duration
	}{{"a", []time.Duration{a0, a1}}, {"b", []time.Duration{b0, b1}}} {
		g := chain(spec.name, 1)
		lg, err := graph.BuildLayers(g)
		if err != nil {
			t.Fatal(err)
		}
		est.times[lg] = [][]time.Duration{spec.t}
		w.Models = append(w.Models, &workload.Model{Name: spec.name, Graph: g, Layers: lg, Zoo: spec.name})
	}
	period := time.Duration(float64(time.Second) / rate)
	w.Groups = []*workload.Group{{Name: "g", Models: []string{"a", "b"}, Period: period, Deadline: period, Arrival: workload.Periodic}}
	return w, pl, est
}

func TestPlannerHandSolvable(t *testing.T) {
	solvertest.RequireCBC(t)
	cases := []struct {
		name               string
		a0, a1, b0, b1, dt time.Duration
		wantA, wantB       string
	}{
		{"split a→P0 b→P1", 3 * ms, 6 * ms, 4 * ms, 2 * ms, ms / 2, "P0", "P1"},
		{"split a→P1 b→P0", 6 * ms, 3 * ms, 2 * ms, 4 * ms, ms / 2, "P1", "P0"},
		{"both on P0 (P1 very slow)", 1 * ms, 50 * ms, 1 * ms, 50 * ms, 0, "P0", "P0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const rate = 10.0
			w, pl, est := handInstance(t, c.a0, c.a1, c.b0, c.b1, c.dt, rate)
			// Closed form: the least over the four assignments of the larger load.
			ta := [2]time.Duration{c.a0, c.a1}
			tb := [2]time.Duration{c.b0, c.b1}
			want := math.Inf(1)
			for pa := range 2 {
				for pb := range 2 {
					var load [2]float64
					load[pa] += rate * (ta[pa] + c.dt).Seconds()
					load[pb] += rate * (tb[pb] + c.dt).Seconds()
					want = math.Min(want, math.Max(load[0], load[1]))
				}
			}
			req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Budget: 20 * time.Second, Workers: 1}
			eval := sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1})
			p, proof, err := milp.New(milp.Options{}).PlanProof(context.Background(), req, eval)
			if err != nil {
				t.Fatal(err)
			}
			if proof.Status != "optimal" || proof.Gap != 0 {
				t.Fatalf("status %s gap %g, want optimal", proof.Status, proof.Gap)
			}
			if math.Abs(proof.Incumbent-want) > 1e-6 || math.Abs(proof.Bound-want) > 1e-6 {
				t.Errorf("incumbent %g bound %g, want both %g", proof.Incumbent, proof.Bound, want)
			}
			if got := p.Model("a").Subgraphs[0].Processor; got != c.wantA {
				t.Errorf("a on %s, want %s", got, c.wantA)
			}
			if got := p.Model("b").Subgraphs[0].Processor; got != c.wantB {
				t.Errorf("b on %s, want %s", got, c.wantB)
			}
			prog, err := sim.Compile(w, pl, est, p)
			if err != nil {
				t.Fatal(err)
			}
			limit, _ := sim.LoadLimit(prog.Program)
			if math.Abs(limit-1/want) > 1e-6*limit {
				t.Errorf("plan's load limit %g, want 1/optimum = %g", limit, 1/want)
			}
			if s, err := eval.Evaluate(context.Background(), p); err != nil || s.Scale > proof.ScaleBound*(1+1e-9) {
				t.Errorf("simulated scale %v (%v) above the proven bound %g", s.Scale, err, proof.ScaleBound)
			}
		})
	}
}

// twoDomains is processors P0 in domain d0 and P1 in d1, across a shared
// link of 1 GB/s and 100 µs, with an additive estimator of the given
// dispatch overhead (no layers yet).
func twoDomains(dispatch time.Duration) (*hw.Platform, *additive) {
	pl := &hw.Platform{Name: "hand", Domains: []hw.Domain{{Name: "d0"}, {Name: "d1"}},
		Links: []hw.Link{{From: "d0", To: "d1", BandwidthGBs: 1, Latency: 100 * time.Microsecond, Shared: true}}}
	for i, d := range []string{"d0", "d1"} {
		pl.Processors = append(pl.Processors, &hw.Processor{Name: "P" + string(rune('0'+i)), Kind: "cpu", Backends: []string{"ort-cpu"},
			DTypes: []hw.DTypeSpec{{DType: graph.Float32, PeakGOPS: 10}}, Concurrency: 1, Domain: d})
	}
	return pl, &additive{pl: pl, times: map[*graph.LayerGraph][][]time.Duration{}, dispatch: dispatch}
}

// The MILP's bound is an upper bound on the rate of every contiguous
// plan: on a three-layer, two-processor instance every assignment's load
// limit is at most 1/Bound, and one attains it.
func TestBoundCoversEveryContiguousPlan(t *testing.T) {
	solvertest.RequireCBC(t)
	pl, est := twoDomains(200 * time.Microsecond)
	g := chain("m", 3)
	lg, err := graph.BuildLayers(g)
	if err != nil {
		t.Fatal(err)
	}
	est.times[lg] = [][]time.Duration{{2 * ms, 3 * ms}, {4 * ms, 1 * ms}, {1 * ms, 5 * ms}}
	w := &workload.Workload{Platform: "hand", Models: []*workload.Model{{Name: "m", Graph: g, Layers: lg, Zoo: "m"}},
		Groups: []*workload.Group{{Name: "g", Models: []string{"m"}, Period: 20 * ms, Deadline: time.Second, Arrival: workload.Periodic}}}
	req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Budget: 20 * time.Second}
	sp, err := space.New(req)
	if err != nil {
		t.Fatal(err)
	}
	f, err := milp.Formulate(sp, milp.FormulateOptions{Deadlines: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := solver.Solve(context.Background(), f.Model, solver.Options{TimeLimit: 20 * time.Second})
	if err != nil || res.Status != solver.Optimal {
		t.Fatalf("%v %v", res, err)
	}
	best := 0.0
	for mask := range 8 {
		a := &space.Assignment{Proc: [][]int{{mask & 1, mask >> 1 & 1, mask >> 2 & 1}}, Priority: []int{0}}
		p, err := sp.Plan("enum", a)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := sim.Compile(w, pl, est, p)
		if err != nil {
			t.Fatal(err)
		}
		limit, _ := sim.LoadLimit(prog.Program)
		if limit > 1/res.Bound*(1+1e-9) {
			t.Errorf("assignment %03b: load limit %g above the bound %g", mask, limit, 1/res.Bound)
		}
		if got := f.Load(a); math.Abs(got-1/limit) > 1e-6/limit {
			t.Errorf("assignment %03b: formulation load %g, simulator's %g (the costs are exact here)", mask, got, 1/limit)
		}
		best = math.Max(best, limit)
	}
	if math.Abs(best-1/res.Bound) > 1e-6*best {
		t.Errorf("best load limit %g, bound %g: the optimum attains the bound", best, 1/res.Bound)
	}
}

func TestPlannerWithoutCBC(t *testing.T) {
	t.Setenv("INLAY_CBC", "no-such-cbc-binary")
	w, pl, est := handInstance(t, ms, ms, ms, ms, 0, 10)
	req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1}
	_, err := milp.New(milp.Options{}).Plan(context.Background(), req, sim.NewEvaluator(w, pl, est, sim.Options{}))
	if err == nil || !strings.Contains(err.Error(), "coinor-cbc") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err %v, want one line saying how to install CBC", err)
	}
}

// Memory capacities: two models of 3 MiB of weights each, both fastest on
// P0, which holds 4 MiB (memory_mib): the optimum splits them (load 0.5 at
// 10 Hz against 0.02 without the capacity). A 4 MiB domain holds neither
// pair anywhere: no plan fits, and the proof says so.
func TestPlannerMemoryCapacity(t *testing.T) {
	solvertest.RequireCBC(t)
	const mib = 1 << 20
	setup := func(t *testing.T) (*plan.Request, plan.Evaluator, *hw.Platform) {
		w, pl, est := handInstance(t, 1*ms, 50*ms, 1*ms, 50*ms, 0, 10)
		for _, m := range w.Models {
			m.Layers.Layers[0].Work.WeightBytes = 3 * mib
		}
		req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Budget: 20 * time.Second, Workers: 1}
		return req, sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1}), pl
	}
	t.Run("processor", func(t *testing.T) {
		req, eval, pl := setup(t)
		pl.Processors[0].MemoryBytes = 4 * mib
		p, proof, err := milp.New(milp.Options{}).PlanProof(context.Background(), req, eval)
		if err != nil {
			t.Fatal(err)
		}
		if proof.Status != "optimal" || math.Abs(proof.Incumbent-0.5) > 1e-6 || math.Abs(proof.Bound-0.5) > 1e-6 {
			t.Fatalf("status %s incumbent %g bound %g, want optimal 0.5", proof.Status, proof.Incumbent, proof.Bound)
		}
		if a, b := p.Model("a").Subgraphs[0].Processor, p.Model("b").Subgraphs[0].Processor; a == b {
			t.Errorf("a and b both on %s, over its 4 MiB", a)
		}
		if err := p.Validate(req.Workload, pl); err != nil {
			t.Error(err)
		}
		both := *p
		both.Models = append([]plan.ModelPlan(nil), p.Models...)
		for i := range both.Models {
			both.Models[i].Subgraphs = append([]plan.Subgraph(nil), p.Models[i].Subgraphs...)
		}
		both.Models[0].Subgraphs[0].Processor, both.Models[1].Subgraphs[0].Processor = "P0", "P0"
		err = both.Validate(req.Workload, pl)
		if err == nil || !strings.Contains(err.Error(), `processor "P0" (memory_mib)`) || !strings.Contains(err.Error(), "6.0 MiB") {
			t.Errorf("both on P0 validated as %v, want over processor P0's memory_mib", err)
		}
	})
	t.Run("domain", func(t *testing.T) {
		req, eval, pl := setup(t)
		pl.Domains[0].CapacityBytes = 4 * mib
		_, proof, err := milp.New(milp.Options{NoDeadlines: true}).PlanProof(context.Background(), req, eval)
		if err == nil {
			t.Fatalf("planned over the domain's capacity (proof %+v)", proof)
		}
		if proof == nil || proof.Status != "infeasible" || proof.ScaleBound != 0 || !strings.Contains(proof.Note, "memory capacities") {
			t.Errorf("proof %+v, want infeasible, bound 0, a note on memory", proof)
		}
	})
}

// Ctrl-C while CBC sits in its root LP (a stand-in that ignores SIGINT)
// returns the start plan promptly, with the root bound it logged.
func TestPlannerInterruptReturnsStart(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	cbc := filepath.Join(t.TempDir(), "cbc")
	script := "#!/bin/sh\necho 'Continuous objective value is 0.001 - 0.01 seconds'\ntrap '' INT\nexec sleep 60\n"
	if err := os.WriteFile(cbc, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INLAY_CBC", cbc)
	w, pl, est := handInstance(t, 3*ms, 6*ms, 4*ms, 2*ms, 0, 10)
	req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Budget: time.Minute, Workers: 1}
	eval := sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	began := time.Now()
	p, proof, err := milp.New(milp.Options{Start: bestmap.Planner{}, StartShare: 0.001}).PlanProof(ctx, req, eval)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > time.Second+solver.InterruptGrace+10*time.Second {
		t.Errorf("returned %v after the start", took)
	}
	if p == nil || p.Planner != "milp" || proof.Status != "interrupted" || !strings.Contains(proof.Note, "start plan is the incumbent") {
		t.Fatalf("plan %v, proof %+v: want the start plan, interrupted", p, proof)
	}
	if math.Abs(proof.Bound-0.001) > 1e-12 || math.Abs(proof.ScaleBound-1000) > 1e-6 {
		t.Errorf("bound %g (scale %g), want the logged root bound 0.001", proof.Bound, proof.ScaleBound)
	}
}
