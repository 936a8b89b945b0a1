package cost

import (
	"strings"
	"testing"
	"time"
)

// TestHandOffCurveAt checks the curve's interpolation: flat before the
// first point and after the last, linear between two.
func TestHandOffCurveAt(t *testing.T) {
	us := time.Microsecond
	c := HandOffCurve{{After: 100 * us, Gap: 40 * us, Samples: 50}, {After: 300 * us, Gap: 60 * us, Samples: 50}, {After: 2000 * us, Gap: 120 * us, Samples: 20}}
	for _, tc := range []struct {
		ran, want time.Duration
	}{
		{0, 40 * us}, {100 * us, 40 * us}, {200 * us, 50 * us}, {300 * us, 60 * us},
		{1150 * us, 90 * us}, {2000 * us, 120 * us}, {time.Second, 120 * us},
	} {
		if got, ok := c.At(tc.ran); !ok || got != tc.want {
			t.Errorf("At(%v) = %v, %v; want %v", tc.ran, got, ok, tc.want)
		}
	}
	if _, ok := HandOffCurve(nil).At(time.Millisecond); ok {
		t.Error("an empty curve answered")
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// TestHandOffCurveValidate checks that a curve out of order, or with a
// point without a span, samples or with a negative hand-off, is refused
// with the point named.
func TestHandOffCurveValidate(t *testing.T) {
	us := time.Microsecond
	ok := HandOffPoint{After: 100 * us, Gap: 40 * us, Samples: 5}
	for _, tc := range []struct {
		name string
		c    HandOffCurve
		want string
	}{
		{"no span", HandOffCurve{{Gap: us, Samples: 1}}, "point 0: want a positive span"},
		{"negative gap", HandOffCurve{ok, {After: 200 * us, Gap: -us, Samples: 1}}, "point 1: want"},
		{"no samples", HandOffCurve{{After: us, Gap: us}}, "point 0: want"},
		{"out of order", HandOffCurve{ok, {After: 50 * us, Gap: us, Samples: 1}}, "point 1: span 50µs not above"},
		{"twice", HandOffCurve{ok, ok}, "point 1: span 100µs not above"},
	} {
		err := tc.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
}
