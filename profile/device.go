package profile

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/stats"
)

// Device is something that can measure a standalone ONNX subgraph: this
// machine (Local) or a remote device through the agent (agent.Client).
type Device interface {
	Info(ctx context.Context) (DeviceInfo, error)
	Measure(ctx context.Context, req MeasureRequest) (Timing, error)
}

// FieldTaker is a Device that can say which optional fields of a
// MeasureRequest it takes: "cold", "idle", "corun" (agent.MeasureFields).
// known is false when it cannot tell (an agent older than the list);
// Profiler.Run then asks as before, and an unknown field fails the first
// measurement that has it.
type FieldTaker interface {
	Takes(field string) (takes, known bool)
}

// DeviceInfo describes a device.
type DeviceInfo struct {
	// Name identifies the device in the store (for Local: the host name).
	Name string
	// ORTVersion is the ONNX Runtime version it measures with.
	ORTVersion string
	// Platform lists its processors.
	Platform *hw.Platform
}

// TensorSpec is one input of a model to measure.
type TensorSpec struct {
	Name  string
	DType graph.DType
	Shape graph.Shape
}

// MeasureRequest asks a device to time one model.
type MeasureRequest struct {
	// Model is a standalone ONNX model (onnx.ExportSubgraph output).
	Model []byte
	// Inputs are the model's graph inputs, fully shaped; they are fed with
	// seeded random values.
	Inputs []TensorSpec
	// Processor, Backend and DType name the configuration (empty backend or
	// dtype: the processor's default).
	Processor string
	Backend   string
	DType     string
	// Warmup runs are not timed; Reps runs are (Reps ≥ 1), back to back.
	Warmup, Reps int
	// Cold runs (≥ 0) are timed after the back-to-back ones, each after
	// the device has evicted its caches (Timing.Cold).
	Cold int
	// Idle runs (≥ 0) are timed after those, each after the device has
	// evicted its caches and then let the processor idle (Local: for
	// IdleGap), as it idles between a periodic workload's requests
	// (Timing.Idle).
	Idle int
	// Corun conditions are timed after those, Reps back-to-back runs
	// beside each (Timing.Corun): the co-run profile of inlay profile
	// --corun.
	Corun []CorunCondition
}

// Validate checks a request's fields (not the model itself).
func (r MeasureRequest) Validate() error {
	switch {
	case len(r.Model) == 0:
		return fmt.Errorf("profile: measure: empty model")
	case r.Processor == "":
		return fmt.Errorf("profile: measure: no processor given")
	case r.Reps < 1:
		return fmt.Errorf("profile: measure: reps %d: want at least 1", r.Reps)
	case r.Warmup < 0:
		return fmt.Errorf("profile: measure: warmup %d is negative", r.Warmup)
	case r.Cold < 0:
		return fmt.Errorf("profile: measure: cold runs %d is negative", r.Cold)
	case r.Idle < 0:
		return fmt.Errorf("profile: measure: idle runs %d is negative", r.Idle)
	}
	for _, c := range r.Corun {
		if len(c.Loads) == 0 {
			return fmt.Errorf("profile: measure: a co-run condition has no loads")
		}
		for _, l := range c.Loads {
			if err := l.validate(); err != nil {
				return err
			}
			if l.Processor == r.Processor {
				return fmt.Errorf("profile: measure: co-run load on %q, the processor measured", l.Processor)
			}
		}
	}
	for _, in := range r.Inputs {
		if in.Name == "" {
			return fmt.Errorf("profile: measure: an input has no name")
		}
		if n, ok := in.Shape.Elements(); !ok || n < 0 {
			return fmt.Errorf("profile: measure: input %q: shape %v is not fully known", in.Name, in.Shape)
		}
	}
	return nil
}

// Timing summarises the timed runs of one measurement.
type Timing struct {
	Median, P90, Min, Max time.Duration
	Stddev                time.Duration
	Reps                  int
	// Cold is the median of the runs timed after evicting the caches
	// (MeasureRequest.Cold; ColdReps of them, 0 when none were asked for):
	// a subgraph's time when its processor ran other work just before,
	// as it does in a plan that shares the processor.
	Cold     time.Duration
	ColdReps int
	// Idle is the median of the runs timed after evicting the caches and
	// idling (MeasureRequest.Idle; IdleReps of them, 0 when none were
	// asked for): the subgraph's time when it starts on a processor that
	// has idled, as the first subgraph of a request does in a workload
	// whose groups arrive at rates. What it takes above Cold is what waking
	// the processor costs (Estimator.HandOff charges it).
	Idle     time.Duration
	IdleReps int
	// Cycle is the median of the subgraph's runs inside its plan's cycle
	// (CycleReps of them; 0 when it was not timed so): each run after the
	// plan's other subgraphs ran once on their processors, so with the
	// caches holding what they hold in a steady run of the plan (see
	// CycleRequest). The profiler sets it after the measurement
	// (Store.PutCycle); a device's Measure leaves it zero.
	Cycle     time.Duration
	CycleReps int
	// Corun holds one timing per MeasureRequest.Corun condition.
	Corun []CorunTiming
}

// Summarize computes a Timing from run durations (at least one).
func Summarize(samples []time.Duration) Timing {
	if len(samples) == 0 {
		return Timing{}
	}
	s := append([]time.Duration(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	median, mean := stats.Median(s), stats.Mean(s)
	var ss float64
	for _, d := range s {
		ss += (float64(d) - mean) * (float64(d) - mean)
	}
	sd := 0.0
	if n > 1 {
		sd = math.Sqrt(ss / float64(n-1))
	}
	// p90: nearest rank.
	p90 := s[int(math.Ceil(0.9*float64(n)))-1]
	return Timing{Median: median, P90: p90, Min: s[0], Max: s[n-1], Stddev: time.Duration(sd + 0.5), Reps: n}
}

// ShapesKey is the canonical form of a subgraph's input shapes in the store:
// "name:1x3x48x320;other:2x64" sorted by name ("" for none).
func ShapesKey(inputs []TensorSpec) string {
	s := append([]TensorSpec(nil), inputs...)
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
	parts := make([]string, len(s))
	for i, in := range s {
		dims := make([]string, len(in.Shape))
		for j, d := range in.Shape {
			dims[j] = fmt.Sprint(d)
		}
		parts[i] = in.Name + ":" + strings.Join(dims, "x")
	}
	return strings.Join(parts, ";")
}

// SubgraphInputs returns the specs of a layer set's boundary inputs
// (graph.LayerGraph.Boundary), in boundary order. An input whose type or
// shape is not fully known is an error.
func SubgraphInputs(lg *graph.LayerGraph, set graph.LayerSet) ([]TensorSpec, error) {
	ins, _ := lg.Boundary(set)
	out := make([]TensorSpec, 0, len(ins))
	for _, name := range ins {
		t := lg.Model.Tensor(name)
		if t == nil {
			return nil, fmt.Errorf("profile: input %q of layers %s: no such tensor", name, set.Key())
		}
		if _, ok := t.Shape.Elements(); !ok {
			return nil, fmt.Errorf("profile: input %q of layers %s: shape %v is not fully known", name, set.Key(), t.Shape)
		}
		out = append(out, TensorSpec{Name: name, DType: t.DType, Shape: t.Shape.Clone()})
	}
	return out, nil
}

// ModelID is the store's name for a model: its content hash, or its name
// when it has none (models built in code).
func ModelID(m *graph.Model) string {
	if m.Hash != "" {
		return m.Hash
	}
	return "name:" + m.Name
}
