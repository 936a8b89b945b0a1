// Package goodput holds Pollux's models of a training job: a throughput
// model per GPU type fitted to measured step times (compute time linear in
// the local batch, gradient synchronisation linear in the replicas within
// a node and across nodes, overlapped through a γ-norm), the statistical
// efficiency of a batch size from the gradient noise (the gain of a step
// over a step at the initial batch size), and goodput, their product: the
// progress a job makes per second, in Pollux's units (iterations at the
// initial batch size). Mixed-type gangs get a heterogeneous data-parallel
// model built from the per-type fits.
package goodput

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/inlay-dev/inlay/cluster/sia"
)

// Fit is Pollux's throughput model of one model on one GPU type, in
// seconds:
//
//	compute(m) = AlphaC + BetaC·m            (m: local batch)
//	sync(n, k) = 0 for n = 1; AlphaN + BetaN·(n−2) on one node;
//	             AlphaR + BetaR·(n−2) over k > 1 nodes
//	step       = (compute^γ + sync^γ)^(1/γ)
//
// and with s extra gradient-accumulation steps, s·compute + step.
type Fit struct {
	AlphaC, BetaC float64
	AlphaN, BetaN float64
	AlphaR, BetaR float64
	Gamma         float64
	// MinLocal and MaxLocal are the profiled local batch sizes (MaxLocal is
	// the most that fits in the GPU's memory).
	MinLocal, MaxLocal float64
	// RMSLogError is the fit's root-mean-square error in log step time over
	// the samples it was fitted to.
	RMSLogError float64
}

// Compute is the compute time of local batch m.
func (f *Fit) Compute(m float64) float64 { return f.AlphaC + f.BetaC*m }

// Sync is the synchronisation time of n replicas over nodes servers.
func (f *Fit) Sync(n, nodes int) float64 {
	switch {
	case n <= 1:
		return 0
	case nodes <= 1:
		return f.AlphaN + f.BetaN*float64(n-2)
	}
	return f.AlphaR + f.BetaR*float64(n-2)
}

// combine overlaps compute and sync with the γ-norm.
func combine(c, s, gamma float64) float64 {
	if s <= 0 {
		return c
	}
	return math.Pow(math.Pow(c, gamma)+math.Pow(s, gamma), 1/gamma)
}

// Step is the time of one optimizer step of n replicas over nodes
// servers at local batch m with accum extra accumulation steps.
func (f *Fit) Step(n, nodes int, m float64, accum int) float64 {
	c := f.Compute(m)
	return float64(accum)*c + combine(c, f.Sync(n, nodes), f.Gamma)
}

// Split turns a total batch on n GPUs into a local batch and extra
// accumulation steps: the fewest steps that keep the local batch within
// MaxLocal.
func (f *Fit) Split(total float64, n int) (local float64, accum int) {
	per := total / float64(n)
	if per <= f.MaxLocal {
		return per, 0
	}
	k := int(math.Ceil(per/f.MaxLocal)) - 1
	return per / float64(k+1), k
}

// FitSamples fits the model to measured samples.
func FitSamples(s []sia.Sample) (*Fit, error) {
	if len(s) == 0 {
		return nil, errors.New("no samples")
	}
	f := &Fit{MinLocal: math.Inf(1)}
	var xs, ys []float64
	for _, p := range s {
		f.MinLocal = math.Min(f.MinLocal, p.LocalBatch)
		f.MaxLocal = math.Max(f.MaxLocal, p.LocalBatch)
		if p.Replicas == 1 {
			xs, ys = append(xs, p.LocalBatch), append(ys, math.Max(p.Step-p.Sync, 0))
		}
	}
	if len(xs) == 0 { // no single-GPU rows: compute from every row
		for _, p := range s {
			xs, ys = append(xs, p.LocalBatch), append(ys, math.Max(p.Step-p.Sync, 0))
		}
	}
	f.AlphaC, f.BetaC = line(xs, ys)
	var nx, ny, rx, ry []float64
	for _, p := range s {
		if p.Replicas < 2 {
			continue
		}
		if p.Nodes == 1 {
			nx, ny = append(nx, float64(p.Replicas-2)), append(ny, p.Sync)
		} else {
			rx, ry = append(rx, float64(p.Replicas-2)), append(ry, p.Sync)
		}
	}
	f.AlphaN, f.BetaN = line(nx, ny)
	f.AlphaR, f.BetaR = line(rx, ry)
	switch {
	case len(nx) == 0 && len(rx) > 0:
		f.AlphaN, f.BetaN = f.AlphaR, f.BetaR
	case len(rx) == 0 && len(nx) > 0:
		f.AlphaR, f.BetaR = f.AlphaN, f.BetaN
	}
	// Sync across nodes is never cheaper than within one.
	f.AlphaR, f.BetaR = math.Max(f.AlphaR, f.AlphaN), math.Max(f.BetaR, f.BetaN)
	best := math.Inf(1)
	for g := 1.0; g <= 10.0001; g += 0.05 {
		f.Gamma = g
		if e := f.logError(s); e < best {
			best = e
		}
	}
	for g := 1.0; g <= 10.0001; g += 0.05 {
		f.Gamma = g
		if f.logError(s) == best {
			break
		}
	}
	f.RMSLogError = math.Sqrt(best / float64(len(s)))
	return f, nil
}

func (f *Fit) logError(s []sia.Sample) float64 {
	e := 0.0
	for _, p := range s {
		d := math.Log(f.Step(p.Replicas, p.Nodes, p.LocalBatch, 0)) - math.Log(p.Step)
		e += d * d
	}
	return e
}

// line fits y = a + b·x by least squares with a, b ≥ 0 (a lone point or a
// constant x gives b = 0).
func line(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	if n == 0 {
		return 0, 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d > 1e-12 {
		b = (n*sxy - sx*sy) / d
	}
	if b < 0 {
		b = 0
	}
	a = (sy - b*sx) / n
	if a < 0 {
		a = 0
		if sxx > 0 {
			b = math.Max(0, sxy/sxx)
		}
	}
	return a, b
}

// EpochAt is the index of the epoch progress p falls in (Gain depends on
// p only through it).
func (e *Efficiency) EpochAt(p float64) int { return e.epoch(p) }

// Efficiency is Pollux's statistical-efficiency model of one model.
type Efficiency struct {
	// M0 is the initial (smallest) batch size; MaxBatch the largest
	// profiled.
	M0, MaxBatch float64
	batches      []float64
	epochs       [][]sia.Epoch // by batches
	// Target is the progress at which the job is done.
	Target float64
}

// NewEfficiency builds the model from the validation traces of m; the
// job ends after epochs epochs of the initial batch size's trace.
func NewEfficiency(m *sia.Model, epochs int) (*Efficiency, error) {
	if len(m.Batches) == 0 {
		return nil, fmt.Errorf("model %s: no validation traces", m.Name)
	}
	e := &Efficiency{M0: float64(m.Batches[0]), MaxBatch: float64(m.Batches[len(m.Batches)-1])}
	for _, b := range m.Batches {
		e.batches = append(e.batches, float64(b))
		e.epochs = append(e.epochs, m.Validation[b])
	}
	base := e.epochs[0]
	switch {
	case epochs <= len(base):
		e.Target = base[epochs-1].Progress
	default: // extrapolate by the last epoch's progress
		last := base[len(base)-1].Progress
		step := last
		if len(base) > 1 {
			step = last - base[len(base)-2].Progress
		}
		e.Target = last + step*float64(epochs-len(base))
	}
	if !(e.Target > 0) {
		return nil, fmt.Errorf("model %s: no progress in its validation trace", m.Name)
	}
	return e, nil
}

// FixedEfficiency is the efficiency of a job that keeps its batch size:
// every step at that batch makes one unit of progress, and the job is
// done after steps of them.
func FixedEfficiency(batch, steps float64) *Efficiency {
	return &Efficiency{M0: batch, MaxBatch: batch, batches: []float64{batch},
		epochs: [][]sia.Epoch{{{Progress: steps, GradSqr: 1}}}, Target: steps}
}

// Epoch is the (fractional) epoch at progress p.
func (e *Efficiency) epoch(p float64) int {
	base := e.epochs[0]
	i := sort.Search(len(base), func(i int) bool { return base[i].Progress > p })
	return min(i, len(base)-1)
}

// Gain is the progress one step at total batch M makes at progress p:
// (var + sqr)/(var/scale + sqr) with scale = M/M0, where the gradient
// statistics come from the trace of the batch size nearest M (in log)
// at p's epoch.
func (e *Efficiency) Gain(M, p float64) float64 {
	k := 0
	for i, b := range e.batches {
		if math.Abs(math.Log(b/M)) < math.Abs(math.Log(e.batches[k]/M)) {
			k = i
		}
	}
	ep := e.epochs[k]
	st := ep[min(e.epoch(p), len(ep)-1)]
	scale := M / e.M0
	d := st.GradVar/scale + st.GradSqr
	if !(d > 0) {
		return scale
	}
	return (st.GradVar + st.GradSqr) / d
}

// NextEpoch is the progress at which Gain may next change after p (the
// end of p's epoch; +Inf after the last).
func (e *Efficiency) NextEpoch(p float64) float64 {
	base := e.epochs[0]
	i := e.epoch(p)
	if base[i].Progress > p {
		return base[i].Progress
	}
	return math.Inf(1)
}

// GainUpper is the largest gain at batch M and progress p over every
// batch size's gradient statistics: an upper bound of Gain(M', p) for
// every M' ≤ M.
func (e *Efficiency) GainUpper(M, p float64) float64 {
	g := 0.0
	scale := M / e.M0
	for _, ep := range e.epochs {
		st := ep[min(e.epoch(p), len(ep)-1)]
		d := st.GradVar/scale + st.GradSqr
		v := scale
		if d > 0 {
			v = (st.GradVar + st.GradSqr) / d
		}
		g = math.Max(g, v)
	}
	return g
}
