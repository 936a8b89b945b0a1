package view

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/profile"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/runtime"
)

// Run prints a run session: the summary, the measured latencies beside
// the predictions, the runtime's own delays and the host's speed; with
// subgraphs, each subgraph's spans and each group's requests split up.
func Run(out io.Writer, workloadPath string, pl *hw.Platform, s *app.RunSession, subgraphs bool) error {
	res, j := s.Runtime, s.Result
	if res.Interrupted {
		fmt.Fprintf(out, "interrupted after %v\n", res.Elapsed.Round(time.Millisecond))
	}
	for _, wn := range res.Warnings {
		fmt.Fprintf(out, "warning: %s\n", wn)
	}
	if j.CostModel != "" {
		fmt.Fprintln(out, j.CostModel)
	}
	sum := report.Summary{
		Workload: workloadPath, Platform: pl.Name, Planner: j.Planner, Source: "measured",
		Scale: res.Scale, Horizon: res.Duration,
	}
	for _, g := range res.Groups {
		sum.Groups = append(sum.Groups, report.GroupRow{
			Name: g.Name, RateHz: g.OfferedHz, Deadline: g.Deadline, Requests: g.Requests,
			Completed: g.Completed, Late: g.Late, Dropped: g.Dropped, P50: g.P50, P99: g.P99, MissRate: g.MissRate,
		})
	}
	for i, pr := range res.Procs {
		sum.Procs = append(sum.Procs, report.ProcRow{Name: pr.Name, Kind: pl.Processors[i].Kind, Utilisation: pr.Utilisation, Busy: pr.Busy})
	}
	if err := report.Text(out, sum); err != nil {
		return err
	}
	if s.LagFrom != "" {
		fmt.Fprintf(out, "\nmeasured against the simulator's prediction for the same plan and rate (plus %s):\n", s.LagFrom)
	} else {
		fmt.Fprintln(out, "\nmeasured against the simulator's prediction for the same plan and rate:")
	}
	if j.Probe != nil {
		fmt.Fprintln(out, ProbeLine(j.Probe))
	}
	if err := runGroups(out, j); err != nil {
		return err
	}
	fmt.Fprintf(out, "tensors handed between subgraphs without a copy: %d, copied: %d\n", res.ZeroCopy, res.Copied)
	fmt.Fprintf(out, "runtime's own delays per task (mean): hand-off to a worker %v, report back %v; per request: arrival lag %v (median %v)\n",
		res.HandOff.Round(time.Microsecond), res.Report.Round(time.Microsecond), res.ArrivalLag.Round(time.Microsecond), res.ArrivalLagP50.Round(time.Microsecond))
	if line := SpeedLine(j.Speed); line != "" {
		fmt.Fprintln(out, line)
	}
	if !subgraphs {
		return nil
	}
	fmt.Fprintf(out, "\nper subgraph, median span (alone: other processors busy for under %.0f%% of it; beside: the rest):\n", 100*report.BesideShare)
	if err := report.WriteSpanStats(out, report.CompareSpans(res.Spans, res.PredictedSpans)); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nper group, where a request's time goes (predicted → measured; the mean latency's parts, means over the requests: before the first, from its arrival to its first subgraph; in subgraphs; between them, its work done and the next not started):")
	return report.WriteRequestStats(out, report.CompareRequests(res.Spans, res.PredictedSpans))
}

// RunStages says on errOut what a run of planFile on platform for
// duration does as it reaches each stage (app.RunInput.Stage).
func RunStages(errOut io.Writer, planFile, platform string, duration time.Duration) func(app.RunStage) {
	return func(st app.RunStage) {
		switch st {
		case app.StageProbing:
			fmt.Fprintf(errOut, "probing the plan's subgraphs at the host's speed now (%d rounds)…\n", profile.ProbeRounds)
		case app.StageRunning:
			fmt.Fprintf(errOut, "running %s on %s for %v (Ctrl-C stops)…\n", planFile, platform, duration)
		}
	}
}

// runGroups prints each group's measured latencies beside the
// predictions, and its drops.
func runGroups(out io.Writer, j *app.RunResult) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	nowHead := ""
	if j.Probe != nil {
		nowHead = "\tat speed now"
	}
	fmt.Fprintln(tw, "group\tp50\tpredicted p50\tuncontended"+nowHead+"\tp99\tpredicted p99\tdropped (reasons)")
	for _, g := range j.Groups {
		var reasons []string
		for _, d := range g.Drops {
			reasons = append(reasons, fmt.Sprintf("%s %d", d.Reason, d.Count))
		}
		now := ""
		if j.Probe != nil {
			now = "\t" + fmtMs(g.PredictedNowP50Ms)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%s\t%s\t%d %s\n", g.Name, fmtMs(g.P50Ms), fmtMs(g.PredictedP50Ms), fmtMs(g.PredictedUncontendedP50Ms), now,
			fmtMs(g.P99Ms), fmtMs(g.PredictedP99Ms), g.Dropped, strings.Join(reasons, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range j.Groups {
		for _, d := range g.Drops {
			fmt.Fprintf(out, "%s: first %s drop: %s\n", g.Name, d.Reason, d.Example)
		}
	}
	return nil
}

// ProbeLine says what the speed probe measured.
func ProbeLine(p *app.Probe) string {
	q := make([]float64, len(p.Subgraphs))
	for i, s := range p.Subgraphs {
		q[i] = s.Ratio
	}
	slices.Sort(q)
	var parts []string
	for _, pr := range p.Processors {
		parts = append(parts, fmt.Sprintf("%s %.2f×", pr.Processor, pr.Ratio))
	}
	elapsed := time.Duration(p.ElapsedS * float64(time.Second))
	s := fmt.Sprintf("speed probe before the run (%v, the plan's %d subgraph(s), each %.2f–%.2f× its profiled warm figure): %s (median per processor); \"at speed now\" predicts with each processor's figures times its ratio",
		elapsed.Round(10*time.Millisecond), len(q), q[0], q[len(q)-1], strings.Join(parts, ", "))
	if p.Warning != "" {
		s += "; " + p.Warning
	}
	return s
}

// SpeedLine says what the speed check saw during the run ("" when it did
// not run).
func SpeedLine(speed []app.CoreSpeed) string {
	if len(speed) == 0 {
		return ""
	}
	parts := make([]string, len(speed))
	slow := 0
	for i, c := range speed {
		parts[i] = fmt.Sprintf("core %d slow in %d of %d checks (reference %.1fµs, median %.1fµs", c.Core, c.Slow, c.Checks, c.NormalUs, c.MedianUs)
		if c.Ratio > 0 {
			parts[i] += fmt.Sprintf("; the profile's %.1fµs, %.2f× it", c.ProfiledUs, c.Ratio)
		}
		parts[i] += ")"
		slow += c.Slow
	}
	line := "host speed during the run: " + strings.Join(parts, ", ")
	if slow > 0 {
		line += "; a core in a slow spell runs at up to half its speed, and the prediction is for its normal speed"
	}
	return line + "; a run slow throughout shows in its reference time, not its slow checks"
}

// AgentRun prints what an agent's run of planFile measured (res, and j
// its groups), with predictedBy naming the predictions' cost model.
func AgentRun(out io.Writer, planFile, url, predictedBy string, res *runtime.Result, j *app.RunResult) error {
	fmt.Fprintf(out, "ran %s on the agent at %s for %v (scale %g)\n", planFile, url, res.Duration, res.Scale)
	if res.Interrupted {
		fmt.Fprintln(out, "interrupted")
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	fmt.Fprintf(out, "predictions: %s\n", predictedBy)
	t := &textfmt.Table{Header: []string{"GROUP", "REQUESTS", "COMPLETED", "LATE", "DROPPED", "P50", "PREDICTED P50", "P99", "PREDICTED P99"}}
	for _, g := range j.Groups {
		t.Add(g.Name, strconv.Itoa(g.Requests), strconv.Itoa(g.Completed), strconv.Itoa(g.Late), strconv.Itoa(g.Dropped),
			fmt.Sprintf("%.2fms", g.P50Ms), fmt.Sprintf("%.2fms", g.PredictedP50Ms), fmt.Sprintf("%.2fms", g.P99Ms), fmt.Sprintf("%.2fms", g.PredictedP99Ms))
	}
	if _, err := t.WriteTo(out); err != nil {
		return err
	}
	for _, g := range j.Groups {
		for _, d := range g.Drops {
			fmt.Fprintf(out, "%s: %d dropped (%s), first: %s\n", g.Name, d.Count, d.Reason, d.Example)
		}
	}
	return nil
}
