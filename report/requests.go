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

// RequestParts is where a group's requests spent their time, as medians
// over its requests (each part's own median, so the parts need not add up
// to Latency exactly). Of one request, with its spans (every subgraph and
// transfer it ran):
//   - Latency: from its arrival to its last span's end;
//   - Before: from its arrival to its first span's start (the arrival's
//     lag, and waiting for the first processor behind other work);
//   - Working: the time at least one of its spans was running (the union
//     of their intervals, so work in parallel counts once);
//   - Between: from its first span's start to its last span's end, less
//     Working (its work done, its next not yet started: hand-offs, the
//     wake-up of the next worker, waiting for a processor held by other
//     work).
//
// Requests counts the requests (those with at least one span).
type RequestParts struct {
	Latency, Before, Working, Between time.Duration
	Requests                          int
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
	groups := slices.Sorted(maps.Keys(meas))
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
	type parts struct{ latency, before, working, between []time.Duration }
	by := map[string]*parts{}
	// Requests in order, so that the medians' inputs do not depend on map
	// order (the medians do not either, but their ties stay put).
	keys := slices.SortedFunc(maps.Keys(byReq), func(a, b reqKey) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.request, b.request))
	})
	for _, k := range keys {
		iv := byReq[k]
		slices.SortFunc(iv, func(a, b interval) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end)) })
		first, last := iv[0].start, iv[0].end
		var working time.Duration
		cur := iv[0]
		for _, x := range iv[1:] {
			last = max(last, x.end)
			if x.start <= cur.end {
				cur.end = max(cur.end, x.end)
				continue
			}
			working += cur.end - cur.start
			cur = x
		}
		working += cur.end - cur.start
		p := by[k.group]
		if p == nil {
			p = &parts{}
			by[k.group] = p
		}
		a := arrival[k]
		p.latency = append(p.latency, last-a)
		p.before = append(p.before, max(first-a, 0))
		p.working = append(p.working, working)
		p.between = append(p.between, last-first-working)
	}
	out := make(map[string]RequestParts, len(by))
	for g, p := range by {
		out[g] = RequestParts{Latency: stats.Median(p.latency), Before: stats.Median(p.before),
			Working: stats.Median(p.working), Between: stats.Median(p.between), Requests: len(p.latency)}
	}
	return out
}

// WriteRequestStats writes rows as an aligned table, one row per group:
// each part predicted and measured ("predicted → measured"), and the
// requests counted on each side.
func WriteRequestStats(w io.Writer, rows []RequestStats) error {
	t := &table{right: []bool{false, true, true, true, true, true}}
	t.add("group", "latency", "before the first", "in subgraphs", "between them", "requests")
	pair := func(p, m time.Duration, pn, mn int) string {
		d := func(x time.Duration, n int) string {
			if n == 0 {
				return "-"
			}
			return formatDuration(x)
		}
		return d(p, pn) + " → " + d(m, mn)
	}
	for _, r := range rows {
		p, m := r.Predicted, r.Measured
		t.add(r.Group, pair(p.Latency, m.Latency, p.Requests, m.Requests), pair(p.Before, m.Before, p.Requests, m.Requests),
			pair(p.Working, m.Working, p.Requests, m.Requests), pair(p.Between, m.Between, p.Requests, m.Requests),
			fmt.Sprintf("%d → %d", p.Requests, m.Requests))
	}
	return t.write(w)
}
