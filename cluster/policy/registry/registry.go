// Package registry names the cluster policies: one explicit map from name
// to factory, which the CLI and the bench iterate (no init-time
// registration).
package registry

import (
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/policy/agnostic"
	"github.com/inlay-dev/inlay/cluster/policy/dag"
	"github.com/inlay-dev/inlay/cluster/policy/elastic"
	"github.com/inlay-dev/inlay/cluster/policy/gavel"
	"github.com/inlay-dev/inlay/cluster/policy/inlay"
	"github.com/inlay-dev/inlay/cluster/policy/packing"
	"github.com/inlay-dev/inlay/internal/named"
)

// Options configure a policy when it is built.
type Options struct {
	// Seed seeds the policies that draw (FIFO's and Gandiva's choices).
	Seed uint64
	// LP configures the policies that solve linear programs (CBC).
	LP gavel.Config
}

// Factory builds a fresh policy (policies keep memory between calls).
type Factory struct {
	Summary string
	New     func(Options) (policy.Policy, error)
}

// Registry returns the policies by name.
func Registry() map[string]Factory {
	return map[string]Factory{
		"fifo": {"heterogeneity-agnostic first-in first-out, run to completion",
			func(o Options) (policy.Policy, error) { return agnostic.NewFIFO(o.Seed), nil }},
		"fifo-gavel": {"Gavel's FIFO as its code runs it: a leaked loop variable puts nearly every job on the V100s (explains Gavel's static FIFO figure)",
			func(o Options) (policy.Policy, error) { return agnostic.NewGavelFIFO(o.Seed), nil }},
		"las": {"Gavel's heterogeneity-agnostic LAS: max-min fair GPU-time shares",
			func(Options) (policy.Policy, error) { return agnostic.LAS{}, nil }},
		"tiresias": {"Tiresias-style 2D-LAS: attained-service queues, FIFO within a queue",
			func(o Options) (policy.Policy, error) { return agnostic.NewTiresias(o.Seed), nil }},
		"srtf": {"heterogeneity-agnostic shortest remaining time first, preemptive",
			func(o Options) (policy.Policy, error) { return agnostic.NewSRTF(o.Seed), nil }},
		"gandiva": {"Gandiva-style random pairing for space sharing, equal time split",
			func(o Options) (policy.Policy, error) { return agnostic.NewGandiva(o.Seed), nil }},
		"gavel": {"Gavel's heterogeneity-aware LAS: max-min normalised throughput (LP)",
			func(o Options) (policy.Policy, error) { return &gavel.MaxMin{Variant: gavel.Variant{Cfg: o.LP}}, nil }},
		"gavel-ss": {"gavel with space sharing: pairs of jobs on the same GPUs (LP)",
			func(o Options) (policy.Policy, error) {
				return &gavel.MaxMin{Variant: gavel.Variant{Cfg: o.LP, SpaceSharing: true}}, nil
			}},
		"ftf": {"heterogeneity-agnostic finish-time fairness (LP bisection)",
			func(o Options) (policy.Policy, error) {
				return &gavel.FTF{Variant: gavel.Variant{Cfg: o.LP, Agnostic: true}}, nil
			}},
		"gavel-ftf": {"Gavel's finish-time fairness: minimise the largest ρ (LP bisection)",
			func(o Options) (policy.Policy, error) { return &gavel.FTF{Variant: gavel.Variant{Cfg: o.LP}}, nil }},
		"gavel-ftf-ss": {"gavel-ftf with space sharing (LP bisection)",
			func(o Options) (policy.Policy, error) {
				return &gavel.FTF{Variant: gavel.Variant{Cfg: o.LP, SpaceSharing: true}}, nil
			}},
		"makespan": {"heterogeneity-agnostic minimum makespan (LP)",
			func(o Options) (policy.Policy, error) {
				return &gavel.Makespan{Variant: gavel.Variant{Cfg: o.LP, Agnostic: true}}, nil
			}},
		"gavel-makespan": {"Gavel's minimum makespan: maximise the least throughput/remaining (LP)",
			func(o Options) (policy.Policy, error) { return &gavel.Makespan{Variant: gavel.Variant{Cfg: o.LP}}, nil }},
		"gavel-makespan-ss": {"gavel-makespan with space sharing (LP)",
			func(o Options) (policy.Policy, error) {
				return &gavel.Makespan{Variant: gavel.Variant{Cfg: o.LP, SpaceSharing: true}}, nil
			}},
		"gavel-tput": {"Gavel's maximum total (normalised) throughput (LP)",
			func(o Options) (policy.Policy, error) {
				return &gavel.Throughput{Variant: gavel.Variant{Cfg: o.LP}}, nil
			}},
		"gavel-tput-ss": {"gavel-tput with space sharing (LP)",
			func(o Options) (policy.Policy, error) {
				return &gavel.Throughput{Variant: gavel.Variant{Cfg: o.LP, SpaceSharing: true}}, nil
			}},
		"gavel-cost": {"Gavel's minimum cost: normalised throughput per dollar (linear-fractional LP)",
			func(o Options) (policy.Policy, error) { return &gavel.Cost{Variant: gavel.Variant{Cfg: o.LP}}, nil }},
		"inlay": {"inlay's policy for average JCT: jobs ranked by their finish time under fair sharing (ageing), types by comparative advantage, paired when sharing pays",
			func(Options) (policy.Policy, error) { return &inlay.JCT{}, nil }},
		"inlay-noss": {"inlay without space sharing",
			func(Options) (policy.Policy, error) { return &inlay.JCT{NoSharing: true}, nil }},
		"inlay-srpt": {"inlay without ageing: shortest remaining GPU-time first (long jobs can starve near saturation)",
			func(Options) (policy.Policy, error) { return &inlay.JCT{NoAgeing: true}, nil }},
		"inlay-makespan": {"inlay's policy for makespan: the fluid makespan LP recomputed at every event",
			func(o Options) (policy.Policy, error) { return &inlay.Makespan{LP: o.LP}, nil }},
		"tetris": {"multi-resource packing (Tetris/DeepRM): GPUs, CPU cores and memory per GPU type, by alignment and speed",
			func(Options) (policy.Policy, error) { return &packing.Tetris{}, nil }},
		"dag": {"DAG jobs: stages by upward rank (critical path), each on the GPU type where it finishes first (HEFT-like)",
			func(Options) (policy.Policy, error) { return dag.Policy{}, nil }},
		"elastic": {"moldable and elastic jobs: GPU counts by dynamic programming over speedup profiles",
			func(Options) (policy.Policy, error) { return elastic.New(), nil }},
		"gavel-cost-ss": {"gavel-cost with space sharing (linear-fractional LP)",
			func(o Options) (policy.Policy, error) {
				return &gavel.Cost{Variant: gavel.Variant{Cfg: o.LP, SpaceSharing: true}}, nil
			}},
	}
}

// Kind words the error for a policy name the registry lacks.
var Kind = named.Kind{Pkg: "cluster", What: "policy", Plural: "policies"}

// Names returns the registry's names, sorted.
func Names() []string { return named.Names(Registry()) }

// New builds the policy called name.
func New(name string, o Options) (policy.Policy, error) {
	f, err := named.Lookup(Kind, Registry(), name, name)
	if err != nil {
		return nil, err
	}
	return f.New(o)
}
