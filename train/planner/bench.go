package planner

import (
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/train"
)

// Scenario is one benchmark case: a model on a mix of GPUs.
type Scenario struct {
	Name  string
	Model string
	GPUs  string // --gpus form
}

// Scenarios are the benchmark cases after Sailor's evaluation (SOSP'25):
// OPT-350M, GPT-Neo-2.7B and Llama-3-8B on A100-40 + V100-16 in 8-GPU
// servers, 50/50 and V100-heavy (1:3) mixes from 32 to 256 GPUs a type,
// and homogeneous A100-40.
func Scenarios() []Scenario {
	var out []Scenario
	for _, m := range []string{"opt-350m", "gpt-neo-2.7b", "llama-3-8b"} {
		for _, g := range []string{"32xA100-40,32xV100-16", "128xA100-40,128xV100-16", "256xA100-40,256xV100-16",
			"32xA100-40,96xV100-16", "64xA100-40,192xV100-16", "128xA100-40"} {
			out = append(out, Scenario{Name: m + " " + g, Model: m, GPUs: g})
		}
	}
	return out
}

// Cluster builds the scenario's cluster: 8-GPU servers, each type's
// NVLink inside a server, 100 Gbit/s per GPU (800 Gbit/s a server)
// across.
func (s Scenario) Cluster() (*train.Cluster, error) {
	l, err := train.ParseGPUList(s.GPUs)
	if err != nil {
		return nil, err
	}
	return train.MixedCluster(l, 8, 0, 100)
}

// Heterogeneous reports whether the scenario mixes GPU types.
func (s Scenario) Heterogeneous() bool {
	c, err := s.Cluster()
	return err == nil && len(c.Types()) > 1
}

// BenchRow is one planner on one scenario.
type BenchRow struct {
	Scenario      string  `json:"scenario"`
	Planner       string  `json:"planner"`
	TokensPerS    float64 `json:"tokens_per_s"`
	BoundTokensPS float64 `json:"bound_tokens_per_s"`
	Fraction      float64 `json:"fraction_of_bound"`
	SearchSeconds float64 `json:"search_seconds"`
	GPUs          int     `json:"gpus"`
	// HeadroomBytes is the least free memory over the plan's GPUs.
	HeadroomBytes float64 `json:"headroom_bytes"`
	Shape         string  `json:"shape"`
	Error         string  `json:"error,omitempty"`
}

// Headroom is the least free memory over the plan's GPUs.
func Headroom(r *train.Result) float64 {
	h := math.Inf(1)
	for _, s := range r.Stages {
		h = math.Min(h, s.CapacityBytes-s.Memory.Total)
	}
	return h
}

// Shape is a short description of a plan: pp, replicas per kind (with
// their own micro-batch where it is not the plan's), cp (when above 1),
// micro batch, recomputation.
func Shape(p *train.Plan) string {
	if p.StageDP() {
		out := fmt.Sprintf("pp%d", p.PP())
		for s, g := range p.Groups {
			out += fmt.Sprintf(" s%d:", s)
			for i, r := range g.Ranks {
				if i > 0 {
					out += "+"
				}
				out += fmt.Sprintf("%dx[%s/tp%d sh%d]", r.Count, r.GPU, r.TP, r.Share)
			}
		}
		if p.ContextParallel() > 1 {
			out += fmt.Sprintf(" cp%d", p.CP)
		}
		return out + fmt.Sprintf(" mb%d rc:%s", p.MicroBatch, p.Recompute)
	}
	kinds := map[string]int{}
	var order []string
	for ri, r := range p.Replicas {
		k := ""
		for i, s := range r.Stages {
			if i == 0 || s != r.Stages[i-1] {
				if k != "" {
					k += "+"
				}
				k += fmt.Sprintf("%s/tp%d", s.GPU, s.TP)
			}
		}
		if mb := p.Micro(ri); mb != p.MicroBatch {
			k += fmt.Sprintf(" mb%d", mb)
		}
		if rc := p.RecomputeOf(ri); rc != p.Recompute {
			k += " rc:" + rc
		}
		if kinds[k] == 0 {
			order = append(order, k)
		}
		kinds[k]++
	}
	out := fmt.Sprintf("pp%d", p.PP())
	for _, k := range order {
		out += fmt.Sprintf(" %dx[%s]", kinds[k], k)
	}
	if p.ContextParallel() > 1 {
		out += fmt.Sprintf(" cp%d", p.CP)
	}
	return out + fmt.Sprintf(" mb%d rc:%s", p.MicroBatch, p.Recompute)
}

// RunBench runs every planner on the scenario; budget bounds each
// baseline's search (inlay keeps its own one-second default unless
// inlayBudget is set).
func RunBench(s Scenario, planners []string, o Options, baselineBudget time.Duration) []BenchRow {
	m, err := train.ResolveModel(s.Model)
	var rows []BenchRow
	c, cerr := s.Cluster()
	for _, name := range planners {
		row := BenchRow{Scenario: s.Name, Planner: name}
		pl, perr := New(name)
		switch {
		case err != nil:
			row.Error = err.Error()
		case cerr != nil:
			row.Error = cerr.Error()
		case perr != nil:
			row.Error = perr.Error()
		default:
			oo := o
			if name != "inlay" && oo.Budget == 0 {
				oo.Budget = baselineBudget
			}
			res, err := pl.Plan(&m, c, oo)
			if err != nil {
				row.Error = err.Error()
				break
			}
			row.TokensPerS = res.Sim.TokensPerS
			row.BoundTokensPS = res.Bound.TokensPerS
			if res.Bound.TokensPerS > 0 {
				row.Fraction = res.Sim.TokensPerS / res.Bound.TokensPerS
			}
			row.SearchSeconds = res.Search.Seconds()
			row.GPUs = res.Plan.GPUs()
			row.HeadroomBytes = Headroom(res.Sim)
			row.Shape = Shape(res.Plan)
		}
		rows = append(rows, row)
	}
	return rows
}
