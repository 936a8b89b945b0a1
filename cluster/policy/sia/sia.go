// Package sia is Sia's policy (SOSP 2023): each round an integer program
// picks for every job at most one configuration (GPU type, GPU count)
// maximising the sum over jobs of a power p < 0 of the configuration's
// goodput normalised by the job's least goodput over configurations,
// with a penalty λ_n for leaving a job without GPUs and λ_a per GPU
// allocated; goodputs come from bootstrapped throughput models (a type
// on which the job has not run on several GPUs borrows the scaling of
// one where it has, or assumes perfect scaling) and a configuration other
// than the job's current one is discounted by the restart factor. Rigid
// jobs may only take their requested GPU count, and their goodput is
// normalised so that the slowest type gives their GPU count, as Sia's
// artifact does. Solved with CBC.
package sia

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/solver"
)

// Policy is Sia.
type Policy struct {
	P, LambdaN, LambdaA float64
	// TimeLimit bounds one CBC solve (default 30 s).
	TimeLimit time.Duration
	// Solve is the MILP solver (default solver.Solve).
	Solve func(context.Context, *solver.Model, solver.Options) (*solver.Result, error)
	// Share widens each job's estimates with what every job of its model
	// has shown of its scaling (adapt.Profiles), as inlay's policy does;
	// off in Sia as published, which bootstraps each job on its own.
	Share bool

	profiles adapt.Profiles
}

// New is Sia with the published defaults: p = −0.5, λ_n = 1.1, λ_a = 0.01.
func New() *Policy { return &Policy{P: -0.5, LambdaN: 1.1, LambdaA: 0.01} }

func (p *Policy) Name() string { return "sia" }
func (p *Policy) Mixed() bool  { return false }

type cand struct {
	job   int
	alloc goodput.Alloc
	batch float64
	v     solver.Var
}

// coef is a configuration's term in the minimised objective: its goodput
// relative to the job's least (rel) to the power p, plus λ_a per GPU,
// less λ_n (the cost of leaving the job without GPUs, a constant per job).
// A rigid job's relative goodput is scaled by its GPU count, so that its
// slowest type counts its GPUs as Sia's artifact does
// (_compute_rigid_job_goodput_single), as an adaptive job's larger
// configurations count theirs; without it a rigid job of more than
// (1 − λ_n)/λ_a GPUs never starts on its slowest type.
func (p *Policy) coef(rel float64, gpus int, rigid bool) float64 {
	if rigid {
		rel *= float64(gpus)
	}
	u := math.Pow(rel, p.P)
	if p.P > 0 {
		return -u + p.LambdaA*float64(gpus)
	}
	return u + p.LambdaA*float64(gpus) - p.LambdaN
}

// Allocate solves the round's integer program.
func (p *Policy) Allocate(ctx context.Context, s *adapt.State) ([]adapt.Decision, error) {
	m := solver.NewModel(solver.Minimize)
	var cands []cand
	use := make([][]solver.Term, len(s.Cluster.Types))
	if p.Share {
		p.profiles.Learn(s)
	}
	for j := range s.Jobs {
		v := &s.Jobs[j]
		know := p.profiles.Know(v) // v.Know alone without Share
		var opts []cand
		var gs []float64
		gmin := math.Inf(1)
		for t := range s.Cluster.Types {
			counts := s.Cluster.Configs(t)
			if v.Kind == adapt.Rigid {
				counts = nil
				if v.GPUs <= s.Cluster.GPUs(t) {
					counts = []int{v.GPUs}
				}
			}
			for _, n := range counts {
				a := s.Single(t, n)
				b, g := s.Estimate(v, a, know)
				if !(g > 0) {
					continue
				}
				gmin = math.Min(gmin, g)
				if len(v.Alloc) > 0 && !v.Alloc.Equal(a) {
					g *= adapt.RestartFactor(s.Now-v.Arrival, v.Restarts, v.Model.Restart)
				}
				opts = append(opts, cand{job: j, alloc: a, batch: b})
				gs = append(gs, g)
			}
		}
		// Row: at most one configuration per job.
		var row []solver.Term
		for i, c := range opts {
			if !(gs[i] > 0) {
				continue
			}
			coef := p.coef(gs[i]/gmin, c.alloc.GPUs(), v.Kind == adapt.Rigid)
			c.v = m.AddBinary(coef)
			row = append(row, solver.Term{Var: c.v, Coef: 1})
			for _, part := range c.alloc {
				use[part.Type] = append(use[part.Type], solver.Term{Var: c.v, Coef: float64(part.GPUs)})
			}
			cands = append(cands, c)
		}
		if len(row) > 0 {
			m.AddRow(math.Inf(-1), 1, row...)
		}
	}
	out := make([]adapt.Decision, len(s.Jobs))
	if len(cands) == 0 {
		return out, nil
	}
	for t, terms := range use {
		if len(terms) > 0 {
			m.AddRow(math.Inf(-1), float64(s.Cluster.GPUs(t)), terms...)
		}
	}
	solve := p.Solve
	if solve == nil {
		solve = solver.Solve
	}
	tl := p.TimeLimit
	if tl == 0 {
		tl = 30 * time.Second
	}
	res, err := solve(ctx, m, solver.Options{TimeLimit: tl, RelGap: 1e-4})
	if err != nil {
		return nil, fmt.Errorf("sia: %w", err)
	}
	if !res.Status.HasSolution() {
		return nil, fmt.Errorf("sia: CBC: %s", res.Reason)
	}
	for _, c := range cands {
		if res.Value(c.v) > 0.5 {
			out[c.job] = adapt.Decision{Alloc: c.alloc, Batch: c.batch}
		}
	}
	return out, nil
}
