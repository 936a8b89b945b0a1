package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cluster/internal/clustertest"
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/solver"
	"github.com/inlay-dev/inlay/solver/solvertest"
)

func state(t *testing.T) *policy.State {
	t.Helper()
	solvertest.RequireCBC(t)
	return tableState(t)
}

// tableState is state's jobs and cluster; it needs no CBC.
func tableState(t *testing.T) *policy.State {
	t.Helper()
	tb, row := clustertest.GavelRows(t)
	c := &policy.Cluster{GPUs: tb.GPUs(), Count: []int{2, 0, 1}, Price: []float64{0.45, 1.46, 2.48}, CPUs: make([]float64, 3), Memory: make([]float64, 3), PerServer: []int{1, 0, 1}}
	s := &policy.State{Now: 3600, C: c, Table: tb}
	for i, typ := range []string{"ResNet-50 (batch size 64)", "A3C", "Transformer (batch size 32)", "LM (batch size 20)"} {
		s.Jobs = append(s.Jobs, policy.Job{ID: i, Row: row(typ), GPUs: 1, Weight: 1, Steps: 1e5, Remaining: 1e5 * float64(i+1) / 4, Last: -1})
	}
	return s
}

// check verifies an allocation against Gavel's base constraints.
func check(t *testing.T, s *policy.State, a *policy.Allocation) {
	t.Helper()
	perJob := map[int]float64{}
	perType := make([]float64, len(s.C.Count))
	for _, e := range a.Entries {
		for g, x := range e.X {
			if x < -1e-9 || x > 1+1e-9 {
				t.Fatalf("%s: X[%d] = %g", a.Note, g, x)
			}
			perJob[e.A] += x
			if e.B >= 0 {
				perJob[e.B] += x
			}
			perType[g] += x * float64(s.Jobs[e.A].GPUs)
		}
	}
	for id, v := range perJob {
		if v > 1+1e-6 {
			t.Errorf("%s: job %d holds %g of the time", a.Note, id, v)
		}
	}
	for g, v := range perType {
		if v > float64(s.C.Count[g])+1e-6 {
			t.Errorf("%s: type %d uses %g of %d GPUs", a.Note, g, v, s.C.Count[g])
		}
	}
}

func throughputs(s *policy.State, a *policy.Allocation) []float64 {
	out := make([]float64, len(s.Jobs))
	for _, e := range a.Entries {
		for g, x := range e.X {
			if e.B < 0 {
				out[e.A] += x * s.Alone(&s.Jobs[e.A], g)
				continue
			}
			ta, tb, _ := s.Table.Pair(s.Jobs[e.A].Row, s.Jobs[e.B].Row, g)
			out[e.A] += x * ta
			out[e.B] += x * tb
		}
	}
	return out
}

func TestPoliciesFeasibleAndBetter(t *testing.T) {
	s := state(t)
	ctx := context.Background()
	iso := policy.IsolatedThroughput(s, policy.EqualShare(s))
	for _, p := range []policy.Policy{
		&MaxMin{}, &MaxMin{Variant{SpaceSharing: true}}, &Makespan{}, &Makespan{Variant{SpaceSharing: true}}, &Makespan{Variant{Agnostic: true}},
		&FTF{}, &FTF{Variant: Variant{Agnostic: true}}, &Throughput{}, &Throughput{Variant{SpaceSharing: true}}, &Cost{}, &Cost{Variant{SpaceSharing: true}},
	} {
		a, err := p.Allocate(ctx, s)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		check(t, s, a)
		thr := throughputs(s, a)
		switch p.(type) {
		case *MaxMin:
			// Heterogeneity-aware max-min is at least the equal share for
			// the worst-off job, in normalised terms.
			worst := math.Inf(1)
			for m := range thr {
				worst = math.Min(worst, thr[m]/iso[m])
			}
			if worst < 1-1e-4 {
				t.Errorf("%s: worst normalised throughput %.4f < 1", p.Name(), worst)
			}
		case *Makespan:
			// The makespan allocation finishes no later than the equal share.
			var mk, mkIso float64
			for m := range thr {
				if thr[m] <= 0 {
					t.Fatalf("%s: job %d gets nothing", p.Name(), m)
				}
				mk = math.Max(mk, s.Jobs[m].Remaining/thr[m])
				mkIso = math.Max(mkIso, s.Jobs[m].Remaining/iso[m])
			}
			if p.Name() != "makespan" && mk > mkIso*(1+1e-4) {
				t.Errorf("%s: makespan %.0f s above the equal share's %.0f s", p.Name(), mk, mkIso)
			}
		}
	}
}

// A solver that fails as CBC does on a loaded machine: killed after its
// time limit without a solution, or dying as a process.
func failingSolvers() map[string]Solve {
	return map[string]Solve{
		"killed after its time limit": func(context.Context, *solver.Model, solver.Options) (*solver.Result, error) {
			return &solver.Result{Status: solver.NoSolution, Reason: "time limit", Killed: true, Wall: 66 * time.Second}, nil
		},
		"process error": func(context.Context, *solver.Model, solver.Options) (*solver.Result, error) {
			return nil, fmt.Errorf("solver: cbc: signal: interrupt: ")
		},
		"claims infeasible": func(context.Context, *solver.Model, solver.Options) (*solver.Result, error) {
			return &solver.Result{Status: solver.Infeasible, Reason: "infeasible"}, nil
		},
	}
}

func TestFailedLPFallsBackToEqualShare(t *testing.T) {
	s := tableState(t)
	ctx := context.Background()
	for what, solve := range failingSolvers() {
		cfg := Config{Solve: solve}
		for _, p := range []policy.Policy{
			&MaxMin{Variant{Cfg: cfg}}, &MaxMin{Variant{Cfg: cfg, SpaceSharing: true}}, &Makespan{Variant{Cfg: cfg}},
			&FTF{Variant: Variant{Cfg: cfg}}, &Throughput{Variant{Cfg: cfg}}, &Cost{Variant{Cfg: cfg}},
		} {
			a, err := p.Allocate(ctx, s)
			if err != nil {
				t.Fatalf("%s, %s: %v", what, p.Name(), err)
			}
			if a.Fallback == "" || !strings.Contains(a.Fallback, p.Name()) {
				t.Errorf("%s, %s: Fallback %q, want the policy's name and why", what, p.Name(), a.Fallback)
			}
			check(t, s, a)
			// The equal share: every job holds the same share of every type.
			want := policy.EqualShare(s)
			if len(a.Entries) != len(s.Jobs) {
				t.Fatalf("%s, %s: %d entries for %d jobs", what, p.Name(), len(a.Entries), len(s.Jobs))
			}
			for m, e := range a.Entries {
				for g := range e.X {
					if math.Abs(e.X[g]-want[m][g]) > 1e-12 {
						t.Errorf("%s, %s: job %d type %d: %g, want the equal share's %g", what, p.Name(), m, g, e.X[g], want[m][g])
					}
				}
			}
		}
	}
}

// A failure that is not the LP's is no reason to fall back: a missing CBC
// and a cancelled run stay errors.
func TestFallbackIsOnlyForLPFailures(t *testing.T) {
	s := tableState(t)
	noCBC := Config{Solve: func(context.Context, *solver.Model, solver.Options) (*solver.Result, error) {
		return nil, solver.ErrNoCBC
	}}
	if _, err := (&MaxMin{Variant{Cfg: noCBC}}).Allocate(context.Background(), s); !errors.Is(err, solver.ErrNoCBC) {
		t.Errorf("no CBC: got %v, want ErrNoCBC", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	killed := Config{Solve: failingSolvers()["killed after its time limit"]}
	if a, err := (&MaxMin{Variant{Cfg: killed}}).Allocate(ctx, s); err == nil {
		t.Errorf("cancelled: got an allocation (%s), want the context's error", a.Note)
	}
}

// With a real CBC, a bisection step that fails keeps the allocation of the
// last step that succeeded, marked as a fallback.
func TestFTFBisectionStopsAtAFailedStep(t *testing.T) {
	s := state(t)
	calls := 0
	cfg := Config{Solve: func(ctx context.Context, m *solver.Model, o solver.Options) (*solver.Result, error) {
		calls++
		if calls > 1 {
			return &solver.Result{Status: solver.NoSolution, Reason: "time limit"}, nil
		}
		return solver.Solve(ctx, m, o)
	}}
	a, err := (&FTF{Variant: Variant{Cfg: cfg}}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || a.Fallback == "" || !strings.Contains(a.Note, "ρ ≤ 1.0000") {
		t.Errorf("%d solves, Fallback %q, note %q: want the ρ = 1 allocation after the second solve failed", calls, a.Fallback, a.Note)
	}
	check(t, s, a)
}

// Solved as Gavel solves it (interior point, no tie-break), max-min
// fairness is still feasible and no job falls below its equal share.
func TestMaxMinInterior(t *testing.T) {
	s := state(t)
	iso := policy.IsolatedThroughput(s, policy.EqualShare(s))
	for _, ss := range []bool{false, true} {
		p := &MaxMin{Variant{Cfg: Config{Interior: true}, SpaceSharing: ss}}
		a, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		check(t, s, a)
		if !ss {
			for m, thr := range throughputs(s, a) {
				if thr < iso[m]*(1-1e-3) {
					t.Errorf("%s: job %d gets %g, below its equal share's %g", p.Name(), m, thr, iso[m])
				}
			}
		}
	}
}
