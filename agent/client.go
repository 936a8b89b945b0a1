package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
)

// Client talks to an agent; it implements profile.Device, so that the
// profiler measures on the agent's device as it does on this machine.
// It is safe for concurrent use (the agent serialises the measurements).
type Client struct {
	base  string
	token string
	// HTTP is the client requests go through; http.DefaultClient's
	// transport without an overall timeout by default, since a measurement
	// takes as long as its repetitions do: bound calls with their context.
	HTTP *http.Client

	mu sync.Mutex
	// fields are the agent's Info.MeasureFields from the last Info; known
	// when it listed any.
	fields      []string
	fieldsKnown bool
}

var (
	_ profile.Device     = (*Client)(nil)
	_ profile.FieldTaker = (*Client)(nil)
)

// NewClient returns a client of the agent at baseURL ("http://host:port",
// with or without a trailing slash) that presents token. A malformed URL
// is reported by the first call.
func NewClient(baseURL, token string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, HTTP: &http.Client{}}
}

// StatusError is an error answer of the agent.
type StatusError struct {
	// Op is the operation: "info", "measure", "run" or "handoff".
	Op string
	// Status is the HTTP status, Code the agent's error code (see the
	// package documentation) and Message its one-line explanation.
	Status  int
	Code    string
	Message string
}

func (e *StatusError) Error() string {
	msg := strings.TrimPrefix(e.Message, "agent: ")
	msg = strings.TrimPrefix(msg, e.Op+": ")
	return fmt.Sprintf("agent: %s: %d %s: %s", e.Op, e.Status, http.StatusText(e.Status), msg)
}

// Unwrap is runtime.ErrNoProbePair for the answer no_probe_pair (the
// device has no two processors to probe a hand-off between), else nil.
func (e *StatusError) Unwrap() error {
	if e.Code == CodeNoProbePair {
		return runtime.ErrNoProbePair
	}
	return nil
}

// ModelFailed reports whether the agent answered that the device could not
// run the model (code measure_failed): the subgraph's fault, not the
// agent's or the link's.
func (e *StatusError) ModelFailed() bool { return e.Code == CodeMeasureFailed }

// AgentInfo fetches GET /v1/info.
func (c *Client) AgentInfo(ctx context.Context) (Info, error) {
	var info Info
	err := c.do(ctx, "info", http.MethodGet, "/v1/info", nil, &info)
	return info, err
}

// Info returns the agent's device: its name, ONNX Runtime version and
// platform (parsed from the YAML the agent sends; its Source is
// "agent:URL").
func (c *Client) Info(ctx context.Context) (profile.DeviceInfo, error) {
	info, err := c.AgentInfo(ctx)
	if err != nil {
		return profile.DeviceInfo{}, err
	}
	if info.Protocol != ProtocolVersion {
		return profile.DeviceInfo{}, fmt.Errorf("agent: info: the agent at %s speaks protocol %d (version %s), this inlay speaks %d", c.base, info.Protocol, info.AgentVersion, ProtocolVersion)
	}
	pl, err := hw.Parse("agent:"+c.base, []byte(info.PlatformYAML))
	if err != nil {
		return profile.DeviceInfo{}, fmt.Errorf("agent: info: platform: %w", err)
	}
	c.mu.Lock()
	c.fields, c.fieldsKnown = info.MeasureFields, len(info.MeasureFields) > 0
	c.mu.Unlock()
	return profile.DeviceInfo{Name: info.Name, ORTVersion: info.ORTVersion, Platform: pl}, nil
}

// Takes says whether the agent takes the optional measure field, as its
// last Info listed; known is false before Info, and for an agent older
// than the list (before 1.1.0).
func (c *Client) Takes(field string) (takes, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.fields, field), c.fieldsKnown
}

// Measure times req on the agent's device. An error answer of the agent is
// a *StatusError, a failure to reach it or read its answer a *LinkError;
// both have ModelFailed, true only when the device could not run the model
// (see IsModelFailure).
func (c *Client) Measure(ctx context.Context, req profile.MeasureRequest) (profile.Timing, error) {
	body, err := json.Marshal(bodyOf(req))
	if err != nil {
		return profile.Timing{}, fmt.Errorf("agent: measure: encode request: %w", err)
	}
	var tb TimingBody
	if err := c.do(ctx, "measure", http.MethodPost, "/v1/measure", body, &tb); err != nil {
		return profile.Timing{}, err
	}
	if tb.Reps < 1 || tb.MedianNS < 0 {
		return profile.Timing{}, fmt.Errorf("agent: measure: the agent answered an empty timing (%d reps)", tb.Reps)
	}
	return tb.timing(), nil
}

// maxAnswer bounds what the client reads of an answer.
const maxAnswer = 16 << 20

func (c *Client) do(ctx context.Context, op, method, path string, body []byte, out any) error {
	u, err := url.Parse(c.base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("agent: %s: bad agent URL %q (want http://HOST:PORT)", op, c.base)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("agent: %s: %w", op, err)
	}
	hreq.Header.Set("Authorization", "Bearer "+c.token)
	hreq.Header.Set("Accept", "application/json")
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return &LinkError{Op: op, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &LinkError{Op: op, Err: fmt.Errorf("read answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		var eb ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error == "" {
			eb = ErrorBody{Error: oneLine(string(data))}
		}
		return &StatusError{Op: op, Status: resp.StatusCode, Code: eb.Code, Message: eb.Error}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &LinkError{Op: op, Err: fmt.Errorf("answer is not JSON (is %s an inlay agent?): %w", c.base, err)}
	}
	return nil
}

// LinkError is a failure to reach the agent or to read its answer: the
// link's fault or the agent's, never the model's.
type LinkError struct {
	Op  string
	Err error
}

func (e *LinkError) Error() string { return fmt.Sprintf("agent: %s: %v", e.Op, e.Err) }

func (e *LinkError) Unwrap() error { return e.Err }

// ModelFailed is false: the model never reached the device, or its answer
// was lost.
func (e *LinkError) ModelFailed() bool { return false }

// IsModelFailure reports whether err is the agent saying that the device
// could not run the model (see StatusError.ModelFailed).
func IsModelFailure(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.ModelFailed()
}
