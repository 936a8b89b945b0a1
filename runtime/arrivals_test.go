package runtime

import (
	"math/rand"
	"testing"
	"time"
)

// TestArrivals: periodic groups release request k at k·Period/Scale from
// time 0; Poisson groups draw exponential gaps with mean Period/Scale from
// their seeded generator, the same sequence for the same seed.
func TestArrivals(t *testing.T) {
	periodic := &groupState{period: float64(40*time.Millisecond) / 3}
	var got []time.Duration
	for k := 0; k < 4; k++ {
		got = append(got, periodic.nextAt)
		periodic.advance()
	}
	want := []time.Duration{0, 13333333, 26666667, 40 * time.Millisecond}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("periodic arrival %d at %v, want %v", i, got[i], want[i])
		}
	}
	draw := func(seed int64) []time.Duration {
		g := &groupState{period: float64(10 * time.Millisecond), poisson: true, rng: rand.New(rand.NewSource(seed))}
		g.nextAt = g.gap()
		var at []time.Duration
		for k := 0; k < 4000; k++ {
			at = append(at, g.nextAt)
			g.advance()
		}
		return at
	}
	a, b := draw(7), draw(7)
	for i := range a {
		if a[i] != b[i] || (i > 0 && a[i] < a[i-1]) {
			t.Fatalf("arrival %d: %v then %v (previous %v)", i, a[i], b[i], a[max(i-1, 0)])
		}
	}
	mean := a[len(a)-1] / time.Duration(len(a))
	if mean < 9*time.Millisecond || mean > 11*time.Millisecond {
		t.Errorf("mean Poisson gap %v, want about 10ms", mean)
	}
}
