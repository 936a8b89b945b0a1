package report

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestCompareRequests works three requests out by hand. Group g's request
// 0 arrives at 0, waits 1 ms, runs a on P0 for 2 ms (1–3) and b on P1
// for 2 ms after a 1 ms gap (4–6): latency 6, before 1, working 4,
// between 1. Request 1 arrives at 10 and runs a (10–14) and b beside it
// on P1 (12–16): before 0, working 6 (the overlap counts once), between
// 0, latency 6. Request 2 arrives at 20 and runs a (23–25), a link
// transfer (25–26), b (28–30): before 3, working 5, between 2, latency
// 10. So the median latency is 6 ms and the means are before 4/3 ms,
// working 5 ms, between 1 ms, latency 22/3 ms. The prediction has group
// g's request 0 only and group p, which the run never had.
func TestCompareRequests(t *testing.T) {
	ms := time.Millisecond
	sp := func(group string, req int, arrival, start, end time.Duration) Span {
		return Span{Group: group, Label: "x", Processor: "P0", Request: req, Arrival: arrival * ms, Start: start * ms, End: end * ms}
	}
	measured := []Span{
		sp("g", 2, 20, 28, 30), sp("g", 0, 0, 1, 3), sp("g", 1, 10, 12, 16), sp("g", 0, 0, 4, 6),
		sp("g", 1, 10, 10, 14), sp("g", 2, 20, 23, 25), sp("g", 2, 20, 25, 26),
	}
	predicted := []Span{sp("g", 0, 0, 0, 2), sp("g", 0, 0, 2, 3), sp("p", 0, 5, 6, 7)}
	got := CompareRequests(measured, predicted)
	want := []RequestStats{
		{Group: "g", Predicted: RequestParts{P50: 3 * ms, Mean: 3 * ms, Working: 3 * ms, Requests: 1},
			Measured: RequestParts{P50: 6 * ms, Mean: 4*ms/3 + 6*ms, Before: 4 * ms / 3, Working: 5 * ms, Between: ms, Requests: 3}},
		{Group: "p", Predicted: RequestParts{P50: 2 * ms, Mean: 2 * ms, Before: ms, Working: ms, Requests: 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CompareRequests\n got %+v\nwant %+v", got, want)
	}
	var buf bytes.Buffer
	if err := WriteRequestStats(&buf, got); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "3.00 ms → 6.00 ms") || !strings.Contains(lines[2], "2.00 ms → -") || !strings.HasSuffix(lines[2], "1 → 0") {
		t.Errorf("table:\n%s", buf.String())
	}
	if CompareRequests(nil, nil) == nil || len(CompareRequests(nil, nil)) != 0 {
		t.Error("no spans: want an empty list")
	}
}
