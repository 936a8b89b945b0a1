package plan

import (
	"fmt"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/workload"
)

// Config resolves the subgraph's processor, backend and data type on a
// platform. An empty backend or data type means the processor's default.
func (s Subgraph) Config(pl *hw.Platform) (hw.Config, error) {
	proc := -1
	for i, pr := range pl.Processors {
		if pr.Name == s.Processor {
			proc = i
			break
		}
	}
	if proc < 0 {
		names := make([]string, len(pl.Processors))
		for i, pr := range pl.Processors {
			names[i] = pr.Name
		}
		return hw.Config{}, fmt.Errorf("unknown processor %q (platform %s has %s)", s.Processor, pl.Name, strings.Join(names, ", "))
	}
	cfg := pl.DefaultConfig(proc)
	pr := pl.Processors[proc]
	if s.Backend != "" {
		ok := false
		for _, b := range pr.Backends {
			ok = ok || b == s.Backend
		}
		if !ok {
			return hw.Config{}, fmt.Errorf("processor %s has no backend %q (it has %s)", pr.Name, s.Backend, strings.Join(pr.Backends, ", "))
		}
		cfg.Backend = s.Backend
	}
	if s.DType != "" {
		d, err := graph.ParseDType(s.DType)
		ok := false
		var names []string
		for _, ds := range pr.DTypes {
			ok = ok || (err == nil && ds.DType == d)
			names = append(names, ds.DType.String())
		}
		if !ok {
			return hw.Config{}, fmt.Errorf("processor %s has no data type %q (it has %s)", pr.Name, s.DType, strings.Join(names, ", "))
		}
		cfg.DType = d
	}
	return cfg, nil
}

// Validate checks the plan against a loaded workload and a platform: every
// model of the workload planned once and nothing else; in each model every
// layer in exactly one subgraph; every subgraph convex, on a known
// processor with one of its backends and data types, and made of operators
// the processor supports, in a data type the model allows
// (workload.Model.Allowed); subgraphs listed in a topological order. The
// error names the model, the subgraph and the cause.
func (p *Plan) Validate(w *workload.Workload, pl *hw.Platform) error {
	for _, mp := range p.Models {
		if w.Model(mp.Model) == nil {
			return fmt.Errorf("plan: unknown model %q (not in the workload)", mp.Model)
		}
	}
	for _, m := range w.Models {
		var mps []*ModelPlan
		for i := range p.Models {
			if p.Models[i].Model == m.Name {
				mps = append(mps, &p.Models[i])
			}
		}
		switch {
		case len(mps) == 0:
			return fmt.Errorf("plan: model %q is not planned", m.Name)
		case len(mps) > 1:
			return fmt.Errorf("plan: model %q planned twice", m.Name)
		}
		if m.Layers == nil {
			return fmt.Errorf("plan: model %q: workload model not loaded", m.Name)
		}
		if err := validateModel(mps[0], m, pl); err != nil {
			return err
		}
	}
	return p.validateMemory(w, pl)
}

// WeightBytes is the weight memory the plan keeps resident on each
// processor (every layer's weights where its subgraph runs, in the
// subgraph's data type: hw.WeightBytes). The plan must be valid.
func (p *Plan) WeightBytes(w *workload.Workload, pl *hw.Platform) ([]int64, error) {
	use := make([]int64, len(pl.Processors))
	for _, mp := range p.Models {
		m := w.Model(mp.Model)
		if m == nil || m.Layers == nil {
			return nil, fmt.Errorf("plan: model %q not loaded", mp.Model)
		}
		for _, s := range mp.Subgraphs {
			cfg, err := s.Config(pl)
			if err != nil {
				return nil, fmt.Errorf("plan: model %q: %v", mp.Model, err)
			}
			for _, l := range s.Layers {
				use[cfg.Proc] += hw.WeightBytes(m.Layers.Layers[l].Work, cfg.DType)
			}
		}
	}
	return use, nil
}

// validateMemory checks the weights resident against every memory
// capacity the platform gives (hw.Platform.MemoryLimits).
func (p *Plan) validateMemory(w *workload.Workload, pl *hw.Platform) error {
	limits := pl.MemoryLimits()
	if len(limits) == 0 {
		return nil
	}
	use, err := p.WeightBytes(w, pl)
	if err != nil {
		return err
	}
	for _, l := range limits {
		var sum int64
		for _, q := range l.Procs {
			sum += use[q]
		}
		if sum > l.Bytes {
			return fmt.Errorf("plan: %s: the plan keeps %.1f MiB of weights there, over its capacity of %.1f MiB", l.What, float64(sum)/(1<<20), float64(l.Bytes)/(1<<20))
		}
	}
	return nil
}

func validateModel(mp *ModelPlan, m *workload.Model, pl *hw.Platform) error {
	lg := m.Layers
	n := len(lg.Layers)
	owner := make([]int, n)
	for i := range owner {
		owner[i] = -1
	}
	if len(mp.Subgraphs) == 0 {
		return fmt.Errorf("plan: model %q: no subgraphs", mp.Model)
	}
	for j, s := range mp.Subgraphs {
		where := fmt.Sprintf("plan: model %q: subgraph %d (layers %s)", mp.Model, j, s.Layers.Key())
		if len(s.Layers) == 0 {
			return fmt.Errorf("plan: model %q: subgraph %d: no layers", mp.Model, j)
		}
		for k, l := range s.Layers {
			if k > 0 && s.Layers[k-1] >= l {
				return fmt.Errorf("%s: layers not sorted and distinct", where)
			}
			if l < 0 || l >= n {
				return fmt.Errorf("%s: layer %d out of range (the model has layers 0-%d)", where, l, n-1)
			}
			if owner[l] >= 0 {
				return fmt.Errorf("%s: layer %d is in subgraph %d too", where, l, owner[l])
			}
			owner[l] = j
		}
		cfg, err := s.Config(pl)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if err := m.CheckConfig(pl, cfg); err != nil {
			if s.DType == "" {
				err = fmt.Errorf("%w (the subgraph gives no dtype, so it runs in %s's default)", err, s.Processor)
			}
			return fmt.Errorf("%s: %v", where, err)
		}
		if !lg.IsConvex(s.Layers) {
			return fmt.Errorf("%s: not convex: %s", where, escape(lg, s.Layers))
		}
		for _, l := range s.Layers {
			for _, id := range lg.Layers[l].Nodes {
				if err := pl.Supports(cfg.Proc, lg.Model, lg.Model.Nodes[id]); err != nil {
					return fmt.Errorf("%s: layer %d: %v", where, l, err)
				}
			}
		}
	}
	var missing []int
	for l, o := range owner {
		if o < 0 {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("plan: model %q: layers %s are in no subgraph", mp.Model, graph.LayerSet(missing).Key())
	}
	for _, e := range lg.Edges {
		if a, b := owner[e.From], owner[e.To]; a > b {
			return fmt.Errorf("plan: model %q: subgraph %d (layer %d) feeds subgraph %d (layer %d), which is listed before it", mp.Model, a, e.From, b, e.To)
		}
	}
	return nil
}

// escape describes a path that leaves a non-convex set and comes back:
// "layer 3 -> 5 (outside) -> 7".
func escape(lg *graph.LayerGraph, s graph.LayerSet) string {
	in := make([]bool, len(lg.Layers))
	for _, id := range s {
		in[id] = true
	}
	// parent[x] is the layer x was reached from, walking forward from the
	// set through outside layers only.
	parent := make([]int, len(lg.Layers))
	for i := range parent {
		parent[i] = -2
	}
	var queue []int
	for _, id := range s {
		for _, nx := range lg.Succs[id] {
			if !in[nx] && parent[nx] == -2 {
				parent[nx] = id
				queue = append(queue, nx)
			}
		}
	}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, nx := range lg.Succs[x] {
			if in[nx] {
				path := []int{nx, x}
				for p := parent[x]; ; p = parent[p] {
					path = append(path, p)
					if in[p] {
						break
					}
				}
				var b strings.Builder
				for i := len(path) - 1; i >= 0; i-- {
					if i < len(path)-1 {
						b.WriteString(" -> ")
					}
					fmt.Fprintf(&b, "%d", path[i])
					if !in[path[i]] {
						b.WriteString(" (outside)")
					}
				}
				return "path " + b.String()
			}
			if parent[nx] == -2 {
				parent[nx] = x
				queue = append(queue, nx)
			}
		}
	}
	return "a path leaves it and comes back"
}
