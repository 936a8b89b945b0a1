package workload

import (
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/graph"
)

// ScenarioOptions shape the random scenarios of Scenario, after Puzzle's
// evaluation (arXiv 2508.17764): networks drawn from a fixed set, split into
// model groups of random size with random relative rates, deadlines equal
// to periods.
type ScenarioOptions struct {
	// Networks to draw from (zoo names); required.
	Networks []string
	// MinModels and MaxModels bound how many distinct networks a scenario
	// has (defaults 3 and len(Networks)).
	MinModels, MaxModels int
	// MaxGroupSize bounds a group's models (default 4).
	MaxGroupSize int
	// BaseRateHz is the nominal rate the relative rates multiply (default 10).
	BaseRateHz float64
	// RateSpread: relative rates are drawn log-uniformly in [1/RateSpread,
	// RateSpread] (default 2).
	RateSpread float64
}

func (o ScenarioOptions) withDefaults() (ScenarioOptions, error) {
	if len(o.Networks) == 0 {
		return o, fmt.Errorf("workload: scenario needs networks to draw from")
	}
	if o.MaxModels <= 0 || o.MaxModels > len(o.Networks) {
		o.MaxModels = len(o.Networks)
	}
	if o.MinModels <= 0 {
		o.MinModels = 3
	}
	if o.MinModels > o.MaxModels {
		o.MinModels = o.MaxModels
	}
	if o.MaxGroupSize <= 0 {
		o.MaxGroupSize = 4
	}
	if o.BaseRateHz <= 0 {
		o.BaseRateHz = 10
	}
	if o.RateSpread < 1 {
		o.RateSpread = 2
	}
	return o, nil
}

// Builder loads a zoo network and its layer graph (callers cache).
type Builder func(zooName string) (*graph.Model, *graph.LayerGraph, error)

// ScenarioPrecision is the precision: list of the random scenarios: the
// float defaults and int8.
var ScenarioPrecision = []graph.DType{graph.Float32, graph.Float16, graph.Int8}

// Scenario draws one random workload from rng. Model names are the zoo
// names; groups are named g1, g2, ... with their models in drawing order
// and no dependencies. Periodic arrivals; deadline = period.
func Scenario(rng *rand.Rand, opt ScenarioOptions, build Builder) (*Workload, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	n := opt.MinModels + rng.Intn(opt.MaxModels-opt.MinModels+1)
	perm := rng.Perm(len(opt.Networks))[:n]
	// Puzzle's experiment runs the float zoo networks quantized on the
	// NPU: the scenarios allow int8, and their workload files say so.
	w := &Workload{Precision: ScenarioPrecision}
	for _, i := range perm {
		name := opt.Networks[i]
		g, lg, err := build(name)
		if err != nil {
			return nil, fmt.Errorf("workload: scenario: %s: %w", name, err)
		}
		w.Models = append(w.Models, &Model{Name: name, Zoo: name, Source: "zoo:" + name, Graph: g, Layers: lg, defaultPrecision: w.Precision})
	}
	for at := 0; at < n; {
		size := 1 + rng.Intn(opt.MaxGroupSize)
		if at+size > n {
			size = n - at
		}
		rel := opt.RateSpread
		factor := rel
		if rel > 1 {
			// log-uniform in [1/rel, rel]
			factor = math.Pow(rel, 2*rng.Float64()-1)
		}
		period := time.Duration(float64(time.Second) / (opt.BaseRateHz * factor))
		g := &Group{Name: fmt.Sprintf("g%d", len(w.Groups)+1), Period: period, Deadline: period, Arrival: Periodic, After: map[string][]string{}}
		for _, m := range w.Models[at : at+size] {
			g.Models = append(g.Models, m.Name)
		}
		w.Groups = append(w.Groups, g)
		at += size
	}
	return w, nil
}

// YAML writes the workload as a workload file (zoo and ONNX sources,
// groups), so a generated scenario can be planned again by hand.
func (w *Workload) YAML() string {
	out := ""
	if w.Platform != "" {
		out += "platform: " + w.Platform + "\n"
	}
	if w.Precision != nil {
		out += "precision: " + PrecisionYAML(w.Precision) + "\n"
	}
	out += "models:\n"
	for _, m := range w.Models {
		prec := ""
		if m.Precision != nil {
			prec = ", precision: " + PrecisionYAML(m.Precision)
		}
		if m.Zoo != "" {
			if m.ZooInput != nil {
				prec = ", input: " + dimsYAML(m.ZooInput) + prec
			}
			out += fmt.Sprintf("  - {name: %s, zoo: %s%s}\n", m.Name, m.Zoo, prec)
			continue
		}
		src := m.ONNX
		if src == "" {
			src = m.Source
		}
		line := fmt.Sprintf("  - {name: %s, onnx: %q", m.Name, src)
		if len(m.Inputs) > 0 {
			line += ", inputs: {"
			for i, k := range slices.Sorted(maps.Keys(m.Inputs)) {
				if i > 0 {
					line += ", "
				}
				line += fmt.Sprintf("%q: %s", k, dimsYAML(m.Inputs[k]))
			}
			line += "}"
		}
		out += line + prec + "}\n"
	}
	out += "groups:\n"
	for _, g := range w.Groups {
		out += fmt.Sprintf("  - name: %s\n    models: [", g.Name)
		for i, m := range g.Models {
			if i > 0 {
				out += ", "
			}
			out += m
		}
		out += "]\n"
		if len(g.After) > 0 {
			out += "    after: {"
			for i, k := range slices.Sorted(maps.Keys(g.After)) {
				if i > 0 {
					out += ", "
				}
				out += k + ": ["
				for j, d := range g.After[k] {
					if j > 0 {
						out += ", "
					}
					out += d
				}
				out += "]"
			}
			out += "}\n"
		}
		out += fmt.Sprintf("    period_ms: %.6g\n    deadline_ms: %.6g\n    arrival: %s\n",
			float64(g.Period)/float64(time.Millisecond), float64(g.Deadline)/float64(time.Millisecond), g.Arrival)
	}
	return out
}

// PrecisionYAML writes a precision: list: "[float32, float16, int8]".
func PrecisionYAML(ds []graph.DType) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.String()
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func dimsYAML(s graph.Shape) string {
	out := "["
	for i, d := range s {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprint(d)
	}
	return out + "]"
}
