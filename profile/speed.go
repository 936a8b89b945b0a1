package profile

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/internal/stats"
)

// The speed guard keeps Local's figures to the processor's normal speed.
//
// On the 2-core host (a KVM guest) a core runs, for spells of one to
// fifteen seconds, at half its speed: a fixed compute kernel (a 64×64
// matrix product) and a 64 MiB stream both take twice their usual time,
// with nothing else running in the guest. Over four minutes, sampled every
// 200 ms on one core, 28 % of the samples were slow (48–55 % in the first
// minute, 0–20 % later); on both cores at once 15 % and 19 %, 7 % on both
// together (docs/results/contention-log.md, "Slow spells"). A measurement taken in such a spell
// makes every figure of the subgraph up to twice too large, and a co-run
// figure taken in one makes the neighbour's load look like contention.
//
// So before each phase of a measurement (the warm runs, the cold runs, the
// idle runs, each co-run condition) Local times a reference kernel on the
// measuring thread, and while it is slower than SlowRatio times the core's
// normal speed (normalSpeed) it waits (SpeedPoll between tries,
// at most SpeedWait in all); after the phase it times the kernel again,
// and a phase that ended in a slow spell is timed again (at most
// SpeedRetries times). What was waited, re-timed and accepted slow is
// counted (Local.Speed).
const (
	// SlowRatio: a reference this much slower than the core's normal
	// speed (normalSpeed) is a slow spell. The fast state's references spread by up to 1.25×, the
	// slow state's are 1.9–2.1× the fast.
	SlowRatio = 1.4
	// SpeedPoll is the pause between two references while waiting.
	SpeedPoll = 100 * time.Millisecond
	// SpeedWait bounds the wait before one phase.
	SpeedWait = 5 * time.Second
	// SpeedRetries bounds the re-timings of one phase.
	SpeedRetries = 2
)

// SpeedStats counts what the speed guard did.
type SpeedStats struct {
	// Checks counts the reference timings; Phases the phases guarded.
	Checks, Phases int
	// Waits counts the phases that waited for the core to be fast, Waited
	// their time in all.
	Waits  int
	Waited time.Duration
	// Retimed counts the phases timed again because they ended in a slow
	// spell; Slow those accepted in one (the wait or the re-timings ran
	// out).
	Retimed, Slow int
	// Cores summarises each core's references, by core (coreSpeed; its
	// Slow counts references, not phases): Normal is the speed the
	// figures were taken at, to set beside a run's (CoreSpeed).
	Cores []CoreSpeed
}

// speedGuard holds, per core, the references seen and when the
// last one said the core was fast. ref times the reference kernel on the
// calling thread; sleep pauses; now is the clock. They are fields so that
// tests can drive them.
type speedGuard struct {
	mu sync.Mutex
	// seen holds a core's references, ascending (at most seenKept), its
	// normal speed's source (normalSpeed).
	seen map[int][]time.Duration
	// lastFast is when a reference on the core last said it was fast.
	lastFast map[int]time.Time
	stats    SpeedStats
	ref      func() time.Duration
	sleep    func(context.Context, time.Duration) error
	now      func() time.Time
}

const (
	// seenKept bounds the references kept per core: past it, every other
	// one is dropped, which keeps their distribution.
	seenKept = 4096
	// speedFresh: a phase that starts this soon after a reference said
	// the core was fast (the previous phase's last check) is not checked
	// again before it.
	speedFresh = 50 * time.Millisecond
)

func newSpeedGuard() *speedGuard {
	return &speedGuard{seen: map[int][]time.Duration{}, lastFast: map[int]time.Time{},
		ref: referenceTime, sleep: sleepCtx, now: time.Now}
}

// check times the reference on core and says whether the core is at its
// normal speed (within SlowRatio of it; see seen, which it updates).
func (g *speedGuard) check(core int) bool {
	r := g.ref()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stats.Checks++
	seen := g.seen[core]
	i, _ := slices.BinarySearch(seen, r)
	seen = slices.Insert(seen, i, r)
	if len(seen) > seenKept {
		for j := range len(seen) / 2 {
			seen[j] = seen[2*j]
		}
		seen = seen[:len(seen)/2]
	}
	g.seen[core] = seen
	fast := float64(r) <= SlowRatio*float64(normalSpeed(seen))
	if fast {
		g.lastFast[core] = g.now()
	}
	return fast
}

// fresh says whether a reference said core was fast within speedFresh.
func (g *speedGuard) fresh(core int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.lastFast[core]
	return ok && g.now().Sub(t) < speedFresh
}

// phase runs run (one phase of a measurement, which times its own runs
// and keeps them) on core at normal speed as far as the guard can tell:
// it waits for a fast reference before (unless one came just now), and
// times the phase again when the reference after it is slow.
func (g *speedGuard) phase(ctx context.Context, core int, run func() error) error {
	return g.phaseOn(ctx, []int{core}, g.check, run)
}

// phaseOn is phase for a phase that runs on several cores (a plan's
// cycle): every core must be at normal speed before and after, each
// checked by check(core), which times the reference on that core.
func (g *speedGuard) phaseOn(ctx context.Context, cores []int, check func(core int) bool, run func() error) error {
	g.count(func(s *SpeedStats) { s.Phases++ })
	all := func(first bool) bool {
		fast := true
		for _, c := range cores {
			if !(first && g.fresh(c)) && !check(c) {
				fast = false
			}
		}
		return fast
	}
	for attempt := 0; ; attempt++ {
		fast := all(attempt == 0)
		waited := time.Duration(0)
		for !fast && waited < SpeedWait {
			if err := g.sleep(ctx, SpeedPoll); err != nil {
				return err
			}
			waited += SpeedPoll
			fast = all(false)
		}
		if waited > 0 {
			g.count(func(s *SpeedStats) { s.Waits++; s.Waited += waited })
		}
		if err := run(); err != nil {
			return err
		}
		if all(false) && fast {
			return nil
		}
		if attempt == SpeedRetries {
			g.count(func(s *SpeedStats) { s.Slow++ })
			return nil
		}
		g.count(func(s *SpeedStats) { s.Retimed++ })
	}
}

func (g *speedGuard) count(f func(*SpeedStats)) {
	g.mu.Lock()
	f(&g.stats)
	g.mu.Unlock()
}

// Stats returns the counts so far.
func (g *speedGuard) Stats() SpeedStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stats
	st.Cores = nil
	for _, c := range slices.Sorted(maps.Keys(g.seen)) {
		st.Cores = append(st.Cores, coreSpeed(c, g.seen[c]))
	}
	return st
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// refN is the reference kernel's matrix order: 48×48 float64 products,
// two of them about 0.14 ms on the host at normal speed, in the L1 and L2
// caches.
const refN = 48

// refSettle is how long the kernel runs untimed before it is timed: on
// the host, a core that has just slept (the guard's polls, the idle runs)
// or evicted its caches runs the first millisecond or two slower (the
// reference 0.17–0.21 ms right after a 100 ms sleep, 0.15–0.20 ms the
// next time, 0.14 ms after 3 ms of spinning), which is not the spell the
// guard looks for.
const refSettle = 2 * time.Millisecond

var refA, refB = func() ([]float64, []float64) {
	a, b := make([]float64, refN*refN), make([]float64, refN*refN)
	for i := range a {
		a[i], b[i] = float64(i%7)/7, float64(i%5)/5
	}
	return a, b
}()

// referenceTime is the median of five timings of the reference kernel (two
// matrix products each) on the calling thread, after refSettle of it
// untimed.
func referenceTime() time.Duration {
	c := make([]float64, refN*refN)
	for settle := time.Now(); time.Since(settle) < refSettle; {
		matmul(c, refA, refB, refN)
	}
	var ts [5]time.Duration
	for i := range ts {
		start := time.Now()
		for range 2 {
			matmul(c, refA, refB, refN)
		}
		ts[i] = time.Since(start)
	}
	return stats.Median(ts[:])
}

// normalSpeed is a core's normal reference time from its references,
// ascending: their lower quartile, and never below the second lowest (the
// lowest while there are fewer than three), so that one outlier does not
// make every later reference look slow. A quartile, not the lowest few:
// on a host whose core is slow in spells a quarter or more of the time (the
// 2-core host of the sixth and seventh sessions: 28 %) it stays in the fast
// state; on one whose references spread without spells (the eighth
// session's host: 0.16–0.25 ms, one outlier at 0.11 ms) the lowest few
// are outliers, and taking them made most references slow, and the guard
// wait on nearly every phase. The guard and SpeedSampler share it.
func normalSpeed(sorted []time.Duration) time.Duration {
	n := len(sorted)
	return sorted[max((n-1)/4, (min(n, 3)-1)/2)]
}

// matmul adds a·b to c, all n×n row-major.
func matmul(c, a, b []float64, n int) {
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			aik := a[i*n+k]
			row, brow := c[i*n:i*n+n], b[k*n:k*n+n]
			for j := range row {
				row[j] += aik * brow[j]
			}
		}
	}
}

// CoreSpeed is what a SpeedSampler saw on one core: Checks reference
// timings, Slow of them over SlowRatio times the core's normal speed
// (normalSpeed, as the guard takes it). Normal is that normal reference
// time and Median the references' median: Slow counts spells against the
// run's own normal speed, so a run slow throughout shows as a Normal (and
// Median) above another run's, or above the reference's time at the
// host's fast speed, not as slow checks.
type CoreSpeed struct {
	Core, Checks, Slow int
	Normal, Median     time.Duration
}

// SpeedSampler times the reference kernel on each of a set of cores, one
// pinned thread per core, every period while a run goes on, so that the
// run can say how much of it fell in the host's slow spells (SlowRatio).
// Each timing takes about 3.5 ms of its core (refSettle and five
// timings); at the default period of 500 ms that is 0.7 % of the core.
type SpeedSampler struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	cores  []int
	refs   [][]time.Duration
}

// DefaultSpeedPeriod is the period inlay run samples the host's speed at.
const DefaultSpeedPeriod = 500 * time.Millisecond

// StartSpeedSampler starts sampling each of cores every period (its first
// timing at once) until Stop or ctx ends. A core the thread cannot be
// pinned to is sampled unpinned.
func StartSpeedSampler(ctx context.Context, cores []int, period time.Duration) *SpeedSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &SpeedSampler{cancel: cancel, cores: append([]int(nil), cores...), refs: make([][]time.Duration, len(cores))}
	for i, c := range s.cores {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			release, err := pinThread([]int{c})
			if err == nil {
				defer release()
			}
			for {
				s.refs[i] = append(s.refs[i], referenceTime())
				if sleepCtx(ctx, period) != nil {
					return
				}
			}
		}()
	}
	return s
}

// Stop ends the sampling and returns each core's counts, in the order of
// the cores given.
func (s *SpeedSampler) Stop() []CoreSpeed {
	s.cancel()
	s.wg.Wait()
	out := make([]CoreSpeed, len(s.cores))
	for i, c := range s.cores {
		out[i] = coreSpeed(c, s.refs[i])
	}
	return out
}

// coreSpeed summarises core's references: how many, how many over
// SlowRatio times their normal speed (normalSpeed), that normal speed and
// their median.
func coreSpeed(core int, refs []time.Duration) CoreSpeed {
	cs := CoreSpeed{Core: core, Checks: len(refs)}
	if len(refs) == 0 {
		return cs
	}
	sorted := slices.Sorted(slices.Values(refs))
	cs.Normal = normalSpeed(sorted)
	cs.Median = stats.Median(sorted)
	for _, r := range refs {
		if float64(r) > SlowRatio*float64(cs.Normal) {
			cs.Slow++
		}
	}
	return cs
}
