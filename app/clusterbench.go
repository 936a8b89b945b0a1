package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cluster/adapt"
	cbench "github.com/inlay-dev/inlay/cluster/bench"
	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/planned"
	"github.com/inlay-dev/inlay/cluster/policy/adaptreg"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/cluster/siabench"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// SiaPolicies are the sia-* experiments' default policies.
const SiaPolicies = "gavel-tj,pollux,sia,inlay"

// ClusterBenchInput is a cluster bench (inlay cluster bench): Gavel's
// experiments (single, multi, static) or Sia's (sia-*), which do not mix.
// Lists are comma-separated, as the flags give them.
type ClusterBenchInput struct {
	Cluster, Experiments, Throughputs, LP string
	Policies, StaticPolicies, Seeds       string
	// PoliciesGiven says Policies was chosen; otherwise Sia's experiments
	// run SiaPolicies.
	PoliciesGiven           bool
	SingleRates, MultiRates string
	StaticJobs, Workers     int
	Window                  string
	TailHours               float64
	// Sia's benchmark: its folder, the round ("" for each policy's own),
	// the cluster scale and how many workload files of each experiment.
	SiaDir, Round          string
	ClusterScale, SiaFiles int
	// Trace, when set, is a trace of jobs given as models to run on
	// Cluster in the adaptive simulator, as Sia's experiments run (the
	// same policies, rounds and rows, mixed gangs off and on), instead of
	// Experiments (ExperimentsGiven says they were chosen too: an error).
	// RestartS is a reallocation's checkpoint-restore delay, seconds.
	Trace            string
	ExperimentsGiven bool
	RestartS         float64
}

// ClusterBench is a checked bench, ready to run; Sia says which of the
// two it is.
type ClusterBench struct {
	Sia   bool
	gavel cbench.Config
	sia   siabench.Config
}

// ClusterBenchReport is a bench's report: Gavel's, or Sia's when the
// bench ran Sia's experiments.
type ClusterBenchReport struct {
	Gavel *cbench.Report
	Sia   *siabench.Report
}

// PrepareClusterBench reads and checks the bench's input.
func PrepareClusterBench(in ClusterBenchInput) (*ClusterBench, error) {
	if in.Trace != "" {
		cfg, err := modelsBenchConfig(in)
		return &ClusterBench{Sia: true, sia: cfg}, err
	}
	if exps := SplitList(in.Experiments); len(exps) > 0 && strings.HasPrefix(exps[0], "sia-") {
		cfg, err := siaBenchConfig(in, exps)
		return &ClusterBench{Sia: true, sia: cfg}, err
	}
	t, err := throughput.Load(in.Throughputs)
	if err != nil {
		return nil, err
	}
	c, err := chw.Resolve(in.Cluster)
	if err != nil {
		return nil, err
	}
	w, err := ParseWindow(in.Window)
	if err != nil {
		return nil, err
	}
	lp, err := LPConfig(in.LP)
	if err != nil {
		return nil, err
	}
	cfg := cbench.Config{Cluster: c, Table: t, Window: w, TailHours: in.TailHours, Workers: in.Workers, Sched: sched.Config{}, Registry: registry.Options{LP: lp}}
	if err := benchExperiments(in, &cfg); err != nil {
		return nil, err
	}
	return &ClusterBench{gavel: cfg}, nil
}

// Run runs the bench, telling progress (when set) after each simulation.
func (b *ClusterBench) Run(ctx context.Context, progress func(done, total int, what string)) (*ClusterBenchReport, error) {
	if b.Sia {
		cfg := b.sia
		cfg.Progress = progress
		rep, err := siabench.Run(ctx, cfg)
		return &ClusterBenchReport{Sia: rep}, err
	}
	cfg := b.gavel
	cfg.Progress = progress
	rep, err := cbench.Bench(ctx, cfg)
	return &ClusterBenchReport{Gavel: rep}, err
}

// benchExperiments sets the experiments, policies, seeds and rates of
// Gavel's experiments into cfg.
func benchExperiments(in ClusterBenchInput, cfg *cbench.Config) error {
	var err error
	exps := map[string]bool{}
	for _, e := range SplitList(in.Experiments) {
		if e != cbench.Single && e != cbench.Multi && e != cbench.Static {
			return fmt.Errorf("--experiments: unknown %q (single, multi, static)", e)
		}
		exps[e] = true
	}
	cfg.Policies = SplitList(in.Policies)
	cfg.StaticPolicies = SplitList(in.StaticPolicies)
	for _, s := range SplitList(in.Seeds) {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("--seeds: %q is not a seed", s)
		}
		cfg.Seeds = append(cfg.Seeds, v)
	}
	if len(cfg.Seeds) == 0 {
		return fmt.Errorf("--seeds: none given")
	}
	if exps[cbench.Single] {
		if cfg.SingleRates, err = ParseRates("single-rates", in.SingleRates); err != nil {
			return err
		}
	}
	if exps[cbench.Multi] {
		if cfg.MultiRates, err = ParseRates("multi-rates", in.MultiRates); err != nil {
			return err
		}
	}
	if exps[cbench.Static] {
		if in.StaticJobs < 1 {
			return fmt.Errorf("--static-jobs must be positive")
		}
		cfg.StaticJobs = in.StaticJobs
	}
	return nil
}

// siaBenchConfig checks the input of Sia's experiments exps.
func siaBenchConfig(in ClusterBenchInput, exps []string) (siabench.Config, error) {
	for _, e := range exps {
		ok := false
		for _, k := range siabench.Experiments {
			ok = ok || e == k
		}
		if !ok {
			return siabench.Config{}, fmt.Errorf("--experiments: %q: Sia's experiments (%s) do not mix with Gavel's", e, strings.Join(siabench.Experiments, ", "))
		}
	}
	b, err := sia.Load(in.SiaDir)
	if err != nil {
		return siabench.Config{}, err
	}
	cfg := siabench.Config{Bench: b, Experiments: exps, Scale: in.ClusterScale, Files: in.SiaFiles, Workers: in.Workers, Clock: time.Now}
	if in.ClusterScale < 1 || in.ClusterScale > 1024 {
		return cfg, fmt.Errorf("--cluster-scale: want 1..1024, got %d", in.ClusterScale)
	}
	return cfg, siaRoundPolicies(in, &cfg)
}

// siaRoundPolicies sets the round (--round) and the adaptive policies
// (--policies, default SiaPolicies) of an adaptive bench.
func siaRoundPolicies(in ClusterBenchInput, cfg *siabench.Config) error {
	if in.Round != "" {
		d, err := time.ParseDuration(in.Round)
		if err != nil || d < time.Second {
			return fmt.Errorf("--round: want a duration of at least 1s (60s, 6m), got %q", in.Round)
		}
		cfg.Round = d.Seconds()
	}
	pols := in.Policies
	if !in.PoliciesGiven {
		pols = SiaPolicies
	}
	cfg.Policies = SplitList(pols)
	for _, p := range cfg.Policies {
		if _, err := adaptreg.Lookup(p); err != nil {
			return fmt.Errorf("--policies: %w", err)
		}
	}
	return nil
}

// modelsBenchConfig checks the input of a bench of a trace of jobs given
// as models (--trace): every job's rate on every allocation, mixed gangs
// included, from the training planner (cluster/planned).
func modelsBenchConfig(in ClusterBenchInput) (siabench.Config, error) {
	cfg := siabench.Config{Workers: in.Workers, Clock: time.Now}
	if in.ExperimentsGiven {
		return cfg, fmt.Errorf("--trace runs the trace's jobs instead of --experiments; give one of the two")
	}
	if !(in.RestartS >= 0) {
		return cfg, fmt.Errorf("--restart must not be negative")
	}
	if err := siaRoundPolicies(in, &cfg); err != nil {
		return cfg, err
	}
	c, err := chw.Resolve(in.Cluster)
	if err != nil {
		return cfg, err
	}
	if cfg.Cluster, err = planned.AdaptCluster(c); err != nil {
		return cfg, err
	}
	jobs, err := job.Load(in.Trace)
	if err != nil {
		return cfg, err
	}
	js, err := planned.AdaptJobs(in.Trace, jobs, cfg.Cluster, c.Network.BandwidthGBs, in.RestartS)
	if err != nil {
		return cfg, err
	}
	cfg.Sets = []siabench.Set{{Name: filepath.Base(in.Trace) + " on " + c.Name, Files: []string{filepath.Base(in.Trace)}, Jobs: [][]adapt.Job{js}}}
	return cfg, nil
}

// SplitList splits a comma-separated list, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ParseRates reads a comma-separated list of positive numbers given to
// --flag.
func ParseRates(flag, s string) ([]float64, error) {
	var out []float64
	for _, p := range SplitList(s) {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("--%s: want positive numbers, got %q", flag, p)
		}
		out = append(out, v)
	}
	return out, nil
}
