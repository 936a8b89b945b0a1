package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func sampleSummary() Summary {
	ms := time.Millisecond
	return Summary{
		Workload: "examples/phone-mix.yaml",
		Platform: "phone",
		Planner:  "heft",
		Source:   "simulation",
		Scale:    1.8375,
		Bound:    2.1,
		BoundWhy: "npu compute",
		Horizon:  10 * time.Second,
		Groups: []GroupRow{
			{Name: "camera", RateHz: 55.125, Deadline: 33333 * time.Microsecond, Requests: 551, Completed: 550, Late: 3, Dropped: 1, P50: 12100 * time.Microsecond, P99: 30200 * time.Microsecond, MissRate: 4.0 / 551},
			{Name: "audio", RateHz: 36.75, Deadline: 50 * ms, Requests: 367, Completed: 367, P50: 21 * ms, P99: 27500 * time.Microsecond},
			{Name: "scene-understanding", RateHz: 18.375, Requests: 183, Completed: 0, Dropped: 183, MissRate: 1},
		},
		Procs: []ProcRow{
			{Name: "cpu-big", Kind: "cpu", Utilisation: 0.4521, Busy: 4521 * ms},
			{Name: "cpu-little", Kind: "cpu", Utilisation: 0.1, Busy: time.Second},
			{Name: "gpu", Kind: "gpu", Utilisation: 0.9, Busy: 9 * time.Second},
			{Name: "npu", Kind: "npu", Utilisation: 0.987, Busy: 19740 * ms},
			{Name: "dsp", Kind: "dsp", Utilisation: 0, Busy: 0},
		},
	}
}

func TestTextGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, sampleSummary()); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.txt", buf.Bytes())

	// The last column of both tables holds numbers, right-aligned: every
	// line of a table ends at the same column. No line has trailing blanks.
	blocks := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n\n")
	if len(blocks) != 3 {
		t.Fatalf("%d blocks, want header, groups and processors", len(blocks))
	}
	for _, b := range blocks[1:] {
		lines := strings.Split(b, "\n")
		for _, l := range lines {
			if utf8.RuneCountInString(l) != utf8.RuneCountInString(lines[0]) {
				t.Errorf("line %q is not as wide as its header %q", l, lines[0])
			}
			if strings.HasSuffix(l, " ") {
				t.Errorf("trailing blank in %q", l)
			}
		}
	}
}

func TestTextParts(t *testing.T) {
	tests := []struct {
		name    string
		s       Summary
		want    []string
		notWant []string
	}{
		{
			name:    "header only",
			s:       Summary{Platform: "desktop", Scale: 1},
			want:    []string{"platform  desktop\nscale     1.000\n"},
			notWant: []string{"group", "processor", "workload", "horizon", "bound"},
		},
		{
			name:    "bound without reason",
			s:       Summary{Scale: 0.5, Bound: 0.75},
			want:    []string{"scale  0.500 (upper bound 0.750)\n"},
			notWant: []string{":"},
		},
		{
			name:    "estimated bound",
			s:       Summary{Scale: 0.5, Bound: 0.75, BoundEstimated: true},
			want:    []string{"scale  0.500 (estimated bound 0.750)\n"},
			notWant: []string{"upper bound"},
		},
		{
			name: "processors only",
			s:    Summary{Procs: []ProcRow{{Name: "cpu", Kind: "cpu", Utilisation: 0.5, Busy: 5 * time.Millisecond}}},
			want: []string{"processor  kind  utilisation     busy\ncpu        cpu         50.0%  5.00 ms\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Text(&buf, tt.s); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("text lacks %q:\n%s", w, buf.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(buf.String(), w) {
					t.Errorf("text has %q:\n%s", w, buf.String())
				}
			}
		})
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

func TestTextWriteError(t *testing.T) {
	for n := range 4 {
		err := Text(&failWriter{n: n}, sampleSummary())
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("after %d writes: err = %v, want the writer's error", n, err)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{850, "850 ns"},
		{1, "1.00 ns"},
		{12345, "12.3 µs"},
		{4560 * time.Microsecond, "4.56 ms"},
		{33333 * time.Microsecond, "33.3 ms"},
		{123456 * time.Microsecond, "123 ms"},
		{1200 * time.Millisecond, "1.20 s"},
		{90 * time.Second, "90.0 s"},
		{2 * time.Hour, "7200 s"},
		{-5 * time.Millisecond, "-5.00 ms"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.d); got != tt.want {
			t.Errorf("formatDuration(%d) = %q, want %q", int64(tt.d), got, tt.want)
		}
	}
}
