package profile

import (
	"math"
	"time"
)

// ColdFit turns a processor class's calibrated figure (fitted to
// back-to-back runs) into a cold-cache one, for the subgraphs the
// Estimator has no measurement of while it answers the measured ones
// with their cold runs: cold ≈ warm · exp(A + B·ln(warm / 1 ms)). The
// ratio falls with the subgraph's size (a small subgraph's cold run is
// mostly reloading its code and weights; a large one's mostly compute),
// which the log-linear form follows. The zero value changes nothing.
type ColdFit struct {
	A, B float64
	// Samples counts the measurements with cold runs fitted.
	Samples int
}

// Bounds of ColdFit's factor, against a wild fit on a few samples.
const (
	minColdFactor = 0.5
	maxColdFactor = 20
)

// Factor is the multiplier for a warm figure d.
func (f ColdFit) Factor(d time.Duration) float64 {
	if f.Samples == 0 || d <= 0 {
		return 1
	}
	x := math.Log(float64(d) / float64(time.Millisecond))
	return min(max(math.Exp(f.A+f.B*x), minColdFactor), maxColdFactor)
}

// Apply scales a warm figure to a cold one.
func (f ColdFit) Apply(d time.Duration) time.Duration {
	return time.Duration(math.Round(float64(d) * f.Factor(d)))
}

// fitCold fits a ColdFit by least squares on the logs, from the warm
// predictions pred (ns) of samples and their cold figures; samples without
// cold runs are skipped. With one usable sample, or predictions all alike,
// the ratio is a constant (B = 0).
func fitCold(pred []float64, ss []Sample) ColdFit {
	var xs, ys []float64
	for i, s := range ss {
		if s.Cold <= 0 || pred[i] <= 0 {
			continue
		}
		xs = append(xs, math.Log(pred[i]/float64(time.Millisecond)))
		ys = append(ys, math.Log(float64(s.Cold)/pred[i]))
	}
	n := float64(len(xs))
	if n == 0 {
		return ColdFit{}
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	f := ColdFit{A: my, Samples: len(xs)}
	if sxx > 1e-12 {
		f.B = sxy / sxx
		f.A = my - f.B*mx
	}
	return f
}

// coldMAPE is the mean absolute percentage error of predictions pred (ns),
// each scaled by f, against the samples' cold figures (those with cold
// runs); 0 when there are none.
func coldMAPE(f ColdFit, pred []float64, ss []Sample) float64 {
	var scaled []float64
	var with []Sample
	for i, s := range ss {
		if s.Cold > 0 && pred[i] > 0 {
			scaled = append(scaled, pred[i]*f.Factor(time.Duration(pred[i])))
			with = append(with, s)
		}
	}
	return mapeOf(scaled, ColdSamples(with), false)
}
