package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/inlay-dev/inlay/internal/stats"
)

// RequestParts is where a group's requests spent their time. Of one
// request, with its spans (every subgraph and transfer it ran), from its
// arrival to its last span's end (its latency):
//   - Before: from its arrival to its first span's start (the arrival's
//     lag, and waiting for the first processor behind other work);
//   - Working: the time at least one of its spans was running (the union
//     of their intervals, so work in parallel counts once);
//   - Between: from its first span's start to its last span's end, less
//     Working (its work done, its next not yet started: hand-offs, the
//     wake-up of the next worker, waiting for a processor held by other
//     work).
//
// The three are means over the requests, so that they add up to Mean, the
// mean latency (medians of the parts would not add up to anything: a
// group whose requests are slow for different reasons has small medians
// in every part). P50 is the median latency, the figure a group's p50
// is. Requests counts the requests (those with at least one span).
type RequestParts struct {
	P50, Mean                time.Duration
	Before, Working, Between time.Duration
	Requests                 int
}

// RequestStats is one group's RequestParts as predicted and as run.
type RequestStats struct {
	Group               string
	Predicted, Measured RequestParts
}

// CompareRequests sets the requests of a run (measured spans) beside those
// of the prediction (a simulation of the same plan), per group, in group
// order. The spans must carry their request's Arrival. A group found on
// one side only has zero parts on the other.
func CompareRequests(measured, predicted []Span) []RequestStats {
	meas, pred := requestParts(measured), requestParts(predicted)
	groups := slices.Collect(maps.Keys(meas))
	for g := range pred {
		if _, ok := meas[g]; !ok {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	out := make([]RequestStats, len(groups))
	for i, g := range groups {
		out[i] = RequestStats{Group: g, Predicted: pred[g], Measured: meas[g]}
	}
	return out
}

// requestParts is RequestParts per group.
func requestParts(spans []Span) map[string]RequestParts {
	type reqKey struct {
		group   string
		request int
	}
	byReq := map[reqKey][]interval{}
	arrival := map[reqKey]time.Duration{}
	for _, s := range spans {
		k := reqKey{s.Group, s.Request}
		byReq[k] = append(byReq[k], interval{s.Start, s.End})
		arrival[k] = s.Arrival
	}
	type parts struct {
		latency                  []time.Duration
		before, working, between time.Duration
	}
	by := map[string]*parts{}
	keys := slices.SortedFunc(maps.Keys(byReq), func(a, b reqKey) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.request, b.request))
	})
	for _, k := range keys {
		iv := mergeIntervals(byReq[k])
		first, last := iv[0].start, iv[len(iv)-1].end
		var working time.Duration
		for _, x := range iv {
			working += x.end - x.start
		}
		p := by[k.group]
		if p == nil {
			p = &parts{}
			by[k.group] = p
		}
		a := min(arrival[k], first)
		p.latency = append(p.latency, last-a)
		p.before += first - a
		p.working += working
		p.between += last - first - working
	}
	out := make(map[string]RequestParts, len(by))
	for g, p := range by {
		n := time.Duration(len(p.latency))
		rp := RequestParts{P50: stats.Median(p.latency), Before: p.before / n, Working: p.working / n, Between: p.between / n, Requests: len(p.latency)}
		rp.Mean = rp.Before + rp.Working + rp.Between
		out[g] = rp
	}
	return out
}

// WriteRequestStats writes rows as an aligned table, one row per group:
// the median and mean latency, and the mean's parts, each predicted and
// measured ("predicted → measured"), and the requests on each side.
func WriteRequestStats(w io.Writer, rows []RequestStats) error {
	t := &table{right: []bool{false, true, true, true, true, true, true}}
	t.add("group", "p50", "mean", "before the first", "in subgraphs", "between them", "requests")
	for _, r := range rows {
		p, m := r.Predicted, r.Measured
		pair := func(x, y time.Duration) string {
			d := func(v time.Duration, n int) string {
				if n == 0 {
					return "-"
				}
				return formatDuration(v)
			}
			return d(x, p.Requests) + " → " + d(y, m.Requests)
		}
		t.add(r.Group, pair(p.P50, m.P50), pair(p.Mean, m.Mean), pair(p.Before, m.Before),
			pair(p.Working, m.Working), pair(p.Between, m.Between), fmt.Sprintf("%d → %d", p.Requests, m.Requests))
	}
	return t.write(w)
}
