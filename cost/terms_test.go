package cost

import (
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/zoo/zootest"
)

// TestTermsMatchSubgraph checks that Terms.Time prices a whole network and
// a part of it as Subgraph does, in a float and an integer configuration,
// with every factor the published fits use set away from its default.
func TestTermsMatchSubgraph(t *testing.T) {
	p, err := hw.Preset("galaxy-s23") // its NPU takes MobileBERT's int64 ids
	if err != nil {
		t.Fatal(err)
	}
	npu, err := p.Find("npu")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"yolov8n", "mobilebert", "deeplabv3_plus_mobilenet"} {
		lg := zootest.Layers(t, name)
		for _, d := range []graph.DType{graph.Float16, graph.Int8} {
			e := DefaultEfficiency("npu")
			e.Compute[Conv], e.Compute[MatMul], e.Compute[Norm] = 0.4, 0.07, 0.02
			e.Memory, e.HalfFLOPs, e.PeakScale, e.BandwidthScale = 1, 3e5, 0.8, 1.2
			e.DispatchOverhead, e.LayerOverhead = 90*time.Microsecond, 1500*time.Nanosecond
			e.MoveGBs, e.RequantGBs, e.OnChipBytes = 20, 12, 4<<20
			effs := make([]Efficiency, len(p.Processors))
			for i, pr := range p.Processors {
				effs[i] = DefaultEfficiency(pr.Kind)
			}
			effs[npu] = e
			a, err := NewCalibrated(p, effs)
			if err != nil {
				t.Fatal(err)
			}
			cfg := hw.Config{Proc: npu, Backend: p.DefaultConfig(npu).Backend, DType: d}
			for _, set := range []graph.LayerSet{graph.Range(0, len(lg.Layers)), graph.Range(0, len(lg.Layers)/2)} {
				want, err := a.Subgraph(lg, set, cfg)
				if err != nil {
					t.Fatal(err)
				}
				terms, err := a.Terms(lg, set, cfg, e.OnChipBytes)
				if err != nil {
					t.Fatal(err)
				}
				got := terms.Time(e)
				if diff := got - want; diff > 2 || diff < -2 {
					t.Errorf("%s %s, %d layers: terms %v, subgraph %v", name, d, len(set), got, want)
				}
				if e.MoveGBs = 0; terms.Time(e) > got || name == "mobilebert" && terms.Time(e) >= got {
					t.Errorf("%s %s: data movement costs nothing (%v with it, %v without)", name, d, got, terms.Time(e))
				}
				e.MoveGBs = 20
			}
		}
	}
}
