package siabench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/policy/adaptreg"
	"github.com/inlay-dev/inlay/cluster/sia"
)

// BenchmarkSia runs one experiment's first workload with every policy.
// SIABENCH_EXPERIMENT, SIABENCH_POLICIES, SIABENCH_FILES and
// SIABENCH_ROUND override the defaults (sia-philly, all, 1, own).
func BenchmarkSia(b *testing.B) {
	bench, err := sia.Load("../../" + sia.DefaultDir) // the package folder is two below the checkout
	if err != nil {
		b.Fatal(err)
	}
	exp := envOr("SIABENCH_EXPERIMENT", Philly)
	pols := strings.Split(envOr("SIABENCH_POLICIES", "gavel-tj,pollux,sia,inlay"), ",")
	files, _ := strconv.Atoi(envOr("SIABENCH_FILES", "1"))
	round, _ := strconv.ParseFloat(envOr("SIABENCH_ROUND", "0"), 64)
	for range b.N {
		rep, err := Run(context.Background(), Config{Bench: bench, Experiments: strings.Split(exp, ","), Policies: pols, Files: files, Round: round, Workers: 2, Clock: time.Now,
			Progress: func(d, t int, w string) { b.Logf("%d/%d %s", d, t, w) }})
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range rep.Experiments {
			b.Logf("%s bound %.2f h", e.Name, e.LowerBound)
			for _, r := range e.Rows {
				b.Logf("%-8s %4.0fs mixed=%-5v avg %.2f p99 %.2f mk %.1f gpuh %.2f rs %.2f solve %.3f/%.3f pub %.1f mixed/round %.2f %v", r.Policy, r.RoundSeconds, r.Mixed, r.AvgJCT, r.P99JCT, r.Makespan, r.GPUHoursPerJob, r.RestartsPerJob, r.SolveP50, r.SolveP95, r.Published, r.MixedShare, r.Failed)
			}
		}
	}
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// timed times each Allocate call of the policy it wraps, beside the
// count of jobs the round saw.
type timed struct {
	adapt.Policy
	solve  []float64
	active []int
}

func (t *timed) Allocate(ctx context.Context, s *adapt.State) ([]adapt.Decision, error) {
	t0 := time.Now()
	ds, err := t.Policy.Allocate(ctx, s)
	t.solve = append(t.solve, time.Since(t0).Seconds())
	t.active = append(t.active, len(s.Jobs))
	return ds, err
}

// BenchmarkRound times one policy's rounds on Sia's cluster scaled by
// SIABENCH_SCALE (default 32: 2,048 GPUs, the speed target's size) on
// the first workload of SIABENCH_EXPERIMENT (default sia-philly, its
// jobs copied as often), for the first SIABENCH_HOURS of virtual time
// (default 4: the arrivals of a Philly file span 7.7 h, so the rounds
// cover the queue building up; 0: the whole run). Each policy of
// SIABENCH_POLICIES (default inlay), mixed gangs off and, where it forms
// them, on, at SIABENCH_ROUND seconds (default 60). It logs the median,
// p95 and largest solve time per round and the jobs a round saw, and
// reports the median and p95 as metrics (-benchtime 1x: one simulation
// each).
func BenchmarkRound(b *testing.B) {
	bench, err := sia.Load("../../" + sia.DefaultDir)
	if err != nil {
		b.Fatal(err)
	}
	scale, _ := strconv.Atoi(envOr("SIABENCH_SCALE", "32"))
	hours, _ := strconv.ParseFloat(envOr("SIABENCH_HOURS", "4"), 64)
	round, _ := strconv.ParseFloat(envOr("SIABENCH_ROUND", "60"), 64)
	cl, sets, err := Prepare(bench, []string{envOr("SIABENCH_EXPERIMENT", Philly)}, scale, 1)
	if err != nil {
		b.Fatal(err)
	}
	jobs := sets[0].Jobs[0]
	b.Logf("%s %s: %d jobs on %d GPUs, %g s rounds, first %g h", sets[0].Name, sets[0].Files[0], len(jobs), cl.Total(), round, hours)
	for _, name := range strings.Split(envOr("SIABENCH_POLICIES", "inlay"), ",") {
		f, err := adaptreg.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		for _, mixed := range []bool{false, true} {
			if mixed && !f.New(adaptreg.Options{}).Mixed() {
				continue
			}
			b.Run(fmt.Sprintf("%s/mixed=%v", name, mixed), func(b *testing.B) {
				for range b.N {
					p := &timed{Policy: f.New(adaptreg.Options{})}
					js := append([]adapt.Job(nil), jobs...)
					cfg := adapt.Config{Cluster: cl, Round: round, Mixed: mixed, Split: goodput.Proportional, MaxHours: hours}
					if hours <= 0 {
						cfg.MaxHours = 0
					}
					res, err := adapt.Simulate(context.Background(), cfg, js, p)
					if err != nil && !errors.Is(err, adapt.ErrStuck) {
						b.Fatal(err)
					}
					s := append([]float64(nil), p.solve...)
					sort.Float64s(s)
					p50, p95 := adapt.Percentile(s, 50), adapt.Percentile(s, 95)
					b.ReportMetric(p50, "s/round-p50")
					b.ReportMetric(p95, "s/round-p95")
					line := fmt.Sprintf("%s mixed=%v: %d rounds, solve p50 %.3f s, p95 %.3f s, max %.3f s, total %.1f s; jobs per round p50 %.0f, max %.0f",
						name, mixed, len(s), p50, p95, s[len(s)-1], sum(s), medianInt(p.active), float64(slices.Max(p.active)))
					if res != nil {
						line += fmt.Sprintf("; avg JCT %.4f h", res.AvgJCT)
					}
					b.Log(line)
				}
			})
		}
	}
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

func medianInt(xs []int) float64 {
	f := make([]float64, len(xs))
	for i, x := range xs {
		f[i] = float64(x)
	}
	return adapt.Percentile(f, 50)
}
