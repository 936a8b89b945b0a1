package workload

import (
	"fmt"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

// FloatDefaults are the data types a float model may run in unless its
// workload says otherwise: its own float type and half precision. A
// float model runs in int8 only when the workload allows it, since that
// assumes a quantization the user has not done.
var FloatDefaults = []graph.DType{graph.Float32, graph.Float16}

// Allowed returns the processor data types the planner may use for the
// model, in preference order: the model's precision: list, else the
// workload's, else the defaults: FloatDefaults, and for a quantized model
// (a layer with a Precision) its own quantized compute types first, as
// it is shipped (a quantized layer placed on a float configuration runs
// dequantized). Before Load, quantized types are not known.
func (m *Model) Allowed() []graph.DType {
	if m.Precision != nil {
		return m.Precision
	}
	if m.defaultPrecision != nil {
		return m.defaultPrecision
	}
	var out []graph.DType
	if m.Layers != nil {
		seen := map[graph.DType]bool{}
		for _, l := range m.Layers.Layers {
			if d := l.Precision.ComputeType(); l.Precision != graph.Undefined && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return append(out, FloatDefaults...)
}

// Allows reports whether the model may run in processor data type d.
func (m *Model) Allows(d graph.DType) bool {
	d = d.ComputeType()
	for _, x := range m.Allowed() {
		if x == d {
			return true
		}
	}
	return false
}

// AllowedString lists Allowed for messages: "float32, float16".
func (m *Model) AllowedString() string {
	a := m.Allowed()
	names := make([]string, len(a))
	for i, d := range a {
		names[i] = d.String()
	}
	return strings.Join(names, ", ")
}

// AllowInt8 adds int8 to the precision: list of every model whose list
// does not have it (the defaults first): what the bench's random scenarios
// and the demo do, since Puzzle's experiment runs float models quantized
// on the NPU.
func (w *Workload) AllowInt8() {
	for _, m := range w.Models {
		if !m.Allows(graph.Int8) {
			m.Precision = append(append([]graph.DType{}, m.Allowed()...), graph.Int8)
		}
	}
}

// Configs returns the processor's configurations (hw.Platform.Configs
// order) whose data type the model allows; empty when it allows none.
func (m *Model) Configs(pl *hw.Platform, proc int) []hw.Config {
	var out []hw.Config
	for _, c := range pl.Configs(proc) {
		if m.Allows(c.DType) {
			out = append(out, c)
		}
	}
	return out
}

// DefaultConfig is the processor's default backend with its first data
// type that the model allows (the processor's default when allowed); an
// error when it has none.
func (m *Model) DefaultConfig(pl *hw.Platform, proc int) (hw.Config, error) {
	cfg := pl.DefaultConfig(proc)
	for _, ds := range pl.Processors[proc].DTypes {
		if m.Allows(ds.DType) {
			cfg.DType = ds.DType
			return cfg, nil
		}
	}
	return hw.Config{}, m.precisionError(pl, proc)
}

func (m *Model) precisionError(pl *hw.Platform, proc int) error {
	pr := pl.Processors[proc]
	names := make([]string, len(pr.DTypes))
	for i, ds := range pr.DTypes {
		names[i] = ds.DType.String()
	}
	return fmt.Errorf("model %q may run in %s (its precision: list), processor %s computes in %s", m.Name, m.AllowedString(), pr.Name, strings.Join(names, ", "))
}

// CheckConfig returns an error when the model may not run in cfg's data
// type: the check plan validation and the planners share.
func (m *Model) CheckConfig(pl *hw.Platform, cfg hw.Config) error {
	if m.Allows(cfg.DType) {
		return nil
	}
	return fmt.Errorf("data type %s is not allowed for model %q (precision: %s); add it to the model's precision: list in the workload to allow it", cfg.DType, m.Name, m.AllowedString())
}
