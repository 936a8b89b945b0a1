package report

import (
	"strings"
	"testing"
	"time"
)

func TestLayoutLanes(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name      string
		spans     []Span
		wantLanes []int
		wantLane  map[string]int // label → lane
	}{
		{
			name:      "no spans",
			wantLanes: []int{1, 1},
		},
		{
			name: "back to back stays in one lane",
			spans: []Span{
				{Processor: "a", Label: "x", Start: 0, End: 2 * ms},
				{Processor: "a", Label: "y", Start: 2 * ms, End: 3 * ms},
			},
			wantLanes: []int{1, 1},
			wantLane:  map[string]int{"x": 0, "y": 0},
		},
		{
			name: "overlap opens a lane, which is reused",
			spans: []Span{
				{Processor: "b", Label: "z", Start: 4 * ms, End: 5 * ms},
				{Processor: "b", Label: "y", Start: 1 * ms, End: 3 * ms},
				{Processor: "b", Label: "x", Start: 0, End: 2 * ms},
				{Processor: "b", Label: "w", Start: 2500 * time.Microsecond, End: 6 * ms},
			},
			wantLanes: []int{1, 2},
			wantLane:  map[string]int{"x": 0, "y": 1, "w": 0, "z": 1},
		},
		{
			name: "three at once",
			spans: []Span{
				{Processor: "a", Label: "x", Start: 0, End: 2 * ms},
				{Processor: "a", Label: "y", Start: 0, End: 2 * ms},
				{Processor: "a", Label: "z", Start: ms, End: 2 * ms},
				{Processor: "b", Label: "u", Start: ms, End: 2 * ms},
			},
			wantLanes: []int{3, 1},
			wantLane:  map[string]int{"x": 0, "y": 1, "z": 2, "u": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			laid, lanes, err := layout([]string{"a", "b"}, tt.spans)
			if err != nil {
				t.Fatal(err)
			}
			if len(lanes) != len(tt.wantLanes) {
				t.Fatalf("lanes = %v, want %v", lanes, tt.wantLanes)
			}
			for i := range lanes {
				if lanes[i] != tt.wantLanes[i] {
					t.Fatalf("lanes = %v, want %v", lanes, tt.wantLanes)
				}
			}
			for _, s := range laid {
				if want, ok := tt.wantLane[s.Label]; ok && s.lane != want {
					t.Errorf("span %s in lane %d, want %d", s.Label, s.lane, want)
				}
			}
			for i := 1; i < len(laid); i++ {
				if spanLess(&laid[i], &laid[i-1]) {
					t.Errorf("spans not sorted at %d", i)
				}
			}
		})
	}
}

func TestLayoutErrors(t *testing.T) {
	tests := []struct {
		name  string
		procs []string
		spans []Span
		want  string
	}{
		{"no processors", nil, nil, "no processors"},
		{"unnamed processor", []string{"a", ""}, nil, "processor 1 has no name"},
		{"duplicate processor", []string{"a", "a"}, nil, `processor "a" listed twice`},
		{"unknown processor", []string{"a"}, []Span{{Processor: "gpu", Model: "m"}}, `span 0 (m): processor "gpu" is not in the processor list`},
		{"ends before start", []string{"a"}, []Span{{Processor: "a", Label: "m L1", Start: 2, End: 1}}, "span 0 (m L1): ends at 1ns, before its start 2ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := layout(tt.procs, tt.spans)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "report: ") {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRows(t *testing.T) {
	tests := []struct {
		name  string
		procs []string
		spans []Span
		want  []string
	}{
		{"nothing", nil, nil, nil},
		{"processors only", []string{"npu", "cpu"}, []Span{{Processor: "cpu"}}, []string{"npu", "cpu"}},
		{"links after, sorted", []string{"npu", "cpu"}, []Span{{Processor: "pcie"}, {Processor: "cpu"}, {Processor: "dram"}, {Processor: "pcie"}}, []string{"npu", "cpu", "dram", "pcie"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rows(tt.procs, tt.spans)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") || len(got) != len(tt.want) {
				t.Errorf("Rows = %q, want %q", got, tt.want)
			}
		})
	}
}
