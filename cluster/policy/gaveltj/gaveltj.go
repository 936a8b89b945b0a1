// Package gaveltj is Sia's Gavel baseline: Gavel's heterogeneity-aware
// maximum total throughput (max_sum_throughput_perf: Σ_m scale_m ·
// throughput_m(X)/best_m, an LP solved with CBC) over jobs that run as
// TunedJobs, with the trace's GPUs and batch size, and Gavel's round
// mechanism: each round the (job, type) pairs run in order of priority,
// the LP's share of time on the type over the share the job has received
// there so far, while the type has the job's GPUs free.
package gaveltj

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/solver"
)

// Policy is Gavel with tuned jobs. It keeps the rounds each job has
// received per type.
type Policy struct {
	Solve     func(context.Context, *solver.Model, solver.Options) (*solver.Result, error)
	TimeLimit time.Duration
	got       map[string][]float64 // job → seconds received per type
	seen      map[string]float64   // job → seconds it has been active
}

func New() *Policy { return &Policy{} }

func (p *Policy) Name() string { return "gavel-tj" }
func (p *Policy) Mixed() bool  { return false }

// Allocate solves the LP and runs the round mechanism.
func (p *Policy) Allocate(ctx context.Context, s *adapt.State) ([]adapt.Decision, error) {
	if p.got == nil {
		p.got, p.seen = map[string][]float64{}, map[string]float64{}
	}
	T := len(s.Cluster.Types)
	tp := make([][]float64, len(s.Jobs))
	m := solver.NewModel(solver.Maximize)
	xs := make([][]solver.Var, len(s.Jobs))
	use := make([][]solver.Term, T)
	for j := range s.Jobs {
		v := &s.Jobs[j]
		tp[j] = make([]float64, T)
		best := 0.0
		tuned := rigidView(v)
		for t := range T {
			if v.GPUs <= s.Cluster.GPUs(t) {
				_, tp[j][t] = s.Estimate(&tuned, s.Single(t, v.GPUs), goodput.Truth)
				best = math.Max(best, tp[j][t])
			}
		}
		xs[j] = make([]solver.Var, T)
		var row []solver.Term
		for t := range T {
			xs[j][t] = -1
			if tp[j][t] > 0 {
				xs[j][t] = m.AddVar(0, 1, float64(v.GPUs)*tp[j][t]/best)
				row = append(row, solver.Term{Var: xs[j][t], Coef: 1})
				use[t] = append(use[t], solver.Term{Var: xs[j][t], Coef: float64(v.GPUs)})
			}
		}
		if len(row) > 0 {
			m.AddRow(math.Inf(-1), 1, row...)
		}
	}
	for t := range T {
		if len(use[t]) > 0 {
			m.AddRow(math.Inf(-1), float64(s.Cluster.GPUs(t)), use[t]...)
		}
	}
	out := make([]adapt.Decision, len(s.Jobs))
	if m.NumVars() == 0 {
		return out, nil
	}
	solve := p.Solve
	if solve == nil {
		solve = solver.Solve
	}
	res, err := solve(ctx, m, solver.Options{TimeLimit: max(p.TimeLimit, 30*time.Second)})
	if err != nil {
		return nil, fmt.Errorf("gavel-tj: %w", err)
	}
	if !res.Status.HasSolution() {
		return nil, fmt.Errorf("gavel-tj: CBC: %s", res.Reason)
	}
	type pr struct {
		j, t int
		prio float64
		x    float64
	}
	var prs []pr
	for j := range s.Jobs {
		name := s.Jobs[j].Name
		got := p.got[name]
		if got == nil {
			got = make([]float64, T)
			p.got[name] = got
		}
		for t := range T {
			if xs[j][t] < 0 {
				continue
			}
			x := res.Value(xs[j][t])
			if x <= 1e-6 {
				continue
			}
			share := 0.0
			if p.seen[name] > 0 {
				share = got[t] / p.seen[name]
			}
			prio := math.Inf(1)
			if share > 0 {
				prio = x / share
			}
			prs = append(prs, pr{j, t, prio, x})
		}
	}
	sort.SliceStable(prs, func(a, b int) bool {
		if prs[a].prio != prs[b].prio {
			return prs[a].prio > prs[b].prio
		}
		if prs[a].x != prs[b].x {
			return prs[a].x > prs[b].x
		}
		return prs[a].j < prs[b].j
	})
	free := make([]int, T)
	for t := range T {
		free[t] = s.Cluster.GPUs(t)
	}
	for _, q := range prs {
		v := &s.Jobs[q.j]
		if out[q.j].Alloc != nil || free[q.t] < v.GPUs {
			continue
		}
		free[q.t] -= v.GPUs
		out[q.j] = adapt.Decision{Alloc: s.Single(q.t, v.GPUs), Batch: v.Batch}
	}
	for j := range s.Jobs {
		name := s.Jobs[j].Name
		p.seen[name] += s.Round
		if a := out[j].Alloc; a != nil {
			p.got[name][a[0].Type] += s.Round
		}
	}
	return out, nil
}

// rigidView is v as a tuned job: its requested GPUs and batch size.
func rigidView(v *adapt.View) adapt.View {
	w := *v
	j := *v.Job
	j.Kind = adapt.Rigid
	w.Job = &j
	return w
}
