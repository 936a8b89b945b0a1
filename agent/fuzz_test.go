package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/runtime"
)

// FuzzMeasure feeds arbitrary bodies, models and shapes to /v1/measure: the
// agent answers every one with a JSON status of the protocol, never a
// panic or a 500, and only well-formed requests reach the device.
func FuzzMeasure(f *testing.F) {
	valid := func(t testing.TB) []byte {
		b, err := json.Marshal(bodyOf(tinyRequest(t, "cpu-prime")))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	f.Add(valid(f), tinyModel(f), int64(2))
	f.Add([]byte(`{"model":"","inputs":[{"name":"x","dtype":"float32","shape":[-1]}]}`), []byte{0x08, 0x07}, int64(-3))
	f.Add([]byte("\x00\xff{"), []byte("not onnx"), int64(1<<40))
	f.Add([]byte(`[]`), tinyModel(f)[:20], int64(0))
	pl := phonePlatform(f)
	f.Fuzz(func(t *testing.T, raw, model []byte, dim int64) {
		dev := &fakeDevice{pl: pl}
		s := NewServer(dev, testToken, Options{MaxUpload: 1 << 16, MaxReps: 50, MaxWarmup: 5})
		req := tinyRequest(t, "cpu-prime")
		req.Model = model
		req.Inputs[0].Shape[0] = dim
		built, err := json.Marshal(bodyOf(req))
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range [][]byte{raw, built} {
			fuzzPost(t, s, "/v1/measure", body, "")
		}
		for _, got := range dev.reqs {
			if got.Reps < 1 || got.Reps > 50 || got.Warmup < 0 || got.Warmup > 5 || len(got.Model) == 0 {
				t.Fatalf("a malformed request reached the device: %+v", got)
			}
			for _, in := range got.Inputs {
				for _, d := range in.Shape {
					if d < 1 {
						t.Fatalf("a bad shape reached the device: %v", in.Shape)
					}
				}
			}
		}
	})
}

// FuzzHandOff feeds arbitrary bodies to /v1/handoff: every one gets a JSON
// status of the protocol, never a panic or a 500, and only well-formed
// probes (a duration in range, no processors or two distinct ort-cpu ones
// of the device) reach the prober.
func FuzzHandOff(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"no_pin": true, "duration_ms": 250, "procs": ["cpu-prime", "cpu-eff"]}`))
	f.Add([]byte(`{"procs": ["cpu-prime", "npu"], "duration_ms": -1e308}`))
	f.Add([]byte(`{"procs": ["cpu", "cpu-prime"]}`))
	f.Add([]byte("\x00\xff{"))
	pl := phonePlatform(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		pr := &fakeProber{}
		s := NewServer(&fakeDevice{pl: pl}, testToken, Options{MaxUpload: 1 << 16, MaxRunDuration: time.Minute, Prober: pr})
		fuzzPost(t, s, "/v1/handoff", body, "\r\n")
		for _, opt := range pr.calls() {
			if opt.Duration < 0 || opt.Duration > time.Minute {
				t.Fatalf("a probe of %v reached the prober", opt.Duration)
			}
			if opt.Procs == nil {
				continue
			}
			if len(opt.Procs) != 2 || opt.Procs[0] == opt.Procs[1] {
				t.Fatalf("processors %q reached the prober", opt.Procs)
			}
			for _, name := range opt.Procs {
				if id, err := pl.Find(name); err != nil || !slices.Contains(pl.Processors[id].Backends, runtime.Backend) {
					t.Fatalf("processor %q reached the prober", name)
				}
			}
		}
	})
}

// fuzzPost posts body to path on s with the test token and fails unless
// the status is one of the protocol's (200, 400, 413, 422) and, on any but
// 200, the body is a JSON error with none of the characters in breaks.
func fuzzPost(t *testing.T, s http.Handler, path string, body []byte, breaks string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+testToken)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	switch w.Code {
	case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
	default:
		t.Fatalf("status %d for body %q: %s", w.Code, body, w.Body.Bytes())
	}
	var eb ErrorBody
	if w.Code != http.StatusOK && (json.Unmarshal(w.Body.Bytes(), &eb) != nil || eb.Error == "" || strings.ContainsAny(eb.Error, breaks)) {
		t.Fatalf("status %d without a JSON error (of one line where breaks are %q): %q", w.Code, breaks, w.Body.Bytes())
	}
}
