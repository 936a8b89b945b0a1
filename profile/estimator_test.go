package profile

import (
	"math"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/zoo/zootest"
)

// testLayers is the named zoo network's layer graph.
func testLayers(t *testing.T, name string) *graph.LayerGraph { return zootest.Layers(t, name) }

func TestTwins(t *testing.T) {
	host, err := hw.Host([]int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	phone := hwtest.Preset(t, "phone")
	mixed, _ := hw.Host([]int{0, 1, 2})
	mixed.Processors[1].Cores = []int{1, 3} // two cores: another class
	for _, tc := range []struct {
		name string
		pl   *hw.Platform
		want []int
	}{
		{"host", host, []int{0, 0, 0}},
		{"mixed", mixed, []int{0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Twins(tc.pl)
			if len(got) != len(tc.want) {
				t.Fatalf("Twins = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("Twins = %v, want %v", got, tc.want)
				}
			}
		})
	}
	// Unlike processors stand for themselves.
	for i, tw := range Twins(phone) {
		if tw != i && phone.Processors[i].Kind != phone.Processors[tw].Kind {
			t.Errorf("phone: %s stands for %s", phone.Processors[i].Name, phone.Processors[tw].Name)
		}
	}
}

func TestEstimatorHitsAndMisses(t *testing.T) {
	lg, pl, base, st := hostSetup(t)
	measuredSet := graph.Range(0, 5)
	failedSet := graph.Range(5, 7)
	cfg0 := pl.DefaultConfig(0)
	probe := NewEstimator(st, "dev", base)
	k := putTiming(t, st, probe, lg, measuredSet, cfg0, Timing{Median: 123 * time.Microsecond, Reps: 5})
	kf, _ := probe.Key(lg, failedSet, cfg0)
	if err := st.Put(Record{Key: kf, Error: "could not run"}); err != nil {
		t.Fatal(err)
	}
	other := k
	other.Device = "another"
	if err := st.Put(Record{Key: other, Timing: Timing{Median: time.Second, Reps: 5}}); err != nil {
		t.Fatal(err)
	}

	e := NewEstimator(st, "dev", base)
	if e.Err() != nil || e.Len() != 1 {
		t.Fatalf("Err %v, Len %d; want nil, 1", e.Err(), e.Len())
	}
	cfg1 := pl.DefaultConfig(1)
	for _, tc := range []struct {
		name     string
		set      graph.LayerSet
		cfg      hw.Config
		measured bool
	}{
		{"measured", measuredSet, cfg0, true},
		{"twin core", measuredSet, cfg1, true},
		{"failed measurement", failedSet, cfg0, false},
		{"never measured", graph.Range(0, 6), cfg0, false},
		{"never measured again", graph.Range(0, 6), cfg1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.Subgraph(lg, tc.set, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := base.Subgraph(lg, tc.set, tc.cfg)
			if tc.measured {
				want = 123 * time.Microsecond
			}
			if got != want {
				t.Errorf("Subgraph = %v, want %v", got, want)
			}
		})
	}
	// Distinct subgraphs: range 0-5 on cpu0 and cpu1 is one (twins).
	if e.Hits() != 1 || e.Misses() != 2 {
		t.Errorf("Hits %d, Misses %d; want 1, 2", e.Hits(), e.Misses())
	}
	if !e.HasModel(ModelID(lg.Model)) || e.HasModel("other") {
		t.Error("HasModel is wrong")
	}

	if e.InSitu() != 0 || e.Cold() != 0 {
		t.Errorf("InSitu %d, Cold %d without in-situ or cold measurements", e.InSitu(), e.Cold())
	}
	// A measurement with cold runs answers with their median.
	if err := st.Put(Record{Key: k, Timing: Timing{Median: 123 * time.Microsecond, Reps: 5, Cold: 170 * time.Microsecond, ColdReps: 3}}); err != nil {
		t.Fatal(err)
	}
	ec := NewEstimator(st, "dev", base)
	if got, err := ec.Subgraph(lg, measuredSet, cfg1); err != nil || got != 170*time.Microsecond || ec.Cold() != 1 {
		t.Errorf("with cold runs: Subgraph = %v, %v, Cold %d; want 170µs, 1", got, err, ec.Cold())
	}
	// Fallbacks are scaled by the calibration's cold correction of their
	// processor, once the measured figures are cold.
	never := graph.Range(0, 6)
	warm, _ := base.Subgraph(lg, never, cfg1)
	if got, _ := ec.Subgraph(lg, never, cfg1); got != warm {
		t.Errorf("fallback without a cold correction: %v, want the base's %v", got, warm)
	}
	fit := ColdFit{A: math.Log(2), Samples: 4}
	if err := st.PutCalibration(CalibrationRow{Device: "dev", Processor: pl.Processors[1].Name, Efficiency: cost.DefaultEfficiency("cpu"), Cold: fit}); err != nil {
		t.Fatal(err)
	}
	ecc := NewEstimator(st, "dev", base)
	if got, _ := ecc.Subgraph(lg, never, cfg1); got != fit.Apply(warm) {
		t.Errorf("fallback with a cold correction: %v, want %v", got, fit.Apply(warm))
	}
	if got, _ := ecc.Subgraph(lg, never, cfg0); got != warm {
		t.Errorf("fallback on a processor without one: %v, want %v", got, warm)
	}
	if err := st.Put(Record{Key: k, Timing: Timing{Median: 123 * time.Microsecond, Reps: 5}}); err != nil {
		t.Fatal(err)
	}
	// An in-situ measurement stands in for the profiler's figure, and
	// SubgraphKey names the same key as the estimator's Key.
	ks, err := SubgraphKey("dev", pl, lg, measuredSet, cfg1)
	if err != nil || ks != k {
		t.Fatalf("SubgraphKey = %v, %v; want %v", ks, err, k)
	}
	if err := st.PutInSitu(InSitu{Key: k, Typical: 200 * time.Microsecond, Timing: Timing{Median: 150 * time.Microsecond, Reps: 50}}); err != nil {
		t.Fatal(err)
	}
	es := NewEstimator(st, "dev", base)
	if got, err := es.Subgraph(lg, measuredSet, cfg0); err != nil || got != 200*time.Microsecond || es.InSitu() != 1 {
		t.Errorf("with an in-situ figure: Subgraph = %v, %v, InSitu %d; want 200µs, 1", got, err, es.InSitu())
	}

	if e.Transfer(1<<20, 0, 1) != base.Transfer(1<<20, 0, 1) {
		t.Errorf("Transfer differs from the base's")
	}
	// A base without a platform: every query falls back, Err says why.
	nb := NewEstimator(st, "dev", platformless{base})
	if nb.Err() == nil {
		t.Error("no error for a base without a platform")
	}
	if got, _ := nb.Subgraph(lg, measuredSet, cfg0); got == 123*time.Microsecond {
		t.Error("platformless estimator answered from the store")
	}
}

type platformless struct{ cost.Estimator }

// hostSetup is MobileNetV2's layers, a two-core host, its analytic model
// and an empty store (closed when the test ends).
// putTiming stores tm as the measurement of set on cfg, keyed as e keys
// it, and returns the key.
func putTiming(t *testing.T, st *Store, e *Estimator, lg *graph.LayerGraph, set graph.LayerSet, cfg hw.Config, tm Timing) Key {
	t.Helper()
	k, err := e.Key(lg, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(Record{Key: k, Timing: tm}); err != nil {
		t.Fatal(err)
	}
	return k
}

// putInSitu stores an in-situ figure of set on cfg (typical, and tm's
// timing), keyed as e keys it.
func putInSitu(t *testing.T, st *Store, e *Estimator, lg *graph.LayerGraph, set graph.LayerSet, cfg hw.Config, typical time.Duration, tm Timing) {
	t.Helper()
	k, err := e.Key(lg, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutInSitu(InSitu{Key: k, Typical: typical, Timing: tm}); err != nil {
		t.Fatal(err)
	}
}

func hostSetup(t *testing.T) (*graph.LayerGraph, *hw.Platform, *cost.Analytic, *Store) {
	t.Helper()
	lg := testLayers(t, "mobilenet_v2")
	pl, err := hw.Host([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	st := tempStore(t)
	return lg, pl, cost.NewAnalytic(pl), st
}

// TestEstimatorHandOff checks the hand-off the estimator prices: none
// without a measurement, the pinned figures by default and the unpinned
// ones when asked, the same-processor figure when the dependency ran on the
// subgraph's own processor, and none for a subgraph answered from an
// in-situ figure (which includes it). The store keeps one per pinning.
func TestEstimatorHandOff(t *testing.T) {
	lg, pl, base, st := hostSetup(t)
	set, cfg0 := graph.Range(0, 5), pl.DefaultConfig(0)
	if h := NewEstimator(st, "dev", base).HandOff(lg, set, cfg0, 1); h != 0 {
		t.Errorf("no hand-off measured: %v, want 0", h)
	}
	us := time.Microsecond
	for _, h := range []HandOff{{Pinned: true, Same: 9 * us, Cross: 99 * us, Samples: 3}, {Pinned: false, Same: 8 * us, Cross: 30 * us, Samples: 3}, {Pinned: true, Same: 5 * us, Cross: 70 * us, Samples: 100}} {
		if err := st.PutHandOff("dev", h); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutHandOff("dev", HandOff{Pinned: true, Same: -us, Cross: us, Samples: 1}); err == nil {
		t.Error("a negative hand-off was stored")
	}
	hos, err := st.HandOffs("dev")
	if err != nil || len(hos) != 2 || hos[0].Pinned || hos[1].Cross != 70*us || hos[1].Samples != 100 {
		t.Fatalf("HandOffs = %+v, %v; want unpinned then the latest pinned", hos, err)
	}
	e := NewEstimator(st, "dev", base)
	for _, tc := range []struct {
		unpinned bool
		from     int
		want     time.Duration
	}{{false, 1, 70 * us}, {false, 0, 5 * us}, {true, 1, 30 * us}, {true, 0, 8 * us}} {
		e.UseUnpinned(tc.unpinned)
		if got := e.HandOff(lg, set, cfg0, tc.from); got != tc.want {
			t.Errorf("unpinned %v, from %d: %v, want %v", tc.unpinned, tc.from, got, tc.want)
		}
	}
	putInSitu(t, st, e, lg, set, cfg0, 200*us, Timing{Median: 150 * us, Reps: 50})
	es := NewEstimator(st, "dev", base)
	if got := es.HandOff(lg, set, cfg0, 1); got != 0 {
		t.Errorf("in-situ subgraph: hand-off %v, want 0", got)
	}
	if got := es.HandOff(lg, graph.Range(0, 6), cfg0, 1); got != 70*us {
		t.Errorf("other subgraph: hand-off %v, want 70µs", got)
	}
}

// TestEstimatorCrossAfter: the hand-off curve is the stored one of the
// pinning chosen, none for a pinning stored without one; through
// sim.Compile it replaces the flat cross figure (sim's tests).
func TestEstimatorCrossAfter(t *testing.T) {
	_, _, base, st := hostSetup(t)
	us := time.Microsecond
	pinned := cost.HandOffCurve{{After: 100 * us, Gap: 40 * us, Samples: 30}, {After: 1100 * us, Gap: 140 * us, Samples: 30}}
	for _, h := range []HandOff{{Pinned: true, Same: 5 * us, Cross: 50 * us, Samples: 100, CrossAfter: pinned}, {Pinned: false, Same: 4 * us, Cross: 20 * us, Samples: 100}} {
		if err := st.PutHandOff("dev", h); err != nil {
			t.Fatal(err)
		}
	}
	e := NewEstimator(st, "dev", base)
	if d, ok := e.CrossAfter(600 * us); !ok || d != 90*us {
		t.Errorf("pinned, after 600µs: %v, %v; want 90µs", d, ok)
	}
	if d, ok := e.AtSpeed(SpeedProbe{}).CrossAfter(2 * time.Millisecond); !ok || d != 140*us {
		t.Errorf("at speed, pinned, after 2ms: %v, %v; want 140µs", d, ok)
	}
	e.UseUnpinned(true)
	if d, ok := e.CrossAfter(600 * us); ok {
		t.Errorf("unpinned, stored without a curve: %v, want none", d)
	}
}

// TestEstimatorWake: the measurements with idle runs on a processor
// configuration pool into one wake-up, the median of their Idle − Cold
// (a negative difference counts as it is), which HandOff adds before any
// subgraph there, measured or not, when it starts its model (from -1),
// not after another job, with or without measured hand-offs, and on the
// twin processor too; an in-situ figure includes it.
func TestEstimatorWake(t *testing.T) {
	lg, pl, base, st := hostSetup(t)
	cfg0, cfg1 := pl.DefaultConfig(0), pl.DefaultConfig(1)
	us := time.Microsecond
	e := NewEstimator(st, "dev", base)
	for i, diff := range []time.Duration{700 * us, -50 * us, 300 * us} {
		k, err := e.Key(lg, graph.Range(0, 5+i), cfg0)
		if err != nil {
			t.Fatal(err)
		}
		r := Record{Key: k, ModelName: "m", Timing: Timing{Median: 900 * us, Reps: 10, Cold: 1000 * us, ColdReps: 5, Idle: 1000*us + diff, IdleReps: 5}}
		if err := st.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	measured, unmeasured := graph.Range(0, 5), graph.Range(0, 9)
	check := func(name string, e *Estimator, want map[int]time.Duration) {
		t.Helper()
		for from, w := range want {
			for _, set := range []graph.LayerSet{measured, unmeasured} {
				for _, on := range []hw.Config{cfg0, cfg1} {
					f := from
					if f == 0 {
						f = on.Proc // the same processor
					} else if f == 1 {
						f = 1 - on.Proc // the other one
					}
					if got := e.HandOff(lg, set, on, f); got != w {
						t.Errorf("%s: layers %s on %d from %d: %v, want %v", name, set.Key(), on.Proc, f, got, w)
					}
				}
			}
		}
	}
	e = NewEstimator(st, "dev", base)
	if ws := e.WakeUps(); len(ws) != 1 || ws[0].Wake != 300*us || ws[0].Samples != 3 || ws[0].Processor != pl.Processors[0].Name {
		t.Errorf("WakeUps() = %+v, want one of 300µs over 3 samples on %s", ws, pl.Processors[0].Name)
	}
	check("no hand-offs", e, map[int]time.Duration{-1: 300 * us, 0: 0, 1: 0})
	if err := st.PutHandOff("dev", HandOff{Pinned: true, Same: 5 * us, Cross: 70 * us, Samples: 3}); err != nil {
		t.Fatal(err)
	}
	check("hand-offs", NewEstimator(st, "dev", base), map[int]time.Duration{-1: 300 * us, 0: 5 * us, 1: 70 * us})
	putInSitu(t, st, e, lg, measured, cfg0, 2000*us, Timing{Median: 1900 * us, Reps: 50})
	es := NewEstimator(st, "dev", base)
	if got := es.HandOff(lg, measured, cfg0, -1); got != 0 {
		t.Errorf("in-situ subgraph: start %v, want 0", got)
	}
	if got := es.HandOff(lg, unmeasured, cfg0, -1); got != 300*us {
		t.Errorf("other subgraph beside an in-situ one: start %v, want 300µs", got)
	}
	// Only negative differences: no wake-up.
	lg2, pl2, base2, st2 := hostSetup(t)
	e2 := NewEstimator(st2, "dev", base2)
	k2, err := e2.Key(lg2, measured, pl2.DefaultConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := st2.Put(Record{Key: k2, ModelName: "m", Timing: Timing{Median: 900 * us, Reps: 10, Cold: 1000 * us, ColdReps: 5, Idle: 950 * us, IdleReps: 5}}); err != nil {
		t.Fatal(err)
	}
	if e2 := NewEstimator(st2, "dev", base2); len(e2.WakeUps()) != 0 || e2.HandOff(lg2, measured, pl2.DefaultConfig(0), -1) != 0 {
		t.Errorf("idle faster than cold: wake-ups %+v, start %v; want none", e2.WakeUps(), e2.HandOff(lg2, measured, pl2.DefaultConfig(0), -1))
	}
}
