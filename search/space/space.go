// Package space is the search space that the search planners (puzzle,
// inlay) share: for each model of a workload its layer graph, which
// processors can run each layer, and the translation of a per-layer
// processor assignment into a valid plan (convex subgraphs in topological
// order, each on its processor's fastest configuration for that subgraph).
//
// Space is read-only after New and safe for concurrent use; its cost cache
// is guarded.
package space

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/partition"
	"github.com/inlay-dev/inlay/workload"
)

// Model is one workload model as the search sees it.
type Model struct {
	Name   string
	Index  int
	Layers *graph.LayerGraph
	// Feasible[l] lists the processors that can run every node of layer l, ascending.
	Feasible [][]int
	// Groups are the indices of the workload groups that contain the model.
	Groups []int
}

// Space is the shared search space.
type Space struct {
	W        *workload.Workload
	Platform *hw.Platform
	Cost     cost.Estimator
	Models   []*Model

	mu    sync.Mutex
	costs map[costKey]costVal
}

type costKey struct {
	model int
	set   string
	proc  int
}

type costVal struct {
	cfg hw.Config
	dur time.Duration
	err error
}

// New builds the space of a request.
func New(req *plan.Request) (*Space, error) {
	s := &Space{W: req.Workload, Platform: req.Platform, Cost: req.Cost, costs: map[costKey]costVal{}}
	for i, wm := range req.Workload.Models {
		if wm.Layers == nil {
			return nil, fmt.Errorf("search: model %q has no layer graph (workload not loaded)", wm.Name)
		}
		m := &Model{Name: wm.Name, Index: i, Layers: wm.Layers}
		for _, l := range wm.Layers.Layers {
			var ok []int
			for p := range req.Platform.Processors {
				if len(wm.Configs(req.Platform, p)) > 0 && layerSupported(req.Platform, p, wm.Layers, l) {
					ok = append(ok, p)
				}
			}
			if len(ok) == 0 {
				return nil, fmt.Errorf("search: model %q layer %d (%s %q): no processor of %s can run it in a data type the model allows (%s)", wm.Name, l.ID, l.Op, l.Name, req.Platform.Name, wm.AllowedString())
			}
			m.Feasible = append(m.Feasible, ok)
		}
		for gi, g := range req.Workload.Groups {
			for _, name := range g.Models {
				if name == wm.Name {
					m.Groups = append(m.Groups, gi)
				}
			}
		}
		s.Models = append(s.Models, m)
	}
	return s, nil
}

func layerSupported(pl *hw.Platform, p int, lg *graph.LayerGraph, l *graph.Layer) bool {
	for _, id := range l.Nodes {
		if pl.Supports(p, lg.Model, lg.Model.Nodes[id]) != nil {
			return false
		}
	}
	return true
}

// CanRun reports whether processor p can run layer l of model m.
func (m *Model) CanRun(l, p int) bool {
	f := m.Feasible[l]
	i := sort.SearchInts(f, p)
	return i < len(f) && f[i] == p
}

// BestConfig returns the fastest configuration of processor p for a layer
// set of model m and its duration (cached).
func (s *Space) BestConfig(m *Model, set graph.LayerSet, p int) (hw.Config, time.Duration, error) {
	k := costKey{m.Index, set.Key(), p}
	s.mu.Lock()
	v, hit := s.costs[k]
	s.mu.Unlock()
	if hit {
		return v.cfg, v.dur, v.err
	}
	v = costVal{err: cost.ErrUnsupported}
	first := true
	for _, c := range s.W.Models[m.Index].Configs(s.Platform, p) {
		d, err := s.Cost.Subgraph(m.Layers, set, c)
		if err != nil {
			if !errors.Is(err, cost.ErrUnsupported) {
				v.err = err
			}
			continue
		}
		if first || d < v.dur {
			v = costVal{cfg: c, dur: d}
			first = false
		}
	}
	s.mu.Lock()
	s.costs[k] = v
	s.mu.Unlock()
	return v.cfg, v.dur, v.err
}

// Block is a subgraph with its processor, configuration and duration.
type Block struct {
	Layers graph.LayerSet
	Proc   int
	Config hw.Config
	Dur    time.Duration
}

// Blocks turns a per-layer processor assignment of model m into convex
// blocks in a topological order (partition.Maximal), each on its
// processor's fastest configuration. A layer assigned a processor that
// cannot run it is moved to its first feasible processor.
func (s *Space) Blocks(m *Model, procOf []int) ([]Block, error) {
	key := make([]int, len(procOf))
	for l, p := range procOf {
		if !m.CanRun(l, p) {
			p = m.Feasible[l][0]
		}
		key[l] = p
	}
	var out []Block
	for _, b := range partition.Maximal(m.Layers, key) {
		cfg, dur, err := s.BestConfig(m, b.Layers, b.Key)
		if err != nil {
			return nil, fmt.Errorf("search: model %q layers %s on %s: %w", m.Name, b.Layers.Key(), s.Platform.Processors[b.Key].Name, err)
		}
		out = append(out, Block{Layers: b.Layers, Proc: b.Key, Config: cfg, Dur: dur})
	}
	return out, nil
}

// ModelPlan converts blocks into a plan entry.
func (s *Space) ModelPlan(m *Model, blocks []Block, priority int) plan.ModelPlan {
	mp := plan.ModelPlan{Model: m.Name, Priority: priority}
	for _, b := range blocks {
		mp.Subgraphs = append(mp.Subgraphs, plan.Subgraph{
			Layers:    b.Layers,
			Processor: s.Platform.Processors[b.Proc].Name,
			Backend:   b.Config.Backend,
			DType:     b.Config.DType.String(),
		})
	}
	return mp
}

// Assignment is a whole workload's decisions in the form the search
// planners manipulate: a processor per layer of each model and a priority
// rank per model (0 runs first).
type Assignment struct {
	Proc     [][]int
	Priority []int
}

// Clone deep-copies an assignment.
func (a *Assignment) Clone() *Assignment {
	b := &Assignment{Proc: make([][]int, len(a.Proc)), Priority: append([]int(nil), a.Priority...)}
	for i, p := range a.Proc {
		b.Proc[i] = append([]int(nil), p...)
	}
	return b
}

// Plan builds the plan of an assignment.
func (s *Space) Plan(name string, a *Assignment) (*plan.Plan, error) {
	p := &plan.Plan{Planner: name, Platform: s.Platform.Name}
	for i, m := range s.Models {
		blocks, err := s.Blocks(m, a.Proc[i])
		if err != nil {
			return nil, err
		}
		p.Models = append(p.Models, s.ModelPlan(m, blocks, a.Priority[i]))
	}
	return p, nil
}

// FromPlan reads an assignment back from a plan of this space's workload
// (processors per layer and priority ranks 0..n-1 in priority order, ties
// by model order).
func (s *Space) FromPlan(p *plan.Plan) (*Assignment, error) {
	a := &Assignment{Proc: make([][]int, len(s.Models)), Priority: make([]int, len(s.Models))}
	prio := make([]int, len(s.Models))
	for i, m := range s.Models {
		mp := p.Model(m.Name)
		if mp == nil {
			return nil, fmt.Errorf("search: plan has no model %q", m.Name)
		}
		prio[i] = mp.Priority
		a.Proc[i] = make([]int, len(m.Layers.Layers))
		for l := range a.Proc[i] {
			a.Proc[i][l] = -1
		}
		for _, sg := range mp.Subgraphs {
			pid, err := s.Platform.Find(sg.Processor)
			if err != nil {
				return nil, err
			}
			for _, l := range sg.Layers {
				if l >= 0 && l < len(a.Proc[i]) {
					a.Proc[i][l] = pid
				}
			}
		}
		for l, p := range a.Proc[i] {
			if p < 0 {
				return nil, fmt.Errorf("search: plan leaves layer %d of %q unassigned", l, m.Name)
			}
		}
	}
	order := make([]int, len(s.Models))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return prio[order[x]] < prio[order[y]] })
	for rank, i := range order {
		a.Priority[i] = rank
	}
	return a, nil
}
