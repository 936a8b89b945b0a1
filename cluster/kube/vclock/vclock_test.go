package vclock

import (
	"context"
	"math"
	"testing"
	"time"
)

func TestHoldStopsTheClock(t *testing.T) {
	c, err := New(1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(0); err == nil {
		t.Error("speedup 0 accepted")
	}
	time.Sleep(20 * time.Millisecond)
	c.Hold()
	c.Hold()
	h0 := time.Now()
	v0 := c.Now()
	if v0 < 20 {
		t.Errorf("after 20 ms at 1000×: %g virtual s, want ≥ 20", v0)
	}
	time.Sleep(30 * time.Millisecond)
	if v := c.Now(); v != c.At(h0) || v < v0 {
		t.Errorf("held: %g then %g; want it still", v0, v)
	}
	c.Release()
	time.Sleep(10 * time.Millisecond)
	if v := c.Now(); v != c.At(h0) {
		t.Errorf("one of two holds released: clock moved to %g", v)
	}
	c.Release()
	r := time.Now()
	time.Sleep(20 * time.Millisecond)
	vr := c.At(r)
	if v := c.Now(); v-vr < 20 {
		t.Errorf("released: %g virtual s in 20 ms, want ≥ 20", v-vr)
	}
	if c.Held() < 40*time.Millisecond {
		t.Errorf("held %v, want ≥ 40 ms", c.Held())
	}
	// Wall inverts At over the past, the held stretch maps to its start.
	for _, w := range []time.Time{h0.Add(-5 * time.Millisecond), r.Add(5 * time.Millisecond)} {
		if got := c.Wall(c.At(w)); got.Sub(w).Abs() > time.Microsecond {
			t.Errorf("Wall(At(%v)) = %v", w, got)
		}
	}
	if got := c.Wall(c.At(h0)); got.After(h0) {
		t.Errorf("Wall of the held value %v after the hold %v", got, h0)
	}
	// Until waits through a hold.
	c.Hold()
	target := c.Now() + 10
	done := make(chan error, 1)
	go func() { done <- c.Until(context.Background(), target) }()
	select {
	case <-done:
		t.Fatal("Until returned while the clock was held")
	case <-time.After(30 * time.Millisecond):
	}
	c.Release()
	select {
	case err := <-done:
		if err != nil || c.Now() < target {
			t.Errorf("Until: %v at %g, want nil at ≥ %g", err, c.Now(), target)
		}
	case <-time.After(time.Second):
		t.Fatal("Until did not return after the release")
	}
	if math.IsNaN(c.Now()) {
		t.Fatal("NaN")
	}
}
