// Package timeline holds what ran where and when: one Span per execution of
// a subgraph (or a transfer on a link). The simulator and the runtime
// record spans; report draws them (Gantt charts, Chrome traces) and
// compares them. It sits below all three so that neither the simulator nor
// the runtime depends on the presentation package.
package timeline

import "time"

// Span is one execution of a subgraph on a processor: what ran where, and when.
type Span struct {
	// Processor is the processor's name, as in the platform.
	Processor string
	// Label names the work, e.g. "mobilenet_v2 L0-41"; it is written inside
	// the bar when it fits and names the trace slice. Empty means Model.
	Label string
	// Group and Model say which request of which model the span served.
	Group string
	Model string
	// Request numbers the group's requests from 0.
	Request int
	// Start and End are times since the start of the run; End ≥ Start.
	Start, End time.Duration
	// Arrival is when the span's request arrived (was scheduled to), since
	// the start of the run; it is the same for all of a request's spans.
	Arrival time.Duration
	// Late marks a span of a request that missed its deadline.
	Late bool
	// Stretch is how much longer than alone the span ran because of what
	// ran beside it on processors sharing a cache or memory channel
	// (End−Start over the uncontended time); 0 or 1 when it was not
	// stretched.
	Stretch float64
}

// Stretched reports whether contention lengthened the span (by more than
// 1 %).
func (s *Span) Stretched() bool { return s.Stretch > 1.01 }

// Name is the span's display name: its label, or its model when unlabelled.
func (s *Span) Name() string {
	if s.Label != "" {
		return s.Label
	}
	return s.Model
}
