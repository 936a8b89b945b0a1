package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/spf13/cobra"
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

// loadThroughputs returns Gavel's table, or the file's.
func loadThroughputs(path string) (*throughput.Table, error) {
	if path == "" || path == "gavel" {
		return throughput.Gavel()
	}
	return throughput.LoadGavel(path)
}

// parseWindow reads FIRST:LAST.
func parseWindow(s string) ([2]int, error) {
	a, b, ok := strings.Cut(s, ":")
	x, err1 := strconv.Atoi(strings.TrimSpace(a))
	y, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || x < 0 || y < x {
		return [2]int{}, fmt.Errorf("--window: want FIRST:LAST job IDs with 0 ≤ FIRST ≤ LAST, got %q", s)
	}
	return [2]int{x, y}, nil
}

type clusterGenFlags struct {
	jobs      int
	rate      float64
	seed      uint64
	multi     bool
	static    bool
	out       string
	window    string
	tailHours float64
	tp        string
	resources bool
	elastic   bool
	dag       int
}

func newClusterGenerateCmd() *cobra.Command {
	var f clusterGenFlags
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runClusterGenerate(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.jobs, "jobs", 0, "number of jobs (0: enough for --window)")
	fl.Float64Var(&f.rate, "rate", 0, "arrival rate, jobs per hour (required unless --static)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed")
	fl.BoolVar(&f.multi, "multi-gpu", false, "draw multi-GPU jobs (scale factors 1, 2, 4, 8)")
	fl.BoolVar(&f.static, "static", false, "every job arrives at time 0 (with --multi-gpu: Gavel's static-multiple makespan trace)")
	fl.StringVarP(&f.out, "output", "o", "-", "output file (- : standard output)")
	fl.StringVar(&f.window, "window", "4000:4999", "measurement window the trace must cover when --jobs is 0")
	fl.Float64Var(&f.tailHours, "tail-hours", 1000, "hours of arrivals after the window's last job when --jobs is 0")
	fl.StringVar(&f.tp, "throughputs", "", "throughput file in Gavel's format (default: Gavel's measurements)")
	fl.BoolVar(&f.resources, "resources", false, "draw CPU and memory demands per GPU (for tetris)")
	fl.BoolVar(&f.elastic, "elastic", false, "give distributed jobs an elastic GPU range (for elastic)")
	fl.IntVar(&f.dag, "dag", 0, "make every job a DAG of this many stages (for dag)")
	return cmd
}

func runClusterGenerate(cmd *cobra.Command, f *clusterGenFlags) error {
	t, err := loadThroughputs(f.tp)
	if err != nil {
		return err
	}
	n := f.jobs
	if n == 0 {
		if f.static {
			return fmt.Errorf("--static needs --jobs")
		}
		w, err := parseWindow(f.window)
		if err != nil {
			return err
		}
		if !(f.rate > 0) || !(f.tailHours >= 0) {
			return fmt.Errorf("--rate must be positive and --tail-hours non-negative")
		}
		n = w[1] + 1 + int(math.Ceil(f.rate*f.tailHours))
	}
	jobs, err := job.Generate(job.GenConfig{Jobs: n, Rate: f.rate, Seed: f.seed, MultiGPU: f.multi, Static: f.static, Resources: f.resources, Elastic: f.elastic, DAGStages: f.dag}, t)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if f.out != "-" {
		file, err := os.Create(f.out)
		if err != nil {
			return err
		}
		defer file.Close()
		w = file
	}
	if err := job.WriteJSONL(w, jobs); err != nil {
		return err
	}
	if f.out != "-" {
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d jobs to %s\n", len(jobs), f.out)
	}
	return nil
}

type clusterSimFlags struct {
	cluster     string
	policy      string
	window      string
	json        bool
	gantt       string
	cdf         string
	placement   string
	preempt     float64
	round       float64
	reset       float64
	event       bool
	seed        uint64
	tp          string
	perJob      string
	ganttWindow string
	lp          string
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
	fl.StringVar(&f.cluster, "cluster", "gavel-108", "cluster preset or YAML file")
	fl.StringVar(&f.policy, "policy", "gavel", "policy (inlay cluster policies lists them)")
	fl.StringVar(&f.window, "window", "", "FIRST:LAST job IDs to measure (default: all)")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON object")
	fl.StringVar(&f.gantt, "gantt", "", "write a cluster Gantt chart (.svg or .png)")
	fl.StringVar(&f.ganttWindow, "gantt-hours", "", "FROM:TO hours of the Gantt chart (default: the first 48 h of the window)")
	fl.StringVar(&f.cdf, "cdf", "", "write the JCT CDF (.svg or .png)")
	fl.StringVar(&f.placement, "placement", "consolidated", "multi-GPU placement: consolidated or spread")
	fl.Float64Var(&f.preempt, "preempt", 0, "seconds a job loses when it resumes on other GPUs (checkpoint and restore)")
	fl.Float64Var(&f.round, "round", 360, "round length in seconds")
	fl.Float64Var(&f.reset, "reset", 1920, "least seconds between allocation recomputations (-1: every event)")
	fl.BoolVar(&f.event, "event-driven", false, "run placements until the next event instead of in rounds")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the policies' and the mechanism's draws")
	fl.StringVar(&f.tp, "throughputs", "", "throughput file in Gavel's format, or \"estimate\" for inlay's cost model on the cluster's GPUs (default: Gavel's measurements)")
	fl.StringVar(&f.perJob, "per-job", "", "write every job's result and timeline as JSONL")
	fl.StringVar(&f.lp, "lp", "simplex", lpFlagHelp)
	return cmd
}

func runClusterSimulate(cmd *cobra.Command, f *clusterSimFlags, trace string) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	c, err := chw.Resolve(f.cluster)
	if err != nil {
		return err
	}
	jobs, err := job.Load(trace)
	if err != nil {
		return err
	}
	var t *throughput.Table
	if f.tp == "estimate" {
		t, err = estimateTable(c, jobs)
	} else {
		t, err = loadThroughputs(f.tp)
	}
	if err != nil {
		return err
	}
	if err := job.Validate(trace, jobs, t, c); err != nil {
		return err
	}
	lp, err := lpConfig(f.lp)
	if err != nil {
		return err
	}
	pol, err := registry.New(f.policy, registry.Options{Seed: f.seed, LP: lp})
	if err != nil {
		return err
	}
	cfg := sim.Config{
		Sched:       sched.Config{Round: f.round, ResetInterval: f.reset, Placement: sched.Placement(f.placement), Seed: f.seed},
		EventDriven: f.event, Preempt: f.preempt,
		Timeline: f.gantt != "" || f.perJob != "",
	}
	if !(f.preempt >= 0) {
		return fmt.Errorf("--preempt must not be negative")
	}
	if f.window != "" {
		w, err := parseWindow(f.window)
		if err != nil {
			return err
		}
		if w[1] >= len(jobs) {
			return fmt.Errorf("--window %s: the trace has jobs 0:%d", f.window, len(jobs)-1)
		}
		cfg.Window, cfg.StopAtWindow = w, true
	}
	bar := newBar(len(jobs), "simulating "+f.policy)
	cfg.Progress = func(done, total int) { barSet(bar, done) }
	start := time.Now()
	res, err := sim.Run(ctx, cfg, jobs, c, t, pol)
	barDone(bar)
	if err != nil {
		return err
	}
	wall := time.Since(start)
	if err := writeClusterSimFiles(f, res, c); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.json {
		view := *res
		view.PerJob = nil
		enc := json.NewEncoder(out)
		return enc.Encode(struct {
			*sim.Result
			WallSeconds float64 `json:"wall_s"`
		}{&view, math.Round(wall.Seconds()*1000) / 1000})
	}
	printSimResult(out, res, wall)
	if res.Exhausted {
		fmt.Fprintln(cmd.ErrOrStderr(), "inlay: warning: the trace ran out of arrivals before the window's jobs finished; generate more jobs (inlay cluster generate --jobs)")
	}
	return nil
}

// writeClusterSimFiles writes the files cluster simulate's flags ask for:
// the Gantt chart, the JCT CDF and the per-job table.
func writeClusterSimFiles(f *clusterSimFlags, res *sim.Result, c *chw.Platform) error {
	if f.gantt != "" {
		if err := writeClusterGantt(f.gantt, f.ganttWindow, res, c); err != nil {
			return err
		}
	}
	if f.cdf != "" {
		if err := writeJCTCDF(f.cdf, []*sim.Result{res}); err != nil {
			return err
		}
	}
	if f.perJob != "" {
		return writePerJob(f.perJob, res)
	}
	return nil
}

// estimateTable builds a throughput table for the trace's job types from
// inlay's cost model on the cluster's GPU types.
func estimateTable(c *chw.Platform, jobs []job.Job) (*throughput.Table, error) {
	fam, err := throughput.Families()
	if err != nil {
		return nil, err
	}
	seen := map[throughput.Key]bool{}
	var keys []throughput.Key
	for _, j := range jobs {
		for _, k := range []throughput.Key{{JobType: j.Type, Scale: j.GPUs}} {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		for _, st := range j.Stages {
			if k := (throughput.Key{JobType: st.Type, Scale: st.GPUs}); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	// Job types given as ONNX files: "onnx:PATH (batch size B)".
	for _, k := range keys {
		model, _, ok := throughput.ParseJobType(k.JobType)
		if !ok || !strings.HasPrefix(model, "onnx:") {
			continue
		}
		if _, done := fam[model]; done {
			continue
		}
		m, err := loadModel(strings.TrimPrefix(model, "onnx:"), nil)
		if err != nil {
			return nil, fmt.Errorf("job type %q: %w", k.JobType, err)
		}
		fam[model] = throughput.FromGraph(model, m)
	}
	return throughput.Estimate(c, keys, fam, throughput.DefaultModel)
}

func printSimResult(w io.Writer, r *sim.Result, wall time.Duration) {
	fmt.Fprintf(w, "%s on %s: %d jobs measured (IDs %d-%d)", r.Policy, r.Cluster, r.Jobs, r.Window[0], r.Window[1])
	if r.Unfinished > 0 {
		fmt.Fprintf(w, ", %d unfinished", r.Unfinished)
	}
	fmt.Fprintf(w, "; %d rounds, %d allocations, %d preemptions, %.1f s\n", r.Rounds, r.Recomputes, r.Preemptions, wall.Seconds())
	if r.Fallbacks > 0 {
		fmt.Fprintf(w, "%d allocations fell back to the policy's cheaper allocation (first: %s)\n", r.Fallbacks, r.FirstFallback)
	}
	tb := textfmt.Table{Header: []string{"metric", "value"}}
	tb.Add("avg JCT", fmt.Sprintf("%.2f h", r.AvgJCT))
	tb.Add("p50 / p90 / p99 JCT", fmt.Sprintf("%.2f / %.2f / %.2f h", r.P50JCT, r.P90JCT, r.P99JCT))
	tb.Add("makespan", fmt.Sprintf("%.2f h", r.Makespan))
	tb.Add("finish-time fairness ρ", fmt.Sprintf("avg %.2f, max %.2f", r.AvgFTF, r.MaxFTF))
	for _, g := range sortedUtil(r.Utilization) {
		tb.Add("utilisation "+g, fmt.Sprintf("%.1f %%", 100*r.Utilization[g]))
	}
	tb.WriteTo(w) //nolint:errcheck
}

func sortedUtil(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func writePerJob(path string, r *sim.Result) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(file)
	for i := range r.PerJob {
		if err := enc.Encode(&r.PerJob[i]); err != nil {
			file.Close()
			return err
		}
	}
	return file.Close()
}

func newClusterPlatformsCmd() *cobra.Command {
	var asYAML bool
	cmd := &cobra.Command{
		Use:   "platforms [NAME]",
		Short: "List the cluster presets, or show one (--yaml: its source)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				if asYAML {
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
				fmt.Fprintln(out, p.Summary())
				tb := textfmt.Table{Header: []string{"GPU", "count", "per server", "memory", "tensor TFLOPS", "$/GPU-h"}}
				for _, g := range p.Types() {
					gt, _ := p.GPUType(g)
					tb.Add(g, strconv.Itoa(p.Count(g)), strconv.Itoa(p.MaxGPUsPerNode(g)), fmt.Sprintf("%g GiB", gt.MemoryGiB), fmt.Sprintf("%g", gt.TensorTFLOPS), fmt.Sprintf("%.2f", gt.PricePerHour))
				}
				_, err = tb.WriteTo(out)
				return err
			}
			tb := textfmt.Table{Header: []string{"cluster", "GPUs"}}
			for _, n := range chw.Presets() {
				p, err := chw.Preset(n)
				if err != nil {
					return err
				}
				tb.Add(n, strings.TrimPrefix(p.Summary(), n+": "))
			}
			_, err := tb.WriteTo(out)
			return err
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			tb := textfmt.Table{Header: []string{"policy", "what it does"}}
			reg := registry.Registry()
			for _, n := range registry.Names() {
				tb.Add(n, reg[n].Summary)
			}
			_, err := tb.WriteTo(cmd.OutOrStdout())
			return err
		},
	}
}
