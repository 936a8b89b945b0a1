package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cluster/policy/adaptreg"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/cluster/siabench"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/spf13/cobra"
)

// siaPolicies are the sia-* experiments' default policies.
const siaPolicies = "gavel-tj,pollux,sia,inlay"

// runSiaBench runs Sia's benchmark (--experiments sia-*).
func runSiaBench(cmd *cobra.Command, ctx context.Context, f *clusterBenchFlags, exps []string) error {
	for _, e := range exps {
		ok := false
		for _, k := range siabench.Experiments {
			ok = ok || e == k
		}
		if !ok {
			return fmt.Errorf("--experiments: %q: Sia's experiments (%s) do not mix with Gavel's", e, strings.Join(siabench.Experiments, ", "))
		}
	}
	b, err := sia.Load(f.siaDir)
	if err != nil {
		return err
	}
	cfg := siabench.Config{Bench: b, Experiments: exps, Scale: f.clusterScale, Files: f.siaFiles, Workers: f.workers, Clock: time.Now}
	if f.clusterScale < 1 || f.clusterScale > 1024 {
		return fmt.Errorf("--cluster-scale: want 1..1024, got %d", f.clusterScale)
	}
	if f.round != "" {
		d, err := time.ParseDuration(f.round)
		if err != nil || d < time.Second {
			return fmt.Errorf("--round: want a duration of at least 1s (60s, 6m), got %q", f.round)
		}
		cfg.Round = d.Seconds()
	}
	pols := f.policies
	if !cmd.Flags().Changed("policies") {
		pols = siaPolicies
	}
	cfg.Policies = splitList(pols)
	for _, p := range cfg.Policies {
		if _, err := adaptreg.Lookup(p); err != nil {
			return fmt.Errorf("--policies: %w", err)
		}
	}
	bar := newBar(1, "sia bench")
	cfg.Progress = func(done, total int, what string) {
		if bar != nil {
			bar.ChangeMax(total)
		}
		barSet(bar, done)
		barDescribe(bar, what)
	}
	rep, err := siabench.Run(ctx, cfg)
	barDone(bar)
	if err != nil {
		return err
	}
	if f.json {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
	}
	printSiaBench(cmd.OutOrStdout(), rep)
	return nil
}

func printSiaBench(w io.Writer, rep *siabench.Report) {
	for _, e := range rep.Experiments {
		fmt.Fprintf(w, "%s: %d workloads, %d jobs; proven lower bound on average JCT %.2f h\n", e.Name, len(e.Files), e.Jobs, e.LowerBound)
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
