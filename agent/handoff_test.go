package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/runtime"
)

// fakeProber records the probes asked of it and answers a fixed one (or
// err); entered and gate, when set, work as fakeDevice's.
type fakeProber struct {
	mu      sync.Mutex
	opts    []HandOffOptions
	err     error
	entered chan struct{}
	gate    chan struct{}
}

func (p *fakeProber) ProbeHandOff(ctx context.Context, opt HandOffOptions) (runtime.HandOffProbe, error) {
	p.mu.Lock()
	p.opts = append(p.opts, opt)
	err, entered, gate := p.err, p.entered, p.gate
	p.mu.Unlock()
	if err := passGate(ctx, entered, gate); err != nil {
		return runtime.HandOffProbe{}, err
	}
	if err != nil {
		return runtime.HandOffProbe{}, err
	}
	procs := [2]string{"cpu-prime", "cpu-perf"}
	if opt.Procs != nil {
		procs = [2]string{opt.Procs[0], opt.Procs[1]}
	}
	same := 5 * time.Microsecond
	if opt.NoPin {
		same = 7 * time.Microsecond
	}
	return runtime.HandOffProbe{Same: same, Cross: 71 * time.Microsecond, Samples: 42, Procs: procs,
		Starts:     runtime.StartDelays{Sleep: 120 * time.Microsecond, SleepRequests: 60, Poll: 300 * time.Nanosecond, PollRequests: 90},
		CrossAfter: fakeCurve}, nil
}

// fakeCurve is fakeProber's hand-off curve.
var fakeCurve = cost.HandOffCurve{{After: 90 * time.Microsecond, Gap: 50 * time.Microsecond, Samples: 30},
	{After: 1200 * time.Microsecond, Gap: 110 * time.Microsecond, Samples: 25}}

// badCurveProber answers fakeProber's probe with a curve out of order.
type badCurveProber struct{ fakeProber }

func (p *badCurveProber) ProbeHandOff(ctx context.Context, opt HandOffOptions) (runtime.HandOffProbe, error) {
	pr, err := p.fakeProber.ProbeHandOff(ctx, opt)
	pr.CrossAfter = cost.HandOffCurve{fakeCurve[1], fakeCurve[0]}
	return pr, err
}

func (p *fakeProber) calls() []HandOffOptions {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]HandOffOptions(nil), p.opts...)
}

// TestHandOffFake probes through the client and the agent's handler: the
// options reach the prober, its figures come back, and a device without
// two processors to hand off between is runtime.ErrNoProbePair on the
// client's side.
func TestHandOffFake(t *testing.T) {
	pr := &fakeProber{}
	ts, _ := startAgent(t, newFake(t), Options{Prober: pr})
	c := NewClient(ts.URL, testToken)
	ctx := context.Background()

	got, err := c.HandOff(ctx, HandOffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := runtime.HandOffProbe{Same: 5 * time.Microsecond, Cross: 71 * time.Microsecond, Samples: 42, Procs: [2]string{"cpu-prime", "cpu-perf"},
		Starts:     runtime.StartDelays{Sleep: 120 * time.Microsecond, SleepRequests: 60, Poll: 300 * time.Nanosecond, PollRequests: 90},
		CrossAfter: fakeCurve}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("probe = %+v, want %+v", got, want)
	}
	// A curve out of order from an agent is refused by the client.
	bts, _ := startAgent(t, newFake(t), Options{Prober: &badCurveProber{}})
	if _, err := NewClient(bts.URL, testToken).HandOff(ctx, HandOffOptions{}); err == nil || !strings.Contains(err.Error(), "hand-off curve point 1") {
		t.Errorf("a curve out of order: %v, want the client to refuse it", err)
	}
	got, err = c.HandOff(ctx, HandOffOptions{NoPin: true, Duration: 250 * time.Millisecond, Procs: []string{"cpu-eff", "cpu-prime"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Same != 7*time.Microsecond || got.Procs != [2]string{"cpu-eff", "cpu-prime"} {
		t.Errorf("unpinned probe between given processors = %+v", got)
	}
	calls := pr.calls()
	if len(calls) != 2 || calls[0].NoPin || calls[0].Duration != 0 || calls[0].Procs != nil ||
		!calls[1].NoPin || calls[1].Duration != 250*time.Millisecond || fmt.Sprint(calls[1].Procs) != "[cpu-eff cpu-prime]" {
		t.Errorf("the prober was asked %+v", calls)
	}

	// The prober's failure is a clear error, no_probe_pair when it is the
	// lack of two processors, and the agent keeps serving.
	pr.err = errors.New("runtime: hand-off probe: the run timed no hand-off (0 requests completed)")
	_, err = c.HandOff(ctx, HandOffOptions{})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != CodeMeasureFailed || !strings.Contains(err.Error(), "timed no hand-off") || errors.Is(err, runtime.ErrNoProbePair) {
		t.Errorf("failing probe: %v", err)
	}
	pr.err = fmt.Errorf("runtime: hand-off probe: platform x: %w", runtime.ErrNoProbePair)
	if _, err := c.HandOff(ctx, HandOffOptions{}); !errors.Is(err, runtime.ErrNoProbePair) || !errors.As(err, &se) || se.Status != 422 {
		t.Errorf("probe without a pair: %v, want a 422 that is runtime.ErrNoProbePair", err)
	}

	// A device with one processor: refused before the prober is asked.
	one, err := hw.Host(hw.HostCores()[:1])
	if err != nil {
		t.Fatal(err)
	}
	pr1 := &fakeProber{}
	ts1, _ := startAgent(t, &fakeDevice{pl: one}, Options{Prober: pr1})
	_, err = NewClient(ts1.URL, testToken).HandOff(ctx, HandOffOptions{})
	if !errors.Is(err, runtime.ErrNoProbePair) || !strings.Contains(err.Error(), "422") {
		t.Errorf("one-processor device: %v, want a 422 that is runtime.ErrNoProbePair", err)
	}
	if n := len(pr1.calls()); n != 0 {
		t.Errorf("the prober was asked %d times on a one-processor device", n)
	}

	// An agent without a prober says so (404), as one of an older
	// inlay would; inlay profile goes on without the hand-off.
	plain, _ := startAgent(t, newFake(t), Options{})
	_, err = NewClient(plain.URL, testToken).HandOff(ctx, HandOffOptions{})
	if !errors.As(err, &se) || se.Status != http.StatusNotFound || se.Code != CodeNotFound || !strings.Contains(err.Error(), "does not probe hand-offs") {
		t.Errorf("agent without a prober: %v", err)
	}
}

func TestHandOffBadRequests(t *testing.T) {
	pr := &fakeProber{}
	ts, _ := startAgent(t, newFake(t), Options{Prober: pr, MaxRunDuration: time.Minute, MaxUpload: 1 << 10})
	cases := []struct {
		name, method, ctype, body string
		status                    int
		code, text                string
	}{
		{"not JSON", "POST", "application/json", "{", 400, CodeBadRequest, "not a hand-off request"},
		{"two values", "POST", "application/json", "{} {}", 400, CodeBadRequest, "more than one JSON value"},
		{"unknown field", "POST", "application/json", `{"pinned": true}`, 400, CodeBadRequest, "unknown field"},
		{"wrong type", "POST", "application/json", `{"procs": "cpu-prime"}`, 400, CodeBadRequest, "not a hand-off request"},
		{"negative duration", "POST", "", `{"duration_ms": -1}`, 422, CodeInvalid, "duration"},
		{"duration too long", "POST", "", `{"duration_ms": 60001}`, 422, CodeInvalid, "duration"},
		{"duration overflows", "POST", "", `{"duration_ms": 1e300}`, 422, CodeInvalid, "duration"},
		{"one processor", "POST", "", `{"procs": ["cpu-prime"]}`, 422, CodeInvalid, "want two"},
		{"three processors", "POST", "", `{"procs": ["cpu-prime", "cpu-perf", "cpu-eff"]}`, 422, CodeInvalid, "want two"},
		{"same processor twice", "POST", "", `{"procs": ["cpu-prime", "cpu-prime"]}`, 422, CodeInvalid, "given twice"},
		{"unknown processor", "POST", "", `{"procs": ["cpu-prime", "tpu"]}`, 422, CodeInvalid, `unknown processor "tpu"`},
		{"processor without ort-cpu", "POST", "", `{"procs": ["cpu-prime", "npu"]}`, 422, CodeInvalid, "does not run ort-cpu"},
		{"wrong content type", "POST", "text/plain", `{}`, 415, CodeUnsupportedMedia, "application/json"},
		{"too large", "POST", "", `{"procs": ["` + strings.Repeat("x", 2000) + `"]}`, 413, CodeTooLarge, "limit"},
		{"GET", "GET", "", "", 405, CodeMethodNotAllowed, "POST"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.URL+"/v1/handoff", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+testToken)
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			status, eb := send(t, req)
			if status != tc.status || eb.Code != tc.code || !strings.Contains(eb.Error, tc.text) || !strings.HasPrefix(eb.Error, "agent: ") {
				t.Errorf("got %d %+v, want %d %s containing %q", status, eb, tc.status, tc.code, tc.text)
			}
		})
	}
	if n := len(pr.calls()); n != 0 {
		t.Errorf("bad requests reached the prober %d times", n)
	}
	// Without the token, nothing is read.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/handoff", strings.NewReader("{}"))
	if status, eb := send(t, req); status != http.StatusUnauthorized || eb.Code != CodeUnauthorized {
		t.Errorf("no token: %d %+v", status, eb)
	}
}

// staysOut fails the test with msg when something enters within 50 ms: a
// request queued behind the one on the device must not reach it.
func staysOut(t *testing.T, entered <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-entered:
		t.Fatal(msg)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestHandOffSerialised checks that a probe waits for the measurement on
// the device, as runs do, and holds the device in turn.
func TestHandOffSerialised(t *testing.T) {
	dev := newFake(t)
	dev.gate = make(chan struct{})
	dev.entered = make(chan struct{}, 4)
	pr := &fakeProber{gate: make(chan struct{}), entered: make(chan struct{}, 4)}
	ts, s := startAgent(t, dev, Options{Prober: pr})
	c := NewClient(ts.URL, testToken)

	measured := make(chan error, 1)
	go func() { _, err := c.Measure(context.Background(), tinyRequest(t, "cpu-prime")); measured <- err }()
	<-dev.entered
	probed := make(chan error, 1)
	go func() { _, err := c.HandOff(context.Background(), HandOffOptions{}); probed <- err }()
	waitFor(t, "probe queued", func() bool { return s.waiting.Load() == 2 })
	staysOut(t, pr.entered, "the probe began while a measurement was on the device")
	dev.gate <- struct{}{}
	if err := <-measured; err != nil {
		t.Fatal(err)
	}
	<-pr.entered
	// Now the probe holds the device: a measurement waits for it.
	again := make(chan error, 1)
	go func() { _, err := c.Measure(context.Background(), tinyRequest(t, "cpu-prime")); again <- err }()
	waitFor(t, "measurement queued", func() bool { return s.waiting.Load() == 2 })
	staysOut(t, dev.entered, "a measurement began while the probe held the device")
	pr.gate <- struct{}{}
	if err := <-probed; err != nil {
		t.Fatal(err)
	}
	<-dev.entered
	dev.gate <- struct{}{}
	if err := <-again; err != nil {
		t.Fatal(err)
	}
}

// TestHandOffLocal probes this machine's runtime through the agent, as
// inlay profile --agent does on a remote device: both kinds of hand-off,
// pinned and unpinned, between the host platform's first two processors.
func TestHandOffLocal(t *testing.T) {
	lib := assets.Require(t, assets.ORTLibrary())
	pl := hwtest.HostPair(t)
	dev, err := profile.NewLocal(lib, pl)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := startAgent(t, dev, Options{Prober: &LocalProber{Library: lib, Platform: pl}})
	c := NewClient(ts.URL, testToken)
	for _, noPin := range []bool{false, true} {
		pr, err := c.HandOff(context.Background(), HandOffOptions{NoPin: noPin, Duration: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if pr.Samples < 10 || pr.Same <= 0 || pr.Cross <= 0 || pr.Procs != [2]string{pl.Processors[0].Name, pl.Processors[1].Name} {
			t.Errorf("unpinned %v: probe %+v: want at least 10 samples of positive delays between %s and %s", noPin, pr, pl.Processors[0].Name, pl.Processors[1].Name)
		}
		t.Logf("unpinned %v: same %v, cross %v over %d", noPin, pr.Same, pr.Cross, pr.Samples)
	}
}
