package search

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/realmodel"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo/zootest"
)

func TestNew(t *testing.T) {
	tests := []struct{ name, want, err string }{
		{"single:npu", "single:npu", ""},
		{"bestmap", "bestmap", ""},
		{"heft", "heft", ""},
		{"single", "", "single needs a processor"},
		{"heft:x", "", "takes no argument"},
		{"magic", "", `unknown planner "magic" (planners: bestmap, heft, `},
	}
	for _, tc := range tests {
		p, err := New(tc.name)
		switch {
		case tc.err == "" && (err != nil || p.Name() != tc.want):
			t.Errorf("New(%q) = %v, %v", tc.name, p, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("New(%q) error %v, want %q", tc.name, err, tc.err)
		}
	}
}

// zooWorkload has the nine zoo networks in three groups, one with a
// dependency chain.
func zooWorkload(t testing.TB) *workload.Workload { return zootest.Nine(t, "") }

// realWorkload has the fetched real models in one group each.
func realWorkload(t *testing.T) *workload.Workload {
	t.Helper()
	w := &workload.Workload{}
	for _, rm := range assets.RealModels() {
		path, g, lg := realmodel.Load(t, rm)
		w.Models = append(w.Models, &workload.Model{Name: rm.Name, Graph: g, Layers: lg, Source: path, ONNX: path})
		w.Groups = append(w.Groups, &workload.Group{Name: rm.Name, Models: []string{rm.Name}, After: map[string][]string{},
			Period: 50 * time.Millisecond, Deadline: 50 * time.Millisecond, Arrival: workload.Periodic})
	}
	w.Groups[0].Models = []string{"ocr_det", "ocr_cls", "ocr_rec"}
	w.Groups[0].After = map[string][]string{"ocr_cls": {"ocr_det"}, "ocr_rec": {"ocr_cls"}}
	w.Groups = append(w.Groups[:1], w.Groups[3:]...)
	return w
}

// baselines are the planners under test, for a platform.
func baselines(t *testing.T, pl *hw.Platform) []plan.Planner {
	var out []plan.Planner
	names := []string{"bestmap", "heft", "single:cpu"}
	for _, k := range hw.Kinds {
		if _, err := pl.Find(k); err == nil && k != "cpu" {
			names = append(names, "single:"+k)
		}
	}
	for _, n := range names {
		p, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestBaselinesValid runs every baseline on every preset with the zoo
// networks and the real models and validates the plans; it also checks
// that planning twice gives the same plan.
func TestBaselinesValid(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole zoo")
	}
	workloads := map[string]func(*testing.T) *workload.Workload{"zoo": func(t *testing.T) *workload.Workload { return zooWorkload(t) }, "real": realWorkload}
	for _, wname := range []string{"zoo", "real"} {
		for _, preset := range hw.Presets() {
			t.Run(wname+"/"+preset, func(t *testing.T) {
				w := workloads[wname](t)
				pl := hwtest.Preset(t, preset)
				req := &plan.Request{Workload: w, Platform: pl, Cost: cost.NewAnalytic(pl), Seed: 1}
				for _, p := range baselines(t, pl) {
					got, err := p.Plan(context.Background(), req, nil)
					if err != nil {
						t.Errorf("%s: %v", p.Name(), err)
						continue
					}
					if err := got.Validate(w, pl); err != nil {
						t.Errorf("%s: invalid plan: %v", p.Name(), err)
					}
					if _, err := sim.Compile(w, pl, req.Cost, got); err != nil {
						t.Errorf("%s: plan does not compile for the simulator: %v", p.Name(), err)
					}
					if got.Planner != p.Name() || got.Platform != pl.Name {
						t.Errorf("%s: plan header %q %q", p.Name(), got.Planner, got.Platform)
					}
					again, err := p.Plan(context.Background(), req, nil)
					if err != nil || !reflect.DeepEqual(got, again) {
						t.Errorf("%s: not deterministic", p.Name())
					}
				}
			})
		}
	}
}

// BenchmarkBaselines plans the nine zoo networks on the phone preset.
func BenchmarkBaselines(b *testing.B) {
	w := zooWorkload(b)
	pl := hwtest.Preset(b, "phone")
	for _, name := range []string{"single:npu", "bestmap", "heft"} {
		p, err := New(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				// A fresh estimator each time: its caches are part of the cost.
				req := &plan.Request{Workload: w, Platform: pl, Cost: cost.NewAnalytic(pl)}
				if _, err := p.Plan(context.Background(), req, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEvalsBudgetEnds checks that every planner of the registry ends with
// an evaluation budget and no wall clock, on a space smaller than the
// budget (one model on one processor, where cache hits are all a search
// finds after its first plans) and on a larger one. The context's
// deadline only guards against a hang: a planner that returns because of
// it fails.
func TestEvalsBudgetEnds(t *testing.T) {
	one, err := hw.Host([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	phone := hwtest.Preset(t, "phone")
	zw := zooWorkload(t)
	small := &workload.Workload{Models: []*workload.Model{zw.Model("mobilenet_v2")}, Groups: []*workload.Group{
		{Name: "g", Models: []string{"mobilenet_v2"}, After: map[string][]string{}, Period: 100 * time.Millisecond, Deadline: 100 * time.Millisecond, Arrival: workload.Periodic},
	}}
	for _, tc := range []struct {
		name  string
		w     *workload.Workload
		pl    *hw.Platform
		evals int
	}{
		{"one processor", small, one, 20},
		{"one processor, 2 evals", small, one, 2},
		{"phone", small, phone, 20},
	} {
		for _, name := range Names() {
			if name == "single" {
				name = "single:cpu" // single needs a processor
			}
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				p, err := New(name)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				est := cost.NewAnalytic(tc.pl)
				req := &plan.Request{Workload: tc.w, Platform: tc.pl, Cost: est, Seed: 1, Evals: tc.evals, Workers: 2}
				got, err := p.Plan(ctx, req, sim.NewEvaluator(tc.w, tc.pl, est, sim.Options{Seed: 1}))
				if ctx.Err() != nil {
					t.Fatalf("%s with --evals %d did not end on its own", name, tc.evals)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := got.Validate(tc.w, tc.pl); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestDemoStandInBaselines: before the real models are fetched, inlay demo
// plans the zoo stand-in scenario; every baseline that sustains a rate on
// the real models (single:npu, bestmap, heft) must sustain one there too,
// in the real scenario's order (single:npu above bestmap above heft), so
// the first screen tells the same story.
func TestDemoStandInBaselines(t *testing.T) {
	text, real := workload.DemoYAML("phone", true)
	if real {
		t.Fatal("DemoYAML(forceZoo) gave the real models")
	}
	w, err := workload.LoadData([]byte(text), "demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pl := hwtest.Preset(t, "phone")
	est := cost.NewAnalytic(pl)
	req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 1}
	judge := sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1})
	scale := map[string]float64{}
	for _, name := range []string{"single:npu", "bestmap", "heft"} {
		p, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Plan(context.Background(), req, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, err := judge.Evaluate(context.Background(), got)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !s.Feasible || s.Scale <= 1 {
			t.Errorf("%s sustains %.3f× the demo's rates (%s), want a rate above 1", name, s.Scale, s.Reason)
		}
		scale[name] = s.Scale
	}
	if !(scale["single:npu"] > scale["bestmap"] && scale["bestmap"] > scale["heft"]) {
		t.Errorf("scales %v, want single:npu > bestmap > heft as with the real models", scale)
	}
}
