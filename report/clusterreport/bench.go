package clusterreport

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/cluster/bench"
	"github.com/inlay-dev/inlay/cluster/siabench"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/report"
)

// WriteBench writes Gavel's experiments: a row per experiment, rate and
// policy beside Gavel's figure, the lower bounds and the failed runs.
func WriteBench(w io.Writer, rep *bench.Report) {
	fmt.Fprintf(w, "cluster %s, window %d:%d\n", rep.Cluster, rep.Window[0], rep.Window[1])
	tb := textfmt.Table{Header: []string{"experiment", "rate", "policy", "mean", "per seed", "Gavel", "ratio", "sim s"}}
	for _, r := range rep.Rows {
		unit := "h JCT"
		rate := strconv.FormatFloat(r.Rate, 'g', -1, 64)
		if r.Experiment == bench.Static {
			unit = "h makespan"
			rate += " jobs"
		}
		var per []string
		for _, v := range r.PerSeed {
			per = append(per, fmt.Sprintf("%.1f", v))
		}
		pub, ratio := "", ""
		if r.Published > 0 {
			pub = fmt.Sprintf("%.1f", r.Published)
			ratio = fmt.Sprintf("%.2f", r.Mean/r.Published)
		}
		mean := fmt.Sprintf("%.2f %s", r.Mean, unit)
		if r.Failed > 0 {
			mean += fmt.Sprintf(" (%d failed)", r.Failed)
		}
		if r.Exhausted > 0 {
			mean += fmt.Sprintf(" (%d drained)", r.Exhausted)
		}
		if r.Fallbacks > 0 {
			mean += fmt.Sprintf(" (%d LP fallbacks)", r.Fallbacks)
		}
		tb.Add(r.Experiment, rate, r.Policy, mean, strings.Join(per, " "), pub, ratio, fmt.Sprintf("%.0f", r.Wall))
	}
	tb.WriteTo(w) //nolint:errcheck
	writeBounds(w, rep)
	for _, r := range rep.Runs {
		if r.Err != "" {
			fmt.Fprintf(w, "failed: %s %g %s seed %d: %s\n", r.Experiment, r.Rate, r.Policy, r.Seed, r.Err)
		}
	}
}

// writeBounds writes the bench's average-JCT and static lower bounds.
func writeBounds(w io.Writer, rep *bench.Report) {
	if len(rep.JCTBounds) > 0 {
		fmt.Fprintln(w, "\naverage-JCT lower bound (h): every window job alone on its fastest GPU from its arrival")
		jt := textfmt.Table{Header: []string{"experiment", "rate", "seed", "bound", "holds with sharing"}}
		for _, b := range rep.JCTBounds {
			jt.Add(b.Experiment, strconv.FormatFloat(b.Rate, 'g', -1, 64), strconv.FormatUint(b.Seed, 10), fmt.Sprintf("%.2f", b.Hours), fmt.Sprintf("%v", b.SharingValid))
		}
		jt.WriteTo(w) //nolint:errcheck
	}
	if len(rep.Bounds) > 0 {
		fmt.Fprintln(w, "\nstatic lower bounds (h): longest job alone on its fastest GPU; fluid makespan LP")
		bt := textfmt.Table{Header: []string{"seed", "longest job", "fluid LP", "longest bounds sharing"}}
		for _, b := range rep.Bounds {
			note := fmt.Sprintf("%v", b.SharingValid)
			if b.Err != "" {
				note += " (" + b.Err + ")"
			}
			bt.Add(strconv.FormatUint(b.Seed, 10), fmt.Sprintf("%.2f", b.Longest), fmt.Sprintf("%.2f", b.Fluid), note)
		}
		bt.WriteTo(w) //nolint:errcheck
	}
}

// BenchPlot is the picture of one continuous experiment of a bench:
// average JCT against rate, a line per policy.
type BenchPlot struct {
	Experiment string
	Title      string
	Series     []report.Series
}

// Draw writes the picture as SVG or PNG (format "svg" or "png").
func (p BenchPlot) Draw(w io.Writer, format string) error {
	return report.JCTvsRate(w, format, p.Title, p.Series)
}

// BenchPlots are the pictures of the bench's continuous experiments that
// have rows, single-GPU first.
func BenchPlots(rep *bench.Report) []BenchPlot {
	var out []BenchPlot
	for _, exp := range []string{bench.Single, bench.Multi} {
		byPolicy := map[string]*report.Series{}
		var order []string
		for _, r := range rep.Rows {
			if r.Experiment != exp || len(r.PerSeed) == 0 {
				continue
			}
			s, ok := byPolicy[r.Policy]
			if !ok {
				s = &report.Series{Name: r.Policy}
				byPolicy[r.Policy] = s
				order = append(order, r.Policy)
			}
			s.X = append(s.X, r.Rate)
			s.Y = append(s.Y, r.Mean)
		}
		if len(order) == 0 {
			continue
		}
		p := BenchPlot{Experiment: exp}
		for _, pol := range order {
			p.Series = append(p.Series, *byPolicy[pol])
		}
		p.Title = fmt.Sprintf("%s-GPU jobs on %s, jobs %d-%d", map[string]string{bench.Single: "single", bench.Multi: "multi"}[exp], rep.Cluster, rep.Window[0], rep.Window[1])
		out = append(out, p)
	}
	return out
}

// WriteSiaBench writes Sia's experiments: per experiment a line with its
// workloads and lower bound, a row per policy, and the failed runs.
func WriteSiaBench(w io.Writer, rep *siabench.Report) {
	for _, e := range rep.Experiments {
		fmt.Fprintf(w, "%s: %d workloads, %d jobs; proven lower bound on average JCT %.3f h (%.3f h without mixed gangs; %s)\n", e.Name, len(e.Files), e.Jobs, e.LowerBound, e.SingleTypeBound, e.BoundBy)
		tb := textfmt.Table{Header: []string{"policy", "round", "mixed", "avg JCT h", "published", "p99 h", "makespan h", "GPU-h/job", "restarts/job", "solve p50 s", "p95 s", "mixed gangs/round"}}
		for _, r := range e.Rows {
			pub := ""
			if r.Published > 0 {
				pub = fmt.Sprintf("%.1f (%+.0f%%)", r.Published, 100*(r.AvgJCT/r.Published-1))
			}
			avg := fmt.Sprintf("%.2f", r.AvgJCT)
			if len(r.Failed) > 0 {
				avg += fmt.Sprintf(" (%d failed)", len(r.Failed))
			}
			tb.Add(r.Policy, fmt.Sprintf("%.0fs", r.RoundSeconds), fmt.Sprintf("%v", r.Mixed), avg, pub,
				fmt.Sprintf("%.2f", r.P99JCT), fmt.Sprintf("%.1f", r.Makespan), fmt.Sprintf("%.2f", r.GPUHoursPerJob),
				fmt.Sprintf("%.2f", r.RestartsPerJob), fmt.Sprintf("%.3f", r.SolveP50), fmt.Sprintf("%.3f", r.SolveP95), fmt.Sprintf("%.2f", r.MixedShare))
		}
		tb.WriteTo(w) //nolint:errcheck
		for _, r := range e.Rows {
			for _, f := range r.Failed {
				fmt.Fprintf(w, "failed: %s %s: %s\n", e.Name, r.Policy, f)
			}
		}
		fmt.Fprintln(w)
	}
}
