package agent

import (
	"fmt"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/profile"
)

// Version is the agent's version, advertised by GET /v1/info.
const Version = "1.5.0"

// ProtocolVersion is the version of the HTTP protocol in the paths (/v1/).
const ProtocolVersion = 1

// Info is the answer of GET /v1/info.
type Info struct {
	// Name identifies the device (the name profile stores its figures under).
	Name         string `json:"name"`
	ORTVersion   string `json:"ort_version"`
	AgentVersion string `json:"agent_version"`
	// Protocol is ProtocolVersion.
	Protocol int `json:"protocol"`
	// MaxUploadBytes is the largest request body /v1/measure accepts.
	MaxUploadBytes int64 `json:"max_upload_bytes"`
	// Processors summarises the platform, in processor ID order.
	Processors []ProcessorInfo `json:"processors"`
	// PlatformYAML is the whole platform in the schema hw.Load reads.
	PlatformYAML string `json:"platform_yaml"`
	// MeasureFields lists the optional fields of a /v1/measure request
	// this agent takes (MeasureFields), so that a client can tell before
	// it starts that the agent is too old for what it will ask. Agents
	// before 1.1.0 send none.
	MeasureFields []string `json:"measure_fields,omitempty"`
}

// MeasureFields are the optional fields of a /v1/measure request that this
// agent takes, by their profile.MeasureRequest names in the JSON: cold
// runs, idle runs, co-run conditions. An agent whose device times plans
// in their cycle (profile.CycleMeasurer; POST /v1/cycle, from 1.2.0) lists
// "cycle" too, and from 1.3.0 "arrivals" (a cycle's Order).
var MeasureFields = []string{"cold", "corun", "idle"}

// CycleField is the MeasureFields entry of an agent that serves POST
// /v1/cycle.
const CycleField = "cycle"

// CycleBody is the request of POST /v1/cycle: a plan's subgraphs, each on
// its processor, timed in the plan's cycle (profile.CycleRequest).
type CycleBody struct {
	Steps  []CycleStepBody `json:"steps"`
	Warmup int             `json:"warmup"`
	Cycles int             `json:"cycles"`
	// PeriodNS: a round starts every period (0: back to back).
	PeriodNS int64 `json:"period_ns,omitempty"`
	// Order is a round's runs (profile.CycleRequest.Order; agents from
	// 1.3.0, listing "arrivals"); none: every step once, in order.
	Order []CycleRunBody `json:"order,omitempty"`
}

// CycleRunBody is one run of a round: a step, released at_ns after the
// round began.
type CycleRunBody struct {
	Step int   `json:"step"`
	AtNS int64 `json:"at_ns,omitempty"`
}

// CycleStepBody is one step of a CycleBody.
type CycleStepBody struct {
	Model     []byte       `json:"model"`
	Inputs    []TensorBody `json:"inputs"`
	Processor string       `json:"processor"`
	Backend   string       `json:"backend,omitempty"`
	DType     string       `json:"dtype,omitempty"`
}

// CycleTimingBody is the answer of POST /v1/cycle: each step's median, in
// step order, in nanoseconds.
type CycleTimingBody struct {
	MediansNS []int64 `json:"medians_ns"`
	Cycles    int     `json:"cycles"`
}

func cycleBodyOf(req profile.CycleRequest) CycleBody {
	b := CycleBody{Warmup: req.Warmup, Cycles: req.Cycles, PeriodNS: int64(req.Period), Steps: make([]CycleStepBody, len(req.Steps))}
	for i, st := range req.Steps {
		b.Steps[i] = CycleStepBody{Model: st.Model, Inputs: tensorBodies(st.Inputs), Processor: st.Processor, Backend: st.Backend, DType: st.DType}
	}
	for _, o := range req.Order {
		b.Order = append(b.Order, CycleRunBody{Step: o.Step, AtNS: int64(o.At)})
	}
	return b
}

// request converts a wire cycle to the profile form; a data type that
// does not parse is an error naming the step.
func (b CycleBody) request() (profile.CycleRequest, error) {
	req := profile.CycleRequest{Warmup: b.Warmup, Cycles: b.Cycles, Period: time.Duration(b.PeriodNS), Steps: make([]profile.CycleStep, len(b.Steps))}
	for i, sb := range b.Steps {
		st := profile.CycleStep{Model: sb.Model, Processor: sb.Processor, Backend: sb.Backend, DType: sb.DType}
		for _, in := range sb.Inputs {
			sp, err := in.spec()
			if err != nil {
				return req, fmt.Errorf("steps[%d]: %w", i, err)
			}
			st.Inputs = append(st.Inputs, sp)
		}
		req.Steps[i] = st
	}
	for _, o := range b.Order {
		req.Order = append(req.Order, profile.CycleRun{Step: o.Step, At: time.Duration(o.AtNS)})
	}
	return req, nil
}

// ProcessorInfo is one processor of the device: what a request may name.
type ProcessorInfo struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Backends []string `json:"backends"`
	DTypes   []string `json:"dtypes"`
	Cores    []int    `json:"cores,omitempty"`
}

// TensorBody is one model input in a MeasureBody.
type TensorBody struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// MeasureBody is the request of POST /v1/measure.
type MeasureBody struct {
	// Model is the standalone ONNX model; in JSON, base64 (standard
	// encoding).
	Model     []byte       `json:"model"`
	Inputs    []TensorBody `json:"inputs"`
	Processor string       `json:"processor"`
	Backend   string       `json:"backend,omitempty"`
	DType     string       `json:"dtype,omitempty"`
	Warmup    int          `json:"warmup"`
	Reps      int          `json:"reps"`
	Cold      int          `json:"cold,omitempty"`
	// Idle runs: timed after evicting the caches and idling (the
	// subgraph's time on a processor that has idled).
	Idle int `json:"idle,omitempty"`
	// Corun conditions (inlay profile --corun): each a set of loads on
	// neighbouring processors, timed beside.
	Corun []CorunConditionBody `json:"corun,omitempty"`
}

// CorunConditionBody is one co-run condition of a MeasureBody.
type CorunConditionBody struct {
	Loads []CorunLoadBody `json:"loads"`
}

// CorunLoadBody is one load: the streaming kernel (stream_bytes, duty) or
// real subgraphs (models, run in turn) on a neighbouring processor.
type CorunLoadBody struct {
	Processor   string           `json:"processor"`
	StreamBytes int64            `json:"stream_bytes,omitempty"`
	Duty        float64          `json:"duty,omitempty"`
	Models      []CorunModelBody `json:"models,omitempty"`
}

// CorunModelBody is one real subgraph of a co-run load.
type CorunModelBody struct {
	Model  []byte       `json:"model"`
	Inputs []TensorBody `json:"inputs"`
}

// CorunTimingBody is the subgraph's timing beside one condition.
type CorunTimingBody struct {
	MedianNS  int64   `json:"median_ns"`
	Reps      int     `json:"reps"`
	StreamGBs float64 `json:"stream_gbs,omitempty"`
}

// TimingBody is the answer of POST /v1/measure; durations in nanoseconds.
type TimingBody struct {
	MedianNS int64 `json:"median_ns"`
	P90NS    int64 `json:"p90_ns"`
	MinNS    int64 `json:"min_ns"`
	MaxNS    int64 `json:"max_ns"`
	StddevNS int64 `json:"stddev_ns"`
	Reps     int   `json:"reps"`
	ColdNS   int64 `json:"cold_ns,omitempty"`
	ColdReps int   `json:"cold_reps,omitempty"`
	IdleNS   int64 `json:"idle_ns,omitempty"`
	IdleReps int   `json:"idle_reps,omitempty"`
	// Corun holds one timing per requested co-run condition.
	Corun []CorunTimingBody `json:"corun,omitempty"`
}

// ErrorBody is every error answer.
type ErrorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// Error codes of ErrorBody.Code.
const (
	CodeUnauthorized     = "unauthorized"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeUnsupportedMedia = "unsupported_media_type"
	CodeBadRequest       = "bad_request"
	CodeTooLarge         = "too_large"
	CodeInvalid          = "invalid"
	CodeMeasureFailed    = "measure_failed"
	CodeNoProbePair      = "no_probe_pair" // 422: no two processors to probe a hand-off between (runtime.ErrNoProbePair)
	CodeBusy             = "busy"
	CodeInternal         = "internal"
)

// bodyOf converts a profile request to its wire form.
func bodyOf(req profile.MeasureRequest) MeasureBody {
	b := MeasureBody{
		Model:     req.Model,
		Inputs:    make([]TensorBody, len(req.Inputs)),
		Processor: req.Processor,
		Backend:   req.Backend,
		DType:     req.DType,
		Warmup:    req.Warmup,
		Reps:      req.Reps,
		Cold:      req.Cold,
		Idle:      req.Idle,
	}
	b.Inputs = tensorBodies(req.Inputs)
	for _, c := range req.Corun {
		var cb CorunConditionBody
		for _, l := range c.Loads {
			lb := CorunLoadBody{Processor: l.Processor, StreamBytes: l.StreamBytes, Duty: l.Duty}
			for _, m := range l.Models {
				lb.Models = append(lb.Models, CorunModelBody{Model: m.Model, Inputs: tensorBodies(m.Inputs)})
			}
			cb.Loads = append(cb.Loads, lb)
		}
		b.Corun = append(b.Corun, cb)
	}
	return b
}

func tensorBodies(in []profile.TensorSpec) []TensorBody {
	out := make([]TensorBody, len(in))
	for i, t := range in {
		out[i] = TensorBody{Name: t.Name, DType: t.DType.String(), Shape: append([]int64{}, t.Shape...)}
	}
	return out
}

func (b TensorBody) spec() (profile.TensorSpec, error) {
	dt, err := graph.ParseDType(b.DType)
	if err != nil {
		return profile.TensorSpec{}, fmt.Errorf("input %q: %w", b.Name, err)
	}
	return profile.TensorSpec{Name: b.Name, DType: dt, Shape: graph.Shape(append([]int64{}, b.Shape...))}, nil
}

// request converts a wire request to the profile form; a data type that
// does not parse is an error.
func (b MeasureBody) request() (profile.MeasureRequest, error) {
	req := profile.MeasureRequest{
		Model:     b.Model,
		Inputs:    make([]profile.TensorSpec, len(b.Inputs)),
		Processor: b.Processor,
		Backend:   b.Backend,
		DType:     b.DType,
		Warmup:    b.Warmup,
		Reps:      b.Reps,
		Cold:      b.Cold,
		Idle:      b.Idle,
	}
	for i, in := range b.Inputs {
		sp, err := in.spec()
		if err != nil {
			return req, err
		}
		req.Inputs[i] = sp
	}
	for ci, cb := range b.Corun {
		var c profile.CorunCondition
		for li, lb := range cb.Loads {
			l := profile.CorunLoad{Processor: lb.Processor, StreamBytes: lb.StreamBytes, Duty: lb.Duty}
			for mi, mb := range lb.Models {
				m := profile.CorunModel{Model: mb.Model}
				for _, in := range mb.Inputs {
					sp, err := in.spec()
					if err != nil {
						return req, fmt.Errorf("corun[%d].loads[%d].models[%d]: %w", ci, li, mi, err)
					}
					m.Inputs = append(m.Inputs, sp)
				}
				l.Models = append(l.Models, m)
			}
			c.Loads = append(c.Loads, l)
		}
		req.Corun = append(req.Corun, c)
	}
	return req, nil
}

func timingBody(t profile.Timing) TimingBody {
	return TimingBody{
		MedianNS: int64(t.Median), P90NS: int64(t.P90), MinNS: int64(t.Min), MaxNS: int64(t.Max),
		StddevNS: int64(t.Stddev), Reps: t.Reps, ColdNS: int64(t.Cold), ColdReps: t.ColdReps,
		IdleNS: int64(t.Idle), IdleReps: t.IdleReps, Corun: corunBodies(t.Corun),
	}
}

func corunBodies(cs []profile.CorunTiming) []CorunTimingBody {
	var out []CorunTimingBody
	for _, c := range cs {
		out = append(out, CorunTimingBody{MedianNS: int64(c.Median), Reps: c.Reps, StreamGBs: c.StreamGBs})
	}
	return out
}

func (b TimingBody) timing() profile.Timing {
	return profile.Timing{
		Median: time.Duration(b.MedianNS), P90: time.Duration(b.P90NS), Min: time.Duration(b.MinNS),
		Max: time.Duration(b.MaxNS), Stddev: time.Duration(b.StddevNS), Reps: b.Reps,
		Cold: time.Duration(b.ColdNS), ColdReps: b.ColdReps, Idle: time.Duration(b.IdleNS), IdleReps: b.IdleReps,
		Corun: corunTimings(b.Corun),
	}
}

func corunTimings(bs []CorunTimingBody) []profile.CorunTiming {
	var out []profile.CorunTiming
	for _, b := range bs {
		out = append(out, profile.CorunTiming{Median: time.Duration(b.MedianNS), Reps: b.Reps, StreamGBs: b.StreamGBs})
	}
	return out
}
