// Package registry names the cluster policies: one explicit map from name
// to factory, which the CLI and the bench iterate (no init-time
// registration).
package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/policy/agnostic"
)

// Options configure a policy when it is built.
type Options struct {
	// Seed seeds the policies that draw (FIFO's and Gandiva's choices).
	Seed uint64
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
		"las": {"Gavel's heterogeneity-agnostic LAS: max-min fair GPU-time shares",
			func(Options) (policy.Policy, error) { return agnostic.LAS{}, nil }},
		"tiresias": {"Tiresias-style 2D-LAS: attained-service queues, FIFO within a queue",
			func(o Options) (policy.Policy, error) { return agnostic.NewTiresias(o.Seed), nil }},
		"srtf": {"heterogeneity-agnostic shortest remaining time first, preemptive",
			func(o Options) (policy.Policy, error) { return agnostic.NewSRTF(o.Seed), nil }},
		"gandiva": {"Gandiva-style random pairing for space sharing, equal time split",
			func(o Options) (policy.Policy, error) { return agnostic.NewGandiva(o.Seed), nil }},
	}
}

// Names returns the registry's names, sorted.
func Names() []string {
	var out []string
	for n := range Registry() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// New builds the policy called name.
func New(name string, o Options) (policy.Policy, error) {
	f, ok := Registry()[name]
	if !ok {
		return nil, fmt.Errorf("cluster: unknown policy %q (policies: %s)", name, strings.Join(Names(), ", "))
	}
	return f.New(o)
}
