// Package vclock is a virtual clock for replays on a real control plane:
// it runs at a fixed speedup over the wall clock, and it stands still while
// anyone holds it. The scheduler holds it from a round's start until the
// round's decisions are carried out (pods bound and running, preempted
// pods gone), and the replayer while a finished job's completion reaches
// the API server, so that the control plane's reaction time, which the
// simulator does not model, costs no virtual time however the time
// compression multiplies it. Without holds it is the wall clock times the
// speedup.
package vclock

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
)

// Clock is a virtual clock; its zero time is its creation.
type Clock struct {
	speedup float64
	mu      sync.Mutex
	// Breakpoints: from wall w[i] the virtual time is v[i], advancing at
	// the speedup unless held[i].
	w     []time.Time
	v     []float64
	held  []bool
	holds int
	wake  chan struct{} // closed on every release
	// heldFor is the wall time spent held so far (closed stretches).
	heldFor time.Duration
}

// New returns a clock that runs speedup virtual seconds per wall second.
func New(speedup float64) (*Clock, error) {
	if !(speedup > 0) || math.IsInf(speedup, 0) {
		return nil, fmt.Errorf("vclock: speedup must be positive, got %g", speedup)
	}
	return &Clock{speedup: speedup, w: []time.Time{time.Now()}, v: []float64{0}, held: []bool{false}, wake: make(chan struct{})}, nil
}

// Speedup is the virtual seconds per wall second while the clock runs.
func (c *Clock) Speedup() float64 { return c.speedup }

// at is the virtual time at wall t (under mu).
func (c *Clock) at(t time.Time) float64 {
	i := sort.Search(len(c.w), func(i int) bool { return c.w[i].After(t) }) - 1
	if i < 0 {
		return c.v[0] - c.w[0].Sub(t).Seconds()*c.speedup
	}
	if c.held[i] {
		return c.v[i]
	}
	return c.v[i] + t.Sub(c.w[i]).Seconds()*c.speedup
}

// Now is the virtual time in seconds.
func (c *Clock) Now() float64 { return c.At(time.Now()) }

// At is the virtual time at wall time t (past or present; a future t is
// extrapolated as if the clock ran).
func (c *Clock) At(t time.Time) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at(t)
}

// Wall is the wall time at which the clock reads v: the first such time
// for a v already passed, or when it will if nobody holds it from now on.
func (c *Clock) Wall(v float64) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if nv := c.at(now); v >= nv {
		return now.Add(time.Duration((v - nv) / c.speedup * float64(time.Second)))
	}
	// The first breakpoint at which the clock reads v or more; before it
	// the clock ran from below v.
	i := sort.Search(len(c.v), func(i int) bool { return c.v[i] >= v })
	if i < len(c.v) && c.v[i] == v {
		return c.w[i]
	}
	j := i - 1
	if j < 0 {
		return c.w[0].Add(-time.Duration((c.v[0] - v) / c.speedup * float64(time.Second)))
	}
	return c.w[j].Add(time.Duration((v - c.v[j]) / c.speedup * float64(time.Second)))
}

// Hold stops the clock until every Hold is matched by a Release.
func (c *Clock) Hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holds == 0 {
		now := time.Now()
		c.mark(now, c.at(now), true)
	}
	c.holds++
}

// Release undoes one Hold; the clock runs again after the last.
func (c *Clock) Release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holds == 0 {
		panic("vclock: Release without Hold")
	}
	c.holds--
	if c.holds == 0 {
		now := time.Now()
		c.heldFor += now.Sub(c.w[len(c.w)-1])
		c.mark(now, c.at(now), false)
		close(c.wake)
		c.wake = make(chan struct{})
	}
}

func (c *Clock) mark(w time.Time, v float64, held bool) {
	c.w = append(c.w, w)
	c.v = append(c.v, v)
	c.held = append(c.held, held)
}

// Held is the wall time the clock has stood still so far.
func (c *Clock) Held() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.heldFor
	if c.holds > 0 {
		d += time.Since(c.w[len(c.w)-1])
	}
	return d
}

// Until waits until the clock reads at least v or ctx ends.
func (c *Clock) Until(ctx context.Context, v float64) error {
	for {
		c.mu.Lock()
		now := time.Now()
		nv := c.at(now)
		wake, held := c.wake, c.holds > 0
		c.mu.Unlock()
		if nv >= v {
			return nil
		}
		d := time.Duration((v - nv) / c.speedup * float64(time.Second))
		var tick <-chan time.Time
		var t *time.Timer
		if !held {
			t = time.NewTimer(max(d, time.Millisecond))
			tick = t.C
		}
		select {
		case <-ctx.Done():
		case <-tick:
		case <-wake:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
