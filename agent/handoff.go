package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/runtime"
)

// HandOffBody is the request of POST /v1/handoff: measure the runtime's
// hand-off between dependent subgraphs on the agent's device
// (runtime.ProbeHandOff).
type HandOffBody struct {
	// NoPin measures with the runtime's workers unpinned (inlay run
	// --no-pin); by default they are pinned to their processors' cores.
	NoPin bool `json:"no_pin,omitempty"`
	// DurationMS is the length of each of the probe's runs (the plan on
	// one processor, alternating, alternating on the larger input; a run
	// that measures a start delay neither took lasts half as long); 0
	// means runtime.DefaultProbeDuration.
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Procs are the two processors to hand off between; empty means the
	// platform's first two that run ort-cpu.
	Procs []string `json:"procs,omitempty"`
}

// HandOffAnswerBody is the answer of POST /v1/handoff; durations in
// nanoseconds.
type HandOffAnswerBody struct {
	// SameNS is the median hand-off on one processor, CrossNS between
	// the two of Procs, over at least Samples hand-offs each.
	SameNS  int64     `json:"same_ns"`
	CrossNS int64     `json:"cross_ns"`
	Samples int       `json:"samples"`
	Procs   [2]string `json:"procs"`
	// Pinned is whether the workers were pinned (not NoPin).
	Pinned bool `json:"pinned"`
	// The probe runs' median delays from a request's arrival to its first
	// subgraph's start (runtime.StartDelays), with the event loop
	// sleeping to its arrivals and polling for them, over the requests
	// counted beside each; from agent 1.4.0 (an older agent sends none: a
	// count of 0, not measured).
	SleepStartNS  int64 `json:"sleep_start_ns,omitempty"`
	SleepRequests int   `json:"sleep_requests,omitempty"`
	PollStartNS   int64 `json:"poll_start_ns,omitempty"`
	PollRequests  int   `json:"poll_requests,omitempty"`
	// CrossAfter is the hand-off between the two processors by how long
	// the subgraph before it ran (runtime.HandOffProbe.CrossAfter), from
	// agent 1.5.0 (an older agent sends none, and the flat CrossNS serves).
	CrossAfter []HandOffPointBody `json:"cross_after,omitempty"`
}

// HandOffPointBody is one point of HandOffAnswerBody.CrossAfter
// (cost.HandOffPoint), in nanoseconds.
type HandOffPointBody struct {
	AfterNS int64 `json:"after_ns"`
	GapNS   int64 `json:"gap_ns"`
	Samples int   `json:"samples"`
}

// HandOffOptions are the parameters of a hand-off probe.
type HandOffOptions struct {
	NoPin    bool
	Duration time.Duration
	Procs    []string
}

// HandOffProber measures the runtime's hand-off on the device: the prober
// side of POST /v1/handoff.
type HandOffProber interface {
	ProbeHandOff(ctx context.Context, opt HandOffOptions) (runtime.HandOffProbe, error)
}

// LocalProber probes the hand-off on this machine with package runtime.
type LocalProber struct {
	Library  string
	Platform *hw.Platform
}

var _ HandOffProber = (*LocalProber)(nil)

// ProbeHandOff runs runtime.ProbeHandOff on the prober's platform.
func (p *LocalProber) ProbeHandOff(ctx context.Context, opt HandOffOptions) (runtime.HandOffProbe, error) {
	return runtime.ProbeHandOff(ctx, runtime.ProbeConfig{Platform: p.Platform, Library: p.Library, NoPin: opt.NoPin, Duration: opt.Duration, Procs: opt.Procs})
}

func (s *Server) handOff(w http.ResponseWriter, r *http.Request) {
	var hb HandOffBody
	release, ok := s.decodePost(w, r, "handoff", "hand-off request", &hb)
	if !ok {
		return
	}
	defer release()
	if s.opt.Prober == nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "agent: handoff: this agent does not probe hand-offs (it was started without a prober)")
		return
	}
	// Checked as a float, before the conversion could overflow.
	if !(hb.DurationMS >= 0) || hb.DurationMS > float64(s.opt.MaxRunDuration/time.Millisecond) {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalid, fmt.Sprintf("agent: handoff: duration %vms: want 0 (the default) to %v", hb.DurationMS, s.opt.MaxRunDuration))
		return
	}
	opt := HandOffOptions{NoPin: hb.NoPin, Duration: time.Duration(hb.DurationMS * float64(time.Millisecond))}
	if len(hb.Procs) > 0 {
		opt.Procs = hb.Procs
	}
	di, err := s.dev.Info(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "agent: handoff: device info: "+oneLine(err.Error()))
		return
	}
	if _, err := runtime.ProbePair(di.Platform, opt.Procs); err != nil {
		writeHandOffError(w, err, CodeInvalid)
		return
	}
	ctx := r.Context()
	free, taken := s.queueForDevice(ctx, w, "handoff")
	if !taken {
		return
	}
	defer free()
	pr, err := s.opt.Prober.ProbeHandOff(ctx, opt)
	switch {
	case err != nil && ctx.Err() != nil:
		writeError(w, http.StatusServiceUnavailable, CodeBusy, "agent: handoff: cancelled: "+oneLine(err.Error()))
	case err != nil:
		writeHandOffError(w, err, CodeMeasureFailed)
	default:
		ab := HandOffAnswerBody{SameNS: int64(pr.Same), CrossNS: int64(pr.Cross), Samples: pr.Samples, Procs: pr.Procs, Pinned: !hb.NoPin,
			SleepStartNS: int64(pr.Starts.Sleep), SleepRequests: pr.Starts.SleepRequests, PollStartNS: int64(pr.Starts.Poll), PollRequests: pr.Starts.PollRequests}
		for _, p := range pr.CrossAfter {
			ab.CrossAfter = append(ab.CrossAfter, HandOffPointBody{AfterNS: int64(p.After), GapNS: int64(p.Gap), Samples: p.Samples})
		}
		writeJSON(w, http.StatusOK, ab)
	}
}

// writeHandOffError answers a probe's error: no_probe_pair when the
// platform has no two processors to hand off between, else code (both
// 422).
func writeHandOffError(w http.ResponseWriter, err error, code string) {
	if errors.Is(err, runtime.ErrNoProbePair) {
		code = CodeNoProbePair
	}
	writeError(w, http.StatusUnprocessableEntity, code, "agent: handoff: "+oneLine(err.Error()))
}

// HandOff measures the runtime's hand-off on the agent's device
// (runtime.ProbeHandOff there). Errors as Measure's; when the device has
// no two processors to hand off between, the error wraps
// runtime.ErrNoProbePair.
func (c *Client) HandOff(ctx context.Context, opt HandOffOptions) (runtime.HandOffProbe, error) {
	hb := HandOffBody{NoPin: opt.NoPin, DurationMS: float64(opt.Duration) / float64(time.Millisecond), Procs: opt.Procs}
	body, err := json.Marshal(hb)
	if err != nil {
		return runtime.HandOffProbe{}, fmt.Errorf("agent: handoff: encode request: %w", err)
	}
	var ab HandOffAnswerBody
	if err := c.do(ctx, "handoff", http.MethodPost, "/v1/handoff", body, &ab); err != nil {
		return runtime.HandOffProbe{}, err
	}
	if ab.Samples < 1 || ab.SameNS < 0 || ab.CrossNS < 0 || ab.Procs[0] == "" || ab.Procs[1] == "" {
		return runtime.HandOffProbe{}, fmt.Errorf("agent: handoff: the agent answered an empty probe (%d samples between %q and %q)", ab.Samples, ab.Procs[0], ab.Procs[1])
	}
	if ab.SleepStartNS < 0 || ab.PollStartNS < 0 || ab.SleepRequests < 0 || ab.PollRequests < 0 {
		return runtime.HandOffProbe{}, fmt.Errorf("agent: handoff: the agent answered a negative start delay or count (sleeping %dns over %d, polling %dns over %d)", ab.SleepStartNS, ab.SleepRequests, ab.PollStartNS, ab.PollRequests)
	}
	var curve cost.HandOffCurve
	for _, p := range ab.CrossAfter {
		curve = append(curve, cost.HandOffPoint{After: time.Duration(p.AfterNS), Gap: time.Duration(p.GapNS), Samples: p.Samples})
	}
	if err := curve.Validate(); err != nil {
		return runtime.HandOffProbe{}, fmt.Errorf("agent: handoff: the agent answered a bad %w", err)
	}
	starts := runtime.StartDelays{Sleep: time.Duration(ab.SleepStartNS), SleepRequests: ab.SleepRequests, Poll: time.Duration(ab.PollStartNS), PollRequests: ab.PollRequests}
	return runtime.HandOffProbe{Same: time.Duration(ab.SameNS), Cross: time.Duration(ab.CrossNS), Samples: ab.Samples, Procs: ab.Procs, Starts: starts, CrossAfter: curve}, nil
}
