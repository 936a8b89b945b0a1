package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/cluster/bench"
	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/policy/gavel"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/report"
	"github.com/spf13/cobra"
)

type clusterBenchFlags struct {
	cluster, policies, staticPolicies, seeds, single, multi, window, tp, plot, experiments, lp string
	staticJobs, workers                                                                        int
	tailHours                                                                                  float64
	json                                                                                       bool
	// Sia's benchmark (sia-* experiments).
	siaDir, round          string
	clusterScale, siaFiles int
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
simulations in parallel.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runClusterBench(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cluster, "cluster", "gavel-108", "cluster preset or YAML file")
	fl.StringVar(&f.experiments, "experiments", "single,multi,static", "experiments to run: single, multi, static (Gavel's); sia-philly, sia-helios, sia-rigid (Sia's benchmark, adaptive jobs on mixed GPU types)")
	fl.StringVar(&f.siaDir, "sia", sia.DefaultDir, "folder of Sia's benchmark (cluster.json, traces/, workloads/, sia_table3.csv)")
	fl.StringVar(&f.round, "round", "", "sia-* experiments: round length for every policy (e.g. 60s, 6m; default: each policy's own, 360 s for gavel-tj, 60 s for the others)")
	fl.IntVar(&f.clusterScale, "cluster-scale", 1, "sia-* experiments: multiply the cluster's servers and the workloads' jobs by N (Sia's --cluster_scale)")
	fl.IntVar(&f.siaFiles, "sia-files", 0, "sia-* experiments: run only the first N workload files of each (0: all)")
	fl.StringVar(&f.policies, "policies", "las,gandiva,gavel,gavel-ss,inlay", "policies of the continuous experiments")
	fl.StringVar(&f.staticPolicies, "static-policies", "fifo,gandiva,gavel-makespan,gavel-makespan-ss,inlay-makespan", "policies of the static experiment")
	fl.StringVar(&f.seeds, "seeds", "0,1,2", "seeds")
	fl.StringVar(&f.single, "single-rates", "5.6", "single-GPU input rates, jobs per hour")
	fl.StringVar(&f.multi, "multi-rates", "2.6", "multi-GPU input rates, jobs per hour")
	fl.IntVar(&f.staticJobs, "static-jobs", 500, "jobs of the static experiment")
	fl.StringVar(&f.window, "window", "4000:4999", "job IDs measured in the continuous experiments")
	fl.Float64Var(&f.tailHours, "tail-hours", 1000, "hours of arrivals generated after the window's last job")
	fl.IntVar(&f.workers, "workers", 1, "simulations run at once")
	fl.StringVar(&f.tp, "throughputs", "", "throughput file in Gavel's format (default: Gavel's measurements)")
	fl.StringVar(&f.plot, "plot", "", "write average JCT against rate (.svg or .png; one file per experiment, suffixed -single/-multi)")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	fl.StringVar(&f.lp, "lp", "simplex", lpFlagHelp)
	return cmd
}

const lpFlagHelp = "how the LP policies solve: simplex (a vertex, with a tie-break that uses the capacity) or interior (as Gavel does: an interior-point method, a point inside the optimal face)"

// lpConfig is the LP policies' configuration for --lp.
func lpConfig(mode string) (gavel.Config, error) {
	switch mode {
	case "", "simplex":
		return gavel.Config{}, nil
	case "interior":
		return gavel.Config{Interior: true}, nil
	}
	return gavel.Config{}, fmt.Errorf("--lp: unknown %q (simplex, interior)", mode)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseFloats(flag, s string) ([]float64, error) {
	var out []float64
	for _, p := range splitList(s) {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("--%s: want positive numbers, got %q", flag, p)
		}
		out = append(out, v)
	}
	return out, nil
}

func runClusterBench(cmd *cobra.Command, f *clusterBenchFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	if exps := splitList(f.experiments); len(exps) > 0 && strings.HasPrefix(exps[0], "sia-") {
		return runSiaBench(cmd, ctx, f, exps)
	}
	t, err := loadThroughputs(f.tp)
	if err != nil {
		return err
	}
	c, err := chw.Resolve(f.cluster)
	if err != nil {
		return err
	}
	w, err := parseWindow(f.window)
	if err != nil {
		return err
	}
	lp, err := lpConfig(f.lp)
	if err != nil {
		return err
	}
	cfg := bench.Config{Cluster: c, Table: t, Window: w, TailHours: f.tailHours, Workers: f.workers, Sched: sched.Config{}, Registry: registry.Options{LP: lp}}
	if err := clusterBenchExperiments(f, &cfg); err != nil {
		return err
	}
	bar := newBar(1, "cluster bench")
	cfg.Progress = func(done, total int, what string) {
		if bar != nil {
			bar.ChangeMax(total)
		}
		barSet(bar, done)
		barDescribe(bar, what)
	}
	rep, err := bench.Bench(ctx, cfg)
	barDone(bar)
	if err != nil {
		return err
	}
	if f.plot != "" {
		if err := plotBench(f.plot, rep); err != nil {
			return err
		}
	}
	if f.json {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
	}
	printBench(cmd.OutOrStdout(), rep)
	return nil
}

// clusterBenchExperiments sets the experiments, policies, seeds and rates
// of cluster bench's flags into cfg.
func clusterBenchExperiments(f *clusterBenchFlags, cfg *bench.Config) error {
	var err error
	exps := map[string]bool{}
	for _, e := range splitList(f.experiments) {
		if e != bench.Single && e != bench.Multi && e != bench.Static {
			return fmt.Errorf("--experiments: unknown %q (single, multi, static)", e)
		}
		exps[e] = true
	}
	cfg.Policies = splitList(f.policies)
	cfg.StaticPolicies = splitList(f.staticPolicies)
	for _, s := range splitList(f.seeds) {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("--seeds: %q is not a seed", s)
		}
		cfg.Seeds = append(cfg.Seeds, v)
	}
	if len(cfg.Seeds) == 0 {
		return fmt.Errorf("--seeds: none given")
	}
	if exps[bench.Single] {
		if cfg.SingleRates, err = parseFloats("single-rates", f.single); err != nil {
			return err
		}
	}
	if exps[bench.Multi] {
		if cfg.MultiRates, err = parseFloats("multi-rates", f.multi); err != nil {
			return err
		}
	}
	if exps[bench.Static] {
		if f.staticJobs < 1 {
			return fmt.Errorf("--static-jobs must be positive")
		}
		cfg.StaticJobs = f.staticJobs
	}
	return nil
}

func printBench(w io.Writer, rep *bench.Report) {
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
	for _, r := range rep.Runs {
		if r.Err != "" {
			fmt.Fprintf(w, "failed: %s %g %s seed %d: %s\n", r.Experiment, r.Rate, r.Policy, r.Seed, r.Err)
		}
	}
}

func plotBench(path string, rep *bench.Report) error {
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
		var series []report.Series
		for _, p := range order {
			series = append(series, *byPolicy[p])
		}
		ext := path[strings.LastIndex(path, "."):]
		out := strings.TrimSuffix(path, ext) + "-" + exp + ext
		title := fmt.Sprintf("%s-GPU jobs on %s, jobs %d-%d", map[string]string{bench.Single: "single", bench.Multi: "multi"}[exp], rep.Cluster, rep.Window[0], rep.Window[1])
		if err := writePicture(out, func(f *os.File, format string) error { return report.JCTvsRate(f, format, title, series) }); err != nil {
			return err
		}
	}
	return nil
}
