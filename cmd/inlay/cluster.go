package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/app"
	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/outfile"
	"github.com/inlay-dev/inlay/report/clusterreport"
	"github.com/inlay-dev/inlay/report/progress"
)

func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Schedule deep-learning training jobs on heterogeneous GPU clusters (Gavel's setting)",
		Long: `cluster generates job traces with Gavel's distributions, simulates them in
virtual time on a GPU cluster under a scheduling policy (Gavel's round-based
mechanism: 360 s rounds, allocations recomputed on arrivals and completions),
and benches every policy side by side on Gavel's experiments. The
Kubernetes scheduler, its replays and the local control plane are the
separate inlay-scheduler binary (cmd/inlay-scheduler).

Clusters: the presets gavel-108 (36 V100 + 36 P100 + 36 K80, one GPU per
server, as in Gavel's simulations), gavel-108-servers (the same in 4-GPU
servers) and modern-mix (H100, A100, L4 and T4 servers), or a YAML file
(inlay cluster platforms --yaml NAME shows the schema by example).
Throughputs: Gavel's measurements (the default) or a file in its format.`,
	}
	cmd.AddCommand(newClusterGenerateCmd(), newClusterSimulateCmd(), newClusterBenchCmd(), newClusterPlatformsCmd(), newClusterPoliciesCmd())
	return cmd
}

func newClusterGenerateCmd() *cobra.Command {
	var in app.GenerateInput
	var out string
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Draw a job trace with Gavel's distributions (JSONL)",
		Long: `generate draws jobs as Gavel's simulator does: job type uniform over the 26
templates; run time on a V100 60·10^U(1.5,3) s with probability 0.8, else
60·10^U(3,4) s; steps = run time × the V100 throughput; with --multi-gpu the
scale factor is 1, 2, 4 or 8 with probabilities 0.70, 0.10, 0.15, 0.05;
Poisson arrivals at --rate jobs per hour (--static: all at time 0).

Without --jobs, enough jobs are drawn that arrivals continue while the
measurement window's jobs finish: the window's last ID + 1, plus --tail-hours
of arrivals at the rate. The same seed gives the same jobs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			jobs, err := app.Generate(in)
			if err != nil {
				return err
			}
			if out == "-" {
				return job.WriteJSONL(cmd.OutOrStdout(), jobs)
			}
			if err := outfile.Write(out, func(w io.Writer) error { return job.WriteJSONL(w, jobs) }); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d jobs to %s\n", len(jobs), out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&in.Jobs, "jobs", 0, "number of jobs (0: enough for --window)")
	fl.Float64Var(&in.Rate, "rate", 0, "arrival rate, jobs per hour (required unless --static)")
	fl.Uint64Var(&in.Seed, "seed", 0, "seed")
	fl.BoolVar(&in.MultiGPU, "multi-gpu", false, "draw multi-GPU jobs (scale factors 1, 2, 4, 8)")
	fl.BoolVar(&in.Static, "static", false, "every job arrives at time 0 (with --multi-gpu: Gavel's static-multiple makespan trace)")
	fl.StringVarP(&out, "output", "o", "-", "output file (- : standard output)")
	fl.StringVar(&in.Window, "window", "4000:4999", "measurement window the trace must cover when --jobs is 0")
	fl.Float64Var(&in.TailHours, "tail-hours", 1000, "hours of arrivals after the window's last job when --jobs is 0")
	fl.StringVar(&in.Throughputs, "throughputs", "", throughput.FileFlagHelp)
	fl.BoolVar(&in.Resources, "resources", false, "draw CPU and memory demands per GPU (for tetris)")
	fl.BoolVar(&in.Elastic, "elastic", false, "give distributed jobs an elastic GPU range (for elastic)")
	fl.IntVar(&in.DAGStages, "dag", 0, "make every job a DAG of this many stages (for dag)")
	return cmd
}

type clusterSimFlags struct {
	in                             app.ClusterSimInput
	json                           bool
	gantt, ganttHours, cdf, perJob string
}

func newClusterSimulateCmd() *cobra.Command {
	var f clusterSimFlags
	cmd := &cobra.Command{
		Use:   "simulate JOBS",
		Short: "Simulate a job trace on a cluster under a policy, in virtual time",
		Long: `simulate reads a trace (JSONL, YAML, or Gavel's tab-separated trace lines),
checks it against the cluster and the throughput table, and runs it in
virtual time under the policy with Gavel's round-based mechanism (360 s
rounds; allocations recomputed when jobs arrive or finish, at most every
1920 s; --reset -1 recomputes at every event). Event-driven policies (fifo,
srtf, tetris, dag) run until the next arrival or completion instead.

--window FIRST:LAST averages the metrics over those job IDs, and the run
stops when they have all finished (Gavel measures jobs 4000-4999). Without
it, every job is measured and the run goes on until all finish.

--json prints one object: policy, cluster, jobs (the jobs measured),
avg_jct_hours, p50/p90/p99_jct_hours, makespan_hours, utilization (GPU type
→ fraction), avg_ftf and max_ftf (finish-time fairness), and counters.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runClusterSimulate(cmd, &f, args[0]) },
	}
	fl := cmd.Flags()
	in := &f.in
	registerClusterLP(cmd, &in.Cluster, &in.LP)
	fl.StringVar(&in.Policy, "policy", "gavel", "policy (inlay cluster policies lists them)")
	fl.StringVar(&in.Window, "window", "", "FIRST:LAST job IDs to measure (default: all)")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON object")
	fl.StringVar(&f.gantt, "gantt", "", "write a cluster Gantt chart (.svg or .png)")
	fl.StringVar(&f.ganttHours, "gantt-hours", "", "FROM:TO hours of the Gantt chart (default: the first 48 h of the window)")
	fl.StringVar(&f.cdf, "cdf", "", "write the JCT CDF (.svg or .png)")
	fl.StringVar(&in.Placement, "placement", "consolidated", "multi-GPU placement: consolidated or spread")
	fl.Float64Var(&in.Preempt, "preempt", 0, "seconds a job loses when it resumes on other GPUs (checkpoint and restore)")
	fl.Float64Var(&in.Round, "round", 360, "round length in seconds")
	fl.Float64Var(&in.Reset, "reset", 1920, "least seconds between allocation recomputations (-1: every event)")
	fl.BoolVar(&in.EventDriven, "event-driven", false, "run placements until the next event instead of in rounds")
	fl.Uint64Var(&in.Seed, "seed", 0, "seed of the policies' and the mechanism's draws")
	fl.StringVar(&in.Throughputs, "throughputs", "", "throughput file in Gavel's format, or \"estimate\" for inlay's cost model on the cluster's GPUs (default: Gavel's measurements)")
	fl.StringVar(&f.perJob, "per-job", "", "write every job's result and timeline as JSONL")
	return cmd
}

// registerClusterLP registers --cluster and --lp, which cluster simulate
// and bench share.
func registerClusterLP(cmd *cobra.Command, cluster, lp *string) {
	cmd.Flags().StringVar(cluster, "cluster", "gavel-108", "cluster preset or YAML file")
	cmd.Flags().StringVar(lp, "lp", "simplex", app.LPFlagHelp)
}

func runClusterSimulate(cmd *cobra.Command, f *clusterSimFlags, trace string) error {
	ctx, stop := interruptible(cmd)
	defer stop()
	in := f.in
	in.Trace, in.Timeline = trace, f.gantt != "" || f.perJob != ""
	in.LoadGraph = func(path string) (*graph.Model, error) { return loadModel(path, nil) }
	s, err := app.PrepareClusterSim(in)
	if err != nil {
		return err
	}
	bar := progress.New(len(s.Jobs), "simulating "+in.Policy)
	res, wall, err := s.Run(ctx, progress.Set(bar))
	progress.Done(bar)
	if err != nil {
		return err
	}
	if err := writeClusterSimFiles(f, res, s.Platform); err != nil {
		return err
	}
	if f.json {
		return clusterreport.SimJSON(cmd.OutOrStdout(), res, wall)
	}
	clusterreport.WriteSim(cmd.OutOrStdout(), res, wall)
	if res.Exhausted {
		fmt.Fprintln(cmd.ErrOrStderr(), "inlay: warning: the trace ran out of arrivals before the window's jobs finished; generate more jobs (inlay cluster generate --jobs)")
	}
	return nil
}

// writeClusterSimFiles writes the files cluster simulate's flags ask for:
// the Gantt chart, the JCT CDF and the per-job table.
func writeClusterSimFiles(f *clusterSimFlags, res *sim.Result, c *chw.Platform) error {
	if f.gantt != "" {
		hours, err := app.ParseHours(f.ganttHours)
		if err != nil {
			return err
		}
		if err := outfile.Picture(f.gantt, func(w io.Writer, format string) error { return clusterreport.Gantt(w, format, res, c, hours) }); err != nil {
			return err
		}
	}
	if f.cdf != "" {
		if err := outfile.Picture(f.cdf, func(w io.Writer, format string) error { return clusterreport.JCTCDF(w, format, []*sim.Result{res}) }); err != nil {
			return err
		}
	}
	if f.perJob != "" {
		return outfile.Write(f.perJob, func(w io.Writer) error { return clusterreport.WritePerJob(w, res) })
	}
	return nil
}

func newClusterPlatformsCmd() *cobra.Command {
	var asYAML bool
	cmd := &cobra.Command{
		Use:   "platforms [NAME]",
		Short: "List the cluster presets, or show one (--yaml: its source)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			switch {
			case len(args) == 0:
				return clusterreport.WritePlatforms(out)
			case asYAML:
				src, err := chw.PresetSource(args[0])
				if err != nil {
					return err
				}
				_, err = out.Write(src)
				return err
			}
			p, err := chw.Resolve(args[0])
			if err != nil {
				return err
			}
			return clusterreport.WritePlatform(out, p)
		},
	}
	cmd.Flags().BoolVar(&asYAML, "yaml", false, "print the preset's YAML source")
	return cmd
}

func newClusterPoliciesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "policies",
		Short: "List the cluster scheduling policies",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return clusterreport.WritePolicies(cmd.OutOrStdout()) },
	}
}
