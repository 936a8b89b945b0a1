package adapt_test

import (
	"context"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/policy/inlayadapt"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/cluster/sia/siatest"
)

func setup(t *testing.T, n int, force *adapt.Kind) (*adapt.Cluster, []adapt.Job) {
	cl, _, js := siatest.PhillyJobs(t, siatest.Load(t), n, force)
	return cl, js
}

func TestConfigs(t *testing.T) {
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "t4", PerNode: 4, Nodes: 6}, {Name: "a100", PerNode: 8, Nodes: 2}}}
	if got := c.Configs(0); len(got) != 8 || got[2] != 4 || got[7] != 24 {
		t.Errorf("t4: %v", got)
	}
	if got := c.Configs(1); len(got) != 5 || got[4] != 16 {
		t.Errorf("a100: %v", got)
	}
}

// TestSimulateAboveBound runs a few dozen Philly jobs under inlay's policy,
// mixed gangs off and on: deterministic, every job finishes, and the
// average JCT is above the proven lower bound.
func TestSimulateAboveBound(t *testing.T) {
	cl, js := setup(t, 30, nil)
	for _, mixed := range []bool{false, true} {
		cfg := adapt.Config{Cluster: cl, Round: 60, Mixed: mixed}
		a, err := adapt.Simulate(context.Background(), cfg, js, inlayadapt.New())
		if err != nil {
			t.Fatal(err)
		}
		b, err := adapt.Simulate(context.Background(), cfg, js, inlayadapt.New())
		if err != nil {
			t.Fatal(err)
		}
		if a.AvgJCT != b.AvgJCT || a.Restarts() != b.Restarts() {
			t.Errorf("mixed=%v: not deterministic: %g vs %g", mixed, a.AvgJCT, b.AvgJCT)
		}
		lb := adapt.LowerBound(cl, js, 60, true)
		if !(lb > 0 && a.AvgJCT >= lb) {
			t.Errorf("mixed=%v: average JCT %.3f h below the bound %.3f h", mixed, a.AvgJCT, lb)
		}
		if len(a.Jobs) != 30 {
			t.Errorf("%d jobs", len(a.Jobs))
		}
		if !mixed && a.MixedRounds != 0 {
			t.Errorf("mixed gangs with mixed off")
		}
	}
}

// TestRigidKeepsGPUs: rigid jobs run on exactly their GPUs.
func TestRigidKeepsGPUs(t *testing.T) {
	k := adapt.Rigid
	cl, js := setup(t, 12, &k)
	bad := &fixed{}
	_, err := adapt.Simulate(context.Background(), adapt.Config{Cluster: cl, Round: 60}, js, bad)
	if err == nil || !strings.Contains(err.Error(), "rigid job given") {
		t.Errorf("want a rigid-job error, got %v", err)
	}
}

// fixed gives every job one GPU of the first type its model runs on.
type fixed struct{}

func (fixed) Name() string { return "fixed" }
func (fixed) Mixed() bool  { return false }
func (fixed) Allocate(_ context.Context, s *adapt.State) ([]adapt.Decision, error) {
	out := make([]adapt.Decision, len(s.Jobs))
	for i := range s.Jobs {
		out[i] = adapt.Decision{Alloc: s.Single(0, 1), Batch: s.Jobs[i].Model.Eff.M0}
	}
	return out, nil
}

func TestUnknownModel(t *testing.T) {
	cl := &adapt.Cluster{Types: []adapt.Type{{Name: "t4", PerNode: 4, Nodes: 1}}}
	_, err := adapt.Jobs("w.csv", []sia.Job{{Name: "x", Model: "gpt9", GPUs: 1, Batch: 8, Line: 7}}, map[string]*goodput.Model{}, cl, nil, 1)
	if err == nil || !strings.HasPrefix(err.Error(), "w.csv:7: unknown model") {
		t.Errorf("got %v", err)
	}
}
