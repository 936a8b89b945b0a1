package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/ratebound"
	"github.com/inlay-dev/inlay/report/progress"
	"github.com/inlay-dev/inlay/report/view"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/search/driver"
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
		Long:  help("plan"),
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
			ctx, stop := interruptible(cmd)
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
	addPlatformFlag(cmd, &f.platform)
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
	if err := checkOutputs(output{"-o", f.out, app.PlanFormat}, output{"--gantt", f.gantt, app.GanttFormat}, output{"--trace", f.trace, app.TraceFormat}, output{"--html", f.html, app.HTMLFormat}); err != nil {
		return err
	}
	pr, _, done, err := loadProblem(f.cmd, path, f.platform, "")
	if err != nil {
		return err
	}
	defer done()
	w, pl := pr.Workload, pr.Platform
	budget := f.budget
	if budget == 0 && f.evals == 0 {
		budget = driver.DefaultBudget
	}
	var bar *progress.Search
	in := app.PlanInput{SearchInput: app.SearchInput{Problem: pr,
		Planner: f.planner, Seed: f.seed, Budget: f.budget, Evals: f.evals, Workers: f.workers, NoContention: !f.contention,
		Progress: func(pg plan.Progress) { bar.Update(pg) }},
		Explain: f.explain,
		Started: func(planner string, bound ratebound.Bound) {
			bar = progress.NewSearch("planning with "+planner, budget, f.evals, bound.Scale)
		}}
	ev, found, err := app.Plan(ctx, in)
	bar.Done()
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
	if err := view.PlanFiles(f.gantt, f.trace, w, found.Planner, pl.Name, ev.Run); err != nil {
		return err
	}
	if f.html != "" {
		if err := view.WriteFile(f.html, func(fw io.Writer) error { return view.PlanHTML(fw, path, pl, ev, w) }); err != nil {
			return err
		}
	}
	if f.json {
		return printJSON(out, ev.Outcome)
	}
	return view.Plan(out, path, pl, ev, found)
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

// planDAG schedules a plain task graph.
func planDAG(ctx context.Context, out io.Writer, f *planFlags) error {
	if f.out != "" || f.gantt != "" || f.trace != "" {
		return errors.New("plan: -o, --gantt and --trace write a workload's plan; with --dag, use --json")
	}
	r, err := app.PlanDAG(ctx, f.dag, f.planner, f.budget)
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(out, r)
	}
	return view.DAG(out, f.dag, r)
}
