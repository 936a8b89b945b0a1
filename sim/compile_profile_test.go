package sim

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/workload"
)

// TestCompileWithProfileEstimator compiles a plan with the estimator
// inlay plan and inlay run use, profile.Estimator over a real SQLite
// store, rather than a test double: model a's two subgraphs on cpu0 then
// cpu1, model b (after a) on cpu1, on the two-core host preset. The store
// holds a's subgraphs measured on cpu0 (cold 300 µs with an idle figure
// 50 µs above it, so a wake-up of 50 µs; cold 400 µs) and pinned
// hand-offs of 5 µs on one processor and 70 µs across; b is not measured.
//
// Each compiled duration is then the stored cold figure (a[1] answered on
// cpu1 from cpu0's figure: twins share one) plus the hand-off before it:
// the wake-up for a[0], which starts its model; 70 µs for a[1] after
// a[0] on the other core; for b[0], the analytic base's figure (no
// measurement, no calibration) plus 5 µs after a[1] on its own core. The
// single request's schedule is those durations back to back. Unpinned,
// the store has no hand-offs: only the wake-up remains.
func TestCompileWithProfileEstimator(t *testing.T) {
	pl, err := hw.Host([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := profile.Open(filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := &workload.Workload{Platform: pl.Name}
	for _, m := range []struct {
		name   string
		layers int
	}{{"a", 2}, {"b", 1}} {
		g := chainModel(m.name, m.layers)
		lg, err := graph.BuildLayers(g)
		if err != nil {
			t.Fatal(err)
		}
		w.Models = append(w.Models, &workload.Model{Name: m.name, Graph: g, Layers: lg})
	}
	w.Groups = []*workload.Group{{Name: "g", Models: []string{"a", "b"}, After: map[string][]string{"b": {"a"}},
		Period: 100 * ms, Deadline: 100 * ms, Arrival: workload.Periodic}}
	cfg0, cfg1 := pl.DefaultConfig(0), pl.DefaultConfig(1)
	sg := func(l int, cfg hw.Config) plan.Subgraph {
		return plan.Subgraph{Layers: graph.LayerSet{l}, Processor: pl.Processors[cfg.Proc].Name, Backend: cfg.Backend, DType: cfg.DType.String()}
	}
	p := &plan.Plan{Planner: "hand", Models: []plan.ModelPlan{
		{Model: "a", Subgraphs: []plan.Subgraph{sg(0, cfg0), sg(1, cfg1)}},
		{Model: "b", Subgraphs: []plan.Subgraph{sg(0, cfg1)}},
	}}
	base := cost.NewAnalytic(pl)
	us := time.Microsecond
	la, lb := w.Models[0].Layers, w.Models[1].Layers
	for _, r := range []struct {
		layer      int
		cold, idle time.Duration
	}{{0, 300 * us, 350 * us}, {1, 400 * us, 0}} {
		k, err := profile.SubgraphKey("dev", pl, la, graph.LayerSet{r.layer}, cfg0)
		if err != nil {
			t.Fatal(err)
		}
		tm := profile.Timing{Median: r.cold / 2, Reps: 10, Cold: r.cold, ColdReps: 5}
		if r.idle > 0 {
			tm.Idle, tm.IdleReps = r.idle, 5
		}
		if err := st.Put(profile.Record{Key: k, ModelName: "a", Timing: tm}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutHandOff("dev", profile.HandOff{Pinned: true, Same: 5 * us, Cross: 70 * us, Samples: 10}); err != nil {
		t.Fatal(err)
	}
	bFig, err := base.Subgraph(lb, graph.LayerSet{0}, cfg1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		unpinned bool
		want     []time.Duration // a[0], a[1], b[0]
	}{
		{"pinned", false, []time.Duration{350 * us, 470 * us, bFig + 5*us}},
		{"unpinned", true, []time.Duration{350 * us, 400 * us, bFig}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est := profile.NewEstimator(st, "dev", base)
			if err := est.Err(); err != nil {
				t.Fatal(err)
			}
			est.UseUnpinned(tc.unpinned)
			prog, err := Compile(w, pl, est, p)
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Duration
			for _, j := range prog.Jobs {
				got = append(got, j.Duration)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("durations %v, want %v", got, tc.want)
			}
			if est.Hits() != 2 || est.Misses() != 1 {
				t.Errorf("hits %d, misses %d; want 2 measured (a's), 1 not (b's)", est.Hits(), est.Misses())
			}
			res := one(t, prog)
			if len(res.Spans) != 3 {
				t.Fatalf("%d spans, want 3", len(res.Spans))
			}
			// Each span follows the last on the one processor; its job
			// holds the processor from the last's end (its span starts
			// after the job's hand-off).
			var end time.Duration
			for i, s := range res.Spans {
				if s.Start < end || s.End-end != tc.want[i] {
					t.Errorf("span %d (%s): %v-%v, want it to end %v after %v", i, s.Label, s.Start, s.End, tc.want[i], end)
				}
				end = s.End
			}
		})
	}
}
