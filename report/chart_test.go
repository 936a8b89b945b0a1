package report

import (
	"bytes"
	"testing"
	"time"
)

func TestGanttFormatOf(t *testing.T) {
	for _, tc := range []struct {
		path string
		want GanttFormat
		ok   bool
	}{
		{"a.svg", SVG, true}, {"b.PNG", PNG, true}, {"c.txt", "", false}, {"svg", "", false},
	} {
		got, err := GanttFormatOf(tc.path)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("GanttFormatOf(%q) = %q, %v", tc.path, got, err)
		}
	}
}

func TestGanttDefaultWindow(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		periods   []time.Duration
		scale     float64
		end, want time.Duration
	}{
		{[]time.Duration{10 * ms, 40 * ms}, 2, time.Second, 60 * ms},
		{[]time.Duration{40 * ms}, 0.01, time.Second, time.Second}, // longer than the run
		{[]time.Duration{40 * ms}, 0, time.Second, time.Second},
		{nil, 1, time.Second, time.Second},
	} {
		if got := GanttWindow(tc.periods, tc.scale, tc.end); got != tc.want {
			t.Errorf("GanttWindow(%v, %v, %v) = %v, want %v", tc.periods, tc.scale, tc.end, got, tc.want)
		}
	}
}

// TestGanttDrawsLinks checks that Gantt draws the lanes beyond procs that
// the spans name (transfers on links), as GanttSVG with Rows does.
func TestGanttDrawsLinks(t *testing.T) {
	spans := []Span{
		{Processor: "cpu", Model: "m", Label: "m/0", Start: 0, End: time.Millisecond},
		{Processor: "link", Model: "m", Label: "copy", Start: time.Millisecond, End: 2 * time.Millisecond},
	}
	var got, want bytes.Buffer
	if err := Gantt(&got, SVG, "t", []string{"cpu"}, spans, [2]time.Duration{}); err != nil {
		t.Fatal(err)
	}
	if err := GanttSVG(&want, "t", []string{"cpu", "link"}, spans, [2]time.Duration{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("Gantt differs from GanttSVG over Rows")
	}
	if err := Gantt(&got, "gif", "t", []string{"cpu"}, spans, [2]time.Duration{}); err == nil {
		t.Error("unknown format: no error")
	}
}

// A CDF of one job (or of equal JCTs) draws: its log axis is widened
// around the value, not by ±1 below zero.
func TestJCTCDFOneJob(t *testing.T) {
	for _, x := range [][]float64{{0.5}, {2, 2, 2}} {
		var b bytes.Buffer
		if err := JCTCDF(&b, "svg", "one", []Series{{Name: "a", X: x}}); err != nil {
			t.Fatalf("JCTs %v: %v", x, err)
		}
		if !bytes.Contains(b.Bytes(), []byte("<svg")) {
			t.Errorf("JCTs %v: no SVG written", x)
		}
	}
}
