package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/onnx/onnxpb"
	"github.com/inlay-dev/inlay/onnx/onnxtest"
	"github.com/inlay-dev/inlay/profile"
)

const testToken = "s3cret-token"

// fakeDevice is a profile.Device that times nothing: it records the
// requests, counts how many run at once, and can block, fail or panic.
type fakeDevice struct {
	pl *hw.Platform

	mu    sync.Mutex
	reqs  []profile.MeasureRequest
	err   error
	panic string
	// gate, when not nil, blocks each Measure until a value arrives or the
	// request's context ends; entered receives one value per Measure begun.
	gate    chan struct{}
	entered chan struct{}

	inflight, maxInflight atomic.Int64
}

var _ profile.Device = (*fakeDevice)(nil)

func newFake(t *testing.T) *fakeDevice {
	t.Helper()
	return &fakeDevice{pl: phonePlatform(t)}
}

func phonePlatform(t testing.TB) *hw.Platform {
	t.Helper()
	pl := hwtest.Preset(t, "phone")
	return pl
}

func (f *fakeDevice) Info(ctx context.Context) (profile.DeviceInfo, error) {
	return profile.DeviceInfo{Name: "fake-phone", ORTVersion: "9.9.9", Platform: f.pl}, nil
}

func (f *fakeDevice) Measure(ctx context.Context, req profile.MeasureRequest) (profile.Timing, error) {
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxInflight.Load()
		if n <= m || f.maxInflight.CompareAndSwap(m, n) {
			break
		}
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	err, pv, gate, entered := f.err, f.panic, f.gate, f.entered
	f.mu.Unlock()
	if err := passGate(ctx, entered, gate); err != nil {
		return profile.Timing{}, err
	}
	if pv != "" {
		panic(pv)
	}
	if err != nil {
		return profile.Timing{}, err
	}
	tm := profile.Timing{
		Median: time.Duration(req.Reps) * time.Millisecond, P90: 2 * time.Millisecond,
		Min: time.Millisecond / 2, Max: 3 * time.Millisecond, Stddev: 100 * time.Microsecond, Reps: req.Reps,
	}
	if req.Idle > 0 {
		tm.Idle, tm.IdleReps = 8*time.Millisecond, req.Idle
	}
	if req.Cold > 0 {
		tm.Cold, tm.ColdReps = 7*time.Millisecond, req.Cold
	}
	return tm, nil
}

func (f *fakeDevice) set(fn func(f *fakeDevice)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// tinyModel is y = Relu(x + w), x float32 [n, 4] (n symbolic), w a 1x4
// initializer.
func tinyModel(t testing.TB) []byte {
	t.Helper()
	return tinyModelTyped(t, graph.Float32)
}

// tinyModelTyped is tinyModel with x and y of element type dt (w stays
// float32).
func tinyModelTyped(t testing.TB, dt graph.DType) []byte {
	t.Helper()
	w := &onnxpb.TensorProto{
		Name: proto.String("w"), Dims: []int64{1, 4}, DataType: proto.Int32(int32(graph.Float32)),
		FloatData: []float32{0.5, -0.5, 1, -1},
	}
	g := &onnxpb.GraphProto{
		Name:        proto.String("tiny"),
		Input:       []*onnxpb.ValueInfoProto{onnxtest.ValueInfo("x", dt, []int64{-1, 4})},
		Initializer: []*onnxpb.TensorProto{w},
		Node: []*onnxpb.NodeProto{
			{OpType: proto.String("Add"), Input: []string{"x", "w"}, Output: []string{"s"}},
			{OpType: proto.String("Relu"), Input: []string{"s"}, Output: []string{"y"}},
		},
		Output: []*onnxpb.ValueInfoProto{onnxtest.ValueInfo("y", dt, []int64{-1, 4})},
	}
	return onnxtest.Model(t, g)
}

func tinyRequest(t testing.TB, processor string) profile.MeasureRequest {
	return profile.MeasureRequest{
		Model:     tinyModel(t),
		Inputs:    []profile.TensorSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{2, 4}}},
		Processor: processor,
		Warmup:    2,
		Reps:      5,
	}
}

func startAgent(t *testing.T, dev profile.Device, opt Options) (*httptest.Server, *Server) {
	t.Helper()
	s := NewServer(dev, testToken, opt)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, s
}

// post sends a raw /v1/measure body with the right token.
func post(t *testing.T, url string, body []byte, contentType string) (int, ErrorBody) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/measure", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return send(t, req)
}

func send(t *testing.T, req *http.Request) (int, ErrorBody) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: content type %q, want application/json", req.Method, req.URL.Path, ct)
	}
	var eb ErrorBody
	if resp.StatusCode != http.StatusOK {
		if err := json.Unmarshal(data, &eb); err != nil || eb.Error == "" || eb.Code == "" {
			t.Errorf("%s %s: status %d with a body that is no JSON error: %q", req.Method, req.URL.Path, resp.StatusCode, data)
		}
		if strings.Contains(eb.Error, "\n") {
			t.Errorf("error %q is more than one line", eb.Error)
		}
	}
	return resp.StatusCode, eb
}

func TestInfo(t *testing.T) {
	dev := newFake(t)
	ts, _ := startAgent(t, dev, Options{MaxUpload: 1 << 20})
	c := NewClient(ts.URL+"/", testToken)
	info, err := c.AgentInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "fake-phone" || info.ORTVersion != "9.9.9" || info.AgentVersion != Version || info.Protocol != ProtocolVersion || info.MaxUploadBytes != 1<<20 {
		t.Errorf("info = %+v", info)
	}
	if len(info.Processors) != len(dev.pl.Processors) {
		t.Fatalf("%d processors advertised, want %d", len(info.Processors), len(dev.pl.Processors))
	}
	for i, p := range dev.pl.Processors {
		got := info.Processors[i]
		if got.Name != p.Name || got.Kind != p.Kind || strings.Join(got.Backends, ",") != strings.Join(p.Backends, ",") ||
			len(got.DTypes) != len(p.DTypes) || got.DTypes[0] != p.DTypes[0].DType.String() {
			t.Errorf("processor %d = %+v, want %s %s %v %v", i, got, p.Name, p.Kind, p.Backends, p.DTypes)
		}
	}
	di, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if di.Name != "fake-phone" || di.ORTVersion != "9.9.9" {
		t.Errorf("device info = %+v", di)
	}
	if got, want := strings.Join(di.Platform.Names(), ","), strings.Join(dev.pl.Names(), ","); got != want {
		t.Errorf("platform processors %s, want %s", got, want)
	}
	var a, b bytes.Buffer
	if err := hw.Encode(&a, dev.pl); err != nil {
		t.Fatal(err)
	}
	if err := hw.Encode(&b, di.Platform); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("platform does not round-trip:\n%s\nvs\n%s", a.String(), b.String())
	}
}

func TestMeasureFake(t *testing.T) {
	dev := newFake(t)
	ts, _ := startAgent(t, dev, Options{})
	c := NewClient(ts.URL, testToken)
	req := tinyRequest(t, "cpu-prime")
	req.Backend, req.DType = "xnnpack", "float16"
	tm, err := c.Measure(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := profile.Timing{Median: 5 * time.Millisecond, P90: 2 * time.Millisecond, Min: time.Millisecond / 2, Max: 3 * time.Millisecond, Stddev: 100 * time.Microsecond, Reps: 5}
	if !reflect.DeepEqual(tm, want) {
		t.Errorf("timing = %+v, want %+v", tm, want)
	}
	if len(dev.reqs) != 1 {
		t.Fatalf("device saw %d requests, want 1", len(dev.reqs))
	}
	got := dev.reqs[0]
	if !bytes.Equal(got.Model, req.Model) || got.Processor != "cpu-prime" || got.Backend != "xnnpack" || got.DType != "float16" ||
		got.Warmup != 2 || got.Reps != 5 || len(got.Inputs) != 1 || got.Inputs[0].Name != "x" ||
		got.Inputs[0].DType != graph.Float32 || got.Inputs[0].Shape.String() != req.Inputs[0].Shape.String() {
		t.Errorf("device got %+v, want %+v", got, req)
	}
	// Cold runs travel both ways; so do idle runs, asked for on top.
	for i, step := range []struct {
		what string
		n    int
		add  func() // asks for n runs and expects them back
		sent func(profile.MeasureRequest) int
	}{
		{"cold", 3, func() { req.Cold = 3; want.Cold, want.ColdReps = 7*time.Millisecond, 3 }, func(r profile.MeasureRequest) int { return r.Cold }},
		{"idle", 2, func() { req.Idle = 2; want.Idle, want.IdleReps = 8*time.Millisecond, 2 }, func(r profile.MeasureRequest) int { return r.Idle }},
	} {
		step.add()
		tm, err := c.Measure(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := step.sent(dev.reqs[i+1]); !reflect.DeepEqual(tm, want) || got != step.n {
			t.Errorf("with %s runs: timing = %+v, want %+v; device got %d %s runs", step.what, tm, want, got, step.what)
		}
	}
	// A kind is accepted as a processor name (the device resolves it to
	// that kind's fastest processor).
	if _, err := c.Measure(context.Background(), tinyRequest(t, "gpu")); err != nil {
		t.Errorf("processor given as a kind: %v", err)
	}
}

func TestAuth(t *testing.T) {
	dev := newFake(t)
	ts, _ := startAgent(t, dev, Options{})
	open := NewServer(dev, "", Options{})
	tsOpen := httptest.NewServer(open)
	defer tsOpen.Close()
	cases := []struct {
		name, url, path, auth string
	}{
		{"no header", ts.URL, "/v1/info", ""},
		{"wrong token", ts.URL, "/v1/info", "Bearer nope"},
		{"token prefix", ts.URL, "/v1/info", "Bearer " + testToken[:4]},
		{"token longer", ts.URL, "/v1/info", "Bearer " + testToken + "x"},
		{"basic scheme", ts.URL, "/v1/info", "Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+testToken))},
		{"bare token", ts.URL, "/v1/info", testToken},
		{"measure without token", ts.URL, "/v1/measure", ""},
		{"unknown path without token", ts.URL, "/v1/nothing", ""},
		{"agent without token refuses empty", tsOpen.URL, "/v1/info", "Bearer "},
		{"agent without token refuses any", tsOpen.URL, "/v1/info", "Bearer x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodGet
			var body io.Reader
			if tc.path == "/v1/measure" {
				method = http.MethodPost
				body = strings.NewReader("{}")
			}
			req, _ := http.NewRequest(method, tc.url+tc.path, body)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			status, eb := send(t, req)
			if status != http.StatusUnauthorized || eb.Code != CodeUnauthorized {
				t.Errorf("status %d %+v, want 401", status, eb)
			}
		})
	}
	if len(dev.reqs) != 0 {
		t.Errorf("unauthorised requests reached the device: %d", len(dev.reqs))
	}
	// The client reports a 401 as a StatusError.
	_, err := NewClient(ts.URL, "wrong").Info(context.Background())
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusUnauthorized {
		t.Errorf("client with a wrong token: %v", err)
	}
	// The scheme is case-insensitive.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/v1/info", nil)
	req.Header.Set("Authorization", "bearer "+testToken)
	if status, eb := send(t, req); status != http.StatusOK {
		t.Errorf("lower-case scheme: %d %+v", status, eb)
	}
}

func measureJSON(t *testing.T, fn func(b *MeasureBody)) []byte {
	t.Helper()
	b := bodyOf(tinyRequest(t, "cpu-prime"))
	if fn != nil {
		fn(&b)
	}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBadRequests(t *testing.T) {
	dev := newFake(t)
	const limit = 8 << 10
	ts, _ := startAgent(t, dev, Options{MaxUpload: limit, MaxReps: 100, MaxWarmup: 10})
	c := NewClient(ts.URL, testToken)
	garbage := bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 64)
	cases := []struct {
		name       string
		body       []byte
		ctype      string
		status     int
		code, text string
	}{
		{"garbage body", garbage, "application/json", 400, CodeBadRequest, "not a measure request"},
		{"empty body", nil, "", 400, CodeBadRequest, "not a measure request"},
		{"unknown field", []byte(`{"model":"AAAA","procesor":"cpu"}`), "", 400, CodeBadRequest, "unknown field"},
		{"two values", append(measureJSON(t, nil), []byte(" {}")...), "", 400, CodeBadRequest, "more than one"},
		{"model not base64", []byte(`{"model":"!!!"}`), "", 400, CodeBadRequest, "not a measure request"},
		{"no model", measureJSON(t, func(b *MeasureBody) { b.Model = nil }), "", 400, CodeBadRequest, "no model"},
		{"model not ONNX", measureJSON(t, func(b *MeasureBody) { b.Model = garbage }), "", 400, CodeBadRequest, "not ONNX"},
		{"model text", measureJSON(t, func(b *MeasureBody) { b.Model = []byte("hello, I am not a model") }), "", 400, CodeBadRequest, "not ONNX"},
		{"too large", measureJSON(t, func(b *MeasureBody) { b.Model = bytes.Repeat([]byte{1}, limit) }), "", 413, CodeTooLarge, "limit"},
		{"wrong content type", measureJSON(t, nil), "multipart/form-data; boundary=x", 415, CodeUnsupportedMedia, "application/json"},
		{"unknown processor", measureJSON(t, func(b *MeasureBody) { b.Processor = "tpu7" }), "", 422, CodeInvalid, `unknown processor "tpu7"`},
		{"no processor", measureJSON(t, func(b *MeasureBody) { b.Processor = "" }), "", 422, CodeInvalid, "no processor"},
		{"unknown backend", measureJSON(t, func(b *MeasureBody) { b.Backend = "cuda" }), "", 422, CodeInvalid, `no backend "cuda"`},
		{"unknown dtype", measureJSON(t, func(b *MeasureBody) { b.DType = "int4" }), "", 422, CodeInvalid, `does not compute in "int4"`},
		{"reps zero", measureJSON(t, func(b *MeasureBody) { b.Reps = 0 }), "", 422, CodeInvalid, "reps 0"},
		{"reps too many", measureJSON(t, func(b *MeasureBody) { b.Reps = 101 }), "", 422, CodeInvalid, "reps 101"},
		{"warmup negative", measureJSON(t, func(b *MeasureBody) { b.Warmup = -1 }), "", 422, CodeInvalid, "warmup -1"},
		{"cold runs negative", measureJSON(t, func(b *MeasureBody) { b.Cold = -1 }), "", 422, CodeInvalid, "cold runs -1"},
		{"cold runs too many", measureJSON(t, func(b *MeasureBody) { b.Cold = 101 }), "", 422, CodeInvalid, "cold runs 101"},
		{"idle runs negative", measureJSON(t, func(b *MeasureBody) { b.Idle = -1 }), "", 422, CodeInvalid, "idle runs -1"},
		{"idle runs too many", measureJSON(t, func(b *MeasureBody) { b.Idle = 101 }), "", 422, CodeInvalid, "idle runs 101"},
		{"negative dim", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].Shape = []int64{-2, 4} }), "", 422, CodeInvalid, "at least 1"},
		{"zero dim", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].Shape = []int64{0, 4} }), "", 422, CodeInvalid, "at least 1"},
		{"no shape", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].Shape = nil }), "", 422, CodeInvalid, "no shape"},
		{"wrong rank", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].Shape = []int64{2, 4, 1} }), "", 422, CodeInvalid, "rank 3"},
		{"dim disagrees", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].Shape = []int64{2, 5} }), "", 422, CodeInvalid, "dimension 1 is 4"},
		{"huge shape", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].Shape = []int64{1 << 40, 4} }), "", 422, CodeInvalid, "limit"},
		{"overflowing shape", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].Shape = []int64{1 << 62, 1 << 62} }), "", 422, CodeInvalid, "limit"},
		{"unknown dtype name", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].DType = "float33" }), "", 422, CodeInvalid, "float33"},
		{"wrong dtype", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].DType = "int64" }), "", 422, CodeInvalid, "declares float32"},
		{"wrong input name", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].Name = "z" }), "", 422, CodeInvalid, "not a graph input"},
		{"initializer as input", measureJSON(t, func(b *MeasureBody) { b.Inputs[0].Name = "w" }), "", 422, CodeInvalid, "not a graph input"},
		{"missing input", measureJSON(t, func(b *MeasureBody) { b.Inputs = nil }), "", 422, CodeInvalid, `"x" is not among`},
		{"input twice", measureJSON(t, func(b *MeasureBody) { b.Inputs = append(b.Inputs, b.Inputs[0]) }), "", 422, CodeInvalid, "twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, eb := post(t, ts.URL, tc.body, tc.ctype)
			if status != tc.status || eb.Code != tc.code || !strings.Contains(eb.Error, tc.text) {
				t.Errorf("got %d %+v, want %d %s containing %q", status, eb, tc.status, tc.code, tc.text)
			}
			// The agent keeps serving.
			if _, err := c.Measure(context.Background(), tinyRequest(t, "cpu-perf")); err != nil {
				t.Errorf("next request: %v", err)
			}
		})
	}
	for _, r := range dev.reqs {
		if r.Processor != "cpu-perf" {
			t.Errorf("a bad request reached the device: %+v", r)
		}
	}
}

func TestTooLargeChunked(t *testing.T) {
	// Without a Content-Length the limit still holds while reading.
	dev := newFake(t)
	ts, _ := startAgent(t, dev, Options{MaxUpload: 4 << 10})
	body := measureJSON(t, func(b *MeasureBody) { b.Model = bytes.Repeat([]byte{7}, 16<<10) })
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/measure", io.MultiReader(bytes.NewReader(body)))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+testToken)
	if status, eb := send(t, req); status != http.StatusRequestEntityTooLarge || eb.Code != CodeTooLarge {
		t.Errorf("chunked oversized upload: %d %+v", status, eb)
	}
}

func TestRouting(t *testing.T) {
	dev := newFake(t)
	ts, _ := startAgent(t, dev, Options{})
	cases := []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/v1/measure", 405, CodeMethodNotAllowed},
		{http.MethodPost, "/v1/info", 405, CodeMethodNotAllowed},
		{http.MethodGet, "/v2/info", 404, CodeNotFound},
		{http.MethodGet, "/", 404, CodeNotFound},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		if status, eb := send(t, req); status != tc.status || eb.Code != tc.code {
			t.Errorf("%s %s: %d %+v, want %d %s", tc.method, tc.path, status, eb, tc.status, tc.code)
		}
	}
}

func TestDeviceFailureAndPanic(t *testing.T) {
	dev := newFake(t)
	ts, _ := startAgent(t, dev, Options{})
	c := NewClient(ts.URL, testToken)

	dev.set(func(f *fakeDevice) {
		f.err = errors.New("profile: measure on cpu-prime: ort: new session: bad op\nstack line")
	})
	_, err := c.Measure(context.Background(), tinyRequest(t, "cpu-prime"))
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusUnprocessableEntity || !se.ModelFailed() || !IsModelFailure(err) ||
		!strings.Contains(err.Error(), "bad op") || strings.Contains(err.Error(), "stack line") {
		t.Errorf("device error: %v", err)
	}

	dev.set(func(f *fakeDevice) { f.err, f.panic = nil, "index out of range [3] with length 2\ngoroutine 7" })
	_, err = c.Measure(context.Background(), tinyRequest(t, "cpu-prime"))
	if !errors.As(err, &se) || se.Status != http.StatusInternalServerError || se.Code != CodeInternal ||
		!strings.Contains(se.Message, "index out of range") || strings.Contains(se.Message, "goroutine") || IsModelFailure(err) {
		t.Errorf("panic: %v", err)
	}

	// Still serving, and the device slot was released by the panic.
	dev.set(func(f *fakeDevice) { f.panic = "" })
	if _, err := c.Measure(context.Background(), tinyRequest(t, "cpu-prime")); err != nil {
		t.Errorf("after a panic: %v", err)
	}
}

// waitFor polls cond (a state reached by other goroutines) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: gave up", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestMeasurementsSerialised(t *testing.T) {
	dev := newFake(t)
	dev.gate = make(chan struct{})
	dev.entered = make(chan struct{}, 16)
	const n = 6
	ts, s := startAgent(t, dev, Options{MaxQueue: n})
	c := NewClient(ts.URL, testToken)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req := tinyRequest(t, "cpu-prime")
			req.Reps = i + 1
			tm, err := c.Measure(context.Background(), req)
			if err == nil && tm.Reps != i+1 {
				err = fmt.Errorf("request %d got the timing of another (%d reps)", i, tm.Reps)
			}
			errs <- err
		}(i)
	}
	for done := 0; done < n; done++ {
		<-dev.entered
		// Every request not yet done is at the agent: one on the device, the
		// rest queued behind it; none of them may have reached the device.
		waitFor(t, "all requests queued", func() bool { return s.waiting.Load() == int64(n-done) })
		if got := dev.inflight.Load(); got != 1 {
			t.Fatalf("%d measurements on the device at once", got)
		}
		select {
		case <-dev.entered:
			t.Fatal("a second measurement began while one was running")
		default:
		}
		dev.gate <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if m := dev.maxInflight.Load(); m != 1 {
		t.Errorf("at most %d measurements ran at once, want 1", m)
	}
}

func TestBusyAndCancelledWhileQueued(t *testing.T) {
	dev := newFake(t)
	dev.gate = make(chan struct{})
	dev.entered = make(chan struct{}, 4)
	ts, s := startAgent(t, dev, Options{MaxQueue: 1})
	c := NewClient(ts.URL, testToken)

	first := make(chan error, 1)
	go func() { _, err := c.Measure(context.Background(), tinyRequest(t, "cpu-prime")); first <- err }()
	<-dev.entered
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() { _, err := c.Measure(ctx, tinyRequest(t, "cpu-prime")); second <- err }()
	waitFor(t, "second request queued", func() bool { return s.waiting.Load() == 2 })

	// The queue (one waiting) is full: the third is refused.
	_, err := c.Measure(context.Background(), tinyRequest(t, "cpu-prime"))
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusServiceUnavailable || se.Code != CodeBusy {
		t.Errorf("third request: %v, want 503 busy", err)
	}

	// The second gives up while queued: it leaves the queue and never
	// reaches the device.
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v", err)
	}
	waitFor(t, "cancelled request gone", func() bool { return s.waiting.Load() == 1 })
	dev.gate <- struct{}{}
	if err := <-first; err != nil {
		t.Errorf("first request: %v", err)
	}
	if len(dev.reqs) != 1 {
		t.Errorf("device saw %d measurements, want 1", len(dev.reqs))
	}
}

func TestServeGracefulShutdown(t *testing.T) {
	dev, c, stop, served := serveGated(t, 50*time.Millisecond)
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A measurement that outlives the grace period is cancelled, and its
	// client hears why.
	measured := measureThenStop(t, dev, c, stop)
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if err := <-measured; err == nil {
		t.Error("a measurement cancelled by the shutdown succeeded")
	}
	if _, err := c.Info(context.Background()); err == nil {
		t.Error("the agent still answers after its shutdown")
	}
}

func TestServeFinishesRunningMeasurement(t *testing.T) {
	dev, c, stop, served := serveGated(t, time.Minute)
	measured := measureThenStop(t, dev, c, stop)
	dev.gate <- struct{}{} // the measurement finishes within the grace period
	if err := <-measured; err != nil {
		t.Errorf("measurement running at shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// serveGated serves, with the given shutdown grace, a fake device whose
// measurements wait at its gate; it returns the device, a client, the
// function that stops the server and the channel Serve returns on.
func serveGated(t *testing.T, grace time.Duration) (*fakeDevice, *Client, context.CancelFunc, chan error) {
	t.Helper()
	dev := newFake(t)
	dev.gate = make(chan struct{})
	dev.entered = make(chan struct{}, 4)
	addr, stop, served := serveLoopback(t, dev, ServeOptions{ShutdownGrace: grace})
	return dev, NewClient("http://"+addr, testToken), stop, served
}

// serveLoopback serves dev through Serve on a free loopback port with the
// given options; it returns the address, the function that stops the
// server and the channel Serve returns on.
func serveLoopback(t *testing.T, dev profile.Device, so ServeOptions) (string, context.CancelFunc, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, ln, NewServer(dev, testToken, Options{}), so)
	}()
	return ln.Addr().String(), stop, served
}

// measureThenStop starts a measurement and, once it reached the device,
// stops the server; the measurement's error comes on the channel.
func measureThenStop(t *testing.T, dev *fakeDevice, c *Client, stop context.CancelFunc) chan error {
	measured := make(chan error, 1)
	go func() { _, err := c.Measure(context.Background(), tinyRequest(t, "cpu-prime")); measured <- err }()
	<-dev.entered
	stop()
	return measured
}

// passGate signals entered (when not nil) and waits for the gate (when not
// nil) or the context's end.
func passGate(ctx context.Context, entered chan<- struct{}, gate <-chan struct{}) error {
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func TestClientErrors(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{"", "localhost:1234", "ftp://x", "http://"} {
		if _, err := NewClient(u, "t").Info(ctx); err == nil || !strings.Contains(err.Error(), "bad agent URL") {
			t.Errorf("URL %q: %v", u, err)
		}
	}
	// Nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = NewClient("http://"+addr, "t").Measure(ctx, tinyRequest(t, "cpu"))
	var le *LinkError
	if !errors.As(err, &le) || le.ModelFailed() || IsModelFailure(err) {
		t.Errorf("measure against a closed port: %v, want a link error", err)
	}
	// Something that is not an agent.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html>hello</html>")
	}))
	defer ts.Close()
	if _, err := NewClient(ts.URL, "t").Info(ctx); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("non-agent server: %v", err)
	}
}

func TestServeReadTimeout(t *testing.T) {
	// A client that sends half a request is cut off instead of holding a
	// connection forever.
	addr, stop, served := serveLoopback(t, newFake(t), ServeOptions{ReadHeaderTimeout: 50 * time.Millisecond})
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /v1/info HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the agent kept a half-sent request open (read %q)", data)
	}
}

// The agent lists the optional measure fields it takes, and the client
// answers Takes from the last Info; from an agent that lists none (before
// 1.1.0) the client cannot tell.
func TestClientTakes(t *testing.T) {
	dev := newFake(t)
	ts, _ := startAgent(t, dev, Options{})
	c := NewClient(ts.URL, testToken)
	if _, known := c.Takes("idle"); known {
		t.Error("Takes known before Info")
	}
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"cold", "idle", "corun"} {
		if takes, known := c.Takes(f); !takes || !known {
			t.Errorf("Takes(%q) = %v, %v; want true, true", f, takes, known)
		}
	}
	if takes, known := c.Takes("teleport"); takes || !known {
		t.Errorf("Takes(teleport) = %v, %v; want false, true", takes, known)
	}
	di, err := dev.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	old, err := infoOf(di, 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	old.MeasureFields, old.AgentVersion = nil, "1.0.0"
	ots := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, old) }))
	defer ots.Close()
	oc := NewClient(ots.URL, "t")
	if _, err := oc.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, known := oc.Takes("idle"); known {
		t.Error("an agent that lists no fields: Takes known")
	}
}

func TestClientProtocolMismatch(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, Info{Name: "future", AgentVersion: "9.0.0", Protocol: ProtocolVersion + 1})
	}))
	defer ts.Close()
	if _, err := NewClient(ts.URL, "t").Info(context.Background()); err == nil || !strings.Contains(err.Error(), "protocol") {
		t.Errorf("agent of another protocol: %v", err)
	}
}
