package view

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/profile"
)

// ProfileStart prints what the profile's first round measures.
func ProfileStart(out io.Writer, rs app.RoundStart) {
	var kinds []string
	for _, k := range rs.Kinds {
		kinds = append(kinds, fmt.Sprintf("%d %s", k.Count, k.Kind))
	}
	fmt.Fprintf(out, "%d subgraphs to measure (%s), on %s\n", rs.Jobs, strings.Join(kinds, ", "), strings.Join(rs.Classes, "; "))
}

// ProfileRound prints a profile round's summary; cycles and rounds are the
// --cycles and --rounds asked for.
func ProfileRound(out io.Writer, r app.Round, cycles, rounds int) {
	sum := r.Summary
	if r.Round == 1 {
		fmt.Fprintf(out, "measured %d, already stored %d, failed %d in %s\n", sum.Measured, sum.Skipped, sum.Failed, sum.Elapsed.Round(time.Millisecond))
	} else if sum.Measured+sum.Failed > 0 {
		fmt.Fprintf(out, "round %d: the planners planned again with the measurements: %d new subgraph(s) of their plans measured, %d already stored, failed %d in %s\n",
			r.Round, sum.Measured, sum.Skipped, sum.Failed, sum.Elapsed.Round(time.Millisecond))
	}
	for _, msg := range sum.Failures {
		fmt.Fprintf(out, "  failed: %s\n", msg)
	}
	if sum.Cycled > 0 {
		fmt.Fprintf(out, "cycle figures: %d subgraphs timed in their plan's cycle (%d steps, %d timed rounds each)\n", sum.Cycled, sum.CycleSteps, cycles)
	}
	if sum.CycleNote != "" {
		fmt.Fprintf(out, "cycle figures: %s\n", sum.CycleNote)
	}
	if sum.Failed > len(sum.Failures) {
		fmt.Fprintf(out, "  … and %d more (stored with their errors; --force retries them)\n", sum.Failed-len(sum.Failures))
	}
	switch {
	case r.Round > 1 && sum.Measured+sum.Failed == 0:
		fmt.Fprintf(out, "the planners' plans with the measurements: every subgraph measured (after %d rounds)\n", r.Round)
	case r.Round > 1 && r.Round == rounds:
		fmt.Fprintf(out, "the planners' plans still changed in round %d (--rounds %d): a plan made from the store may have subgraphs the calibrated model estimates\n", r.Round, rounds)
	}
}

// Speed says what the speed guard did (profile.SlowRatio).
func Speed(out io.Writer, s profile.SpeedStats) {
	if s.Phases == 0 {
		return
	}
	fmt.Fprintf(out, "speed guard: %d phases measured; %d waited for a core at normal speed (%s in all), %d timed again after a slow spell, %d accepted in one\n",
		s.Phases, s.Waits, s.Waited.Round(100*time.Millisecond), s.Retimed, s.Slow)
	if len(s.Cores) == 0 {
		return
	}
	parts := make([]string, len(s.Cores))
	for i, c := range s.Cores {
		parts[i] = fmt.Sprintf("core %d %s (median %s, %d of %d slow)", c.Core, fmtUS(c.Normal), fmtUS(c.Median), c.Slow, c.Checks)
	}
	fmt.Fprintf(out, "normal speed the figures were taken at (reference time; stored, and inlay run sets its own beside it): %s\n", strings.Join(parts, ", "))
}

// HandOffLine says what the hand-off probes measured.
func HandOffLine(r app.HandOffResult) string {
	if r.Skipped != "" {
		return fmt.Sprintf("hand-off: not measured (%s)", r.Skipped)
	}
	var line []string
	for _, pr := range r.Probes {
		mode := "pinned"
		if pr.Unpinned {
			mode = "unpinned"
		}
		l := fmt.Sprintf("%s: same processor %v, %s to %s %v", mode, pr.Same.Round(time.Microsecond), pr.Procs[0], pr.Procs[1], pr.Cross.Round(time.Microsecond))
		if len(pr.CrossAfter) > 0 {
			var pts []string
			for _, p := range pr.CrossAfter {
				pts = append(pts, fmt.Sprintf("%v after %v", p.Gap.Round(time.Microsecond), p.After.Round(10*time.Microsecond)))
			}
			l += " (" + strings.Join(pts, ", ") + ")"
		}
		var starts []string
		if d, ok := pr.Starts.For(true); ok {
			starts = append(starts, fmt.Sprintf("%v with the loop sleeping", d.Round(time.Microsecond)))
		}
		if d, ok := pr.Starts.For(false); ok {
			starts = append(starts, fmt.Sprintf("%v polling", d.Round(time.Microsecond)))
		}
		if len(starts) > 0 {
			l += ", arrival to first subgraph " + strings.Join(starts, ", ")
		}
		line = append(line, l)
	}
	return "hand-off between dependent subgraphs (median of each kind, runtime.ProbeHandOff): " + strings.Join(line, "; ")
}

// Calibration prints a calibration's table; detail adds each class's
// fitted factors.
func Calibration(out io.Writer, r *app.CalibrationResult, detail bool) error {
	if r.Fit == nil {
		fmt.Fprintf(out, "calibration: no measurements of this workload's models on %s to fit\n", r.Device)
		return nil
	}
	t := textfmt.Table{Header: []string{"PROCESSOR", "STANDS FOR", "FITTED ON", "HELD BACK", "KEPT OUT", "MAPE BEFORE", "MAPE AFTER",
		"VS MEDIANS BEFORE", "VS MEDIANS AFTER", "FIT MAPE AFTER"}}
	for _, c := range r.Fit.Classes {
		t.Add(c.Processor, strings.Join(c.Members, ","), fmt.Sprint(c.Fit), fmt.Sprint(c.Held), fmt.Sprint(c.Excluded),
			pct(c.MAPEBefore), pct(c.MAPEAfter), pct(c.MedianMAPEBefore), pct(c.MedianMAPEAfter), pct(c.FitMAPEAfter))
	}
	fit := fitTarget[r.Options.FitOn]
	fmt.Fprintf(out, "calibration on %s, fitted to each measurement's %s: mean absolute percentage error of the analytic\n"+
		"model on the subgraphs held back from the fit (%d-fold cross-validation; against the %s, and against the medians);\n"+
		"kept out: samples left out of a fold's fit because they share a layer with one of its held-back subgraphs\n", r.Device, fit, r.Options.Folds, fit)
	if _, err := t.WriteTo(out); err != nil {
		return err
	}
	for _, c := range r.Fit.Classes {
		if c.Cold.Samples > 0 {
			fmt.Fprintf(out, "%s: cold-cache correction of the figures for unmeasured subgraphs, from %d measurement(s) with cold runs: held-back error against the cold runs %s without, %s with it\n",
				c.Processor, c.Cold.Samples, pct(c.ColdMAPEBefore), pct(c.ColdMAPEAfter))
		}
	}
	if detail {
		return fittedFactors(out, r.Fit)
	}
	return nil
}

// fittedFactors prints each class's fitted factors.
func fittedFactors(out io.Writer, cal *profile.Calibration) error {
	for _, c := range cal.Classes {
		e := c.After
		fmt.Fprintf(out, "\n%s (%d evaluations): peak ×%.3g, bandwidth ×%.3g, memory efficiency %.3g, half_flops %.3g,\n"+
			"  dispatch %s, layer %s, cache %s at ×%.3g bandwidth, copies in and out %.3g GB/s\n", c.Processor, c.Evals,
			e.PeakScale, e.BandwidthScale, e.Memory, e.HalfFLOPs, e.DispatchOverhead, e.LayerOverhead,
			textfmt.Bytes(e.CacheBytes), e.CacheBandwidthScale, e.BoundaryGBs)
		ct := textfmt.Table{Header: []string{"CLASS", "BEFORE", "AFTER"}}
		for _, oc := range cost.OpClasses {
			if _, ok := e.Compute[oc]; ok {
				ct.Add(string(oc), fmt.Sprintf("%.3g", c.Before.Of(oc)), fmt.Sprintf("%.3g", e.Of(oc)))
			}
		}
		if _, err := ct.WriteTo(out); err != nil {
			return err
		}
	}
	return nil
}

// fitTarget names each --fit-on figure in the calibration's report.
var fitTarget = map[string]string{"min": "min", "median": "median", "cold": "cold runs' median"}

// Coruns prints the co-run profiles the store holds for the device (cs):
// each subgraph's fitted sensitivity, its slowdowns, and, beside its real
// neighbours, the measured slowdown against the stream fit's prediction;
// stored is how many the profile stored now.
func Coruns(out io.Writer, cs []profile.Corun, stored int) error {
	fmt.Fprintf(out, "co-run profiles: %d stored now, %d for the device\n", stored, len(cs))
	if len(cs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "subgraph\ton\talone\tstream 25/50/100 %\tk\tbeside the plan\tpredicted\t")
	var errs []float64
	for _, c := range cs {
		var pts []string
		for _, p := range c.Points {
			if p.GBs > 0 {
				pts = append(pts, fmt.Sprintf("%.2f", p.Slowdown))
			}
		}
		real, pred := "-", "-"
		if c.Real > 0 {
			real, pred = fmt.Sprintf("%.2fx", c.Real), fmt.Sprintf("%.2fx", c.Predicted)
			errs = append(errs, math.Abs(c.Predicted-c.Real)/c.Real)
		}
		fmt.Fprintf(tw, "%s [%s]\t%s\t%v\t%s\t%.3f\t%s\t%s\t\n", c.ModelName, c.Layers, c.Processor, c.Alone.Round(time.Microsecond), strings.Join(pts, " "), c.K, real, pred)
	}
	tw.Flush()
	if len(errs) > 0 {
		sort.Float64s(errs)
		fmt.Fprintf(out, "beside the plan's subgraphs, the stream fit predicts the slowdown within %.1f %% (median of %d), before they join the fit\n", 100*errs[len(errs)/2], len(errs))
	}
	return nil
}
