// Package report turns what ran where into things people read: Gantt charts
// (SVG and PNG, drawn with gonum/plot), Chrome trace-event JSON that opens in
// Perfetto, aligned text tables and a single self-contained HTML page.
//
// The package computes no schedules. Its inputs are spans (one per subgraph
// execution, produced by the simulator or the runtime) and a Summary (the
// figures of one evaluation, filled in by the caller). Every output is
// deterministic: the same inputs give byte-identical output, whatever the
// order of the spans.
//
// A Gantt chart has one row per name in procs, top to bottom; a simulator
// also records transfers on links, so pass Rows(processors, spans) to give
// them rows of their own. Its window picks the stretch of time to draw (a
// zero window means all of it), so that bars stay wide enough to see.
//
// Spans that overlap on one processor (a processor that runs several
// subgraphs at once) are laid out in lanes: a span goes to the lowest lane
// that is free at its start. The Gantt chart splits the processor's row into
// its lanes; the trace gives each lane a thread of its own, because trace
// viewers require the slices of one thread to nest.
//
// User mistakes (a span on a processor missing from the list, a span that
// ends before it starts, an empty window) are returned as errors prefixed
// "report: ".
package report
