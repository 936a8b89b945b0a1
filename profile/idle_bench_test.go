package profile

import (
	"context"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/stats"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/workload"
)

// BenchmarkIdleGap times whole models of examples/host_ocr_voice.yaml on
// this machine's first core, as inlay profile does: per iteration one
// measurement with 5 cold runs (after evicting the caches) and 5 idle runs
// (after evicting them and sleeping IdleGap). It reports the medians over
// the iterations of the cold figure (cold-ms), the idle one (idle-ms) and
// their difference (wake-ms), what Estimator.HandOff charges a subgraph
// that starts on a processor that has idled:
//
//	go test ./profile -run '^$' -bench IdleGap -benchtime 10x
func BenchmarkIdleGap(b *testing.B) {
	assets.Require(b, assets.ORTLibrary())
	w, err := workload.Load("../examples/host_ocr_voice.yaml")
	if err != nil {
		b.Skipf("the workload's models: %v (scripts/fetch.sh)", err)
	}
	pl, dev := hostLocal(b)
	for _, name := range []string{"melspec", "speech_embed", "ocr_det"} {
		m := w.Model(name)
		if m == nil {
			b.Fatalf("the workload has no model %q", name)
		}
		set := graph.Range(0, len(m.Layers.Layers))
		model, err := onnx.ExportSubgraph(m.Layers, set)
		if err != nil {
			b.Fatal(err)
		}
		ins, err := SubgraphInputs(m.Layers, set)
		if err != nil {
			b.Fatal(err)
		}
		req := MeasureRequest{Model: model, Inputs: ins, Processor: pl.Processors[0].Name, Warmup: 3, Reps: 5, Cold: 5, Idle: 5}
		b.Run(name, func(b *testing.B) {
			var cold, idle, wake []float64
			for b.Loop() {
				t, err := dev.Measure(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 }
				cold, idle, wake = append(cold, ms(t.Cold)), append(idle, ms(t.Idle)), append(wake, ms(t.Idle-t.Cold))
			}
			b.ReportMetric(stats.Median(cold), "cold-ms")
			b.ReportMetric(stats.Median(idle), "idle-ms")
			b.ReportMetric(stats.Median(wake), "wake-ms")
		})
	}
}
