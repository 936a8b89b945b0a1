package sim

import (
	"reflect"
	"testing"
	"time"

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
