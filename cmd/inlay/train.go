package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/report/progress"
	"github.com/inlay-dev/inlay/report/trainreport"
	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/train/planner"
)

func newTrainCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Predict a training iteration's time and memory across unlike GPUs",
		Long: "inlay train predicts one iteration of data-, tensor- and pipeline-parallel\n" +
			"transformer training (uneven stages, unlike GPU types per stage and per\n" +
			"replica), or data- and pipeline-parallel training of a graph network (a zoo\n" +
			"network or an ONNX file, samples/s): its time, throughput, MFU and each GPU's\n" +
			"memory. See docs/guides/training.md.",
	}
	cmd.AddCommand(newTrainSimulateCmd(), newTrainMemoryCmd(), newTrainModelsCmd(), newTrainCalibrateCmd(), newTrainPlanCmd(), newTrainBenchCmd())
	return cmd
}

// registerTarget registers the model and cluster flags every train
// command reads (train.Spec's Model, Cluster and --gpus fields).
func registerTarget(cmd *cobra.Command, s *train.Spec) {
	fl := cmd.Flags()
	fl.StringVar(&s.Model, "model", "", "model: a preset (inlay train models), gpt:hidden=…,layers=…,heads=…,seq=…,vocab=…, or a YAML file; or a graph network: zoo:NAME (inlay zoo list) or an .onnx file (data and pipeline parallel; throughput in samples/s)")
	fl.StringVar(&s.Input, "input", "", "a graph network's input per sample, e.g. 3x224x224 (default: the zoo network's, or the file's)")
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
	export, out  string // simulate only
}

// exportFlags registers --export and -o: an engine's form of the plan, and
// its file (else standard output, and then nothing else: not with --json).
func exportFlags(cmd *cobra.Command, form, out *string) {
	cmd.Flags().StringVar(form, "export", "", "also write the plan for an engine: "+strings.Join(planner.ExportFormats, ", "))
	cmd.Flags().StringVarP(out, "output", "o", "", "with --export: the file to write (default: standard output)")
}

var errExportJSON = fmt.Errorf("--export with --json needs -o FILE")

// writeExport writes an exported plan to out, or to w (done: all it prints).
func writeExport(w io.Writer, out string, data []byte) (done bool, err error) {
	if out == "" {
		_, err = w.Write(data)
		return true, err
	}
	return false, os.WriteFile(out, data, 0o644)
}

func (f *trainFlags) register(cmd *cobra.Command) {
	s := &f.spec
	fl := cmd.Flags()
	registerTarget(cmd, s)
	fl.StringVar(&s.Plan, "plan", "", "plan file: YAML, or Sailor's plan_config_*.json (its cluster is used when --cluster and --gpus are absent)")
	fl.IntVar(&s.TP, "tp", 1, "tensor-parallel degree (without --plan)")
	fl.IntVar(&s.PP, "pp", 1, "pipeline stages (without --plan)")
	fl.IntVar(&s.CP, "cp", 0, "context-parallel degree: each stage's sequence split over cp × tp GPUs (default: the plan's, else 1)")
	fl.IntVar(&s.DP, "dp", 0, "data-parallel replicas (without --plan; default: the GPUs left)")
	fl.IntVar(&s.MicroBatch, "micro-batch", 1, "sequences (a graph network's samples) per micro-batch (without --plan)")
	fl.IntVar(&s.GlobalBatch, "global-batch", 0, "sequences (samples) per iteration (without --plan; default: micro-batch × dp)")
	fl.StringVar(&s.Recompute, "recompute", "none", "activation recomputation: none, selective or full")
	fl.StringVar(&s.Schedule, "schedule", "1f1b", "pipeline schedule: 1f1b, interleaved:V or gpipe")
	fl.IntVar(&s.Zero, "zero", 0, "ZeRO stage 0–3 (1: distributed optimizer)")
	fl.BoolVar(&s.SequenceParallel, "sequence-parallel", false, "sequence parallelism with tensor parallelism")
	fl.BoolVar(&s.Offload, "offload", false, "optimizer states in host memory, stepped there")
	fl.BoolVar(&s.FlashAttention, "flash-attention", false, "fused attention (no sequence-squared tensors) on the GPUs that run it: Ampere and newer")
	fl.BoolVar(&s.Overlap, "overlap-grad-reduce", false, "reduce gradients in buckets during the backward pass")
	fl.StringVar(&s.Precision, "precision", "bf16", "bf16, fp16, tf32 or fp32")
	fl.StringVar(&s.Optimizer, "optimizer", "", "adam or sgd (SGD with momentum; default: the plan's, else adam)")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON")
}

// resolve fills in which plan flags the user gave, so that a plan file
// keeps its own settings unless a flag overrides them.
func (f *trainFlags) resolve(cmd *cobra.Command) {
	f.spec.Set = map[string]bool{}
	for _, n := range []string{"recompute", "schedule", "zero", "precision", "sequence-parallel", "offload", "flash-attention", "overlap-grad-reduce", "cp", "optimizer"} {
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
			if err := checkOutputs(output{"--trace", f.trace, app.TraceFormat}, output{"--gantt", f.gantt, app.GanttFormat}); err != nil {
				return err
			}
			if f.export != "" && f.out == "" && f.json {
				return errExportJSON
			}
			req, res, err := train.Predict(f.spec, train.Options{Trace: f.trace != "" || f.gantt != ""})
			if err != nil {
				return err
			}
			if f.export != "" {
				data, err := planner.Export(f.export, &req.Model, req.Cluster, req.Plan)
				if err != nil {
					return err
				}
				if done, err := writeExport(cmd.OutOrStdout(), f.out, data); done || err != nil {
					return err
				}
			}
			if err := trainreport.WriteTimelines(res, f.trace, f.gantt); err != nil {
				return err
			}
			res.Spans = nil
			if f.json {
				return trainreport.JSON(cmd.OutOrStdout(), res)
			}
			return trainreport.WriteResult(cmd.OutOrStdout(), req, res)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.trace, "trace", "", "write the iteration's timeline as Chrome trace events (.json, opens in Perfetto)")
	cmd.Flags().StringVar(&f.gantt, "gantt", "", "write the iteration's Gantt chart (.svg or .png)")
	exportFlags(cmd, &f.export, &f.out)
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
				return trainreport.JSON(cmd.OutOrStdout(), trainreport.Memory(res))
			}
			return trainreport.WriteMemory(cmd.OutOrStdout(), res)
		},
	}
	f.register(cmd)
	return cmd
}

func newTrainModelsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the training model presets, the graph networks and the GPU types",
		Long: "Lists the transformer presets (--model NAME), the zoo networks that train as graph\n" +
			"networks (--model zoo:NAME, with their default --input per sample; a network marked\n" +
			"\"only\" takes no other size) and the GPU types with their calibration.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				return trainreport.JSON(cmd.OutOrStdout(), trainreport.Models())
			}
			return trainreport.WriteModels(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newTrainCalibrateCmd() *cobra.Command {
	var in app.TrainCalibrateInput
	var asJSON bool
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
			bar := progress.New(1, "fitting")
			in.Progress = progress.Set(bar)
			rep, err := app.TrainCalibrate(in)
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				return err
			}
			if asJSON {
				return trainreport.JSON(cmd.OutOrStdout(), trainreport.Calibration(rep))
			}
			return trainreport.WriteCalibration(cmd.OutOrStdout(), rep)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&in.Published, "published", nil, "a published data file (repeat, or give several)")
	fl.StringVar(&in.Profiles, "profiles", "", "Sailor's per-layer profiles (sailor/profiles_tmp_flat.csv) for GPU types without iteration data")
	fl.StringVar(&in.Write, "write", "", "write the fitted efficiencies as Go source (e.g. train/calibrated.go)")
	fl.IntVar(&in.Workers, "workers", 1, "fits at once")
	fl.IntVar(&in.Evals, "evals", 0, "objective evaluations per fit (0: the default)")
	fl.BoolVar(&asJSON, "json", false, "print as JSON")
	fl.BoolVar(&in.KeepFlagged, "keep-flagged", false, "also fit and score the rows the data's README flags (Sailor's runs of one sequence)")
	return cmd
}
