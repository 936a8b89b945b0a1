package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/train/planner"
)

// trainPlanFlags are train plan's flags.
type trainPlanFlags struct {
	spec                 train.Spec
	objective, name      string
	budget               time.Duration
	globalBatch, maxGPUs int
	maxDollars, tokens   float64
	prices               string
	json, explain        bool
	export, out          string
}

func newTrainPlanCmd() *cobra.Command {
	f := &trainPlanFlags{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Find the fastest (or cheapest) training plan across unlike GPUs",
		Long: "inlay train plan searches data, tensor and pipeline parallelism, uneven stages,\n" +
			"per-stage GPU type and TP, unlike replicas with their own batch shares,\n" +
			"micro-batch, recomputation and ZeRO; every plan fits the memory model. The\n" +
			"plan is printed beside a proven throughput bound. --json output reads back\n" +
			"with inlay train simulate --plan FILE.json.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainPlan(cmd, f) },
	}
	fl := cmd.Flags()
	registerTarget(cmd, &f.spec)
	fl.StringVar(&f.objective, "objective", "throughput", "throughput (tokens/s), cost (dollars per token; needs --prices) or time (hours to --tokens)")
	fl.StringVar(&f.name, "planner", "inlay", "planner: "+strings.Join(planner.Names(), ", "))
	fl.DurationVar(&f.budget, "budget", 0, "search time budget (default: 1s for inlay, 120s for the baselines)")
	fl.IntVar(&f.globalBatch, "global-batch", 0, "sequences per iteration (default: about 2M tokens)")
	fl.IntVar(&f.maxGPUs, "max-gpus", 0, "use at most this many GPUs (0: no cap)")
	fl.Float64Var(&f.maxDollars, "max-dollars-per-hour", 0, "spend at most this many dollars an hour (needs --prices)")
	fl.StringVar(&f.prices, "prices", "", "dollars per GPU-hour by type: TYPE=PRICE[,TYPE=PRICE…]")
	fl.Float64Var(&f.tokens, "tokens", 0, "token budget for --objective time")
	fl.BoolVar(&f.json, "json", false, "print the plan file as JSON (simulate --plan reads it)")
	fl.BoolVar(&f.explain, "explain", false, "print why each stage is as it is and what binds")
	fl.StringVar(&f.export, "export", "", "also write the plan for an engine: "+strings.Join(planner.ExportFormats, ", "))
	fl.StringVarP(&f.out, "output", "o", "", "with --export: the file to write (default: standard output)")
	return cmd
}

// parsePrices reads TYPE=PRICE pairs.
func parsePrices(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if s == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		x, err := strconv.ParseFloat(v, 64)
		g, known := train.LookupGPU(k)
		if !ok || err != nil || !(x > 0) || !known {
			return nil, fmt.Errorf("--prices %q: want TYPE=DOLLARS_PER_GPU_HOUR with a known type and a positive price", kv)
		}
		out[g.Name] = x
	}
	return out, nil
}

func runTrainPlan(cmd *cobra.Command, f *trainPlanFlags) error {
	m, c, err := train.ResolveTarget(f.spec)
	if err != nil {
		return err
	}
	prices, err := parsePrices(f.prices)
	if err != nil {
		return err
	}
	pl, err := planner.New(f.name)
	if err != nil {
		return err
	}
	if f.export != "" && f.out == "" && f.json {
		return fmt.Errorf("--export with --json needs -o FILE")
	}
	o := planner.Options{Objective: f.objective, GlobalBatch: f.globalBatch, MaxGPUs: f.maxGPUs, MaxDollarsPerHour: f.maxDollars,
		Prices: prices, TokenBudget: f.tokens, Budget: f.budget}
	res, err := pl.Plan(&m, c, o)
	if err != nil {
		return err
	}
	pf := planner.File(&m, c, o, res)
	if f.export != "" {
		data, err := planner.Export(f.export, &m, c, res.Plan)
		if err != nil {
			return err
		}
		if f.out == "" {
			_, err = cmd.OutOrStdout().Write(data)
			return err
		}
		if err := os.WriteFile(f.out, data, 0o644); err != nil {
			return err
		}
	}
	if f.json {
		if !f.explain {
			pf.Explain = nil
		}
		return writeTrainJSON(cmd.OutOrStdout(), pf)
	}
	return printTrainPlan(cmd.OutOrStdout(), pf, res, f.explain)
}

func printTrainPlan(w io.Writer, pf *train.PlanFile, res *planner.Result, explain bool) error {
	fmt.Fprintf(w, "planner %s: %s on %s (%s)\n", pf.Planner, pf.Model, pf.Cluster, pf.Objective)
	fmt.Fprintf(w, "plan: %s, global batch %d, ZeRO %d, %s\n", planner.Shape(res.Plan), res.Plan.GlobalBatch, res.Plan.Zero, res.Plan.Precision)
	fmt.Fprintf(w, "throughput: %.0f tokens/s (iteration %.3f s) on %d GPUs\n", pf.TokensPerS, pf.IterationS, pf.GPUs)
	fmt.Fprintf(w, "bound: %.0f tokens/s; the plan reaches %.1f %% of it\n", pf.BoundTokensPerS, 100*pf.Fraction)
	fmt.Fprintf(w, "memory: peak %.1f GiB, least headroom %.1f GiB; fits: %v\n", pf.PeakMemoryBytes/(1<<30), pf.HeadroomBytes/(1<<30), pf.Fits)
	if pf.DollarsPerH > 0 {
		fmt.Fprintf(w, "cost: $%.2f an hour, $%.4f per million tokens\n", pf.DollarsPerH, pf.DollarsPerMTokens)
	}
	if pf.HoursToBudget > 0 {
		fmt.Fprintf(w, "time to the token budget: %.1f h\n", pf.HoursToBudget)
	}
	fmt.Fprintf(w, "search: %.3f s, %d plans simulated\n", pf.SearchSeconds, pf.Evaluated)
	t := &textfmt.Table{Header: []string{"stage", "layers", "replicas (GPU, TP)"}}
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

// stageKinds counts a stage's placements.
func stageKinds(p *train.Plan, s int) string {
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

func newTrainBenchCmd() *cobra.Command {
	var asJSON bool
	var budget time.Duration
	var planners, only string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the planning scenarios with every planner side by side",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names := strings.Split(planners, ",")
			var rows []planner.BenchRow
			for _, s := range planner.Scenarios() {
				if only != "" && !strings.Contains(s.Name, only) {
					continue
				}
				rows = append(rows, planner.RunBench(s, names, planner.Options{}, budget)...)
			}
			if asJSON {
				return writeTrainJSON(cmd.OutOrStdout(), rows)
			}
			t := &textfmt.Table{Header: []string{"scenario", "planner", "tokens/s", "of bound", "search s", "GPUs", "headroom GiB", "plan"}}
			for _, r := range rows {
				if r.Error != "" {
					t.Add(r.Scenario, r.Planner, "-", "-", "-", "-", "-", r.Error)
					continue
				}
				t.Add(r.Scenario, r.Planner, fmt.Sprintf("%.0f", r.TokensPerS), fmt.Sprintf("%.1f %%", 100*r.Fraction),
					fmt.Sprintf("%.2f", r.SearchSeconds), strconv.Itoa(r.GPUs), fmt.Sprintf("%.1f", r.HeadroomBytes/(1<<30)), r.Shape)
			}
			_, err := t.WriteTo(cmd.OutOrStdout())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the rows as JSON")
	cmd.Flags().DurationVar(&budget, "baseline-budget", 30*time.Second, "search time budget of each baseline planner")
	cmd.Flags().StringVar(&planners, "planners", "inlay,megatron,metis,amp", "planners to run, comma-separated")
	cmd.Flags().StringVar(&only, "only", "", "run only the scenarios whose name contains this")
	return cmd
}
