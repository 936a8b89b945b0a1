// Package adaptreg names the policies of adaptive jobs on heterogeneous
// clusters (package adapt): one explicit map from name to factory, as
// package registry does for the round-based policies.
package adaptreg

import (
	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/policy/gaveltj"
	"github.com/inlay-dev/inlay/cluster/policy/inlayadapt"
	"github.com/inlay-dev/inlay/cluster/policy/pollux"
	"github.com/inlay-dev/inlay/cluster/policy/sia"
	"github.com/inlay-dev/inlay/internal/named"
)

// Options configure a policy when it is built.
type Options struct {
	Seed uint64
	// P, LambdaN and LambdaA override Sia's defaults when non-zero.
	P, LambdaN, LambdaA float64
}

// Factory builds a fresh policy (policies keep memory between rounds).
type Factory struct {
	Summary string
	// Round is the policy's own round length in seconds.
	Round float64
	New   func(Options) adapt.Policy
}

// Registry returns the policies by name.
func Registry() map[string]Factory {
	return map[string]Factory{
		"gavel-tj": {"Gavel's max_sum_throughput_perf (LP) over TunedJobs: the trace's GPUs and batch size, Gavel's round priorities", 360,
			func(Options) adapt.Policy { return gaveltj.New() }},
		"pollux": {"Pollux as Sia ran it: genetic search of replicas per virtual node maximising the p = -1 mean of goodput speedups; unaware of GPU types (a job runs on its majority type, the rest dropped)", 60,
			func(o Options) adapt.Policy { return pollux.New(o.Seed) }},
		"sia": {"Sia: ILP over (GPU type, count) per job on bootstrapped goodputs, p = -0.5, λn = 1.1, λa = 0.01, restart factor (CBC)", 60,
			func(o Options) adapt.Policy {
				p := sia.New()
				if o.P != 0 {
					p.P = o.P
				}
				if o.LambdaN != 0 {
					p.LambdaN = o.LambdaN
				}
				if o.LambdaA != 0 {
					p.LambdaA = o.LambdaA
				}
				return p
			}},
		"inlay": {"inlay: greedy growth by goodput over remaining progress per GPU value, restart-aware, aged; mixed-type gangs when allowed", 60,
			func(Options) adapt.Policy { return inlayadapt.New() }},
	}
}

// Names returns the registry's names, sorted.
func Names() []string { return named.Names(Registry()) }

// Lookup returns the factory called name.
func Lookup(name string) (Factory, error) {
	return named.Lookup(named.Kind{Pkg: "cluster", What: "adaptive policy", Plural: "policies"}, Registry(), name, name)
}
