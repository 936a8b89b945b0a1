package workload

import (
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/graph"
)

// Arrival processes of a group's requests.
const (
	Periodic = "periodic"
	Poisson  = "poisson"
)

// Model is one network of a workload.
type Model struct {
	Name string
	// Graph and Layers are nil after Parse and set by Load.
	Graph  *graph.Model
	Layers *graph.LayerGraph
	// Source is the ONNX file's path (as resolved against the workload's
	// folder) or "zoo:NAME".
	Source string
	// ONNX is the ONNX path as written in the file ("" for zoo models).
	ONNX string
	// Zoo is the zoo network's name ("" for ONNX models).
	Zoo string
	// Inputs fixes the shapes of the model's symbolic inputs (ONNX only).
	Inputs map[string]graph.Shape
	// ZooInput is a zoo network's input shape (nil: its default).
	ZooInput graph.Shape
	// Precision is the workload's precision: list for the model, the
	// processor data types the planner may run it in; nil means the
	// defaults (see Allowed).
	Precision []graph.DType

	// defaultPrecision is the workload's top-level precision: list.
	defaultPrecision []graph.DType

	line int // where the model is listed, for errors found while loading
}

// Group is a set of models triggered together by one input.
type Group struct {
	Name string
	// Models in listing order.
	Models []string
	// After maps a model to the models of the group it waits for.
	After map[string][]string
	// Period is the nominal time between two requests (1/rate).
	Period time.Duration
	// Deadline is the time a request may take from its arrival to the end of
	// the group's last model; it defaults to the period.
	Deadline time.Duration
	// Arrival is Periodic or Poisson.
	Arrival string
}

// RateHz is the group's nominal request rate.
func (g *Group) RateHz() float64 { return float64(time.Second) / float64(g.Period) }

// RateScale checks a scale on every group's nominal rate, as the simulator
// and the runtime take one: 0 means 1; any other scale must be positive
// and finite.
func RateScale(s float64) (float64, error) {
	if s == 0 {
		return 1, nil
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return s, fmt.Errorf("rate scale %v must be positive and finite", s)
	}
	return s, nil
}

// Workload is a parsed (and, after Load, loaded) workload file.
type Workload struct {
	// Platform is the preset name or platform file named by the workload
	// ("" when it names none); a relative file path is resolved against the
	// workload's folder when such a file exists.
	Platform string
	// Precision is the top-level precision: list, the default of every
	// model that has none of its own; nil means Model.Allowed's defaults.
	Precision []graph.DType
	Models    []*Model
	Groups    []*Group
	// Path is the file the workload came from ("" when parsed from memory).
	Path string
}

// Model returns the named model, or nil.
func (w *Workload) Model(name string) *Model {
	for _, m := range w.Models {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Group returns the named group, or nil.
func (w *Workload) Group(name string) *Group {
	for _, g := range w.Groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// GroupsOf returns the groups a model belongs to, in listing order.
func (w *Workload) GroupsOf(model string) []*Group {
	var out []*Group
	for _, g := range w.Groups {
		for _, m := range g.Models {
			if m == model {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// Order returns the group's models in an order that puts every model after
// the models it waits for; ties go to the model listed first. It returns an
// error naming the models on a cycle. O(n²) in the group's size.
func (g *Group) Order() ([]string, error) {
	index := make(map[string]int, len(g.Models))
	for i, m := range g.Models {
		index[m] = i
	}
	indeg := make([]int, len(g.Models))
	succs := make([][]int, len(g.Models))
	for i, m := range g.Models {
		for _, d := range g.After[m] {
			j, ok := index[d]
			if !ok {
				return nil, fmt.Errorf("group %q: model %q waits for %q, which is not in the group", g.Name, m, d)
			}
			indeg[i]++
			succs[j] = append(succs[j], i)
		}
	}
	done := make([]bool, len(g.Models))
	out := make([]string, 0, len(g.Models))
	for len(out) < len(g.Models) {
		next := -1
		for i := range g.Models {
			if !done[i] && indeg[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			return nil, fmt.Errorf("group %q: dependency cycle %s", g.Name, g.cycle(index))
		}
		done[next] = true
		out = append(out, g.Models[next])
		for _, s := range succs[next] {
			indeg[s]--
		}
	}
	return out, nil
}

// cycle finds one dependency cycle and formats it "a -> b -> a"; it is only
// called when one exists.
func (g *Group) cycle(index map[string]int) string {
	const (
		unseen = iota
		onPath
		finished
	)
	state := make([]int, len(g.Models))
	var path []int
	var found []int
	var visit func(i int) bool
	visit = func(i int) bool {
		state[i] = onPath
		path = append(path, i)
		for _, d := range g.After[g.Models[i]] {
			j, ok := index[d]
			if !ok {
				continue
			}
			if state[j] == onPath {
				for k, p := range path {
					if p == j {
						found = append(append([]int{}, path[k:]...), j)
						return true
					}
				}
			}
			if state[j] == unseen && visit(j) {
				return true
			}
		}
		path = path[:len(path)-1]
		state[i] = finished
		return false
	}
	for i := range g.Models {
		if state[i] == unseen && visit(i) {
			break
		}
	}
	s := ""
	// found lists waiters before what they wait for; print in run order.
	for k := len(found) - 1; k >= 0; k-- {
		if s != "" {
			s += " -> "
		}
		s += g.Models[found[k]]
	}
	return s
}
