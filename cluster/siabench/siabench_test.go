package siabench

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

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
