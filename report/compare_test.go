package report

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestCompareSpans works a small run out by hand. Subgraph a on P0 ran
// four times: 2 ms with P1 idle (alone); 4 ms, sharing 1 ms with b (25 %:
// beside); 6 ms, sharing 3 ms (beside); 10 ms, sharing 1 ms (10 %: alone).
// b on P1 ran 1 ms inside a's second run and 3 ms inside its third
// (beside), 1 ms with P0 idle (alone) and 1 ms at the end of a's fourth
// (beside). So a: median 5 ms, alone 6 ms (2, 10), beside 5 ms (4, 6);
// b: median 1 ms, alone 1 ms, beside 1 ms (1, 3, 1). The prediction has
// a at 3 ms (twice) and c, which the run never ran; group h's empty span
// counts, alone.
func TestCompareSpans(t *testing.T) {
	ms := time.Millisecond
	sp := func(group, label, proc string, start, end time.Duration) Span {
		return Span{Group: group, Label: label, Processor: proc, Start: start * ms, End: end * ms}
	}
	measured := []Span{
		sp("g", "b", "P1", 13, 14),
		sp("g", "a", "P0", 0, 2),
		sp("g", "a", "P0", 10, 14),
		sp("g", "a", "P0", 20, 26),
		sp("g", "b", "P1", 21, 24),
		sp("g", "b", "P1", 30, 31),
		sp("g", "a", "P0", 50, 60),
		sp("g", "b", "P1", 59, 60),
		sp("h", "a", "P0", 70, 70),
	}
	predicted := []Span{sp("g", "a", "P0", 0, 3), sp("g", "a", "P0", 5, 8), sp("g", "c", "P1", 0, 1)}
	got := CompareSpans(measured, predicted)
	want := []SpanStats{
		{Group: "g", Label: "a", Processor: "P0", Predicted: 3 * ms, PredictedRuns: 2, Measured: 5 * ms, Runs: 4,
			Alone: 6 * ms, AloneRuns: 2, Beside: 5 * ms, BesideRuns: 2},
		{Group: "g", Label: "b", Processor: "P1", Measured: ms, Runs: 4, Alone: ms, AloneRuns: 1, Beside: ms, BesideRuns: 3},
		{Group: "g", Label: "c", Processor: "P1", Predicted: ms, PredictedRuns: 1},
		{Group: "h", Label: "a", Processor: "P0", Runs: 1, AloneRuns: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CompareSpans\n got %+v\nwant %+v", got, want)
	}
	if r := got[0].Ratio(); r < 1.666 || r > 1.667 {
		t.Errorf("ratio %v, want 5/3", r)
	}
	if got[1].Ratio() != 0 || got[2].Ratio() != 0 {
		t.Error("a ratio without both sides")
	}
	// The input order does not change the rows.
	rev := append([]Span(nil), measured...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if again := CompareSpans(rev, predicted); !reflect.DeepEqual(again, want) {
		t.Errorf("reversed input: %+v", again)
	}
	var b bytes.Buffer
	if err := WriteSpanStats(&b, got); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want a header and 4 rows:\n%s", len(lines), b.String())
	}
	for _, want := range []string{"predicted", "3.00 ms", "5.00 ms", "1.67×", "6.00 ms (2)", "5.00 ms (2)"} {
		if !strings.Contains(lines[0]+lines[1], want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(lines[3], "-") {
		t.Errorf("c's row shows no missing measurement: %q", lines[3])
	}
	for _, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing blank: %q", l)
		}
	}
}

// TestOverlap: the busy union merges overlapping spans, and overlap
// counts what a window shares with it.
func TestOverlap(t *testing.T) {
	ms := time.Millisecond
	busy := busyByProcessor([]Span{{Processor: "P", Start: 5 * ms, End: 7 * ms}, {Processor: "P", Start: 0, End: 2 * ms}, {Processor: "P", Start: ms, End: 3 * ms}, {Processor: "P", Start: 9 * ms, End: 9 * ms}})
	if want := []interval{{0, 3 * ms}, {5 * ms, 7 * ms}}; !reflect.DeepEqual(busy["P"], want) {
		t.Fatalf("busy %v, want %v", busy["P"], want)
	}
	for _, tc := range []struct{ start, end, want time.Duration }{
		{0, 10, 5}, {2, 6, 2}, {3, 5, 0}, {6, 20, 1}, {-5, 1, 1}, {8, 9, 0},
	} {
		if got := overlap(busy["P"], tc.start*ms, tc.end*ms); got != tc.want*ms {
			t.Errorf("overlap [%d, %d) = %v, want %vms", tc.start, tc.end, got, tc.want)
		}
	}
}
