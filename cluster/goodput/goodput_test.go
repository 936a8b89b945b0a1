package goodput_test

import (
	"math"
	"testing"

	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/cluster/sia/siatest"
)

func TestFitRecoversModel(t *testing.T) {
	want := goodput.Fit{AlphaC: 0.02, BetaC: 0.001, AlphaN: 0.01, BetaN: 0.002, AlphaR: 0.05, BetaR: 0.004, Gamma: 2}
	var s []sia.Sample
	for _, n := range []struct{ reps, nodes int }{{1, 1}, {2, 1}, {4, 1}, {8, 2}, {16, 4}} {
		for _, m := range []float64{8, 16, 32, 64} {
			st := want.Step(n.reps, n.nodes, m, 0)
			s = append(s, sia.Sample{Nodes: n.nodes, Replicas: n.reps, LocalBatch: m, Step: st, Sync: want.Sync(n.reps, n.nodes)})
		}
	}
	f, err := goodput.FitSamples(s)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.AlphaC-want.AlphaC) > 1e-9 || math.Abs(f.BetaR-want.BetaR) > 1e-9 || math.Abs(f.Gamma-2) > 0.051 || f.RMSLogError > 0.01 {
		t.Errorf("fit %+v, want %+v", f, want)
	}
	local, acc := f.Split(1000, 4)
	if f.MaxLocal != 64 || acc != 3 || local != 62.5 {
		t.Errorf("split: %g, %d", local, acc)
	}
}

// cifar10 is the goodput model of Sia's cifar10 job on the benchmark's
// cluster.
func cifar10(t *testing.T) *goodput.Model {
	t.Helper()
	b := siatest.Load(t)
	m, err := goodput.NewModel(b, b.Models["cifar10"], b.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSharedModels(t *testing.T) {
	m := cifar10(t)
	for i, f := range m.Fits {
		// Pollux's model should fit the measured step times to a few tens
		// of percent.
		if f == nil || f.RMSLogError > 0.5 {
			t.Errorf("type %d: %+v", i, f)
		}
	}
	e := m.Eff
	if e.M0 != 128 || e.Target <= 0 {
		t.Errorf("efficiency: M0 %g, target %g", e.M0, e.Target)
	}
	// Gain: 1 at the initial batch, at most the scale above it.
	if g := e.Gain(e.M0, 0); math.Abs(g-1) > 1e-9 {
		t.Errorf("gain at M0: %g", g)
	}
	if g := e.Gain(4*e.M0, e.Target/2); !(g > 1 && g <= 4) {
		t.Errorf("gain at 4·M0: %g", g)
	}
	one := goodput.Alloc{{Type: 2, GPUs: 1, Nodes: 1}}
	eight := goodput.Alloc{{Type: 2, GPUs: 8, Nodes: 1}}
	_, g1 := m.BestBatch(one, e.M0, e.MaxBatch, 0, goodput.Truth, goodput.Proportional)
	_, g8 := m.BestBatch(eight, e.M0, e.MaxBatch, 0, goodput.Truth, goodput.Proportional)
	if !(g8 > g1) {
		t.Errorf("8 A100s no faster than one: %g vs %g", g8, g1)
	}
	// Mixed gangs: proportional split never slower than even, and a gang
	// is at least as fast as its faster part's single-type time at the
	// same batch per GPU would be slower.
	mix := goodput.Alloc{{Type: 0, GPUs: 4, Nodes: 1}, {Type: 2, GPUs: 8, Nodes: 1}}
	pr := m.Step(mix, 2048, goodput.Truth, goodput.Proportional)
	ev := m.Step(mix, 2048, goodput.Truth, goodput.Even)
	if !(pr <= ev*(1+1e-9)) {
		t.Errorf("proportional %g slower than even %g", pr, ev)
	}
	// Bootstrapping without multi-GPU measurements assumes perfect
	// scaling: never slower than the truth.
	boot := m.Step(eight, 1024, goodput.Knowledge{Agnostic: -1}, goodput.Proportional)
	if tr := m.Step(eight, 1024, goodput.Truth, goodput.Proportional); !(boot <= tr) {
		t.Errorf("bootstrap %g above truth %g", boot, tr)
	}
}

// TestLocalBatches: the per-GPU shares of a batch sum to it; one type, an
// Even split or a planned model share evenly; a Proportional split gives
// the faster type (A100) a larger share than the slower (T4).
func TestLocalBatches(t *testing.T) {
	m := cifar10(t)
	sum := func(a goodput.Alloc, s []float64) float64 {
		v := 0.0
		for i, p := range a {
			v += float64(p.GPUs) * s[i]
		}
		return v
	}
	one := goodput.Alloc{{Type: 0, GPUs: 4, Nodes: 1}}
	if s := m.LocalBatches(one, 512, goodput.Truth, goodput.Proportional); len(s) != 1 || s[0] != 128 {
		t.Errorf("one type: %v", s)
	}
	mixed := goodput.Alloc{{Type: 0, GPUs: 4, Nodes: 1}, {Type: 2, GPUs: 2, Nodes: 1}}
	if s := m.LocalBatches(mixed, 600, goodput.Truth, goodput.Even); s[0] != 100 || s[1] != 100 {
		t.Errorf("even: %v", s)
	}
	s := m.LocalBatches(mixed, 600, goodput.Truth, goodput.Proportional)
	if math.Abs(sum(mixed, s)-600) > 1e-6 || !(s[1] > s[0]) || !(s[0] > 0) {
		t.Errorf("proportional: %v (sum %g)", s, sum(mixed, s))
	}
}
