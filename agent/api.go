package agent

import (
	"fmt"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/profile"
)

// Version is the agent's version, advertised by GET /v1/info.
const Version = "1.0.0"

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
	}
	for i, in := range req.Inputs {
		b.Inputs[i] = TensorBody{Name: in.Name, DType: in.DType.String(), Shape: append([]int64{}, in.Shape...)}
	}
	return b
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
	}
	for i, in := range b.Inputs {
		dt, err := graph.ParseDType(in.DType)
		if err != nil {
			return req, fmt.Errorf("input %q: %w", in.Name, err)
		}
		req.Inputs[i] = profile.TensorSpec{Name: in.Name, DType: dt, Shape: graph.Shape(append([]int64{}, in.Shape...))}
	}
	return req, nil
}

func timingBody(t profile.Timing) TimingBody {
	return TimingBody{
		MedianNS: int64(t.Median), P90NS: int64(t.P90), MinNS: int64(t.Min), MaxNS: int64(t.Max),
		StddevNS: int64(t.Stddev), Reps: t.Reps, ColdNS: int64(t.Cold), ColdReps: t.ColdReps,
	}
}

func (b TimingBody) timing() profile.Timing {
	return profile.Timing{
		Median: time.Duration(b.MedianNS), P90: time.Duration(b.P90NS), Min: time.Duration(b.MinNS),
		Max: time.Duration(b.MaxNS), Stddev: time.Duration(b.StddevNS), Reps: b.Reps,
		Cold: time.Duration(b.ColdNS), ColdReps: b.ColdReps,
	}
}
