package heft

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/internal/planutil"
	"github.com/inlay-dev/inlay/search/partition"
	"github.com/inlay-dev/inlay/workload"
)

// Planner is HEFT over the workload's layer graphs (see the package doc).
type Planner struct{}

var _ plan.Planner = Planner{}

// Name is "heft".
func (Planner) Name() string { return "heft" }

// task is one layer of one model in the combined DAG.
type task struct{ model, layer int }

// edge payloads: bytes ≥ 0 is a tensor edge priced by the estimator;
// control edges (after dependencies) cost nothing.
const control = -1

// Plan schedules all models' layers with HEFT and cuts the schedule into
// subgraphs.
func (p Planner) Plan(ctx context.Context, req *plan.Request, _ plan.Evaluator) (*plan.Plan, error) {
	if err := planutil.CheckRequest(req); err != nil {
		return nil, err
	}
	w, pl := req.Workload, req.Platform
	var tasks []task
	base := make([]int, len(w.Models)) // first task of each model
	for mi, m := range w.Models {
		base[mi] = len(tasks)
		for l := range m.Layers.Layers {
			tasks = append(tasks, task{mi, l})
		}
	}
	pb := &Problem{Procs: len(pl.Processors), Cost: make([][]float64, len(tasks))}
	for _, pr := range pl.Processors {
		pb.Lanes = append(pb.Lanes, pr.Concurrency)
	}
	lc := newLayerCosts(req.Cost, pl)
	for t, tk := range tasks {
		if t%64 == 0 {
			if err := planutil.Canceled(ctx, p.Name()); err != nil {
				return nil, err
			}
		}
		row, err := lc.row(w.Models[tk.model], tk.layer)
		if err != nil {
			return nil, fmt.Errorf("search: heft: model %q: layer %d: %w", w.Models[tk.model].Name, tk.layer, err)
		}
		pb.Cost[t] = row
	}
	var bytes []int64
	for mi, m := range w.Models {
		sum := map[[2]int]int64{}
		var pairs [][2]int
		for _, e := range m.Layers.Edges {
			k := [2]int{e.From, e.To}
			if _, ok := sum[k]; !ok {
				pairs = append(pairs, k)
			}
			sum[k] += e.Bytes
		}
		for _, k := range pairs {
			pb.Edges = append(pb.Edges, Edge{From: base[mi] + k[0], To: base[mi] + k[1]})
			bytes = append(bytes, sum[k])
		}
	}
	for _, d := range afterEdges(w) {
		from, to := w.Models[d[0]].Layers, w.Models[d[1]].Layers
		for _, a := range sinks(from) {
			for _, b := range sources(to) {
				pb.Edges = append(pb.Edges, Edge{From: base[d[0]] + a, To: base[d[1]] + b})
				bytes = append(bytes, control)
			}
		}
	}
	pb.Comm = func(e, from, to int) float64 {
		if bytes[e] == control {
			return 0
		}
		return float64(req.Cost.Transfer(bytes[e], from, to))
	}
	s, err := Run(pb)
	if err != nil {
		var np *NoProcessorError
		if errors.As(err, &np) {
			tk := tasks[np.Task]
			m := w.Models[tk.model]
			return nil, fmt.Errorf("search: heft: model %q: layer %d (%s) runs on no processor", m.Name, tk.layer, m.Layers.Layers[tk.layer].Name)
		}
		return nil, fmt.Errorf("search: %w", err)
	}
	out := &plan.Plan{Planner: p.Name(), Platform: pl.Name}
	maxRank := make([]float64, len(w.Models))
	for mi, m := range w.Models {
		n := len(m.Layers.Layers)
		order := make([]int, n)
		key := make([]int, n)
		for l := 0; l < n; l++ {
			order[l] = l
			key[l] = s.Slots[base[mi]+l].Proc
			maxRank[mi] = math.Max(maxRank[mi], s.Rank[base[mi]+l])
		}
		// Start times respect precedence (a zero-time predecessor may start
		// with its successor; the lower ID, the predecessor, goes first).
		sort.SliceStable(order, func(a, b int) bool {
			return s.Slots[base[mi]+order[a]].Start < s.Slots[base[mi]+order[b]].Start
		})
		blocks := partition.Runs(order, key)
		subs, err := planutil.Subgraphs(pl, m, blocks)
		if err != nil {
			return nil, fmt.Errorf("search: heft: %w", err)
		}
		out.Models = append(out.Models, plan.ModelPlan{Model: m.Name, Subgraphs: subs})
		for _, b := range blocks {
			out.Decisions = append(out.Decisions, decision(pl, m, b, s, base[mi], pb.Cost))
		}
	}
	byRank := make([]int, len(w.Models))
	for i := range byRank {
		byRank[i] = i
	}
	sort.SliceStable(byRank, func(a, b int) bool { return maxRank[byRank[a]] > maxRank[byRank[b]] })
	for prio, mi := range byRank {
		out.Models[mi].Priority = prio
	}
	return out, nil
}

// layerCosts caches per-layer costs on each processor's default
// configuration for the model, keyed by model (models sharing a graph may
// allow different data types).
type layerCosts struct {
	est   cost.Estimator
	pl    *hw.Platform
	cache map[*workload.Model][][]float64
}

func newLayerCosts(est cost.Estimator, pl *hw.Platform) *layerCosts {
	return &layerCosts{est: est, pl: pl, cache: map[*workload.Model][][]float64{}}
}

// row is the layer's cost on every processor in nanoseconds, +Inf where it
// cannot run (an operator the processor lacks, or no data type the model
// allows).
func (c *layerCosts) row(m *workload.Model, layer int) ([]float64, error) {
	lg := m.Layers
	rows := c.cache[m]
	if rows == nil {
		rows = make([][]float64, len(lg.Layers))
		c.cache[m] = rows
	}
	if rows[layer] != nil {
		return rows[layer], nil
	}
	row := make([]float64, len(c.pl.Processors))
	for proc := range c.pl.Processors {
		cfg, err := m.DefaultConfig(c.pl, proc)
		if err != nil || planutil.LayerSupport(c.pl, proc, lg, layer) != nil {
			row[proc] = math.Inf(1)
			continue
		}
		d, err := c.est.Subgraph(lg, graph.LayerSet{layer}, cfg)
		switch {
		case errors.Is(err, cost.ErrUnsupported):
			row[proc] = math.Inf(1)
		case err != nil:
			return nil, err
		default:
			row[proc] = float64(d)
		}
	}
	rows[layer] = row
	return row, nil
}

// afterEdges lists model-level dependencies (waited-for, waiter) as model
// indices over all groups, each once, skipping any that would close a
// cycle across groups (each group alone is acyclic).
func afterEdges(w *workload.Workload) [][2]int {
	index := map[string]int{}
	for i, m := range w.Models {
		index[m.Name] = i
	}
	succ := make([][]int, len(w.Models))
	reaches := func(from, to int) bool {
		seen := make([]bool, len(w.Models))
		stack := []int{from}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if x == to {
				return true
			}
			for _, s := range succ[x] {
				if !seen[s] {
					seen[s] = true
					stack = append(stack, s)
				}
			}
		}
		return false
	}
	var out [][2]int
	seen := map[[2]int]bool{}
	for _, g := range w.Groups {
		for _, name := range g.Models {
			for _, dep := range g.After[name] {
				k := [2]int{index[dep], index[name]}
				if seen[k] || reaches(k[1], k[0]) {
					continue
				}
				seen[k] = true
				succ[k[0]] = append(succ[k[0]], k[1])
				out = append(out, k)
			}
		}
	}
	return out
}

// sinks are the layers without successors, sources those without
// predecessors.
func sinks(lg *graph.LayerGraph) []int { return unlinked(lg.Succs) }

func sources(lg *graph.LayerGraph) []int { return unlinked(lg.Preds) }

// unlinked are the layers without neighbours in adj, in order.
func unlinked(adj [][]int) []int {
	var out []int
	for l, next := range adj {
		if len(next) == 0 {
			out = append(out, l)
		}
	}
	return out
}

// decision is what HEFT weighed for the layer that opened block b (the
// first of the run, by start): its earliest finish and its time on every
// processor. HEFT places layer by layer; the block's other layers followed
// onto the same processor by their own earliest finish.
func decision(pl *hw.Platform, m *workload.Model, b partition.Block, s *Schedule, base int, cost [][]float64) plan.Decision {
	first := b.Layers[0]
	for _, l := range b.Layers {
		if s.Slots[base+l].Start < s.Slots[base+first].Start {
			first = l
		}
	}
	t := base + first
	d := plan.Decision{Model: m.Name, Layers: b.Layers.Key(),
		Step:       fmt.Sprintf("earliest finish of layer %d (%s), the first of the subgraph", first, m.Layers.Layers[first].Name),
		Candidates: planutil.Candidates(pl)}
	for p := range d.Candidates {
		c := &d.Candidates[p]
		if math.IsInf(s.Finish[t][p], 1) {
			c.Filter = plan.FilterSupport
			if err := planutil.LayerRuns(pl, m, p, first); err != nil {
				c.Why = err.Error()
			} else {
				c.Why = "the cost model cannot run the layer there"
			}
			continue
		}
		c.Chosen = p == b.Key
		if cfg, err := m.DefaultConfig(pl, p); err == nil {
			c.Config = planutil.ConfigName(cfg)
		}
		c.Scores = []plan.NamedScore{
			{Name: plan.ScoreTime, Value: cost[t][p] / 1e6, Unit: "ms"},
			{Name: plan.ScoreFinish, Value: s.Finish[t][p] / 1e6, Unit: "ms"},
		}
	}
	return d
}
