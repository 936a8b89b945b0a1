package sim

import (
	"context"
	"testing"

	"github.com/inlay-dev/inlay/cluster/internal/clustertest"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy/inlay"
)

// BenchmarkTrace10k simulates 10,000-job traces (Gavel's generator) on the
// 108 GPUs of gavel-108 under inlay's policy; the target is 30 s.
// single: single-GPU jobs at 5.6 jobs/h, Gavel's reproduction setting;
// multi-overloaded: multi-GPU jobs at 5.6 jobs/h, about twice what the
// cluster sustains, so that thousands of jobs wait.
func BenchmarkTrace10k(b *testing.B) {
	c, tb := clustertest.Gavel108(b)
	for _, tc := range []struct {
		name  string
		multi bool
	}{{"single", false}, {"multi-overloaded", true}} {
		b.Run(tc.name, func(b *testing.B) {
			jobs := clustertest.Trace(b, tb, job.GenConfig{Jobs: 10000, Rate: 5.6, Seed: 0, MultiGPU: tc.multi})
			for i := 0; i < b.N; i++ {
				r, err := Run(context.Background(), Config{}, jobs, c, tb, &inlay.JCT{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.AvgJCT, "avg-JCT-h")
				b.ReportMetric(float64(r.Rounds), "rounds")
			}
		})
	}
}
