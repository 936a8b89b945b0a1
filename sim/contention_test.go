package sim

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/dispatch"
	"github.com/inlay-dev/inlay/hw"
)

// contendedPair is two processors sharing one memory channel, each with a
// group of one job: A (dA) on a and B (dB) on b, released together. Each
// job uses half the channel and suffers k per unit of load.
func contendedPair(dA, dB time.Duration, k float64) *Program {
	b := newProg().proc("a", 1).proc("b", 1)
	ga := b.group("ga", 100*ms, 80*ms)
	gb := b.group("gb", 100*ms, 80*ms)
	b.compute(b.model(ga, "A", 0), "A", "a", dA)
	b.compute(b.model(gb, "B", 0), "B", "b", dB)
	p := b.build()
	p.Contention = &Contention{
		Resources:   []hw.Shared{{Name: "dram", Kind: hw.SharedMemory, BandwidthGBs: 10}},
		ProcShares:  [][]int{{0}, {0}},
		Use:         [][]float64{{0.5}, {0.5}},
		Sensitivity: []float64{k, k},
	}
	return p
}

func TestContentionStretch(t *testing.T) {
	tests := []struct {
		name         string
		dA, dB       time.Duration
		k            float64
		off          bool
		wantA, wantB time.Duration
		stretched    int
	}{
		// Both run together at 1 + 1·0.5 = 1.5 throughout.
		{"equal", 10 * ms, 10 * ms, 1, false, 15 * ms, 15 * ms, 2},
		// B (4 ms) ends at 6 ms; A has done 4 of its 10 ms by then and
		// runs the other 6 alone: 12 ms.
		{"short beside long", 10 * ms, 4 * ms, 1, false, 12 * ms, 6 * ms, 2},
		// k = 10 would give 1 + 5: the slowdown stops at MaxSlowdown (3).
		{"bounded", 10 * ms, 10 * ms, 10, false, 30 * ms, 30 * ms, 2},
		{"insensitive", 10 * ms, 4 * ms, 0, false, 10 * ms, 4 * ms, 0},
		{"switched off", 10 * ms, 4 * ms, 1, true, 10 * ms, 4 * ms, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(contendedPair(tc.dA, tc.dB, tc.k), Options{Horizon: ms, Warmup: -1, NoContention: tc.off})
			if err != nil {
				t.Fatal(err)
			}
			if got := []time.Duration{res.Groups[0].P50, res.Groups[1].P50}; !reflect.DeepEqual(got, []time.Duration{tc.wantA, tc.wantB}) {
				t.Errorf("latencies %v, want [%v %v]", got, tc.wantA, tc.wantB)
			}
			if res.Stretched != tc.stretched {
				t.Errorf("stretched %d jobs, want %d", res.Stretched, tc.stretched)
			}
			var marked int
			for _, s := range res.Spans {
				if s.Stretched() {
					marked++
					if want := float64(s.End-s.Start) / float64(map[string]time.Duration{"A": tc.dA, "B": tc.dB}[s.Model]); s.Stretch != want {
						t.Errorf("span %s stretch %v, want %v", s.Model, s.Stretch, want)
					}
				}
			}
			if marked != tc.stretched {
				t.Errorf("%d spans marked stretched, want %d", marked, tc.stretched)
			}
			if busy := res.Procs[0].Busy; busy != tc.wantA {
				t.Errorf("processor a busy %v, want %v", busy, tc.wantA)
			}
		})
	}
}

// TestContentionDeterministic runs a loaded contended program twice and
// checks it never beats the uncontended run.
func TestContentionDeterministic(t *testing.T) {
	p := contendedPair(7*ms, 3*ms, 0.8)
	p.Groups[0].Period, p.Groups[1].Period = 9*ms, 5*ms
	p.Groups[1].Poisson = true
	a, err := Run(p, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(p, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two contended runs differ")
	}
	off, err := Run(p, Options{Seed: 3, NoContention: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Groups {
		if a.Groups[i].P50 < off.Groups[i].P50 {
			t.Errorf("group %s: contended p50 %v below uncontended %v", a.Groups[i].Name, a.Groups[i].P50, off.Groups[i].P50)
		}
	}
	if a.Stretched == 0 {
		t.Error("no job stretched")
	}
}

// randomContended is a program of three to five groups on four
// processors (one with two slots) and a link, three processors sharing a
// memory channel and a cache and the fourth nothing (its jobs complete
// through the event queue, beside the contended ones), with jobs of whole
// milliseconds (so that completions and arrivals often fall on the same
// instant) and random uses and sensitivities, some zero.
func randomContended(rng *rand.Rand) *Program {
	b := newProg().proc("p0", 1).proc("p1", 2).proc("p2", 1).proc("p3", 1).link("bus", true)
	procs := []string{"p0", "p1", "p2", "p3"}
	ng := 3 + rng.Intn(3)
	for g := 0; g < ng; g++ {
		period := time.Duration(4+rng.Intn(12)) * ms
		gi := b.group(fmt.Sprintf("g%d", g), period, period*time.Duration(1+rng.Intn(3)))
		b.p.Groups[gi].Poisson = rng.Intn(2) == 0
		for m := 0; m < 1+rng.Intn(2); m++ {
			mi := b.model(gi, fmt.Sprintf("g%dm%d", g, m), rng.Intn(3))
			prev := -1
			for j := 0; j < 1+rng.Intn(4); j++ {
				var deps []int
				if prev >= 0 {
					deps = []int{prev}
				}
				if prev >= 0 && rng.Intn(2) == 0 {
					prev = b.transfer(mi, "x", "bus", time.Duration(rng.Intn(2))*ms, deps...)
					deps = []int{prev}
				}
				prev = b.compute(mi, fmt.Sprintf("j%d", j), procs[rng.Intn(len(procs))], time.Duration(rng.Intn(5))*ms+time.Duration(rng.Intn(2))*ms/2, deps...)
			}
		}
	}
	p := b.build()
	c := &Contention{
		Resources: []hw.Shared{{Name: "dram", Kind: hw.SharedMemory, BandwidthGBs: 10, Processors: []string{"p0", "p1", "p2"}},
			{Name: "llc", Kind: hw.SharedCache, SizeBytes: 1 << 20, Processors: []string{"p0", "p1", "p2"}}},
		ProcShares:  [][]int{{0, 1}, {0, 1}, {0, 1}, nil},
		Use:         make([][]float64, len(p.Jobs)),
		Sensitivity: make([]float64, len(p.Jobs)),
	}
	for ji, j := range p.Jobs {
		if j.Kind != dispatch.Compute || c.ProcShares[j.Proc] == nil {
			continue
		}
		c.Use[ji] = make([]float64, len(c.ProcShares[j.Proc]))
		for i := range c.Use[ji] {
			c.Use[ji][i] = []float64{0, 0.25, 0.5, rng.Float64()}[rng.Intn(4)]
		}
		c.Sensitivity[ji] = []float64{0, 0.5, 1, 3 * rng.Float64()}[rng.Intn(4)]
	}
	p.Contention = c
	return p
}

// TestContentionMatchesReference checks the simulator's contended runs
// against the straightforward implementation (refRun: a queued completion
// per re-rating, stale ones skipped) on random programs, seeds and scales,
// with spans and without, to the last field of the result.
func TestContentionMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	var stretched int
	for i := 0; i < 60; i++ {
		p := randomContended(rng)
		if err := p.Validate(); err != nil {
			t.Fatalf("program %d: %v", i, err)
		}
		for _, o := range []Options{
			{Seed: int64(i), Requests: 60},
			{Seed: int64(i), Requests: 60, Scale: 2, NoSpans: true},
			{Seed: int64(i) + 1, Requests: 60, Scale: 4, failFast: true, NoSpans: true},
		} {
			want, err := refRun(p, o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(p, o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("program %d, options %+v: the run differs from the reference:\n got %+v\nwant %+v", i, o, got.Groups, want.Groups)
			}
			stretched += got.Stretched
		}
	}
	if stretched == 0 {
		t.Error("no job was stretched: the programs do not exercise contention")
	}
}
