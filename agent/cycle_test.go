package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/profile"
)

// cycleFake is a fakeDevice that times cycles too: step i takes (i+1) ms.
type cycleFake struct {
	*fakeDevice
	mu     sync.Mutex
	cycles []profile.CycleRequest
	err    error
}

func (c *cycleFake) MeasureCycle(_ context.Context, req profile.CycleRequest) ([]time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	c.cycles = append(c.cycles, req)
	out := make([]time.Duration, len(req.Steps))
	for i := range out {
		out[i] = time.Duration(i+1) * time.Millisecond
	}
	return out, nil
}

func tinyCycle(t testing.TB) profile.CycleRequest {
	a, b := tinyRequest(t, "cpu-prime"), tinyRequest(t, "cpu-perf")
	return profile.CycleRequest{Warmup: 1, Cycles: 3, Period: 50 * time.Millisecond, Steps: []profile.CycleStep{
		{Model: a.Model, Inputs: a.Inputs, Processor: a.Processor},
		{Model: b.Model, Inputs: b.Inputs, Processor: b.Processor},
	}}
}

// The client times a cycle through the agent: the device gets the steps
// as sent and the client one figure per step; the agent lists "cycle".
func TestCycle(t *testing.T) {
	dev := &cycleFake{fakeDevice: newFake(t)}
	ts, _ := startAgent(t, dev, Options{})
	c := NewClient(ts.URL, testToken)
	ctx := context.Background()
	if _, err := c.Info(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CycleField, profile.ArrivalsField} {
		if takes, known := c.Takes(f); !takes || !known {
			t.Errorf("Takes(%s) = %v, %v on a device that times cycles", f, takes, known)
		}
	}
	req := tinyCycle(t)
	req.Order = []profile.CycleRun{{Step: 1}, {Step: 0, At: 10 * time.Millisecond}, {Step: 1, At: 40 * time.Millisecond}}
	meds, err := c.MeasureCycle(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(meds) != 2 || meds[0] != time.Millisecond || meds[1] != 2*time.Millisecond {
		t.Errorf("figures %v", meds)
	}
	if len(dev.cycles) != 1 || dev.cycles[0].Cycles != 3 || dev.cycles[0].Period != 50*time.Millisecond || dev.cycles[0].Steps[1].Processor != "cpu-perf" ||
		!slices.Equal(dev.cycles[0].Order, req.Order) {
		t.Errorf("the device got %+v", dev.cycles)
	}
	// The device's failure is the model's (a 422 the profiler notes).
	dev.err = errors.New("step 1 on cpu-perf: boom")
	_, err = c.MeasureCycle(ctx, tinyCycle(t))
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusUnprocessableEntity || !se.ModelFailed() || !strings.Contains(se.Message, "boom") {
		t.Errorf("failing cycle: %v", err)
	}
}

// A device that cannot time cycles: the agent does not list the field and
// answers 404, which the client reports as profile.ErrNoCycles.
func TestCycleNotServed(t *testing.T) {
	ts, _ := startAgent(t, newFake(t), Options{})
	c := NewClient(ts.URL, testToken)
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	if takes, known := c.Takes(CycleField); takes || !known {
		t.Errorf("Takes(cycle) = %v, %v; want false, true", takes, known)
	}
	if _, err := c.MeasureCycle(context.Background(), tinyCycle(t)); !errors.Is(err, profile.ErrNoCycles) {
		t.Errorf("cycle on a device without them: %v, want ErrNoCycles", err)
	}
}

// Malformed cycles are one-line 4xx answers naming the step, and reach
// no device.
func TestCycleBadRequests(t *testing.T) {
	dev := &cycleFake{fakeDevice: newFake(t)}
	ts, _ := startAgent(t, dev, Options{MaxReps: 50, MaxWarmup: 5})
	body := func(fn func(b *CycleBody)) []byte {
		b := cycleBodyOf(tinyCycle(t))
		fn(&b)
		out, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		body   []byte
		status int
		want   string
	}{
		{"not JSON", []byte("{"), http.StatusBadRequest, "not a cycle request"},
		{"unknown field", []byte(`{"steps":[],"cycles":1,"teleport":1}`), http.StatusBadRequest, "unknown field"},
		{"no steps", body(func(b *CycleBody) { b.Steps = nil }), http.StatusUnprocessableEntity, "no steps"},
		{"too many cycles", body(func(b *CycleBody) { b.Cycles = 51 }), http.StatusUnprocessableEntity, "cycles 51: want 1 to 50"},
		{"no cycles", body(func(b *CycleBody) { b.Cycles = 0 }), http.StatusUnprocessableEntity, "cycles 0"},
		{"too much warm-up", body(func(b *CycleBody) { b.Warmup = 6 }), http.StatusUnprocessableEntity, "warmup 6"},
		{"period too long", body(func(b *CycleBody) { b.PeriodNS = int64(time.Minute) }), http.StatusUnprocessableEntity, "period 1m0s: want 0 to 10s"},
		{"unknown processor", body(func(b *CycleBody) { b.Steps[1].Processor = "tpu" }), http.StatusUnprocessableEntity, `steps[1]: unknown processor "tpu"`},
		{"not a model", body(func(b *CycleBody) { b.Steps[0].Model = []byte("nope") }), http.StatusUnprocessableEntity, "steps[0]: model is not ONNX"},
		{"bad dtype", body(func(b *CycleBody) { b.Steps[1].Inputs[0].DType = "float99" }), http.StatusUnprocessableEntity, "steps[1]: input"},
		{"wrong input", body(func(b *CycleBody) { b.Steps[0].Inputs[0].Name = "y" }), http.StatusUnprocessableEntity, "steps[0]:"},
		{"order of an unknown step", body(func(b *CycleBody) { b.Order = []CycleRunBody{{Step: 0}, {Step: 1}, {Step: 2}} }), http.StatusUnprocessableEntity, "order[2]: step 2: want 0 to 1"},
		{"order going back", body(func(b *CycleBody) { b.Order = []CycleRunBody{{Step: 0, AtNS: 2e7}, {Step: 1, AtNS: 1e7}} }), http.StatusUnprocessableEntity, "order[1]: at 10ms is before"},
		{"order leaving a step out", body(func(b *CycleBody) { b.Order = []CycleRunBody{{Step: 1}} }), http.StatusUnprocessableEntity, "step 0 never runs"},
	} {
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/v1/cycle", bytes.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testToken)
		status, eb := send(t, req)
		if status != tc.status || !strings.Contains(eb.Error, tc.want) || strings.Contains(eb.Error, "\n") {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, status, eb.Error, tc.status, tc.want)
		}
	}
	if len(dev.cycles) != 0 {
		t.Errorf("%d malformed cycles reached the device", len(dev.cycles))
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/v1/cycle", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if status, _ := send(t, req); status != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/cycle: %d", status)
	}
	req, _ = http.NewRequest(http.MethodPost, ts.URL+"/v1/cycle", bytes.NewReader(body(func(*CycleBody) {})))
	if status, _ := send(t, req); status != http.StatusUnauthorized {
		t.Errorf("POST /v1/cycle without a token: %d", status)
	}
}

// FuzzCycle feeds arbitrary bodies to /v1/cycle: every answer is a JSON
// status of the protocol, never a panic or a 500, and only well-formed
// cycles reach the device.
func FuzzCycle(f *testing.F) {
	valid, err := json.Marshal(cycleBodyOf(tinyCycle(f)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"steps":[{"model":"","inputs":[{"name":"x","dtype":"float32","shape":[-1]}],"processor":"cpu-prime"}],"cycles":1}`))
	f.Add([]byte(`{"steps":null,"cycles":-1,"warmup":99999}`))
	f.Add([]byte("\x00\xff{"))
	ordered := tinyCycle(f)
	ordered.Order = []profile.CycleRun{{Step: 1}, {Step: 0, At: 10 * time.Millisecond}, {Step: 1, At: 40 * time.Millisecond}}
	if valid, err = json.Marshal(cycleBodyOf(ordered)); err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	pl := phonePlatform(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		dev := &cycleFake{fakeDevice: &fakeDevice{pl: pl}}
		s := NewServer(dev, testToken, Options{MaxUpload: 1 << 16, MaxReps: 50, MaxWarmup: 5})
		fuzzPost(t, s, "/v1/cycle", raw, "\n")
		for _, c := range dev.cycles {
			if c.Period < 0 || c.Period > profile.MaxCyclePeriod {
				t.Fatalf("a cycle with period %v reached the device", c.Period)
			}
			if c.Cycles < 1 || c.Cycles > 50 || c.Warmup < 0 || c.Warmup > 5 || len(c.Steps) == 0 {
				t.Fatalf("a malformed cycle reached the device: %+v", c)
			}
			for _, st := range c.Steps {
				if len(st.Model) == 0 || st.Processor == "" {
					t.Fatalf("a malformed step reached the device: %+v", st)
				}
			}
			if c.Validate() != nil {
				t.Fatalf("a cycle that does not validate reached the device: %v", c.Validate())
			}
		}
	})
}
