// Package trainreport renders the training wing's results (inlay train)
// for people and scripts: an iteration's prediction, each GPU's memory,
// the model and GPU presets, a plan with its bound, the planners'
// benchmark and a calibration, as aligned text tables or JSON, each
// written to an io.Writer. It computes nothing the train packages did not.
package trainreport

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/internal/outfile"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/train/planner"
)

// JSON writes v as indented JSON, the form of every inlay train --json.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// MemoryDoc is inlay train memory --json's document.
type MemoryDoc struct {
	Fits            bool                `json:"fits"`
	Reason          string              `json:"reason,omitempty"`
	PeakMemoryBytes float64             `json:"peak_memory_bytes"`
	Stages          []train.StageResult `json:"stages"`
}

// Memory is r's memory document.
func Memory(r *train.Result) MemoryDoc {
	return MemoryDoc{Fits: r.Fits, Reason: r.Reason, PeakMemoryBytes: r.PeakMemoryBytes, Stages: r.Stages}
}

// ModelsDoc is inlay train models --json's document.
type ModelsDoc struct {
	Models []train.Model `json:"models"`
	// Networks are the zoo networks that train as graph networks
	// (--model zoo:NAME), with their default --input.
	Networks []train.NetworkInfo `json:"networks"`
	GPUs     []train.GPU         `json:"gpus"`
}

// Models is the presets' document.
func Models() ModelsDoc { return ModelsDoc{train.Presets(), train.Networks(), train.GPUs()} }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// WriteModels writes the model presets' table, the graph networks' table
// and the GPU types' table, a blank line between them.
func WriteModels(w io.Writer) error {
	t := textfmt.Table{Header: []string{"MODEL", "PARAMS", "HIDDEN", "LAYERS", "HEADS", "KV", "FFN", "VOCAB", "SEQ"}}
	for _, m := range train.Presets() {
		ffn := m.FFN
		if ffn == 0 {
			ffn = 4 * m.Hidden
		}
		kv := m.KVHeads
		if kv == 0 {
			kv = m.Heads
		}
		t.Add(m.Name, textfmt.Count(m.Params()), fmt.Sprint(m.Hidden), fmt.Sprint(m.Layers), fmt.Sprint(m.Heads), fmt.Sprint(kv), fmt.Sprint(ffn), fmt.Sprint(m.Vocab), fmt.Sprint(m.Seq))
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	n := textfmt.Table{Header: []string{"GRAPH NETWORK", "INPUT", "PARAMS", "GFLOP/SAMPLE", "LAYERS"}}
	for _, x := range train.Networks() {
		in := x.Input
		if x.Fixed {
			in += " (only)"
		}
		n.Add(x.Name, in, textfmt.Count(x.Params), fmt.Sprintf("%.2f", x.ForwardFLOPs/1e9), fmt.Sprint(x.Layers))
	}
	if _, err := n.WriteTo(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	g := textfmt.Table{Header: []string{"GPU", "TENSOR TFLOPS", "MEMORY GB", "GB/S", "LINK GB/S", "CALIBRATED", "ALIASES"}}
	for _, x := range train.GPUs() {
		g.Add(x.Name, fmt.Sprint(x.TensorTFLOPS), fmt.Sprint(x.MemoryGB), fmt.Sprint(x.MemBandwidthGBs), fmt.Sprint(x.LinkGBs), yesNo(x.Calibrated), strings.Join(x.Aliases, ", "))
	}
	_, err := g.WriteTo(w)
	return err
}

// WriteResult writes an iteration's prediction: the plan in a line, the
// headline figures, the plan file's measurement when it has one, and a
// row per stage of each replica.
func WriteResult(w io.Writer, req *train.Request, r *train.Result) error {
	fits := "fits"
	if !r.Fits {
		fits = "does NOT fit: " + r.Reason
	}
	cp := ""
	if c := req.Plan.ContextParallel(); c > 1 {
		cp = fmt.Sprintf(", context parallel %d", c)
	}
	shape := fmt.Sprintf("%d stages × %d replicas", req.Plan.PP(), req.Plan.DP())
	repl := "REPLICA"
	if req.Plan.StageDP() {
		var dp []string
		for _, g := range req.Plan.Groups {
			dp = append(dp, strconv.Itoa(g.DP()))
		}
		shape = fmt.Sprintf("%d stages of %s data-parallel ranks", req.Plan.PP(), strings.Join(dp, ", "))
		repl = "RANKS" // a stage's identical ranks: the row's entry, then how many
	}
	fmt.Fprintf(w, "%s on %d GPUs (%s): %s%s, micro-batch %d, global batch %d, %s, recompute %s, ZeRO %d, %s\n",
		req.Model.Name, r.GPUs, req.Cluster.Name, shape, cp, req.Plan.MicroBatch, req.Plan.GlobalBatch,
		req.Plan.Schedule, req.Plan.Recompute, req.Plan.Zero, req.Plan.Precision)
	fmt.Fprintf(w, "iteration %s   %s %s   MFU %.1f%%   bubble %.1f%%   peak memory %s   %s\n",
		textfmt.SI(r.IterationS, "s"), textfmt.SI(r.TokensPerS, ""), rateUnit(r.SamplesPerS > 0), 100*r.MFU, 100*r.Bubble, textfmt.Bytes(int64(r.PeakMemoryBytes)), fits)
	if req.Sailor != nil && req.Sailor.MeasuredIterationS > 0 {
		fmt.Fprintf(w, "the plan file's measurement: %s per iteration, %s peak (nvidia-smi)\n",
			textfmt.SI(req.Sailor.MeasuredIterationS, "s"), textfmt.Bytes(int64(req.Sailor.MeasuredPeakMemoryBytes)))
	}
	t := textfmt.Table{Header: []string{repl, "STAGE", "GPU", "TP", "LAYERS", "FWD/MB", "BWD/MB", "COMPUTE", "GRAD SYNC", "OPTIMIZER", "MEMORY", "FITS"}}
	for _, s := range r.Stages {
		who := fmt.Sprint(s.Replica)
		if s.Ranks > 0 {
			who = fmt.Sprintf("%d×", s.Ranks)
		}
		t.Add(who, fmt.Sprint(s.Stage), s.GPU, fmt.Sprint(s.TP), fmt.Sprintf("%d-%d", s.Layers.First, s.Layers.Last),
			textfmt.SI(s.ForwardS, "s"), textfmt.SI(s.BackwardS, "s"), textfmt.SI(s.ComputeS, "s"), textfmt.SI(s.SyncS, "s"), textfmt.SI(s.OptimizerS, "s"),
			textfmt.Bytes(int64(s.Memory.Total)), yesNo(s.Fits))
	}
	_, err := t.WriteTo(w)
	return err
}

// rateUnit is the throughput's unit: samples a second for a graph
// network, else tokens.
func rateUnit(samples bool) string {
	if samples {
		return "samples/s"
	}
	return "tokens/s"
}

// WriteMemory writes the peak and a row per stage of each replica with
// its memory by kind against the GPU's capacity.
func WriteMemory(w io.Writer, r *train.Result) error {
	fits := "every GPU fits"
	if !r.Fits {
		fits = "does NOT fit: " + r.Reason
	}
	fmt.Fprintf(w, "peak %s per GPU; %s\n", textfmt.Bytes(int64(r.PeakMemoryBytes)), fits)
	t := textfmt.Table{Header: []string{"REPLICA", "STAGE", "GPU", "TP", "PARAMS", "GRADS", "OPTIMIZER", "ACTIVATIONS", "BUFFERS", "ALLOCATOR", "TOTAL", "CAPACITY", "FITS"}}
	b := func(x float64) string { return textfmt.Bytes(int64(x)) }
	for _, s := range r.Stages {
		m := s.Memory
		who := fmt.Sprint(s.Replica)
		if s.Ranks > 0 {
			who = fmt.Sprintf("%d×", s.Ranks)
		}
		t.Add(who, fmt.Sprint(s.Stage), s.GPU, fmt.Sprint(s.TP), b(m.Parameters), b(m.Gradients), b(m.Optimizer), b(m.Activations), b(m.Buffers), b(m.Allocator), b(m.Total), b(s.CapacityBytes), yesNo(s.Fits))
	}
	_, err := t.WriteTo(w)
	return err
}

// WriteTrace writes the iteration's timeline (a result predicted with
// spans) as Chrome trace events.
func WriteTrace(w io.Writer, r *train.Result) error {
	rows, spans := r.Timelines()
	return report.ChromeTrace(w, rows, spans)
}

// WriteGantt draws the iteration's timeline as a Gantt chart.
func WriteGantt(w io.Writer, format report.GanttFormat, r *train.Result) error {
	rows, spans := r.Timelines()
	return report.Gantt(w, format, "training iteration", rows, spans, [2]time.Duration{})
}

// WritePlan writes a found plan: the planner, target and objective, the
// plan's shape, throughput beside its bound, memory, cost, the search, a
// row per stage and, with explain, why each stage is as it is.
func WritePlan(w io.Writer, pf *train.PlanFile, res *planner.Result, explain bool) error {
	fmt.Fprintf(w, "planner %s: %s on %s (%s)\n", pf.Planner, pf.Model, pf.Cluster, pf.Objective)
	fmt.Fprintf(w, "plan: %s, global batch %d, ZeRO %d, %s\n", planner.Shape(res.Plan), res.Plan.GlobalBatch, res.Plan.Zero, res.Plan.Precision)
	unit := rateUnit(pf.SamplesPerS > 0)
	fmt.Fprintf(w, "throughput: %.0f %s (iteration %.3f s) on %d GPUs\n", pf.TokensPerS, unit, pf.IterationS, pf.GPUs)
	fmt.Fprintf(w, "bound: %.0f %s; the plan reaches %.1f %% of it\n", pf.BoundTokensPerS, unit, 100*pf.Fraction)
	fmt.Fprintf(w, "memory: peak %.1f GiB, least headroom %.1f GiB; fits: %v\n", pf.PeakMemoryBytes/(1<<30), pf.HeadroomBytes/(1<<30), pf.Fits)
	if pf.DollarsPerH > 0 {
		fmt.Fprintf(w, "cost: $%.2f an hour, $%.4f per million tokens\n", pf.DollarsPerH, pf.DollarsPerMTokens)
	}
	if pf.HoursToBudget > 0 {
		fmt.Fprintf(w, "time to the token budget: %.1f h\n", pf.HoursToBudget)
	}
	fmt.Fprintf(w, "search: %.3f s, %d plans simulated\n", pf.SearchSeconds, pf.Evaluated)
	head := "replicas (GPU, TP)"
	if res.Plan.StageDP() {
		head = "ranks (GPU, TP, sequences of each micro-batch)"
	}
	t := &textfmt.Table{Header: []string{"stage", "layers", head}}
	for s, r := range res.Plan.Stages {
		t.Add(strconv.Itoa(s), fmt.Sprintf("%d-%d", r.First, r.Last), stageKinds(res.Plan, s))
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	if explain && res.Explain != nil {
		for _, c := range res.Explain.Choices {
			fmt.Fprintf(w, "why: %s\n", c)
		}
		for _, s := range res.Explain.Stages {
			fmt.Fprintf(w, "stage %d: %s; binding: %s; %s\n", s.Stage, s.LayersWhy, s.Binding, strings.Join(s.Kinds, "; "))
		}
		fmt.Fprintf(w, "binding overall: %s\n", res.Explain.Binding)
	}
	return nil
}

// stageKinds counts a stage's placements: "N× GPU tp T, …" in the order
// the replicas first use them.
func stageKinds(p *train.Plan, s int) string {
	if p.StageDP() {
		var out []string
		for _, r := range p.Groups[s].Ranks {
			out = append(out, fmt.Sprintf("%d× %s tp %d, %d", r.Count, r.GPU, r.TP, r.Share))
		}
		return strings.Join(out, "; ")
	}
	n := map[train.Placement]int{}
	var order []train.Placement
	for _, r := range p.Replicas {
		pl := r.Stages[s]
		if n[pl] == 0 {
			order = append(order, pl)
		}
		n[pl]++
	}
	var out []string
	for _, pl := range order {
		out = append(out, fmt.Sprintf("%d× %s tp %d", n[pl], pl.GPU, pl.TP))
	}
	return strings.Join(out, ", ")
}

// WriteBench writes the planners' benchmark, a row per scenario and
// planner.
func WriteBench(w io.Writer, rows []planner.BenchRow) error {
	t := &textfmt.Table{Header: []string{"scenario", "planner", "tokens/s", "of bound", "search s", "GPUs", "headroom GiB", "plan"}}
	for _, r := range rows {
		if r.Error != "" {
			t.Add(r.Scenario, r.Planner, "-", "-", "-", "-", "-", r.Error)
			continue
		}
		t.Add(r.Scenario, r.Planner, fmt.Sprintf("%.0f", r.TokensPerS), fmt.Sprintf("%.1f %%", 100*r.Fraction),
			fmt.Sprintf("%.2f", r.SearchSeconds), strconv.Itoa(r.GPUs), fmt.Sprintf("%.1f", r.HeadroomBytes/(1<<30)), r.Shape)
	}
	_, err := t.WriteTo(w)
	return err
}

// WriteTimelines writes the iteration's Chrome trace to tracePath and its
// Gantt chart to ganttPath, each when asked for.
func WriteTimelines(r *train.Result, tracePath, ganttPath string) error {
	if tracePath != "" {
		if err := outfile.Write(tracePath, func(w io.Writer) error { return WriteTrace(w, r) }); err != nil {
			return err
		}
	}
	if ganttPath == "" {
		return nil
	}
	format, err := report.GanttFormatOf(ganttPath)
	if err != nil {
		return err
	}
	return outfile.Write(ganttPath, func(w io.Writer) error { return WriteGantt(w, format, r) })
}
