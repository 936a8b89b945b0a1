package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/inlay-dev/inlay/internal/stats"
)

// BesideShare splits a run's spans for SpanStats: a span that overlapped
// work on other processors for at least this share of its time ran beside
// it, one below ran alone.
const BesideShare = 0.2

// SpanStats is one piece of work, a group's subgraph on a processor (the
// spans' Group, Label and Processor), as predicted and as run: the median
// durations of its spans in each, and the run's split by whether other
// processors were busy meanwhile. The split tells a slowdown from
// neighbours (contention: Beside above Alone) from one of the processor
// itself (both above Predicted).
type SpanStats struct {
	Group, Label, Processor string
	// Predicted and Measured are the median durations of the predicted
	// and the measured spans, PredictedRuns and Runs their counts (0 and
	// 0 where one side has none).
	Predicted, Measured time.Duration
	PredictedRuns, Runs int
	// Alone and Beside are the medians of the measured spans that ran
	// beside work on other processors for less than BesideShare of their
	// time, and for at least that; AloneRuns and BesideRuns count them.
	Alone, Beside         time.Duration
	AloneRuns, BesideRuns int
}

// Ratio is Measured over Predicted; 0 when either is missing.
func (s SpanStats) Ratio() float64 {
	if s.Predicted <= 0 || s.Measured <= 0 {
		return 0
	}
	return float64(s.Measured) / float64(s.Predicted)
}

type spanKey struct{ group, label, proc string }

// CompareSpans sets measured spans (a run's) beside predicted ones (a
// simulation of the same plan), one row per piece of work found on either
// side, ordered by group, then by measured median, longest first, then by
// label and processor: the order is the spans' content's, never their
// input order's.
func CompareSpans(measured, predicted []Span) []SpanStats {
	type acc struct {
		pred, meas, alone, beside []time.Duration
	}
	byKey := map[spanKey]*acc{}
	get := func(s *Span) *acc {
		k := spanKey{s.Group, s.Name(), s.Processor}
		a := byKey[k]
		if a == nil {
			a = &acc{}
			byKey[k] = a
		}
		return a
	}
	for i := range predicted {
		a := get(&predicted[i])
		a.pred = append(a.pred, predicted[i].End-predicted[i].Start)
	}
	busy := busyByProcessor(measured)
	for i := range measured {
		s := &measured[i]
		a := get(s)
		d := s.End - s.Start
		a.meas = append(a.meas, d)
		if d <= 0 {
			a.alone = append(a.alone, d)
			continue
		}
		var over time.Duration
		for p, iv := range busy {
			if p != s.Processor {
				over += overlap(iv, s.Start, s.End)
			}
		}
		if float64(over) >= BesideShare*float64(d) {
			a.beside = append(a.beside, d)
		} else {
			a.alone = append(a.alone, d)
		}
	}
	out := make([]SpanStats, 0, len(byKey))
	for k, a := range byKey {
		out = append(out, SpanStats{Group: k.group, Label: k.label, Processor: k.proc,
			Predicted: stats.Median(a.pred), PredictedRuns: len(a.pred), Measured: stats.Median(a.meas), Runs: len(a.meas),
			Alone: stats.Median(a.alone), AloneRuns: len(a.alone), Beside: stats.Median(a.beside), BesideRuns: len(a.beside)})
	}
	slices.SortFunc(out, func(x, y SpanStats) int {
		return cmp.Or(cmp.Compare(x.Group, y.Group), cmp.Compare(y.Measured, x.Measured),
			cmp.Compare(y.Predicted, x.Predicted), cmp.Compare(x.Label, y.Label), cmp.Compare(x.Processor, y.Processor))
	})
	return out
}

// interval is a span of busy time, [start, end).
type interval struct{ start, end time.Duration }

// busyByProcessor is, per processor, the union of its spans' times:
// disjoint intervals, in order.
func busyByProcessor(spans []Span) map[string][]interval {
	by := map[string][]interval{}
	for _, s := range spans {
		if s.End > s.Start {
			by[s.Processor] = append(by[s.Processor], interval{s.Start, s.End})
		}
	}
	for p, iv := range by {
		by[p] = mergeIntervals(iv)
	}
	return by
}

// mergeIntervals sorts iv by start and merges the intervals that overlap
// or touch, in place: the union of iv as disjoint intervals, in order.
func mergeIntervals(iv []interval) []interval {
	slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	merged := iv[:0]
	for _, x := range iv {
		if n := len(merged); n > 0 && x.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, x.end)
			continue
		}
		merged = append(merged, x)
	}
	return merged
}

// overlap is how much of [start, end) the disjoint, ordered intervals
// cover.
func overlap(iv []interval, start, end time.Duration) time.Duration {
	i, _ := slices.BinarySearchFunc(iv, start, func(x interval, t time.Duration) int { return cmp.Compare(x.end, t) })
	var d time.Duration
	for ; i < len(iv) && iv[i].start < end; i++ {
		d += min(end, iv[i].end) - max(start, iv[i].start)
	}
	return d
}

// WriteSpanStats writes rows as an aligned table: group, subgraph,
// processor, predicted and measured median, their ratio, and the run's
// medians alone and beside other processors' work with their counts ("-"
// where a side has no spans).
func WriteSpanStats(w io.Writer, rows []SpanStats) error {
	t := &table{right: []bool{false, false, false, true, true, true, true, true, true}}
	t.add("group", "subgraph", "processor", "predicted", "measured", "ratio", "runs", "alone (runs)", "beside (runs)")
	dur := func(d time.Duration, n int) string {
		if n == 0 {
			return "-"
		}
		return formatDuration(d)
	}
	for _, r := range rows {
		ratio := "-"
		if q := r.Ratio(); q > 0 {
			ratio = fmt.Sprintf("%.2f×", q)
		}
		t.add(r.Group, r.Label, r.Processor, dur(r.Predicted, r.PredictedRuns), dur(r.Measured, r.Runs), ratio, fmt.Sprint(r.Runs),
			fmt.Sprintf("%s (%d)", dur(r.Alone, r.AloneRuns), r.AloneRuns), fmt.Sprintf("%s (%d)", dur(r.Beside, r.BesideRuns), r.BesideRuns))
	}
	return t.write(w)
}
