package ratebound

import (
	"math"
	"testing"
)

// The bound's property against simulated plans (no plan sustains more than
// Upper says) is tested in package sim, which runs the plans; these tests
// pin the pieces that need no simulator.

func TestFluidDual(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name  string
		items [][]float64
		caps  []float64
		// opt is the fluid problem's optimum (least max load), worked out
		// by hand: weak duality keeps every dual value at or below it.
		opt float64
	}{
		{"two equal items, two processors", [][]float64{{1, 1}, {1, 1}}, []float64{1, 1}, 1},
		{"one item pinned to p0", [][]float64{{0.5, inf}, {1, 1}}, []float64{1, 1}, 0.75},
		{"capacity two on p1", [][]float64{{1, 1}, {1, 1}, {1, 1}}, []float64{1, 2}, 1},
		{"an item that runs nowhere adds nothing", [][]float64{{inf, inf}, {1, 1}}, []float64{1, 1}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := FluidDual(tc.items, tc.caps, 3000, 3)
			if d.Value > tc.opt*(1+1e-12) {
				t.Errorf("dual value %v above the optimum %v: not a bound", d.Value, tc.opt)
			}
			if d.Value < tc.opt*0.99 {
				t.Errorf("dual value %v, want within 1%% of the optimum %v", d.Value, tc.opt)
			}
			if got := dualLoadBound(tc.items, tc.caps); got > tc.opt {
				t.Errorf("dualLoadBound %v above the optimum %v", got, tc.opt)
			}
			sum := 0.0
			for _, w := range d.Weights {
				sum += w
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("weights %v sum to %v, want the simplex", d.Weights, sum)
			}
			if len(d.Snapshots) != 3 {
				t.Errorf("%d snapshots, want 3", len(d.Snapshots))
			}
		})
	}
	if d := FluidDual(nil, nil, 10, 0); d.Value != 0 || d.Weights != nil {
		t.Errorf("no processors: %+v, want the zero Dual", d)
	}
}

func TestLabel(t *testing.T) {
	if b := (Bound{Scale: 2}); !b.Proven() || b.Label() != "upper bound" {
		t.Errorf("proven bound: Proven %v, Label %q", b.Proven(), b.Label())
	}
	if b := (Bound{Scale: 2, PeakFallback: true}); b.Proven() || b.Label() != "estimated bound" {
		t.Errorf("peak fallback: Proven %v, Label %q", b.Proven(), b.Label())
	}
}

func TestUpperNeedsInputs(t *testing.T) {
	if _, err := Upper(nil, nil, nil); err == nil {
		t.Fatal("Upper(nil, nil, nil): no error")
	}
}
