package sim

import (
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/ratebound"
)

// TestBoundProperty: over random instances and random plans, no plan's
// simulated max sustainable scale exceeds the upper bound, and an randInstance
// the bound calls infeasible has no feasible plan.
func TestBoundProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	instances, plansPer := 60, 4
	if testing.Short() {
		instances = 15
	}
	var ratios []float64
	zeros := 0
	for i := 0; i < instances; i++ {
		in := randomInstance(rng)
		b, err := ratebound.Upper(in.w, in.pl, in.est)
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		if b.PeakFallback {
			t.Fatalf("instance %d: the test estimator's LayerLowerBound was not used", i)
		}
		for k := 0; k < plansPer; k++ {
			p := in.randomPlan(rng)
			prog, err := Compile(in.w, in.pl, in.est, p)
			if err != nil {
				t.Fatalf("instance %d plan %d: %v", i, k, err)
			}
			lim, _ := LoadLimit(prog.Program)
			s, res, err := MaxSustainableScale(prog, Options{Seed: int64(k), NoSpans: true})
			if err != nil {
				t.Fatalf("instance %d plan %d: %v", i, k, err)
			}
			if s > b.Scale*(1+1e-9) || (b.Scale > 0 && lim > b.Scale*(1+1e-9)) {
				t.Fatalf("instance %d plan %d: simulated scale %v (load limit %v) exceeds the bound %v (%s)",
					i, k, s, lim, b.Scale, b.Why)
			}
			if b.Scale == 0 && s != 0 {
				t.Fatalf("instance %d plan %d: bound says infeasible (%s) but the plan sustains %v", i, k, b.Why, s)
			}
			for gi, g := range res.Groups {
				if g.Completed > 0 && g.P50 < b.CriticalPaths[gi] {
					t.Fatalf("instance %d plan %d: group %s latency %v below its critical-path bound %v",
						i, k, g.Name, g.P50, b.CriticalPaths[gi])
				}
			}
			if b.Scale > 0 && !math.IsInf(b.Scale, 1) {
				ratios = append(ratios, s/b.Scale)
			} else {
				zeros++
			}
		}
	}
	best := 0.0
	for _, r := range ratios {
		best = math.Max(best, r)
	}
	t.Logf("%d plans: %d against infeasible bounds; best simulated/bound ratio %.3f", len(ratios)+zeros, zeros, best)
}

// peakOnly hides an estimator's lower bounds.
type peakOnly struct{ cost.Estimator }

// TestBoundLabelsPeakFallback checks that a bound computed without the
// estimator's lower bounds is not called proven.
func TestBoundLabelsPeakFallback(t *testing.T) {
	in := randomInstance(rand.New(rand.NewSource(3)))
	b, err := ratebound.Upper(in.w, in.pl, in.est)
	if err != nil || !b.Proven() || b.Label() != "upper bound" || strings.Contains(b.Why, "not proven") {
		t.Errorf("with lower bounds: %+v, %v", b, err)
	}
	f, err := ratebound.Upper(in.w, in.pl, peakOnly{in.est})
	if err != nil || f.Proven() || f.Label() != "estimated bound" || !strings.Contains(f.Why, "not proven") {
		t.Errorf("peak fallback: %+v, %v", f, err)
	}
}

// TestScheduleInvariants checks simulated schedules of random plans: no
// processor runs more jobs at once than its concurrency, a shared link
// carries one transfer at a time, every job starts after its dependencies
// end and lasts its compiled duration, and every request ran every job once.
func TestScheduleInvariants(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	total := 0
	defer func() { t.Logf("%d spans checked", total) }()
	for i := 0; i < 25; i++ {
		in := randomInstance(rng)
		p := in.randomPlan(rng)
		prog, err := Compile(in.w, in.pl, in.est, p)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(prog, Options{Seed: int64(i), Scale: 0.2 + 2*rng.Float64(), Requests: 30, Warmup: 3})
		if err != nil {
			t.Fatal(err)
		}
		capacity := map[string]int{}
		for _, pr := range prog.Procs {
			capacity[pr.Name] = pr.Concurrency
		}
		for _, l := range prog.Links {
			if l.Shared {
				capacity[l.Name] = 1
			} else {
				capacity[l.Name] = 1 << 30
			}
		}
		type key struct {
			group, label string
			request      int
		}
		spans := map[key][2]time.Duration{}
		type edge struct {
			at    time.Duration
			delta int
		}
		lanes := map[string][]edge{}
		total += len(res.Spans)
		for _, s := range res.Spans {
			k := key{s.Group, s.Label, s.Request}
			if _, dup := spans[k]; dup {
				t.Fatalf("instance %d: %v ran twice", i, k)
			}
			spans[k] = [2]time.Duration{s.Start, s.End}
			lanes[s.Processor] = append(lanes[s.Processor], edge{s.Start, 1}, edge{s.End, -1})
		}
		for lane, es := range lanes {
			sort.Slice(es, func(a, b int) bool {
				if es[a].at != es[b].at {
					return es[a].at < es[b].at
				}
				return es[a].delta < es[b].delta // ends before starts at the same instant
			})
			n := 0
			for _, e := range es {
				if n += e.delta; n > capacity[lane] {
					t.Fatalf("instance %d: %s runs %d jobs at %v, capacity %d", i, lane, n, e.at, capacity[lane])
				}
			}
		}
		requests := map[string]int{}
		for _, s := range res.Spans {
			requests[s.Group] = max(requests[s.Group], s.Request+1)
		}
		for _, g := range prog.Groups {
			for r := 0; r < requests[g.Name]; r++ {
				for _, ji := range g.Jobs {
					j := prog.Jobs[ji]
					got, ok := spans[key{g.Name, j.Label, r}]
					if !ok {
						t.Fatalf("instance %d: %s request %d never ran %s", i, g.Name, r, j.Label)
					}
					if got[1]-got[0] != j.Duration {
						t.Fatalf("instance %d: %s ran %v, compiled %v", i, j.Label, got[1]-got[0], j.Duration)
					}
					for _, d := range j.Deps {
						dep := spans[key{g.Name, prog.Jobs[d].Label, r}]
						if got[0] < dep[1] {
							t.Fatalf("instance %d: %s request %d starts at %v before %s ends at %v",
								i, j.Label, r, got[0], prog.Jobs[d].Label, dep[1])
						}
					}
				}
			}
		}
	}
}
