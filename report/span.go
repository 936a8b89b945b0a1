package report

import (
	"cmp"
	"fmt"
	"sort"
	"time"

	"github.com/inlay-dev/inlay/timeline"
)

// Span is one execution of a subgraph on a processor, as the simulator and
// the runtime record it; report draws spans and never makes them.
type Span = timeline.Span

// laidSpan is a span placed in a processor row and a lane within it.
type laidSpan struct {
	Span
	proc int // index into the processor list
	lane int // 0-based lane within the processor's row
}

// layout checks the spans against the processor list, sorts them by
// (processor index, start, end, group, model, request, label) and assigns
// lanes. lanes[i] is the number of lanes processor i needs (at least 1).
func layout(procs []string, spans []Span) (laid []laidSpan, lanes []int, err error) {
	if len(procs) == 0 {
		return nil, nil, fmt.Errorf("report: no processors")
	}
	index := make(map[string]int, len(procs))
	for i, p := range procs {
		if p == "" {
			return nil, nil, fmt.Errorf("report: processor %d has no name", i)
		}
		if _, dup := index[p]; dup {
			return nil, nil, fmt.Errorf("report: processor %q listed twice", p)
		}
		index[p] = i
	}
	laid = make([]laidSpan, len(spans))
	for i, s := range spans {
		pi, ok := index[s.Processor]
		if !ok {
			return nil, nil, fmt.Errorf("report: span %d (%s): processor %q is not in the processor list", i, s.Name(), s.Processor)
		}
		if s.End < s.Start {
			return nil, nil, fmt.Errorf("report: span %d (%s): ends at %v, before its start %v", i, s.Name(), s.End, s.Start)
		}
		laid[i] = laidSpan{Span: s, proc: pi}
	}
	sort.SliceStable(laid, func(i, j int) bool { return spanLess(&laid[i], &laid[j]) })

	lanes = make([]int, len(procs))
	var free []time.Duration // per lane of the current processor: when it frees up
	for i := range laid {
		if i == 0 || laid[i].proc != laid[i-1].proc {
			free = free[:0]
		}
		s := &laid[i]
		lane := len(free)
		for l, end := range free {
			if end <= s.Start {
				lane = l
				break
			}
		}
		if lane == len(free) {
			free = append(free, s.End)
		} else {
			free[lane] = s.End
		}
		s.lane = lane
		if lane+1 > lanes[s.proc] {
			lanes[s.proc] = lane + 1
		}
	}
	for i := range lanes {
		if lanes[i] == 0 {
			lanes[i] = 1
		}
	}
	return laid, lanes, nil
}

func spanLess(a, b *laidSpan) bool {
	late := func(s *laidSpan) int {
		if s.Late {
			return 1
		}
		return 0
	}
	return cmp.Or(
		cmp.Compare(a.proc, b.proc),
		cmp.Compare(a.Start, b.Start),
		cmp.Compare(a.End, b.End),
		cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Model, b.Model),
		cmp.Compare(a.Request, b.Request),
		cmp.Compare(a.Label, b.Label),
		cmp.Compare(late(a), late(b)),
	) < 0
}

// models returns the distinct model names of the spans, sorted.
func models(spans []Span) []string {
	return newNames(spans, func(s Span) string { return s.Model }, map[string]bool{})
}

// newNames returns the names that name gives the spans and that known does
// not hold yet, each once, sorted; it adds them to known.
func newNames(spans []Span, name func(Span) string, known map[string]bool) []string {
	var out []string
	for _, s := range spans {
		if n := name(s); !known[n] {
			known[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Rows returns the chart rows for spans: procs in their order, then the
// names of any other span processors (a simulator also records transfers on
// links, for instance), sorted. Pass the result as procs to GanttSVG,
// GanttPNG or ChromeTrace to draw everything that ran.
func Rows(procs []string, spans []Span) []string {
	out := append([]string(nil), procs...)
	known := make(map[string]bool, len(procs))
	for _, p := range procs {
		known[p] = true
	}
	return append(out, newNames(spans, func(s Span) string { return s.Processor }, known)...)
}
