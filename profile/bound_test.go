package profile_test

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// peakOnly hides the estimator's lower bounds: ratebound.Upper then falls
// back to layer FLOPs at peak.
type peakOnly struct{ cost.Estimator }

// TestBoundWithProfileStore checks ratebound.Upper under the estimator every
// --profiles run uses (profile.CostModel) on host, against every planner's
// plan. The store's figures are built to break the peak fallback: every
// subgraph the planners propose is "measured" at 3–60 % of the analytic
// model (a core beating its preset's peak, as ResNet-50 did at 234 GFLOPS
// on an 80 GFLOPS preset), some with cold figures, and the calibration
// lets the peak rise 20-fold with a cold correction at its lower clamp.
func TestBoundWithProfileStore(t *testing.T) {
	pl, err := hw.Host([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wpath := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wpath, []byte(`platform: host
models:
  - {name: a, zoo: mobilenet_v2}
  - {name: b, zoo: efficientnet_b0}
groups:
  - {name: g, models: [a, b], after: {b: [a]}, period_ms: 100}
  - {name: h, models: [b], period_ms: 50}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := workload.Load(wpath)
	if err != nil {
		t.Fatal(err)
	}
	var planners []string
	for _, n := range search.Names() {
		if n == "single" {
			n = "single:cpu"
		}
		planners = append(planners, n)
	}
	planAll := func(est cost.Estimator) []*plan.Plan {
		var out []*plan.Plan
		for _, n := range planners {
			p, err := search.New(n)
			if err != nil {
				t.Fatal(err)
			}
			req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1, Evals: 40, Workers: 1}
			got, err := p.Plan(context.Background(), req, sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1}))
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			got.Planner = n
			out = append(out, got)
		}
		return out
	}

	// The store: every subgraph of the analytic plans, every layer alone
	// and every whole model, on each processor class, far faster than the
	// model.
	analytic := cost.NewAnalytic(pl)
	type sub struct {
		model string
		set   graph.LayerSet
	}
	var subs []sub
	for _, m := range w.Models {
		subs = append(subs, sub{m.Name, graph.Range(0, len(m.Layers.Layers))})
		for l := range m.Layers.Layers {
			subs = append(subs, sub{m.Name, graph.LayerSet{l}})
		}
	}
	for _, p := range planAll(analytic) {
		for _, mp := range p.Models {
			for _, sg := range mp.Subgraphs {
				subs = append(subs, sub{mp.Model, sg.Layers})
			}
		}
	}
	path := filepath.Join(dir, "profiles.db")
	st, err := profile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const device = "dev"
	if err := st.PutDevice(device, pl.Name, "test"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for _, s := range subs {
		lg := w.Model(s.model).Layers
		for _, cfg := range pl.Configs(0) { // cpu1 is cpu0's twin
			d, err := analytic.Subgraph(lg, s.set, cfg)
			if err != nil {
				continue
			}
			k, err := profile.SubgraphKey(device, pl, lg, s.set, cfg)
			if err != nil {
				t.Fatal(err)
			}
			tm := profile.Timing{Median: time.Duration(float64(d) * (0.03 + 0.57*rng.Float64())), Reps: 5}
			if rng.Intn(3) == 0 {
				tm.Cold, tm.ColdReps = tm.Median*3/2, 3
			}
			if err := st.Put(profile.Record{Key: k, ModelName: s.model, Timing: tm}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, pr := range pl.Processors {
		eff := analytic.Efficiency(i)
		eff.PeakScale = 20
		if err := st.PutCalibration(profile.CalibrationRow{Device: device, Processor: pr.Name, Efficiency: eff, Samples: 10,
			Cold: profile.ColdFit{A: -5, Samples: 10}, FittedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	est, _, err := profile.CostModel(path, true, pl, w)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := est.(*profile.Estimator); !ok {
		t.Fatalf("CostModel = %T, want the measured estimator", est)
	}
	// The contract the bound rests on, on measured sets and on ranges
	// that fall back to the (cold-corrected) model.
	pe := est.(*profile.Estimator)
	checks := append([]sub(nil), subs...)
	for _, m := range w.Models {
		n := len(m.Layers.Layers)
		for i := 0; i < 40; i++ {
			lo := rng.Intn(n)
			checks = append(checks, sub{m.Name, graph.Range(lo, lo+1+rng.Intn(n-lo))})
		}
	}
	for _, s := range checks {
		lg := w.Model(s.model).Layers
		for p := range pl.Processors {
			for _, cfg := range pl.Configs(p) {
				d, err := pe.Subgraph(lg, s.set, cfg)
				if err != nil {
					continue
				}
				var sum time.Duration
				for _, l := range s.set {
					lb, err := pe.LayerLowerBound(lg, l, cfg)
					if err != nil {
						t.Fatalf("%s layer %d: %v", s.model, l, err)
					}
					sum += lb
				}
				if sum > d {
					t.Fatalf("%s %s on %v: Subgraph %v < Σ LayerLowerBound %v", s.model, s.set.Key(), cfg, d, sum)
				}
			}
		}
	}
	b, err := ratebound.Upper(w, pl, est)
	if err != nil {
		t.Fatal(err)
	}
	if b.PeakFallback {
		t.Fatal("the measured estimator's bound fell back to the peak")
	}
	fallback, err := ratebound.Upper(w, pl, peakOnly{est})
	if err != nil || !fallback.PeakFallback {
		t.Fatalf("peak fallback: %v, %v", fallback, err)
	}
	beaten := 0
	for _, p := range planAll(est) {
		prog, err := sim.Compile(w, pl, est, p)
		if err != nil {
			t.Fatalf("%s: %v", p.Planner, err)
		}
		lim, _ := sim.LoadLimit(prog.Program)
		s, _, err := sim.MaxSustainableScale(prog, sim.Options{Seed: 1, NoSpans: true})
		if err != nil {
			t.Fatalf("%s: %v", p.Planner, err)
		}
		t.Logf("%-10s scale %.4g, load limit %.4g; bound %.4g (peak fallback %.4g)", p.Planner, s, lim, b.Scale, fallback.Scale)
		if s > b.Scale*(1+1e-9) || lim > b.Scale*(1+1e-9) {
			t.Errorf("%s: scale %v (load limit %v) beats the bound %v (%s)", p.Planner, s, lim, b.Scale, b.Why)
		}
		if lim > fallback.Scale*(1+1e-9) {
			beaten++
		}
	}
	// The figures are such that the old fallback is no bound at all: the
	// check above can fail.
	if beaten == 0 {
		t.Errorf("no plan beats the peak fallback %v: the store does not test what it should", fallback.Scale)
	}
}
