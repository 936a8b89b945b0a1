package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/inlay-dev/inlay/profile"
)

// cycle serves POST /v1/cycle: it times a plan's subgraphs in the plan's
// cycle (profile.CycleMeasurer) once the device is free, after checking
// every step as /v1/measure checks its model. A device that cannot time
// cycles answers 404, as an agent before 1.2.0 does.
func (s *Server) cycle(w http.ResponseWriter, r *http.Request) {
	cm, ok := s.dev.(profile.CycleMeasurer)
	if !ok {
		writeError(w, http.StatusNotFound, CodeNotFound, "agent: cycle: this device does not time plans in their cycle")
		return
	}
	var cb CycleBody
	release, ok := s.decodePost(w, r, "cycle", "cycle request", &cb)
	if !ok {
		return
	}
	defer release()
	req, err := cb.request()
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalid, "agent: cycle: "+err.Error())
		return
	}
	di, err := s.dev.Info(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "agent: cycle: device info: "+oneLine(err.Error()))
		return
	}
	if err := s.checkCycle(req, di); err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalid, "agent: cycle: "+err.Error())
		return
	}
	free, taken := s.takeDevice(r.Context())
	if !taken {
		writeError(w, http.StatusServiceUnavailable, CodeBusy, "agent: cycle: cancelled while waiting for the device")
		return
	}
	meds, err := cm.MeasureCycle(r.Context(), req)
	free()
	switch {
	case err != nil && r.Context().Err() != nil:
		writeError(w, http.StatusServiceUnavailable, CodeBusy, "agent: cycle: cancelled: "+oneLine(err.Error()))
	case err != nil:
		writeError(w, http.StatusUnprocessableEntity, CodeMeasureFailed, "agent: cycle: "+oneLine(err.Error()))
	default:
		tb := CycleTimingBody{MediansNS: make([]int64, len(meds)), Cycles: req.Cycles}
		for i, d := range meds {
			tb.MediansNS[i] = int64(d)
		}
		writeJSON(w, http.StatusOK, tb)
	}
}

// checkCycle checks the rounds against the agent's limits and each step
// as a one-run measure request (its model, inputs and processor).
func (s *Server) checkCycle(req profile.CycleRequest, di profile.DeviceInfo) error {
	if len(req.Steps) == 0 {
		return fmt.Errorf("no steps")
	}
	if len(req.Steps) > profile.MaxCycleSteps {
		return fmt.Errorf("%d steps: want at most %d", len(req.Steps), profile.MaxCycleSteps)
	}
	if req.Warmup < 0 || req.Warmup > s.opt.MaxWarmup {
		return fmt.Errorf("warmup %d: want 0 to %d", req.Warmup, s.opt.MaxWarmup)
	}
	if req.Cycles < 1 || req.Cycles > s.opt.MaxReps {
		return fmt.Errorf("cycles %d: want 1 to %d", req.Cycles, s.opt.MaxReps)
	}
	if req.Period < 0 || req.Period > profile.MaxCyclePeriod {
		return fmt.Errorf("period %v: want 0 to %v", req.Period, profile.MaxCyclePeriod)
	}
	for i, st := range req.Steps {
		mp, err := decodeModel(st.Model)
		if err != nil {
			return fmt.Errorf("steps[%d]: %w", i, err)
		}
		mr := profile.MeasureRequest{Model: st.Model, Inputs: st.Inputs, Processor: st.Processor, Backend: st.Backend, DType: st.DType, Reps: 1}
		if err := s.check(mr, mp, di.Platform); err != nil {
			return fmt.Errorf("steps[%d]: %w", i, err)
		}
	}
	return req.Validate()
}

// MeasureCycle times req on the agent's device (POST /v1/cycle; agents
// from 1.2.0). Errors are as Measure's; an agent without the endpoint
// answers a *StatusError with Code CodeNotFound.
func (c *Client) MeasureCycle(ctx context.Context, req profile.CycleRequest) ([]time.Duration, error) {
	body, err := json.Marshal(cycleBodyOf(req))
	if err != nil {
		return nil, fmt.Errorf("agent: cycle: encode request: %w", err)
	}
	var tb CycleTimingBody
	if err := c.do(ctx, "cycle", http.MethodPost, "/v1/cycle", body, &tb); err != nil {
		var se *StatusError
		if errors.As(err, &se) && se.Status == http.StatusNotFound {
			return nil, fmt.Errorf("%w (agent %s)", profile.ErrNoCycles, c.base)
		}
		return nil, err
	}
	if len(tb.MediansNS) != len(req.Steps) {
		return nil, fmt.Errorf("agent: cycle: the agent answered %d figures for %d steps", len(tb.MediansNS), len(req.Steps))
	}
	out := make([]time.Duration, len(tb.MediansNS))
	for i, d := range tb.MediansNS {
		if d <= 0 {
			return nil, fmt.Errorf("agent: cycle: the agent answered a non-positive figure for step %d", i)
		}
		out[i] = time.Duration(d)
	}
	return out, nil
}

var _ profile.CycleMeasurer = (*Client)(nil)
