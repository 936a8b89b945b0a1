package report

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// traceSpans covers the cases the trace must get right: two lanes on one
// processor, a late span, an unlabelled span, a zero-length span and a
// processor with nothing on it.
func traceSpans() []Span {
	us := time.Microsecond
	return []Span{
		{Processor: "npu", Label: "yolov5s L0-80", Group: "camera", Model: "yolov5s", Request: 0, Start: 1000 * us, End: 12500*us + 250, Late: false},
		{Processor: "cpu", Label: "mobilenet_v2 L41-52", Group: "camera", Model: "mobilenet_v2", Request: 0, Start: 4100 * us, End: 5400 * us},
		{Processor: "npu", Label: "mobilenet_v2 L0-40", Group: "camera", Model: "mobilenet_v2", Request: 0, Start: 0, End: 4100 * us},
		{Processor: "npu", Label: "mobilenet_v2 L0-40", Group: "camera", Model: "mobilenet_v2", Request: 1, Start: 33300 * us, End: 37900 * us, Late: true},
		{Processor: "cpu", Group: "audio", Model: "mobilebert", Request: 0, Start: 5400 * us, End: 19000 * us},
		{Processor: "cpu", Label: "marker", Group: "audio", Model: "mobilebert", Request: 1, Start: 20 * time.Millisecond, End: 20 * time.Millisecond},
	}
}

var traceProcs = []string{"cpu", "gpu", "npu"}

func TestChromeTraceGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := ChromeTrace(&buf, traceProcs, traceSpans()); err != nil {
		t.Fatal(err)
	}
	golden(t, "trace.json", buf.Bytes())
}

// traceFile is the part of the trace-event format the checks read.
type traceFile struct {
	DisplayTimeUnit string `json:"displayTimeUnit"`
	TraceEvents     []struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat"`
		Ph   string         `json:"ph"`
		TS   *json.Number   `json:"ts"`
		Dur  *json.Number   `json:"dur"`
		PID  *int           `json:"pid"`
		TID  *int           `json:"tid"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
}

// TestChromeTraceValid checks what Perfetto's legacy JSON importer needs:
// every event has ph, pid, tid and ts; complete events have dur ≥ 0; the
// slices of one thread do not partially overlap; every thread is named.
func TestChromeTraceValid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		procs []string
		spans []Span
	}{
		{"small", traceProcs, traceSpans()},
		{"sample", sampleProcs, sampleSpans()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := ChromeTrace(&buf, tc.procs, tc.spans); err != nil {
				t.Fatal(err)
			}
			var f traceFile
			dec := json.NewDecoder(&buf)
			dec.UseNumber()
			if err := dec.Decode(&f); err != nil {
				t.Fatalf("trace is not JSON: %v", err)
			}
			named := map[int]string{}
			type slice struct{ ts, end time.Duration }
			last := map[int]slice{}
			complete := 0
			for i, ev := range f.TraceEvents {
				if ev.Ph == "" || ev.PID == nil || ev.TID == nil || ev.TS == nil {
					t.Fatalf("event %d lacks ph, pid, tid or ts: %+v", i, ev)
				}
				switch ev.Ph {
				case "M":
					if ev.Name == "thread_name" {
						named[*ev.TID] = ev.Args["name"].(string)
					}
				case "X":
					complete++
					if ev.Dur == nil || nanos(t, *ev.Dur) < 0 {
						t.Fatalf("event %d: complete event without a valid dur", i)
					}
					if _, ok := named[*ev.TID]; !ok {
						t.Fatalf("event %d: thread %d has no name", i, *ev.TID)
					}
					for _, k := range []string{"group", "model", "request", "late"} {
						if _, ok := ev.Args[k]; !ok {
							t.Errorf("event %d: no arg %q", i, k)
						}
					}
					ts := nanos(t, *ev.TS)
					s := slice{ts, ts + nanos(t, *ev.Dur)}
					if p, ok := last[*ev.TID]; ok && (s.ts < p.ts || s.ts < p.end) {
						t.Fatalf("event %d on thread %d starts at %v, inside or before the previous slice [%v, %v]", i, *ev.TID, s.ts, p.ts, p.end)
					}
					last[*ev.TID] = s
				default:
					t.Fatalf("event %d: unexpected ph %q", i, ev.Ph)
				}
			}
			if complete != len(tc.spans) {
				t.Errorf("%d complete events, want %d", complete, len(tc.spans))
			}
			for _, p := range tc.procs {
				found := false
				for _, n := range named {
					found = found || n == p
				}
				if !found {
					t.Errorf("no thread named %q", p)
				}
			}
		})
	}
}

// nanos parses a decimal number of microseconds exactly.
func nanos(t *testing.T, n json.Number) time.Duration {
	t.Helper()
	whole, frac, _ := strings.Cut(n.String(), ".")
	if len(frac) > 3 {
		t.Fatalf("%s µs is finer than a nanosecond", n)
	}
	frac += strings.Repeat("0", 3-len(frac))
	d, err := time.ParseDuration(whole + "us")
	if err != nil {
		t.Fatalf("bad number %s: %v", n, err)
	}
	f, err := time.ParseDuration(frac + "ns")
	if err != nil {
		t.Fatalf("bad number %s: %v", n, err)
	}
	return d + f
}

func TestMicros(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{time.Microsecond, "1"},
		{1500 * time.Nanosecond, "1.5"},
		{12345678 * time.Nanosecond, "12345.678"},
		{1001 * time.Nanosecond, "1.001"},
		{-2500 * time.Nanosecond, "-2.5"},
		{time.Hour, "3600000000"},
	}
	for _, tt := range tests {
		if got := micros(tt.d); string(got) != tt.want {
			t.Errorf("micros(%v) = %s, want %s", tt.d, got, tt.want)
		}
	}
}

func TestChromeTraceDeterministic(t *testing.T) {
	spans := sampleSpans()
	var a, b bytes.Buffer
	if err := ChromeTrace(&a, sampleProcs, spans); err != nil {
		t.Fatal(err)
	}
	rand.New(rand.NewSource(3)).Shuffle(len(spans), func(i, j int) { spans[i], spans[j] = spans[j], spans[i] })
	if err := ChromeTrace(&b, sampleProcs, spans); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("trace depends on the order of the spans")
	}
}

func TestChromeTraceErrors(t *testing.T) {
	err := ChromeTrace(&bytes.Buffer{}, []string{"cpu"}, []Span{{Processor: "dsp", Model: "m"}})
	if err == nil || !strings.Contains(err.Error(), `processor "dsp"`) {
		t.Fatalf("err = %v, want one naming the unknown processor", err)
	}
}
