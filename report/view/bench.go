package view

import (
	"fmt"
	"io"

	"github.com/inlay-dev/inlay/bench"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/workload"
)

// Bench prints the bench's per-scenario tables and the summary.
func Bench(out io.Writer, rep *bench.Report) error {
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
	if err := scenarioTable(out, rep, scale, true); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nmax sustainable rate scale per scenario (simulated, the planners' own periodic arrivals and seed); %s\n\n", boundNote)
	poisson := func(r bench.PlannerResult) float64 { return r.PoissonScale }
	if err := scenarioTable(out, rep, poisson, false); err != nil {
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

// scenarioTable prints one figure of every planner per scenario,
// with the bound when withBound.
func scenarioTable(out io.Writer, rep *bench.Report, fig func(bench.PlannerResult) float64, withBound bool) error {
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
