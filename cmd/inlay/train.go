package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/train/published"
)

func newTrainCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Predict a training iteration's time and memory across unlike GPUs",
		Long: "inlay train predicts one iteration of data-, tensor- and pipeline-parallel\n" +
			"transformer training (uneven stages, unlike GPU types per stage and per\n" +
			"replica): its time, throughput, MFU and each GPU's memory. See docs/guides/training.md.",
	}
	cmd.AddCommand(newTrainSimulateCmd(), newTrainMemoryCmd(), newTrainModelsCmd(), newTrainCalibrateCmd(), newTrainPlanCmd(), newTrainBenchCmd())
	return cmd
}

// registerTarget registers the model and cluster flags every train
// command reads (train.Spec's Model, Cluster and --gpus fields).
func registerTarget(cmd *cobra.Command, s *train.Spec) {
	fl := cmd.Flags()
	fl.StringVar(&s.Model, "model", "", "model: a preset (inlay train models), gpt:hidden=…,layers=…,heads=…,seq=…,vocab=…, or a YAML file")
	fl.StringVar(&s.Cluster, "cluster", "", "cluster platform preset or YAML file (inlay platforms); or use --gpus")
	fl.StringVar(&s.Gpus, "gpus", "", "GPUs: COUNTxTYPE[,COUNTxTYPE…], e.g. 512xA100-80 or 128xA100-40,128xV100-16 (each type in its own servers)")
	fl.IntVar(&s.GPUsPerNode, "gpus-per-node", 8, "with --gpus: GPUs per server")
	fl.Float64Var(&s.IntraGBs, "intra-gbps", 0, "with --gpus: GB/s per GPU inside a server (default: half the type's NVLink total, or its PCIe)")
	fl.Float64Var(&s.InterGbps, "inter-gbps", 800, "with --gpus: Gbit/s per server across servers")
}

// trainFlags are the model, cluster and plan flags simulate and memory
// share.
type trainFlags struct {
	spec         train.Spec
	json         bool
	trace, gantt string
}

func (f *trainFlags) register(cmd *cobra.Command) {
	s := &f.spec
	fl := cmd.Flags()
	registerTarget(cmd, s)
	fl.StringVar(&s.Plan, "plan", "", "plan file: YAML, or Sailor's plan_config_*.json (its cluster is used when --cluster and --gpus are absent)")
	fl.IntVar(&s.TP, "tp", 1, "tensor-parallel degree (without --plan)")
	fl.IntVar(&s.PP, "pp", 1, "pipeline stages (without --plan)")
	fl.IntVar(&s.DP, "dp", 0, "data-parallel replicas (without --plan; default: the GPUs left)")
	fl.IntVar(&s.MicroBatch, "micro-batch", 1, "sequences per micro-batch (without --plan)")
	fl.IntVar(&s.GlobalBatch, "global-batch", 0, "sequences per iteration (without --plan; default: micro-batch × dp)")
	fl.StringVar(&s.Recompute, "recompute", "none", "activation recomputation: none, selective or full")
	fl.StringVar(&s.Schedule, "schedule", "1f1b", "pipeline schedule: 1f1b, interleaved:V or gpipe")
	fl.IntVar(&s.Zero, "zero", 0, "ZeRO stage 0–3 (1: distributed optimizer)")
	fl.BoolVar(&s.SequenceParallel, "sequence-parallel", false, "sequence parallelism with tensor parallelism")
	fl.BoolVar(&s.Offload, "offload", false, "optimizer states in host memory, stepped there")
	fl.BoolVar(&s.FlashAttention, "flash-attention", false, "fused attention (no sequence-squared tensors)")
	fl.BoolVar(&s.Overlap, "overlap-grad-reduce", false, "reduce gradients in buckets during the backward pass")
	fl.StringVar(&s.Precision, "precision", "bf16", "bf16, fp16, tf32 or fp32")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON")
}

// resolve fills in which plan flags the user gave, so that a plan file
// keeps its own settings unless a flag overrides them.
func (f *trainFlags) resolve(cmd *cobra.Command) {
	f.spec.Set = map[string]bool{}
	for _, n := range []string{"recompute", "schedule", "zero", "precision", "sequence-parallel", "offload", "flash-attention", "overlap-grad-reduce"} {
		if cmd.Flags().Changed(n) {
			f.spec.Set[n] = true
		}
	}
	if f.spec.Plan == "" {
		for _, n := range []string{"recompute", "schedule", "zero", "precision"} {
			f.spec.Set[n] = true
		}
	}
}

func newTrainSimulateCmd() *cobra.Command {
	f := &trainFlags{}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Predict one training iteration: time, tokens/s, MFU, memory per stage",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.resolve(cmd)
			if err := checkOutputs(output{"--trace", f.trace, traceFormat}, output{"--gantt", f.gantt, ganttFormat}); err != nil {
				return err
			}
			req, res, err := train.Predict(f.spec, train.Options{Trace: f.trace != "" || f.gantt != ""})
			if err != nil {
				return err
			}
			if err := writeTrainTimelines(res, f.trace, f.gantt); err != nil {
				return err
			}
			spans := res.Spans
			res.Spans = nil
			defer func() { res.Spans = spans }()
			if f.json {
				return writeTrainJSON(cmd.OutOrStdout(), res)
			}
			return printTrainResult(cmd.OutOrStdout(), req, res)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.trace, "trace", "", "write the iteration's timeline as Chrome trace events (.json, opens in Perfetto)")
	cmd.Flags().StringVar(&f.gantt, "gantt", "", "write the iteration's Gantt chart (.svg or .png)")
	return cmd
}

func newTrainMemoryCmd() *cobra.Command {
	f := &trainFlags{}
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Each GPU's memory under a plan (parameters, gradients, optimizer, activations, buffers) and whether it fits",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.resolve(cmd)
			_, res, err := train.Predict(f.spec, train.Options{})
			if err != nil {
				return err
			}
			if f.json {
				return writeTrainJSON(cmd.OutOrStdout(), trainMemoryJSON{Fits: res.Fits, Reason: res.Reason, PeakMemoryBytes: res.PeakMemoryBytes, Stages: res.Stages})
			}
			return printTrainMemory(cmd.OutOrStdout(), res)
		},
	}
	f.register(cmd)
	return cmd
}

// trainMemoryJSON is inlay train memory --json's document.
type trainMemoryJSON struct {
	Fits            bool                `json:"fits"`
	Reason          string              `json:"reason,omitempty"`
	PeakMemoryBytes float64             `json:"peak_memory_bytes"`
	Stages          []train.StageResult `json:"stages"`
}

func newTrainModelsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the training model presets and the GPU types",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			if asJSON {
				return writeTrainJSON(w, struct {
					Models []train.Model `json:"models"`
					GPUs   []train.GPU   `json:"gpus"`
				}{train.Presets(), train.GPUs()})
			}
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
			g := textfmt.Table{Header: []string{"GPU", "TENSOR TFLOPS", "MEMORY GB", "GB/S", "LINK GB/S", "CALIBRATED", "ALIASES"}}
			for _, x := range train.GPUs() {
				cal := "no"
				if x.Calibrated {
					cal = "yes"
				}
				g.Add(x.Name, fmt.Sprint(x.TensorTFLOPS), fmt.Sprint(x.MemoryGB), fmt.Sprint(x.MemBandwidthGBs), fmt.Sprint(x.LinkGBs), cal, strings.Join(x.Aliases, ", "))
			}
			_, err := g.WriteTo(w)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newTrainCalibrateCmd() *cobra.Command {
	var files []string
	var profiles, write string
	var workers, evals int
	var asJSON, keepFlagged bool
	cmd := &cobra.Command{
		Use:   "calibrate --published FILE…",
		Short: "Fit each GPU type's efficiency to published measurements and print the leave-one-out error",
		Long: "Reads vTrain's single-node runs, Korthikanti et al.'s Table 5, Megatron-LM SC'21 Table 1\n" +
			"and Sailor's GH200 runs (shared/training/), fits a few parameters per GPU type shared by\n" +
			"every model and plan, and scores every row with a fit that never saw it (leave-one-out,\n" +
			"or ten folds for sets of more than 60 rows). --write saves the fit as Go source\n" +
			"(train/calibrated.go is the embedded one).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("train calibrate: give --published FILE (one or more)")
			}
			var cases []published.Case
			for _, f := range files {
				cs, err := published.Load(f)
				if err != nil {
					return err
				}
				cases = append(cases, cs...)
			}
			var layers []published.LayerCase
			if profiles != "" {
				ls, err := published.LoadProfiles(profiles)
				if err != nil {
					return err
				}
				layers = ls
			}
			bar := newBar(1, "fitting")
			rep, err := published.CrossValidate(cases, layers, published.CVOptions{Workers: workers, Fit: published.FitOptions{MaxEvals: evals}, KeepFlagged: keepFlagged,
				Progress: func(done, total int) {
					if bar != nil {
						bar.ChangeMax(total)
						_ = bar.Set(done)
					}
				}})
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				return err
			}
			if write != "" {
				command := "inlay train calibrate --published " + strings.Join(files, " \\\n  --published ")
				if profiles != "" {
					command += " \\\n  --profiles " + profiles
				}
				if err := os.WriteFile(write, []byte(rep.GoSource(command+" \\\n  --write "+write)), 0o644); err != nil {
					return fmt.Errorf("train calibrate: %w", err)
				}
			}
			if asJSON {
				return writeTrainJSON(cmd.OutOrStdout(), calibrateJSON(rep))
			}
			return printCalibration(cmd.OutOrStdout(), rep)
		},
	}
	cmd.Flags().StringArrayVar(&files, "published", nil, "a published data file (repeat, or give several)")
	cmd.Flags().StringVar(&profiles, "profiles", "", "Sailor's per-layer profiles (sailor/profiles_tmp_flat.csv) for GPU types without iteration data")
	cmd.Flags().StringVar(&write, "write", "", "write the fitted efficiencies as Go source (e.g. train/calibrated.go)")
	cmd.Flags().IntVar(&workers, "workers", 1, "fits at once")
	cmd.Flags().IntVar(&evals, "evals", 0, "objective evaluations per fit (0: the default)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&keepFlagged, "keep-flagged", false, "also fit and score the rows the data's README flags (Sailor's runs of one sequence)")
	return cmd
}

// calibrateJSON is train calibrate --json's document.
func calibrateJSON(r *published.Report) any {
	type set struct {
		Set        string               `json:"set"`
		N          int                  `json:"rows"`
		Folds      string               `json:"folds"`
		Median     float64              `json:"median_abs_error"`
		P95        float64              `json:"p95_abs_error"`
		Worst      float64              `json:"worst_abs_error"`
		Mean       float64              `json:"mean_abs_error"`
		MemMean    float64              `json:"memory_mean_abs_error,omitempty"`
		KendallMin *float64             `json:"kendall_tau_min,omitempty"`
		Kendall    []published.ShapeTau `json:"kendall_tau,omitempty"`
		Rows       []published.Row      `json:"rows_held_out"`
	}
	type fitted struct {
		GPU     string           `json:"gpu"`
		Eff     train.Efficiency `json:"efficiency"`
		Sources []string         `json:"sources"`
	}
	var out struct {
		Sets    []set    `json:"sets"`
		Fitted  []fitted `json:"fitted"`
		Targets []target `json:"targets"`
	}
	for _, s := range r.Sets {
		x := set{Set: s.Set, N: s.N, Folds: s.Folds, Median: s.Median, P95: s.P95, Worst: s.Worst, Mean: s.Mean, MemMean: s.MemMean, Kendall: s.Kendall, Rows: s.Rows}
		if len(s.Kendall) > 0 {
			k := s.KendallMin
			x.KendallMin = &k
		}
		out.Sets = append(out.Sets, x)
	}
	for _, f := range r.Fitted {
		out.Fitted = append(out.Fitted, fitted{f.GPU, f.Eff, f.Sources})
	}
	out.Targets = targets(r)
	return out
}

type target struct {
	Set    string  `json:"set"`
	Metric string  `json:"metric"`
	Limit  float64 `json:"limit"`
	Value  float64 `json:"value"`
	Met    bool    `json:"met"`
}

func targets(r *published.Report) []target {
	var out []target
	for _, t := range published.Targets {
		for i := range r.Sets {
			s := &r.Sets[i]
			if s.Set != t.Set {
				continue
			}
			v := s.Value(t.Metric)
			met := v <= t.Limit
			if t.AtLeast {
				met = v >= t.Limit
			}
			out = append(out, target{t.Set, t.Metric, t.Limit, v, met})
		}
	}
	return out
}

func printCalibration(w io.Writer, r *published.Report) error {
	t := textfmt.Table{Header: []string{"SET", "ROWS", "HELD OUT", "MEDIAN", "P95", "WORST", "MEAN", "MEMORY MEAN", "KENDALL MIN"}}
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	for _, s := range r.Sets {
		mem, tau := "", ""
		if s.MemN > 0 {
			mem = pct(s.MemMean)
		}
		if len(s.Kendall) > 0 {
			tau = fmt.Sprintf("%.3f", s.KendallMin)
		}
		t.Add(s.Set, fmt.Sprint(s.N), s.Folds, pct(s.Median), pct(s.P95), pct(s.Worst), pct(s.Mean), mem, tau)
	}
	fmt.Fprintln(w, "held-out |error| of the iteration time (and of the peak memory where measured):")
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ntargets:")
	tt := textfmt.Table{Header: []string{"SET", "METRIC", "TARGET", "VALUE", "MET"}}
	for _, x := range targets(r) {
		lim, val := pct(x.Limit), pct(x.Value)
		op := "≤ "
		if x.Metric == "kendall_min" {
			lim, val, op = fmt.Sprintf("%.2f", x.Limit), fmt.Sprintf("%.3f", x.Value), "≥ "
		}
		met := "no"
		if x.Met {
			met = "yes"
		}
		tt.Add(x.Set, x.Metric, op+lim, val, met)
	}
	if _, err := tt.WriteTo(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nfitted on every row:")
	ft := textfmt.Table{Header: []string{"GPU", "GEMM", "GEMM TRAFFIC", "MEMORY", "BACKWARD", "LAUNCH µs", "LINK", "NETWORK", "LINK LAT µs", "CONTEXT GB", "FRAG", "FROM"}}
	for _, f := range r.Fitted {
		e := f.Eff
		g := func(x float64) string { return fmt.Sprintf("%.3g", x) }
		ft.Add(f.GPU, g(e.GEMM), g(e.GEMMTraffic), g(e.Memory), g(e.Backward), g(e.LaunchUs), g(e.Link), g(e.Network), g(e.LinkLatencyUs), g(e.ContextGB), g(e.Fragmentation), strings.Join(f.Sources, ", "))
	}
	_, err := ft.WriteTo(w)
	return err
}

func printTrainResult(w io.Writer, req *train.Request, r *train.Result) error {
	fits := "fits"
	if !r.Fits {
		fits = "does NOT fit: " + r.Reason
	}
	fmt.Fprintf(w, "%s on %d GPUs (%s): %d stages × %d replicas, micro-batch %d, global batch %d, %s, recompute %s, ZeRO %d, %s\n",
		req.Model.Name, r.GPUs, req.Cluster.Name, req.Plan.PP(), req.Plan.DP(), req.Plan.MicroBatch, req.Plan.GlobalBatch,
		req.Plan.Schedule, req.Plan.Recompute, req.Plan.Zero, req.Plan.Precision)
	fmt.Fprintf(w, "iteration %s   %s tokens/s   MFU %.1f%%   bubble %.1f%%   peak memory %s   %s\n",
		textfmt.SI(r.IterationS, "s"), textfmt.SI(r.TokensPerS, ""), 100*r.MFU, 100*r.Bubble, textfmt.Bytes(int64(r.PeakMemoryBytes)), fits)
	if req.Sailor != nil && req.Sailor.MeasuredIterationS > 0 {
		fmt.Fprintf(w, "the plan file's measurement: %s per iteration, %s peak (nvidia-smi)\n",
			textfmt.SI(req.Sailor.MeasuredIterationS, "s"), textfmt.Bytes(int64(req.Sailor.MeasuredPeakMemoryBytes)))
	}
	t := textfmt.Table{Header: []string{"REPLICA", "STAGE", "GPU", "TP", "LAYERS", "FWD/MB", "BWD/MB", "COMPUTE", "GRAD SYNC", "OPTIMIZER", "MEMORY", "FITS"}}
	for _, s := range r.Stages {
		ok := "yes"
		if !s.Fits {
			ok = "no"
		}
		t.Add(fmt.Sprint(s.Replica), fmt.Sprint(s.Stage), s.GPU, fmt.Sprint(s.TP), fmt.Sprintf("%d-%d", s.Layers.First, s.Layers.Last),
			textfmt.SI(s.ForwardS, "s"), textfmt.SI(s.BackwardS, "s"), textfmt.SI(s.ComputeS, "s"), textfmt.SI(s.SyncS, "s"), textfmt.SI(s.OptimizerS, "s"),
			textfmt.Bytes(int64(s.Memory.Total)), ok)
	}
	_, err := t.WriteTo(w)
	return err
}

func printTrainMemory(w io.Writer, r *train.Result) error {
	fits := "every GPU fits"
	if !r.Fits {
		fits = "does NOT fit: " + r.Reason
	}
	fmt.Fprintf(w, "peak %s per GPU; %s\n", textfmt.Bytes(int64(r.PeakMemoryBytes)), fits)
	t := textfmt.Table{Header: []string{"REPLICA", "STAGE", "GPU", "TP", "PARAMS", "GRADS", "OPTIMIZER", "ACTIVATIONS", "BUFFERS", "ALLOCATOR", "TOTAL", "CAPACITY", "FITS"}}
	b := func(x float64) string { return textfmt.Bytes(int64(x)) }
	for _, s := range r.Stages {
		ok := "yes"
		if !s.Fits {
			ok = "no"
		}
		m := s.Memory
		t.Add(fmt.Sprint(s.Replica), fmt.Sprint(s.Stage), s.GPU, fmt.Sprint(s.TP), b(m.Parameters), b(m.Gradients), b(m.Optimizer), b(m.Activations), b(m.Buffers), b(m.Allocator), b(m.Total), b(s.CapacityBytes), ok)
	}
	_, err := t.WriteTo(w)
	return err
}

// writeTrainTimelines writes the trace and the Gantt chart asked for.
func writeTrainTimelines(r *train.Result, tracePath, ganttPath string) error {
	if tracePath == "" && ganttPath == "" {
		return nil
	}
	rows, spans := r.Timelines()
	if tracePath != "" {
		fh, err := os.Create(tracePath)
		if err != nil {
			return err
		}
		if err := report.ChromeTrace(fh, rows, spans); err != nil {
			fh.Close()
			return err
		}
		if err := fh.Close(); err != nil {
			return err
		}
	}
	if ganttPath != "" {
		format, err := report.GanttFormatOf(ganttPath)
		if err != nil {
			return err
		}
		fh, err := os.Create(ganttPath)
		if err != nil {
			return err
		}
		if err := report.Gantt(fh, format, "training iteration", rows, spans, [2]time.Duration{}); err != nil {
			fh.Close()
			return err
		}
		return fh.Close()
	}
	return nil
}

func writeTrainJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
