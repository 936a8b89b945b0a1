package main

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/internal/outfile"
	"github.com/inlay-dev/inlay/report/clusterreport"
	"github.com/inlay-dev/inlay/report/progress"
)

type clusterBenchFlags struct {
	in   app.ClusterBenchInput
	plot string
	json bool
}

func newClusterBenchCmd() *cobra.Command {
	var f clusterBenchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Gavel's experiments, every policy side by side: JCT against rate, and makespan",
		Long: `bench reproduces Gavel's simulation experiments on its throughputs and
generator: continuous arrivals of single-GPU and multi-GPU jobs (average JCT
of the window's jobs at each rate, seeds averaged), and the static makespan
experiment (N multi-GPU jobs at time 0, Gavel's static-multiple trace)
beside two proven lower bounds: the longest job alone on its fastest GPU,
and the fluid makespan LP (no schedule without space sharing finishes
sooner). Gavel's published figures stand beside the
rows they match (single-GPU at 5.6 jobs/h, multi-GPU at 2.6 jobs/h, 500
static jobs).

A run at 5.6 jobs/h simulates about 13,000 jobs; Gavel's LP policies solve
thousands of LPs with CBC, so a full bench takes a while: --workers runs
simulations in parallel.

--trace FILE runs a trace of jobs given as models (model, batch, gpus,
steps, arrival_s: examples/cluster-models.jsonl) on --cluster in the
adaptive simulator instead, as the sia-* experiments run: each adaptive
policy (--policies, default gavel-tj,pollux,sia,inlay) with mixed-type
gangs off and, where the policy forms them, on, side by side. Every job's
rate on every allocation, a gang of two GPU types included, comes from
the training planner.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runClusterBench(cmd, &f) },
	}
	fl := cmd.Flags()
	in := &f.in
	registerClusterLP(cmd, &in.Cluster, &in.LP)
	fl.StringVar(&in.Experiments, "experiments", "single,multi,static", "experiments to run: single, multi, static (Gavel's); sia-philly, sia-helios, sia-rigid (Sia's benchmark, adaptive jobs on mixed GPU types)")
	fl.StringVar(&in.SiaDir, "sia", sia.DefaultDir, "folder of Sia's benchmark (cluster.json, traces/, workloads/, sia_table3.csv)")
	fl.StringVar(&in.Round, "round", "", "sia-* experiments and --trace: round length for every policy (e.g. 60s, 6m; default: each policy's own, 360 s for gavel-tj, 60 s for the others)")
	fl.IntVar(&in.ClusterScale, "cluster-scale", 1, "sia-* experiments: multiply the cluster's servers and the workloads' jobs by N (Sia's --cluster_scale)")
	fl.StringVar(&in.Trace, "trace", "", "a trace of jobs given as models (JSONL or YAML) to run on --cluster in the adaptive simulator, mixed gangs off and on, instead of --experiments")
	fl.Float64Var(&in.RestartS, "restart", 30, "with --trace: seconds a job loses to checkpoint and restore when its allocation changes")
	fl.IntVar(&in.SiaFiles, "sia-files", 0, "sia-* experiments: run only the first N workload files of each (0: all)")
	fl.StringVar(&in.Policies, "policies", "las,gandiva,gavel,gavel-ss,inlay", "policies of the continuous experiments (sia-* and --trace: the adaptive policies, gavel-tj,pollux,sia,inlay unless given)")
	fl.StringVar(&in.StaticPolicies, "static-policies", "fifo,gandiva,gavel-makespan,gavel-makespan-ss,inlay-makespan", "policies of the static experiment")
	fl.StringVar(&in.Seeds, "seeds", "0,1,2", "seeds")
	fl.StringVar(&in.SingleRates, "single-rates", "5.6", "single-GPU input rates, jobs per hour")
	fl.StringVar(&in.MultiRates, "multi-rates", "2.6", "multi-GPU input rates, jobs per hour")
	fl.IntVar(&in.StaticJobs, "static-jobs", 500, "jobs of the static experiment")
	fl.StringVar(&in.Window, "window", "4000:4999", "job IDs measured in the continuous experiments")
	fl.Float64Var(&in.TailHours, "tail-hours", 1000, "hours of arrivals generated after the window's last job")
	fl.IntVar(&in.Workers, "workers", 1, "simulations run at once")
	fl.StringVar(&in.Throughputs, "throughputs", "", throughput.FileFlagHelp)
	fl.StringVar(&f.plot, "plot", "", "write average JCT against rate (.svg or .png; one file per experiment, suffixed -single/-multi)")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	return cmd
}

func runClusterBench(cmd *cobra.Command, f *clusterBenchFlags) error {
	ctx, stop := interruptible(cmd)
	defer stop()
	in := f.in
	in.PoliciesGiven = cmd.Flags().Changed("policies")
	in.ExperimentsGiven = cmd.Flags().Changed("experiments")
	b, err := app.PrepareClusterBench(in)
	if err != nil {
		return err
	}
	name := "cluster bench"
	if b.Sia {
		name = "sia bench"
	}
	bar := progress.New(1, name)
	rep, err := b.Run(ctx, progress.SetDescribed(bar))
	progress.Done(bar)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if rep.Sia != nil {
		if f.json {
			return json.NewEncoder(out).Encode(rep.Sia)
		}
		clusterreport.WriteSiaBench(out, rep.Sia)
		return nil
	}
	if f.plot != "" {
		ext := filepath.Ext(f.plot)
		for _, p := range clusterreport.BenchPlots(rep.Gavel) {
			if err := outfile.Picture(strings.TrimSuffix(f.plot, ext)+"-"+p.Experiment+ext, p.Draw); err != nil {
				return err
			}
		}
	}
	if f.json {
		return json.NewEncoder(out).Encode(rep.Gavel)
	}
	clusterreport.WriteBench(out, rep.Gavel)
	return nil
}
