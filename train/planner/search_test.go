package planner

import (
	"testing"
	"time"
)

// TestInlayCoversBaselinePlans checks cases where the baselines' plans
// lay outside inlay's search: a mixed pipeline whose types take TP
// degrees that are neither the type's best in a pipeline of its own nor
// its largest (AMP's A100 tp 1 then three V100 tp 1 stages; Metis's two
// V100 tp 4 stages then an A100 tp 2 stage), and a pipeline of three
// types.
func TestInlayCoversBaselinePlans(t *testing.T) {
	for _, tc := range []struct{ model, gpus string }{
		{"gpt-neo-2.7b", "16xA100-40,48xV100-16"},
		{"llama-3-8b", "2xA100-40,8xV100-16"},
		// AMP's three-type pipeline (A100, two RTX 2080 Ti, V100 stages):
		// inlay covers it by seeding its search with AMP's plan
		{"gpt-neo-2.7b", "8xA100-40,8xV100-16,16xRTX-2080Ti"},
	} {
		m, c := setup(t, tc.model, tc.gpus)
		own, err := Inlay{}.Plan(m, c, Options{Budget: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []Planner{AMP{}, Metis{}} {
			res, err := b.Plan(m, c, Options{})
			if err != nil {
				continue
			}
			if own.Sim.TokensPerS < res.Sim.TokensPerS*(1-1e-9) {
				t.Errorf("%s on %s: inlay %.0f tokens/s, %s %.0f", tc.model, tc.gpus, own.Sim.TokensPerS, b.Name(), res.Sim.TokensPerS)
			}
		}
	}
}

// TestPlannersKeepTheirBudget runs every planner on a model of many
// layers on 1024 GPUs with a short budget: each returns within a few
// times it (a generous bound: the check is for searches that ran on for
// many seconds, not for timing).
func TestPlannersKeepTheirBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("plans a 2048-layer model with every planner")
	}
	m, c := setup(t, "gpt:hidden=1024,layers=2048,heads=16,seq=2048,vocab=50000", "512xA100-40,512xV100-16")
	const budget = 200 * time.Millisecond
	for _, name := range Names() {
		p, _ := New(name)
		start := time.Now()
		_, err := p.Plan(m, c, Options{Budget: budget})
		if took := time.Since(start); took > 5*budget+time.Second {
			t.Errorf("%s took %v on a %v budget (%v)", name, took, budget, err)
		}
	}
}

// TestMegatronUsesFewerGPUsWhenTheBatchAsks: 344 or 336 GPUs of a type
// do not split a batch of 256 evenly over their replicas; Megatron-LM's
// user trains on the most GPUs that do.
func TestMegatronUsesFewerGPUsWhenTheBatchAsks(t *testing.T) {
	m, c := setup(t, "llama-3-70b", "344xA100-40,344xV100-16,336xH100-SXM")
	res, err := Megatron{}.Plan(m, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := res.Plan.GPUs()
	if n > 344 || res.Plan.GlobalBatch%len(res.Plan.Replicas) != 0 {
		t.Errorf("%d GPUs, %d replicas for a batch of %d", n, len(res.Plan.Replicas), res.Plan.GlobalBatch)
	}
	types := map[string]bool{}
	for _, r := range res.Plan.Replicas {
		for _, s := range r.Stages {
			types[s.GPU] = true
		}
	}
	if len(types) != 1 {
		t.Errorf("megatron uses %d GPU types", len(types))
	}
}
