package view

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/search/dag"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// SimRows fills a report summary's horizon, group rows and processor
// rows from a simulation result (nothing when res is nil); alone, when not
// nil, is the same run without the contention model (uncontended), whose
// p50 goes beside each group's.
func SimRows(s *report.Summary, pl *hw.Platform, res, alone *sim.Result) {
	if res == nil {
		return
	}
	s.Horizon = res.Horizon
	s.Stretched = res.Stretched
	for i, g := range res.Groups {
		row := report.GroupRow{Name: g.Name, RateHz: g.OfferedHz, Deadline: g.Deadline,
			Requests: g.Requests, Completed: g.Completed, Late: g.Late, Dropped: g.Dropped, P50: g.P50, P99: g.P99, MissRate: g.MissRate}
		if alone != nil && i < len(alone.Groups) {
			row.Uncontended = alone.Groups[i].P50
		}
		s.Groups = append(s.Groups, row)
	}
	for i, pr := range res.Procs {
		kind := ""
		if i < len(pl.Processors) {
			kind = pl.Processors[i].Kind
		}
		s.Procs = append(s.Procs, report.ProcRow{Name: pr.Name, Kind: kind, Utilisation: pr.Utilisation, Busy: pr.Busy})
	}
}

// planSummary is the report summary of a plan's evaluation.
func planSummary(path string, pl *hw.Platform, ev *app.Evaluation, alone *sim.Result) report.Summary {
	bound := ev.Bound
	s := report.Summary{Workload: path, Platform: pl.Name, Planner: ev.Outcome.Planner, Source: "simulation",
		Scale: ev.Sustained.Scale, Bound: bound.Scale, BoundWhy: bound.Why, BoundEstimated: !bound.Proven()}
	if ev.Proof != nil {
		s.ExactBound, s.ExactWhy = ev.Proof.ScaleBound, proofWhy(ev.Proof)
	}
	SimRows(&s, pl, ev.Run, alone)
	return s
}

// Plan prints plan's summary, what the search did, the gap the exact
// planner proved and, with an explanation, the explanation.
func Plan(out io.Writer, path string, pl *hw.Platform, ev *app.Evaluation, found *app.Searched) error {
	o, bound, proof := ev.Outcome, ev.Bound, ev.Proof
	if err := report.Text(out, planSummary(path, pl, ev, ev.Alone)); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nplanned in %.3gs: %d subgraph(s) over %d model(s)", found.Seconds, o.Subgraphs, len(found.Plan.Models))
	if o.PlanFile != "" {
		fmt.Fprintf(out, ", written to %s", o.PlanFile)
	}
	if o.SearchStopped != "" {
		fmt.Fprintf(out, "; search stopped: %s", o.SearchStopped)
	}
	fmt.Fprintln(out)
	if o.Limit != "" && o.Reason == "" {
		fmt.Fprintf(out, "limited by: %s\n", o.Limit)
	}
	if o.Reason != "" {
		fmt.Fprintf(out, "%s\n", o.Reason)
	}
	if proof != nil {
		if g := plan.ProvenGap(ev.Sustained.Scale, math.Min(bound.Scale, proof.ScaleBound)); !math.IsNaN(g) {
			if bound.Proven() {
				fmt.Fprintf(out, "within %.3g%% of optimal (proven)\n", 100*g)
			} else {
				fmt.Fprintf(out, "within %.3g%% of optimal (estimated: the cost model gives no per-layer lower bounds)\n", 100*g)
			}
		}
		if proof.Note != "" {
			fmt.Fprintf(out, "milp: %s\n", proof.Note)
		}
	}
	if ev.Why == nil {
		return nil
	}
	fmt.Fprintln(out, "\nwhy each subgraph is where it is (* the planner's choice; the scores the planner recorded as it chose, or, where it recorded none, a what-if: each processor's scores as if the subgraph ran there, the rest as planned; load: busy-seconds per second over concurrency at scale 1):")
	for _, t := range ev.Why.Tables() {
		fmt.Fprintf(out, "\n%s\n", t.Caption)
		tt := textfmt.Table{Header: t.Header}
		for _, r := range t.Rows {
			tt.Add(r...)
		}
		if _, err := tt.WriteTo(out); err != nil {
			return err
		}
	}
	return nil
}

// PlanHTML writes plan --html's page: the summary, the Gantt chart of the
// simulated schedule, and the explanation when there is one.
func PlanHTML(out io.Writer, workloadPath string, pl *hw.Platform, ev *app.Evaluation, w *workload.Workload) error {
	s := planSummary(workloadPath, pl, ev, nil)
	if ev.Why != nil {
		for _, t := range ev.Why.Tables() {
			s.Tables = append(s.Tables, report.Table{Caption: t.Caption, Header: t.Header, Rows: t.Rows})
		}
	}
	var svg bytes.Buffer
	if res := ev.Run; res != nil && res.Spans != nil {
		title := fmt.Sprintf("%s on %s, %s: rate scale %.3g", filepath.Base(workloadPath), pl.Name, ev.Outcome.Planner, res.Scale)
		if err := report.Gantt(&svg, report.SVG, title, res.Lanes, res.Spans, [2]time.Duration{0, app.GanttWindow(w, res)}); err != nil {
			return err
		}
	}
	return report.HTML(out, s, svg.Bytes())
}

// proofWhy says what the MILP proved, for the summary's bound line.
func proofWhy(p *plan.Proof) string {
	what := fmt.Sprintf("%s %s after %.3gs, %d×%d MILP", p.Solver, p.Status, p.Seconds, p.Rows, p.Vars)
	if p.Status != "optimal" {
		what += fmt.Sprintf(", incumbent within %.3g%% of its bound", 100*p.Gap)
	}
	return what
}

// DAG prints a task graph's schedule (from the file named file).
func DAG(out io.Writer, file string, r *dag.Result) error {
	fmt.Fprintf(out, "%s: %s, makespan %g", file, r.Planner, r.Makespan)
	if pr := r.Proof; pr != nil {
		if pr.Status == "optimal" {
			fmt.Fprintf(out, ", proven optimal (%.3gs)", pr.Seconds)
		} else {
			fmt.Fprintf(out, ", within %.3g%% of optimal (proven; lower bound %.6g, solver %s after %.3gs)", 100*pr.Gap, pr.Bound, pr.Status, pr.Seconds)
		}
	}
	fmt.Fprint(out, "\n\n")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TASK\tPROCESSOR\tSTART\tFINISH\tRANK\t")
	for _, t := range r.Tasks {
		fmt.Fprintf(tw, "%s\t%s\t%g\t%g\t%.4g\t\n", t.Name, t.Processor, t.Start, t.Finish, t.Rank)
	}
	return tw.Flush()
}

// Simulate prints simulate's summary; scaleSet says --scale was given
// (scale).
func Simulate(out io.Writer, workloadPath string, pl *hw.Platform, ev *app.Evaluation, scaleSet bool, scale float64) error {
	res, sus, bound := ev.Run, ev.Sustained, ev.Bound
	s := report.Summary{
		Workload: workloadPath, Platform: pl.Name, Planner: ev.Plan.Planner, Source: "simulation",
		Scale: res.Scale, Bound: bound.Scale, BoundWhy: bound.Why, BoundEstimated: !bound.Proven(),
	}
	if math.IsInf(s.Bound, 1) {
		s.Bound = 0
	}
	SimRows(&s, pl, res, ev.Alone)
	if !scaleSet {
		if sus.Feasible {
			fmt.Fprintf(out, "max sustainable rate scale %.4g (bound %.4g): limited by %s\n", sus.Scale, bound.Scale, sus.Limit)
			if sus.Scale < 1 {
				fmt.Fprintf(out, "infeasible at the nominal rates: the plan sustains %.3g× of them\n", sus.Scale)
			}
			fmt.Fprintln(out)
		} else {
			fmt.Fprintf(out, "infeasible: %s\n", strings.TrimPrefix(sus.Limit, "infeasible: "))
			if bound.Scale == 0 {
				fmt.Fprintf(out, "no plan can do better: %s\n", bound.Why)
			}
			fmt.Fprintf(out, "the figures below are at rate scale %.3g\n\n", res.Scale)
			s.Scale = res.Scale
		}
	} else if res.Misses != "" {
		fmt.Fprintf(out, "deadline misses at scale %g: %s\n\n", scale, res.Misses)
	}
	return report.Text(out, s)
}
