package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/profile"
)

// SpeedLine says each core's slow checks beside its reference time in the
// run, so that a run slow throughout (no slow check, a high reference) can
// be told from a fast one.
func TestSpeedLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		speed []app.CoreSpeed
		want  []string
		not   []string
	}{
		{"none", nil, nil, []string{"host speed"}},
		{"fast", app.CoreSpeeds([]profile.CoreSpeed{{Core: 0, Checks: 10, Normal: 140 * time.Microsecond, Median: 150 * time.Microsecond}}, nil),
			[]string{"core 0 slow in 0 of 10 checks (reference 140.0µs, median 150.0µs)", "slow throughout"}, []string{"half its speed", "profile's"}},
		// Core 1 is slow throughout: no slow check, twice the profile's
		// reference time.
		{"spells", app.CoreSpeeds([]profile.CoreSpeed{{Core: 0, Checks: 10, Slow: 4, Normal: 140 * time.Microsecond, Median: 200 * time.Microsecond}, {Core: 1, Checks: 9, Normal: 300 * time.Microsecond, Median: 310 * time.Microsecond}},
			[]profile.CoreSpeed{{Core: 1, Checks: 50, Normal: 155 * time.Microsecond, Median: 170 * time.Microsecond}, {Core: 2, Checks: 5, Normal: time.Millisecond, Median: time.Millisecond}}),
			[]string{"core 0 slow in 4 of 10 checks (reference 140.0µs, median 200.0µs)", "core 1 slow in 0 of 9 checks (reference 300.0µs, median 310.0µs; the profile's 155.0µs, 2.00× it)", "half its speed"}, []string{"1000.0µs"}},
	} {
		got := SpeedLine(tc.speed)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q has %q", tc.name, got, w)
			}
		}
		if strings.Contains(got, "\n") {
			t.Errorf("%s: %q is not one line", tc.name, got)
		}
	}
}

// Speed says what the guard did and, per core, the normal speed the
// figures were taken at, so that a run's reference time can be set beside
// it; nothing when no phase was guarded.
func TestReportSpeed(t *testing.T) {
	var b bytes.Buffer
	Speed(&b, profile.SpeedStats{})
	if b.Len() != 0 {
		t.Errorf("no phases: %q", b.String())
	}
	Speed(&b, profile.SpeedStats{Checks: 12, Phases: 5, Waits: 1, Waited: 100 * time.Millisecond, Retimed: 2,
		Cores: []profile.CoreSpeed{{Core: 0, Checks: 7, Slow: 2, Normal: 140 * time.Microsecond, Median: 150 * time.Microsecond}, {Core: 1, Checks: 5, Normal: 160 * time.Microsecond, Median: 161 * time.Microsecond}}})
	for _, w := range []string{"5 phases measured; 1 waited", "2 timed again", "core 0 140.0µs (median 150.0µs, 2 of 7 slow), core 1 160.0µs (median 161.0µs, 0 of 5 slow)"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("%q lacks %q", b.String(), w)
		}
	}
	if n := strings.Count(b.String(), "\n"); n != 2 {
		t.Errorf("%d lines, want 2: %q", n, b.String())
	}
}
