package profile

import (
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
)

// TestSpeedProbeRatios: a processor's ratio is the median of its probed
// subgraphs' own (now over profiled), so one subgraph whose profiled
// figure was taken at a slow moment does not set it.
func TestSpeedProbeRatios(t *testing.T) {
	us := time.Microsecond
	sp := SpeedProbe{Subgraphs: []ProbedSubgraph{
		{Label: "a[0]", Proc: 0, Profiled: 100 * us, Now: 120 * us},
		{Label: "a[1]", Proc: 0, Profiled: 1000 * us, Now: 700 * us}, // profiled slow
		{Label: "a[2]", Proc: 0, Profiled: 200 * us, Now: 260 * us},
		{Label: "b[0]", Proc: 1, Profiled: 100 * us, Now: 200 * us},
		{Label: "b[1]", Proc: 1, Profiled: 100 * us, Now: 100 * us},
	}}
	got := sp.ProcRatios()
	if len(got) != 2 || got[0] < 1.1999 || got[0] > 1.2001 || got[1] < 1.4999 || got[1] > 1.5001 {
		t.Errorf("ProcRatios = %v, want cpu0 1.2 (of 1.2, 0.7, 1.3), cpu1 1.5 (of 2, 1)", got)
	}
	r := sp.Ratios()
	if len(r) != 5 || r[0] != 0.7 || r[4] != 2 {
		t.Errorf("Ratios = %v, want ascending from 0.7 to 2", r)
	}
	if len((SpeedProbe{}).ProcRatios()) != 0 {
		t.Error("an empty probe has ratios")
	}
}

// TestSpeedEstimator: AtSpeed scales every subgraph figure on a probed
// processor by its ratio, measured or not, and leaves the other
// processors, and the hand-offs the Estimator prices, as they were.
func TestSpeedEstimator(t *testing.T) {
	lg, pl, base, st := hostSetup(t)
	set, cfg0, cfg1 := graph.Range(0, 5), pl.DefaultConfig(0), pl.DefaultConfig(1)
	probe := NewEstimator(st, "dev", base)
	putTiming(t, st, probe, lg, set, cfg0, Timing{Median: 400 * time.Microsecond, Reps: 5})
	if err := st.PutHandOff("dev", HandOff{Pinned: true, Same: 5 * time.Microsecond, Cross: 70 * time.Microsecond, Samples: 10}); err != nil {
		t.Fatal(err)
	}
	e := NewEstimator(st, "dev", base)
	se := e.AtSpeed(SpeedProbe{Subgraphs: []ProbedSubgraph{{Proc: 0, Profiled: 400 * time.Microsecond, Now: 600 * time.Microsecond}}})
	for _, tc := range []struct {
		name  string
		set   graph.LayerSet
		on    int
		scale float64
	}{
		{"measured, probed processor", set, 0, 1.5},
		{"unmeasured, probed processor", graph.Range(5, 9), 0, 1.5},
		{"processor not probed", set, 1, 1},
	} {
		cfg := cfg0
		if tc.on == 1 {
			cfg = cfg1
		}
		want, err := e.Subgraph(lg, tc.set, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := se.Subgraph(lg, tc.set, cfg)
		if err != nil || got != time.Duration(float64(want)*tc.scale) {
			t.Errorf("%s: %v (%v), want %v × %g", tc.name, got, err, want, tc.scale)
		}
	}
	var est cost.Estimator = se
	ho, ok := est.(cost.HandOffEstimator)
	if !ok || ho.HandOff(lg, set, cfg0, 1) != e.HandOff(lg, set, cfg0, 1) || e.HandOff(lg, set, cfg0, 1) == 0 {
		t.Errorf("the speed estimator does not price the Estimator's hand-offs")
	}
}
