package runtime

import (
	"context"
	"errors"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/timeline"
)

// TestProbeStarts checks the delays from each request's arrival to its
// first probe subgraph's start, clock noise clamped to 0, other spans left
// out.
func TestProbeStarts(t *testing.T) {
	us := time.Microsecond
	labels := map[string]int{"probe[0]": 0, "probe[1]": 1}
	res := &Result{Spans: []timeline.Span{
		{Label: "probe[1]", Request: 0, Arrival: 0, Start: 900 * us},
		{Label: "probe[0]", Request: 1, Arrival: 25000 * us, Start: 25120 * us},
		{Label: "probe[0]", Request: 0, Arrival: 0, Start: 300 * us},
		{Label: "probe[0]", Request: 2, Arrival: 50000 * us, Start: 49999 * us},
		{Label: "other", Request: 3, Arrival: 0, Start: 5 * us},
	}}
	got := probeStarts(res, labels)
	want := []time.Duration{300 * us, 120 * us, 0}
	if !slices.Equal(got, want) {
		t.Errorf("starts %v, want %v", got, want)
	}
}

// TestProbeGaps checks the gaps taken from spans: per request, from each
// subgraph's end to the next one's start, clock noise clamped to 0, spans
// of other work and incomplete pairs left out.
func TestProbeGaps(t *testing.T) {
	us := time.Microsecond
	labels := map[string]int{"probe[0]": 0, "probe[1]": 1, "probe[2]": 2}
	res := &Result{Spans: []timeline.Span{
		{Label: "probe[1]", Request: 0, Start: 150 * us, End: 200 * us},
		{Label: "probe[0]", Request: 0, Start: 0, End: 100 * us},
		{Label: "probe[2]", Request: 0, Start: 199 * us, End: 300 * us},
		{Label: "other[0]", Request: 0, Start: 100 * us, End: 140 * us},
		{Label: "probe[0]", Request: 1, Start: 1000 * us, End: 1100 * us},
		{Label: "probe[2]", Request: 1, Start: 1200 * us, End: 1300 * us},
	}}
	pairs := probePairs(res, labels)
	got := probeGaps(pairs)
	want := []time.Duration{50 * us, 0}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("gaps %v, want %v", got, want)
	}
	// Each hand-off comes with the span of the subgraph before it.
	if wantPairs := []crossPair{{100 * us, 50 * us}, {50 * us, 0}}; !slices.Equal(pairs, wantPairs) {
		t.Errorf("pairs %v, want %v", pairs, wantPairs)
	}
}

// TestCrossCurve checks the hand-off curve from (span, hand-off) pairs:
// one point per span bin with enough pairs, at the bin's median span and
// median hand-off, bins with too few left out.
func TestCrossCurve(t *testing.T) {
	us := time.Microsecond
	var pairs []crossPair
	for i := range crossAfterMin {
		// Short spans 50-69 µs, hand-offs 40-59 µs; long ones 2-2.019 ms
		// and 100-119 µs; three 300 µs spans, too few for a point.
		pairs = append(pairs, crossPair{ran: time.Duration(50+i) * us, gap: time.Duration(40+i) * us},
			crossPair{ran: time.Duration(2000+i) * us, gap: time.Duration(100+i) * us})
	}
	for range 3 {
		pairs = append(pairs, crossPair{ran: 300 * us, gap: time.Millisecond})
	}
	got := crossCurve(pairs)
	want := cost.HandOffCurve{{After: 60 * us, Gap: 50 * us, Samples: crossAfterMin}, {After: 2010 * us, Gap: 110 * us, Samples: crossAfterMin}}
	if !slices.Equal(got, want) {
		t.Errorf("curve %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
	if c := crossCurve(pairs[2*crossAfterMin:]); c != nil {
		t.Errorf("curve from three pairs: %+v, want none", c)
	}
}

// TestProbeHandOff runs the probe on the host: it times hand-offs of both
// kinds, and refuses a platform without two processors to hand off between.
func TestProbeHandOff(t *testing.T) {
	pl := hwtest.HostPair(t)
	lib := assets.Require(t, assets.ORTLibrary())
	pr, err := ProbeHandOff(context.Background(), ProbeConfig{Platform: pl, Library: lib, Duration: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Samples < 20 || pr.Same <= 0 || pr.Cross <= 0 || pr.Procs[0] == pr.Procs[1] {
		t.Errorf("probe %+v: want at least 20 samples of positive delays between two processors", pr)
	}
	// Pinned, the probe measures the delay to a request's first subgraph
	// both ways the loop can wait: from its own runs where they took it,
	// else from a forced one.
	if pr.Starts.SleepRequests < 10 || pr.Starts.PollRequests < 10 || pr.Starts.Sleep <= 0 || pr.Starts.Poll <= 0 {
		t.Errorf("pinned probe's start delays %+v: want both ways measured over at least 10 requests", pr.Starts)
	}
	// The hand-off between the processors is measured after short and
	// after long spans: the small network's chunks and the large one's.
	if len(pr.CrossAfter) < 2 {
		t.Errorf("hand-off curve %+v: want points after at least two span lengths", pr.CrossAfter)
	}
	for i, p := range pr.CrossAfter {
		if p.After <= 0 || p.Gap < 0 || p.Samples < crossAfterMin || (i > 0 && p.After <= pr.CrossAfter[i-1].After) {
			t.Errorf("hand-off curve point %d %+v: want ascending positive spans over at least %d hand-offs", i, p, crossAfterMin)
		}
	}
	t.Logf("hand-off: same %v, cross %v over %d (%s, %s), after spans %+v; to the first subgraph sleeping %v, polling %v", pr.Same, pr.Cross, pr.Samples, pr.Procs[0], pr.Procs[1], pr.CrossAfter, pr.Starts.Sleep, pr.Starts.Poll)
	_, err = ProbeHandOff(context.Background(), ProbeConfig{Platform: pl, Library: lib, Procs: []string{pl.Processors[0].Name}})
	if err == nil || errors.Is(err, ErrNoProbePair) || !strings.Contains(err.Error(), "want two") {
		t.Errorf("one processor given: %v, want a plain error asking for two", err)
	}
}

// TestProbePair checks how the probe's two processors are chosen and
// refused; a platform without two ort-cpu processors is ErrNoProbePair
// (which inlay profile reports and goes on from), anything else a plain
// error.
func TestProbePair(t *testing.T) {
	cores := hw.HostCores()
	one, err := hw.Host(cores[:1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ProbePair(one, nil); !errors.Is(err, ErrNoProbePair) || !strings.Contains(err.Error(), one.Name) {
		t.Errorf("one-processor platform: %v, want ErrNoProbePair naming the platform", err)
	}
	if _, err := ProbeHandOff(context.Background(), ProbeConfig{Platform: one}); !errors.Is(err, ErrNoProbePair) {
		t.Errorf("probe on a one-processor platform: %v, want ErrNoProbePair", err)
	}
	pl := hwtest.HostPair(t)
	a, b := pl.Processors[0].Name, pl.Processors[1].Name
	if got, err := ProbePair(pl, nil); err != nil || got != [2]string{a, b} {
		t.Errorf("default pair: %v, %v; want [%s %s]", got, err, a, b)
	}
	if got, err := ProbePair(pl, []string{b, a}); err != nil || got != [2]string{b, a} {
		t.Errorf("pair given: %v, %v; want [%s %s]", got, err, b, a)
	}
	for _, procs := range [][]string{{a}, {a, b, a}, {a, a}, {a, "nosuch"}} {
		if _, err := ProbePair(pl, procs); err == nil || errors.Is(err, ErrNoProbePair) {
			t.Errorf("procs %q: %v, want a plain error", procs, err)
		}
	}
	if _, err := ProbePair(nil, nil); err == nil || errors.Is(err, ErrNoProbePair) {
		t.Errorf("no platform: %v", err)
	}
}

// TestStartDelays checks how probe runs' delays merge by the way the loop
// waited, and what For answers for a way not measured.
func TestStartDelays(t *testing.T) {
	var a StartDelays
	if _, ok := a.For(true); ok {
		t.Error("empty lags: the sleeping way is measured")
	}
	a.add(true, 100*time.Microsecond, 30)
	a.add(true, 200*time.Microsecond, 10)
	a.add(false, 5*time.Microsecond, 0) // no requests: nothing measured
	if d, ok := a.For(true); !ok || d != 125*time.Microsecond || a.SleepRequests != 40 {
		t.Errorf("sleeping: %v, %v over %d; want 125µs (weighted by requests) over 40", d, ok, a.SleepRequests)
	}
	if _, ok := a.For(false); ok {
		t.Errorf("polling measured from a run without requests: %+v", a)
	}
	a.add(false, 7*time.Microsecond, 20)
	if d, ok := a.For(false); !ok || d != 7*time.Microsecond {
		t.Errorf("polling: %v, %v; want 7µs", d, ok)
	}
}

// TestLoopSleeps checks which runs' event loops sleep to their arrivals:
// pinned workers holding every core, or a negative ArrivalSpin.
func TestLoopSleeps(t *testing.T) {
	pl := hwtest.HostPair(t)
	p := &plan.Plan{Models: []plan.ModelPlan{{Subgraphs: []plan.Subgraph{{Processor: pl.Processors[0].Name}, {Processor: pl.Processors[1].Name}}}}}
	held := map[int]bool{}
	for _, mp := range p.Models {
		for _, sg := range mp.Subgraphs {
			i, _ := pl.Find(sg.Processor)
			for _, c := range pl.Processors[i].Cores {
				held[c] = true
			}
		}
	}
	all := len(held) >= goruntime.NumCPU()
	for _, tc := range []struct {
		name  string
		noPin bool
		spin  time.Duration
		want  bool
	}{
		{"pinned, default spin", false, 0, all},
		{"unpinned, default spin", true, 0, false},
		{"pinned, spin forced", false, time.Millisecond, false},
		{"unpinned, never spin", true, -1, true},
		{"pinned, never spin", false, -1, true},
	} {
		c := Config{Platform: pl, Plan: p, NoPin: tc.noPin, ArrivalSpin: tc.spin}
		if got := c.LoopSleeps(); got != tc.want {
			t.Errorf("%s: LoopSleeps %v, want %v", tc.name, got, tc.want)
		}
	}
}
