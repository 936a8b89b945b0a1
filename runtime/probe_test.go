package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/report"
)

// TestProbeGaps checks the gaps taken from spans: per request, from each
// subgraph's end to the next one's start, clock noise clamped to 0, spans
// of other work and incomplete pairs left out.
func TestProbeGaps(t *testing.T) {
	us := time.Microsecond
	labels := map[string]int{"probe[0]": 0, "probe[1]": 1, "probe[2]": 2}
	res := &Result{Spans: []report.Span{
		{Label: "probe[1]", Request: 0, Start: 150 * us, End: 200 * us},
		{Label: "probe[0]", Request: 0, Start: 0, End: 100 * us},
		{Label: "probe[2]", Request: 0, Start: 199 * us, End: 300 * us},
		{Label: "other[0]", Request: 0, Start: 100 * us, End: 140 * us},
		{Label: "probe[0]", Request: 1, Start: 1000 * us, End: 1100 * us},
		{Label: "probe[2]", Request: 1, Start: 1200 * us, End: 1300 * us},
	}}
	got := probeGaps(res, labels)
	want := []time.Duration{50 * us, 0}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("gaps %v, want %v", got, want)
	}
}

// TestProbeHandOff runs the probe on the host: it times hand-offs of both
// kinds, and refuses a platform without two processors to hand off between.
func TestProbeHandOff(t *testing.T) {
	pl := hostPlatform(t)
	lib := assets.Require(t, assets.ORTLibrary())
	pr, err := ProbeHandOff(context.Background(), ProbeConfig{Platform: pl, Library: lib, Duration: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Samples < 20 || pr.Same <= 0 || pr.Cross <= 0 || pr.Procs[0] == pr.Procs[1] {
		t.Errorf("probe %+v: want at least 20 samples of positive delays between two processors", pr)
	}
	t.Logf("hand-off: same %v, cross %v over %d (%s, %s)", pr.Same, pr.Cross, pr.Samples, pr.Procs[0], pr.Procs[1])
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
	pl := hostPlatform(t)
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
