package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/search/dag"
	"github.com/inlay-dev/inlay/search/driver"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// planFlags are inlay plan's options.
type planFlags struct {
	planner    string
	out        string
	platform   string
	seed       int64
	budget     time.Duration
	evals      int
	workers    int
	json       bool
	gantt      string
	explain    bool
	contention bool
	html       string
	trace      string
	dag        string
	cmd        *cobra.Command // for costModel (--profiles)
}

func newPlanCmd() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan WORKLOAD.yaml | --dag TASKS.json",
		Short: "Plan a workload onto a platform and predict the rate it sustains",
		Long: `plan loads a workload, plans it with the chosen planner, evaluates the plan in
the simulator (the max sustainable rate scale: the largest common factor on
every group's rate at which 99 % of each group's requests meet their
deadline) and prints a summary with a proven upper bound on that scale.

Planners: single:<processor or kind> (everything on one processor, CPU
fallback for unsupported layers), bestmap (each model on its fastest
processor configuration), heft (HEFT over the layer graphs), and the search
planners of the registry.

A workload no plan can run at its rates is not an error: the summary says
"infeasible" and why, and the exit status is 0. Errors (bad files, unknown
names, a planner failure) exit with status 1.

With --dag, plan schedules a plain task graph (JSON: processors, tasks with
a cost per processor, edges with a cost paid across processors) to minimise
its makespan, as in the scheduling literature.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.dag != "" {
				if len(args) > 0 {
					return errors.New("plan: give either a workload or --dag, not both")
				}
				return nil
			}
			if len(args) != 1 {
				return errors.New("plan: want one workload file (or --dag TASKS.json)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.cmd = cmd
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			if f.dag != "" {
				return planDAG(ctx, cmd.OutOrStdout(), &f)
			}
			return planWorkload(ctx, cmd.OutOrStdout(), args[0], &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.planner, "planner", "inlay", "planner: single:<processor or kind>, or one of "+strings.Join(search.Names(), ", "))
	fl.StringVarP(&f.out, "output", "o", "", "write the plan to this file (.yaml, .yml or .json)")
	fl.StringVar(&f.platform, "platform", "", "platform preset or file (default: the workload's, else "+hw.DefaultPlatform+")")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the planner and of the simulation's Poisson arrivals")
	fl.DurationVar(&f.budget, "budget", 0, "wall-clock budget of search planners (0: 10s unless --evals is given)")
	fl.IntVar(&f.evals, "evals", 0, "evaluation budget of search planners (0: no bound)")
	fl.IntVar(&f.workers, "workers", 0, "evaluations run at once by search planners (0: one per core)")
	fl.BoolVar(&f.json, "json", false, "print one JSON object instead of the text summary")
	fl.BoolVar(&f.explain, "explain", false, "for every subgraph, what the planner recorded for each processor as it chose (its scores, or the filter that excluded it); where it recorded nothing (the milp planner's own plans), a labelled what-if (time, transfer, finish, load, max load); also in --json and --html")
	fl.BoolVar(&f.contention, "contention", true, "search planners score plans with the contention model (false: without; the plan is reported with it either way)")
	fl.StringVar(&f.html, "html", "", "write an HTML report (summary, Gantt chart, and with --explain the explanation) to this .html file")
	fl.StringVar(&f.gantt, "gantt", "", "draw the simulated schedule at the max sustainable rate as a Gantt chart (.svg or .png)")
	fl.StringVar(&f.trace, "trace", "", "write the simulated schedule as a Chrome trace (.json; opens in Perfetto)")
	fl.StringVar(&f.dag, "dag", "", "schedule a plain task graph file instead of a workload")
	addProfilesFlag(cmd)
	return cmd
}

func planWorkload(ctx context.Context, out io.Writer, path string, f *planFlags) error {
	if err := checkOutputs(output{"-o", f.out, planFormat}, output{"--gantt", f.gantt, ganttFormat}, output{"--trace", f.trace, traceFormat}, output{"--html", f.html, htmlFormat}); err != nil {
		return err
	}
	w, pl, _, err := loadOn(path, f.platform, "")
	if err != nil {
		return err
	}
	est, costNote, err := costModel(f.cmd, pl, w)
	if err != nil {
		return err
	}
	defer printCostNote(f.cmd, costNote)
	budget := f.budget
	if budget == 0 && f.evals == 0 {
		budget = driver.DefaultBudget
	}
	var bar *searchBar
	in := app.PlanInput{SearchInput: app.SearchInput{Problem: app.Problem{Workload: w, Platform: pl, Cost: est},
		Planner: f.planner, Seed: f.seed, Budget: f.budget, Evals: f.evals, Workers: f.workers, NoContention: !f.contention,
		Progress: func(pg plan.Progress) { bar.update(pg) }},
		Explain: f.explain,
		Started: func(planner string, bound ratebound.Bound) {
			bar = newSearchBar("planning with "+planner, budget, f.evals, bound.Scale)
		}}
	ev, found, err := app.Plan(ctx, in)
	bar.done()
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := found.Plan.Save(f.out); err != nil {
			return err
		}
		ev.Outcome.PlanFile = f.out
	}
	ev.Outcome.Workload = path
	if err := drawSchedule(f, w, found.Planner, pl.Name, ev.Run); err != nil {
		return err
	}
	if f.html != "" {
		if err := writeHTMLReport(f.html, path, pl, ev, w); err != nil {
			return err
		}
	}
	if f.json {
		return printJSON(out, ev.Outcome)
	}
	return writePlanText(out, path, pl, ev, found)
}

// printJSON prints v as indented JSON.
func printJSON(out io.Writer, v any) error {
	b, err := app.MarshalIndent(v)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// planSummary is the report summary of a plan's evaluation.
func planSummary(path string, pl *hw.Platform, ev *app.Evaluation, alone *sim.Result) report.Summary {
	bound := ev.Bound
	s := report.Summary{Workload: path, Platform: pl.Name, Planner: ev.Outcome.Planner, Source: "simulation",
		Scale: ev.Sustained.Scale, Bound: bound.Scale, BoundWhy: bound.Why, BoundEstimated: !bound.Proven()}
	if ev.Proof != nil {
		s.ExactBound, s.ExactWhy = ev.Proof.ScaleBound, proofWhy(ev.Proof)
	}
	addSimRows(&s, pl, ev.Run, alone)
	return s
}

// writePlanText prints plan's summary, what the search did, the gap the
// exact planner proved and, with --explain, the explanation.
func writePlanText(out io.Writer, path string, pl *hw.Platform, ev *app.Evaluation, found *app.Searched) error {
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

// writeHTMLReport writes plan --html's page: the summary, the Gantt chart
// of the simulated schedule, and the explanation when there is one.
func writeHTMLReport(path, workloadPath string, pl *hw.Platform, ev *app.Evaluation, w *workload.Workload) error {
	s := planSummary(workloadPath, pl, ev, nil)
	if ev.Why != nil {
		for _, t := range ev.Why.Tables() {
			s.Tables = append(s.Tables, report.Table{Caption: t.Caption, Header: t.Header, Rows: t.Rows})
		}
	}
	var svg bytes.Buffer
	if res := ev.Run; res != nil && res.Spans != nil {
		title := fmt.Sprintf("%s on %s, %s: rate scale %.3g", filepath.Base(workloadPath), pl.Name, ev.Outcome.Planner, res.Scale)
		if err := report.Gantt(&svg, report.SVG, title, res.Lanes, res.Spans, [2]time.Duration{0, defaultWindow(w, res)}); err != nil {
			return err
		}
	}
	return writeFile(path, func(fw io.Writer) error { return report.HTML(fw, s, svg.Bytes()) })
}

// proofWhy says what the MILP proved, for the summary's bound line.
func proofWhy(p *plan.Proof) string {
	what := fmt.Sprintf("%s %s after %.3gs, %d×%d MILP", p.Solver, p.Status, p.Seconds, p.Rows, p.Vars)
	if p.Status != "optimal" {
		what += fmt.Sprintf(", incumbent within %.3g%% of its bound", 100*p.Gap)
	}
	return what
}

// drawSchedule writes the Gantt chart and trace the flags ask for.
func drawSchedule(f *planFlags, w *workload.Workload, planner, platform string, res *sim.Result) error {
	if f.gantt == "" && f.trace == "" {
		return nil
	}
	if res == nil || res.Spans == nil {
		return errors.New("plan: the simulation recorded no schedule to draw")
	}
	if f.gantt != "" {
		title := fmt.Sprintf("%s on %s, %s: rate scale %.3g", filepath.Base(w.Path), platform, planner, res.Scale)
		if err := writeGantt(f.gantt, title, res, defaultWindow(w, res)); err != nil {
			return err
		}
	}
	if f.trace != "" {
		return writeFile(f.trace, func(fw io.Writer) error {
			return report.ChromeTrace(fw, report.Rows(res.Lanes, res.Spans), res.Spans)
		})
	}
	return nil
}

// planDAG schedules a plain task graph.
func planDAG(ctx context.Context, out io.Writer, f *planFlags) error {
	if f.out != "" || f.gantt != "" || f.trace != "" {
		return errors.New("plan: -o, --gantt and --trace write a workload's plan; with --dag, use --json")
	}
	g, err := dag.Load(f.dag)
	if err != nil {
		return err
	}
	planners := dag.Planners()
	run, ok := planners[f.planner]
	if !ok {
		names := make([]string, 0, len(planners))
		for n := range planners {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("plan: planner %q does not schedule task graphs (ones that do: %s)", f.planner, strings.Join(names, ", "))
	}
	r, err := run(ctx, g, f.budget)
	if err != nil {
		return err
	}
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintf(out, "%s: %s, makespan %g", f.dag, r.Planner, r.Makespan)
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

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
