package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Summary holds the figures of one evaluation of a plan, as the caller (the
// CLI, from a simulation or a measured run) fills them in. Rows are printed
// in the order given.
type Summary struct {
	// The header: what was evaluated. Empty strings are left out.
	Workload string // workload name or file
	Platform string
	Planner  string
	Source   string // where the figures come from, e.g. "simulation", "measured"
	// Scale is the rate scale the figures were taken at (for a plan: its
	// max sustainable scale).
	Scale float64
	// Bound is an upper bound on the max sustainable scale, with the reason
	// in BoundWhy; zero when unknown.
	Bound    float64
	BoundWhy string
	// BoundEstimated marks a bound that is not proven for the cost model
	// (ratebound.Bound.Proven): it is shown as an estimated bound.
	BoundEstimated bool
	// ExactBound is a second, exact planner's bound (the MILP's best bound
	// as a scale), shown beside Bound; zero when there is none.
	ExactBound float64
	ExactWhy   string
	// Horizon is the length of the simulated or measured run.
	Horizon time.Duration
	// Stretched counts the subgraph runs the contention model lengthened
	// (shown when > 0).
	Stretched int

	Groups []GroupRow
	Procs  []ProcRow
	// Tables are extra tables (inlay plan --explain's), shown by HTML after
	// the processors.
	Tables []Table
}

// Table is an extra table of text cells; columns whose cells are all
// numbers (or "-") are right-aligned.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// GroupRow is one group's figures.
type GroupRow struct {
	Name string
	// RateHz is the rate the group's requests arrived at (nominal × scale).
	RateHz float64
	// Deadline is the group's deadline; zero means none.
	Deadline time.Duration
	// Requests arrived; of them Completed finished, Late finished after the
	// deadline (Late ≤ Completed), Dropped were shed without running.
	Requests, Completed, Late, Dropped int
	// P50 and P99 are latency percentiles of the completed requests.
	P50, P99 time.Duration
	// Uncontended is the simulator's p50 without the contention model
	// (0: not given; the table then has no such column).
	Uncontended time.Duration
	// MissRate is the share of requests that missed their deadline (late or
	// dropped), in [0, 1].
	MissRate float64
}

// ProcRow is one processor's figures.
type ProcRow struct {
	Name string
	Kind string // cpu, gpu, npu, dsp, dla
	// Utilisation is Busy over the horizon, in [0, 1] per concurrent slot.
	Utilisation float64
	Busy        time.Duration
}

// header is the summary's key/value lines, empty values left out.
func (s *Summary) header() [][2]string {
	var kv [][2]string
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, [2]string{k, v})
		}
	}
	add("workload", s.Workload)
	add("platform", s.Platform)
	add("planner", s.Planner)
	add("source", s.Source)
	scale := formatScale(s.Scale)
	if s.Bound > 0 {
		label := "upper bound"
		if s.BoundEstimated {
			label = "estimated bound"
		}
		scale += " (" + label + " " + formatScale(s.Bound)
		if s.BoundWhy != "" {
			scale += ": " + s.BoundWhy
		}
		scale += ")"
	}
	add("scale", scale)
	if s.ExactBound > 0 && s.ExactBound < math.Inf(1) {
		v := formatScale(s.ExactBound)
		if s.ExactWhy != "" {
			v += " (" + s.ExactWhy + ")"
		}
		add("milp bound", v)
	}
	if s.Horizon > 0 {
		add("horizon", formatDuration(s.Horizon))
	}
	if s.Stretched > 0 {
		add("contention", strconv.Itoa(s.Stretched)+" subgraph runs stretched by neighbours on shared caches or memory")
	}
	return kv
}

func formatScale(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// groupTable and procTable hold the two tables as cells, shared by Text and
// HTML.
func (s *Summary) groupTable() *table {
	uncontended := false
	for _, g := range s.Groups {
		uncontended = uncontended || g.Uncontended > 0
	}
	t := &table{right: []bool{false, true, true, true, true, true, true, true, true, true, true}}
	head := []string{"group", "rate (Hz)", "deadline", "requests", "completed", "late", "dropped", "p50", "p99", "miss"}
	if uncontended {
		head = append(head[:8], "p50 uncontended", "p99", "miss")
	}
	t.add(head...)
	for _, g := range s.Groups {
		deadline, p50, p99, alone := "-", "-", "-", "-"
		if g.Deadline > 0 {
			deadline = formatDuration(g.Deadline)
		}
		if g.Completed > 0 {
			p50, p99 = formatDuration(g.P50), formatDuration(g.P99)
		}
		if g.Uncontended > 0 {
			alone = formatDuration(g.Uncontended)
		}
		row := []string{g.Name,
			strconv.FormatFloat(g.RateHz, 'f', 2, 64),
			deadline,
			strconv.Itoa(g.Requests),
			strconv.Itoa(g.Completed),
			strconv.Itoa(g.Late),
			strconv.Itoa(g.Dropped),
			p50}
		if uncontended {
			row = append(row, alone)
		}
		t.add(append(row, p99, formatPercent(g.MissRate))...)
	}
	return t
}

func (s *Summary) procTable() *table {
	t := &table{right: []bool{false, false, true, true}}
	t.add("processor", "kind", "utilisation", "busy")
	for _, p := range s.Procs {
		t.add(p.Name, p.Kind, formatPercent(p.Utilisation), formatDuration(p.Busy))
	}
	return t
}

// Text writes the summary as plain text: the header as aligned key/value
// lines, then the group table and the processor table (numbers right-
// aligned), separated by blank lines. Tables without rows are left out.
func Text(w io.Writer, s Summary) error {
	hdr := &table{right: []bool{false, false}}
	for _, e := range s.header() {
		hdr.add(e[0], e[1])
	}
	var parts []*table
	if len(hdr.rows) > 0 {
		parts = append(parts, hdr)
	}
	if len(s.Groups) > 0 {
		parts = append(parts, s.groupTable())
	}
	if len(s.Procs) > 0 {
		parts = append(parts, s.procTable())
	}
	for i, t := range parts {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return fmt.Errorf("report: text: %w", err)
			}
		}
		if err := t.write(w); err != nil {
			return fmt.Errorf("report: text: %w", err)
		}
	}
	return nil
}
