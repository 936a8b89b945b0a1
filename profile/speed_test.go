package profile

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// scripted drives a speed guard with a fixed list of reference times (the
// last repeats) and counts the sleeps.
func scripted(refs ...time.Duration) (*speedGuard, *int) {
	g := newSpeedGuard()
	i, sleeps := 0, new(int)
	g.ref = func() time.Duration {
		r := refs[min(i, len(refs)-1)]
		i++
		return r
	}
	g.sleep = func(ctx context.Context, _ time.Duration) error { *sleeps++; return ctx.Err() }
	// Each reading of the clock a second later: no phase starts fresh.
	clock := time.Unix(0, 0)
	g.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	return g, sleeps
}

func TestSpeedGuard(t *testing.T) {
	const f, s = 100 * time.Microsecond, 200 * time.Microsecond
	for _, tc := range []struct {
		name   string
		refs   []time.Duration
		phases int
		runs   int
		sleeps int
		want   SpeedStats
	}{
		{"fast throughout", []time.Duration{f, f}, 1, 1, 0, SpeedStats{Checks: 2, Phases: 1}},
		// The first reference sets the core's fastest; one slow before the
		// phase waits one poll.
		{"waits out a slow spell", []time.Duration{f, f, s, f, f}, 2, 2, 1,
			SpeedStats{Checks: 5, Phases: 2, Waits: 1, Waited: SpeedPoll}},
		// Slow after the phase: timed again.
		{"re-times a phase that ended slow", []time.Duration{f, s, f, f}, 1, 2, 0,
			SpeedStats{Checks: 4, Phases: 1, Retimed: 1}},
		// Slow after every attempt: accepted after SpeedRetries re-timings.
		{"accepts after the retries", []time.Duration{f, s, f, s, f, s}, 1, SpeedRetries + 1, 0,
			SpeedStats{Checks: 6, Phases: 1, Retimed: SpeedRetries, Slow: 1}},
		// Slow from the start: the first reference is the fastest seen, so
		// the spell passes for normal until a faster one comes.
		{"learns the fast state", []time.Duration{s, s, f, f}, 2, 2, 0,
			SpeedStats{Checks: 4, Phases: 2}},
		// A spread within SlowRatio is not slow.
		{"noise is not a spell", []time.Duration{f, f * 13 / 10}, 1, 1, 0, SpeedStats{Checks: 2, Phases: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, sleeps := scripted(tc.refs...)
			runs := 0
			for range tc.phases {
				if err := g.phase(context.Background(), 3, func() error { runs++; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			st := g.Stats()
			// Cores summarises the core's references (coreSpeed).
			if len(st.Cores) != 1 || st.Cores[0] != coreSpeed(3, tc.refs) {
				t.Errorf("cores %+v, want core 3's references %+v", st.Cores, coreSpeed(3, tc.refs))
			}
			st.Cores = nil
			if runs != tc.runs || *sleeps != tc.sleeps || !reflect.DeepEqual(st, tc.want) {
				t.Errorf("runs %d, sleeps %d, stats %+v; want %d, %d, %+v", runs, *sleeps, st, tc.runs, tc.sleeps, tc.want)
			}
		})
	}
}

// A phase that starts right after a fast reference is not checked before,
// and one outlier among the lowest references does not set the speed.
func TestSpeedGuardFreshAndOutlier(t *testing.T) {
	const f = 100 * time.Microsecond
	g, _ := scripted(f)
	g.now = func() time.Time { return time.Unix(0, 0) }
	for range 2 {
		if err := g.phase(context.Background(), 0, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if st := g.Stats(); st.Checks != 3 || st.Phases != 2 {
		t.Errorf("fresh: stats %+v, want 3 checks for 2 phases", st)
	}
	g, _ = scripted(f / 3)
	for _, r := range []time.Duration{f / 3, f, f} {
		g.ref = func() time.Duration { return r }
		g.check(0)
	}
	g.ref = func() time.Duration { return f * 13 / 10 }
	if !g.check(0) {
		t.Errorf("one outlier at %v among the lowest %v made %v slow", f/3, g.seen[0], f*13/10)
	}
}

// The wait is bounded (SpeedWait), a phase's error comes back at once, and
// a cancelled context ends the wait.
func TestSpeedGuardBounds(t *testing.T) {
	const f, s = 100 * time.Microsecond, 300 * time.Microsecond
	g, sleeps := scripted(s)
	// A core seen fast many times: a spell shorter than three times
	// that stays a spell (past it, the slow state is the normal one).
	g.seen[0] = slices.Repeat([]time.Duration{f}, 100)
	runs := 0
	if err := g.phase(context.Background(), 0, func() error { runs++; return nil }); err != nil {
		t.Fatal(err)
	}
	if want := int(SpeedWait / SpeedPoll); *sleeps < want || runs != SpeedRetries+1 || g.Stats().Slow != 1 {
		t.Errorf("slow for ever: %d sleeps (want at least %d), %d runs, stats %+v", *sleeps, want, runs, g.Stats())
	}
	boom := errors.New("boom")
	g, _ = scripted(f)
	if err := g.phase(context.Background(), 0, func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("phase error: got %v", err)
	}
	g, _ = scripted(s)
	g.seen[0] = []time.Duration{f, f, f}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.phase(ctx, 0, func() error { t.Error("ran while cancelled"); return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: got %v", err)
	}
}

// The reference kernel takes a positive, repeatable time.
func TestReferenceTime(t *testing.T) {
	r := referenceTime()
	if r <= 0 || r > time.Second {
		t.Fatalf("reference %v", r)
	}
}

// coreSpeed takes the normal speed as normalSpeed takes it, as the
// guard does, and counts the slow references against it.
func TestCountSlow(t *testing.T) {
	const f, us = 100 * time.Microsecond, time.Microsecond
	for _, tc := range []struct {
		refs           []time.Duration
		want           int
		normal, median time.Duration
	}{
		{nil, 0, 0, 0},
		{[]time.Duration{f}, 0, f, f},
		{[]time.Duration{f, 2 * f, f, 2 * f, 2 * f}, 3, f, 2 * f},
		// One outlier low does not make the normal ones slow.
		{[]time.Duration{f / 3, f, f, f * 13 / 10, 2 * f}, 1, f, f},
		// A run slow throughout counts no slow check; its normal speed
		// says it.
		{[]time.Duration{2 * f, 2 * f, 2 * f, 2 * f}, 0, 2 * f, 2 * f},
		// References that spread without spells (this session's host,
		// in µs), one low outlier among them: only the two above 1.4 times
		// the lower quartile (165 µs) are slow (the lowest three's median,
		// 155 µs, made it three, and more as more outliers came).
		{[]time.Duration{204 * us, 220 * us, 216 * us, 192 * us, 107 * us, 165 * us, 167 * us, 248 * us, 193 * us, 155 * us, 232 * us, 181 * us}, 2, 165 * us, 192500 * time.Nanosecond},
	} {
		got := coreSpeed(3, tc.refs)
		want := CoreSpeed{Core: 3, Checks: len(tc.refs), Slow: tc.want, Normal: tc.normal, Median: tc.median}
		if got != want {
			t.Errorf("coreSpeed(%v) = %+v, want %+v", tc.refs, got, want)
		}
	}
}

// The sampler times each core at once and then every period, and stops.
func TestSpeedSampler(t *testing.T) {
	s := StartSpeedSampler(context.Background(), []int{0}, 20*time.Millisecond)
	time.Sleep(70 * time.Millisecond)
	got := s.Stop()
	if len(got) != 1 || got[0].Core != 0 || got[0].Checks < 1 || got[0].Slow > got[0].Checks {
		t.Errorf("sampler: %+v", got)
	}
}

// The store keeps the last profile's speeds per device, replacing the
// device's earlier ones, refuses bad ones with one line naming the file,
// and ReadRecorded reads them with the recorded arrival lag (none
// without a store, or for another device).
func TestStoreSpeeds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	us := time.Microsecond
	first := []CoreSpeed{{Core: 1, Checks: 9, Slow: 2, Normal: 150 * us, Median: 170 * us}, {Core: 0, Checks: 8, Normal: 140 * us, Median: 145 * us}, {Core: 2, Checks: 3, Normal: us, Median: us}}
	last := []CoreSpeed{{Core: 1, Checks: 40, Slow: 5, Normal: 160 * us, Median: 180 * us}, {Core: 0, Checks: 30, Normal: 141 * us, Median: 150 * us}}
	for _, cs := range [][]CoreSpeed{first, last} {
		if err := st.PutSpeeds("dev", cs); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutSpeeds("other", first[:1]); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]CoreSpeed{{{Core: 0, Checks: 1, Slow: 2, Normal: us, Median: us}}, {{Core: 0, Checks: 1}}, {{Core: -1, Checks: 1, Normal: us, Median: us}}} {
		if err := st.PutSpeeds("dev", bad); err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
			t.Errorf("PutSpeeds(%+v) = %v, want one line naming the store", bad, err)
		}
	}
	if err := st.PutSpeeds("", last); err == nil {
		t.Error("speeds without a device were stored")
	}
	if err := st.AddArrivalLag("dev", 300*us, 40); err != nil {
		t.Fatal(err)
	}
	st.Close()
	got, err := ReadRecorded(path, "dev")
	want := Recorded{ArrivalLag: 300 * us, Speeds: []CoreSpeed{last[1], last[0]}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadRecorded = %+v, %v; want the last profile's speeds, by core, and the lag: %+v", got, err, want)
	}
	for _, tc := range []struct{ path, device string }{{"", "dev"}, {filepath.Join(t.TempDir(), "none.db"), "dev"}, {path, "nobody"}} {
		if got, err := ReadRecorded(tc.path, tc.device); !reflect.DeepEqual(got, Recorded{}) || err != nil {
			t.Errorf("ReadRecorded(%q, %q) = %+v, %v; want nothing", tc.path, tc.device, got, err)
		}
	}
}
