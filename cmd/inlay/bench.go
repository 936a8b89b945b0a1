package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/bench"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/workload"
	"github.com/spf13/cobra"
)

type benchFlags struct {
	scenarios int
	planners  string
	budget    time.Duration
	evals     int
	workers   int
	seed      int64
	platform  string
	workloads []string
	json      bool
	repeats   int
	versus    []string
	minModels int
	maxModels int
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Reproduce Puzzle's experiment: every planner on random multi-model scenarios",
		Long: `bench draws random scenarios from the nine zoo networks (model groups of
random size, random relative rates, deadlines equal to periods; seeded), plans
each with every planner under the same budget, scores every plan with the
simulator (max sustainable rate scale) beside the proven upper bound, and
summarises: geometric-mean ratio of each planner to single:npu and to bestmap,
mean fraction of the upper bound, mean search time.

With --workload, the given workload files are benched instead of random
scenarios. --evals makes a run reproducible (same seed, evals and workers:
same plans); --budget is wall-clock time per planner and scenario.

A planner named with the suffix +blind ("inlay+blind") searches with the
simulator's contention model switched off, as plan --contention=false does;
every plan is still judged with it. --planners inlay,inlay+blind --versus
inlay/inlay+blind says what contention-aware scoring gains.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.scenarios, "scenarios", 20, "number of random scenarios")
	fl.StringVar(&f.planners, "planners", "single:npu,bestmap,heft,puzzle,inlay", "comma-separated planners (semicolon-separated when one has options with commas, e.g. \"bestmap;puzzle:pop=24,cut=0.01\")")
	fl.DurationVar(&f.budget, "budget", 0, "wall-clock budget per search planner and scenario (default 5s unless --evals is given)")
	fl.IntVar(&f.evals, "evals", 0, "evaluation budget per search planner and scenario (0: none)")
	fl.IntVar(&f.workers, "workers", 0, "evaluations run at once (0: all cores)")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the scenarios, the planners and the simulation")
	fl.StringVar(&f.platform, "platform", "phone", "platform preset or file")
	fl.StringArrayVar(&f.workloads, "workload", nil, "bench this workload file instead of random scenarios (repeatable)")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	fl.IntVar(&f.minModels, "min-models", 0, "least number of models in a random scenario (0: 3)")
	fl.IntVar(&f.maxModels, "max-models", 0, "most models in a random scenario (0: all nine networks)")
	fl.IntVar(&f.repeats, "repeats", 1, "run every planner this many times per scenario (planner seeds seed, seed+1, ...): min, median and max")
	fl.StringArrayVar(&f.versus, "versus", nil, "report A/B, the ratio of two planners' median scales by number of models (repeatable; default inlay/puzzle when both run)")
	addProfilesFlag(cmd)
	return cmd
}

func runBench(cmd *cobra.Command, f *benchFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	pl, err := hw.Resolve(f.platform)
	if err != nil {
		return err
	}
	in := app.BenchInput{Platform: pl, Planners: app.SplitPlanners(f.planners), Scenarios: f.scenarios, MinModels: f.minModels, MaxModels: f.maxModels,
		Seed: f.seed, Budget: f.budget, Evals: f.evals, Workers: f.workers, Repeats: f.repeats, Versus: f.versus}
	if _, err := app.BenchConfig(in); err != nil {
		return err // before the cost model and the workloads load
	}
	est, costNote, err := costModel(cmd, pl, nil)
	if err != nil {
		return err
	}
	defer printCostNote(cmd, costNote)
	in.Cost = est
	for _, path := range f.workloads {
		w, err := workload.Load(path)
		if err != nil {
			return err
		}
		in.Workloads = append(in.Workloads, w)
	}
	n := f.scenarios
	if len(in.Workloads) > 0 {
		n = len(in.Workloads)
	}
	cfg, err := app.BenchConfig(in)
	if err != nil {
		return err
	}
	bar := newBar(n*len(cfg.Planners), "bench")
	in.Progress = func(s, p int, name string) {
		if s > 0 || p > 0 {
			barAdd(bar, 1)
		}
		barDescribe(bar, fmt.Sprintf("bench: scenario %d/%d, %s", s+1, n, name))
	}
	rep, err := app.Bench(ctx, in)
	barDone(bar)
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	return writeBench(cmd.OutOrStdout(), rep)
}

// writeBench prints the per-scenario table and the summary.
func writeBench(out io.Writer, rep *bench.Report) error {
	budget := rep.Budget
	if rep.Evals > 0 {
		budget = fmt.Sprintf("%d evaluations", rep.Evals)
	}
	fmt.Fprintf(out, "platform %s, %d scenario(s), seed %d, budget %s per search planner\n", rep.Platform, len(rep.Scenarios), rep.Seed, budget)
	fmt.Fprintf(out, "precision: the random scenarios allow %s (int8 for the float zoo networks, as in Puzzle's experiment; workload files given with --workload keep their own)\n\n", workload.PrecisionYAML(workload.ScenarioPrecision))
	proven := true
	for _, sr := range rep.Scenarios {
		proven = proven && sr.BoundProven
	}
	boundNote := "bound: proven upper bound"
	if !proven {
		boundNote = "bound: an estimate where the cost model offers no per-layer lower bound (not proven)"
	}
	scale := func(r bench.PlannerResult) float64 { return r.Scale }
	if err := writeScenarioTable(out, rep, scale, true); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nmax sustainable rate scale per scenario (simulated, the planners' own periodic arrivals and seed); %s\n\n", boundNote)
	poisson := func(r bench.PlannerResult) float64 { return r.PoissonScale }
	if err := writeScenarioTable(out, rep, poisson, false); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nthe same plans judged on Poisson arrivals from seed %d, which no planner saw\n\n", rep.PoissonSeed)
	s := textfmt.Table{Header: []string{"planner", "vs single:npu", "vs bestmap", "of bound", "gap to best bound", "poisson/periodic", "vs bestmap (poisson)", "search s"}}
	for _, name := range rep.Planners {
		sm := rep.Summary[name]
		vsBM := ratio(sm.GeomeanVsBestmap, sm.CountedVsBestmap)
		if sm.VsBestmapMax > 0 {
			vsBM += fmt.Sprintf(" [%.3f, %.3f]", sm.VsBestmapMin, sm.VsBestmapMax)
		}
		s.Add(name, ratio(sm.GeomeanVsSingleNPU, sm.CountedVsSingleNPU), vsBM,
			fmt.Sprintf("%.3f", sm.MeanFractionBound), fmt.Sprintf("%.1f%%", 100*sm.MeanGapToBest), ratio(sm.GeomeanPoissonVsPeriodic, sm.CountedPoisson),
			ratio(sm.GeomeanVsBestmapPoisson, sm.CountedVsBestmapPoisson), fmt.Sprintf("%.2f", sm.MeanSearchSeconds))
	}
	if _, err := s.WriteTo(out); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nratios: geometric mean over scenarios where the baseline sustains a positive rate (n)")
	fmt.Fprintln(out, "gap to best bound: mean of (best bound − scale) / best bound, the best bound being the least of the fluid bound and the MILP's")
	if rep.Repeats > 1 {
		fmt.Fprintf(out, "repeats: %d runs per planner and scenario (planner seeds %d..%d); cells are medians, [min, max] the spread over the repeats\n", rep.Repeats, rep.Seed, rep.Seed+int64(rep.Repeats)-1)
	}
	for _, v := range rep.Versus {
		fmt.Fprintf(out, "\n%s / %s by number of models (geometric mean of median scales; [min, max] over repeats):\n", v.A, v.B)
		t := textfmt.Table{Header: []string{"models", "n", v.A + "/" + v.B, "min", "max"}}
		for _, r := range v.Rows {
			t.Add(r.Models, fmt.Sprint(r.N), fmt.Sprintf("%.3f", r.Geomean), fmt.Sprintf("%.3f", r.Min), fmt.Sprintf("%.3f", r.Max))
		}
		if _, err := t.WriteTo(out); err != nil {
			return err
		}
	}
	for _, sr := range rep.Scenarios {
		for _, r := range sr.Results {
			if r.Error != "" {
				fmt.Fprintf(out, "scenario %d %s: %s\n", sr.Index, r.Planner, r.Error)
			}
		}
	}
	return nil
}

// writeScenarioTable prints one figure of every planner per scenario,
// with the bound when withBound.
func writeScenarioTable(out io.Writer, rep *bench.Report, fig func(bench.PlannerResult) float64, withBound bool) error {
	header := append([]string{"#", "models"}, rep.Planners...)
	if withBound {
		header = append(header, "bound", "best bound")
	}
	t := textfmt.Table{Header: header}
	for _, sr := range rep.Scenarios {
		row := []string{fmt.Sprint(sr.Index), fmt.Sprint(len(sr.Models))}
		for _, r := range sr.Results {
			if r.Error != "" {
				row = append(row, "error")
				continue
			}
			cell := fmt.Sprintf("%.3f", fig(r))
			if withBound && len(r.Repeats) > 1 {
				cell += fmt.Sprintf(" [%.3f, %.3f]", r.Min, r.Max)
			}
			if withBound && r.MILPBound > 0 {
				cell += fmt.Sprintf(" (bound %.3f, gap %.1f%%)", r.MILPBound, 100*r.MILPGap)
			}
			row = append(row, cell)
		}
		if withBound {
			row = append(row, fmt.Sprintf("%.3f", sr.UpperBound), fmt.Sprintf("%.3f", sr.BestBound))
		}
		t.Add(row...)
	}
	_, err := t.WriteTo(out)
	return err
}

func ratio(x float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx (n=%d)", x, n)
}
