package cost

import (
	"math"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/zoo/zootest"
)

func TestSlowdown(t *testing.T) {
	tests := []struct {
		name  string
		k     float64
		loads []float64
		want  float64
	}{
		{"alone", 1, nil, 1},
		{"insensitive", 0, []float64{1, 1}, 1},
		{"half a channel", 1, []float64{0.5}, 1.5},
		{"two resources", 0.5, []float64{0.5, 0.5}, 1.5},
		{"a channel saturates at 1", 1, []float64{3}, 2},
		{"bounded", 4, []float64{1, 1}, MaxSlowdown},
		{"negative inputs clamp", -1, []float64{-2}, 1},
	}
	for _, tc := range tests {
		if got := Slowdown(tc.k, tc.loads...); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: Slowdown(%v, %v) = %v, want %v", tc.name, tc.k, tc.loads, got, tc.want)
		}
	}
}

func TestLoadUse(t *testing.T) {
	mem := hw.Shared{Kind: hw.SharedMemory, BandwidthGBs: 10}
	llc := hw.Shared{Kind: hw.SharedCache, SizeBytes: 1 << 20}
	l := Load{DRAMBytes: 5e6, WorkingSet: 1 << 19}
	if got := l.Use(time.Millisecond, &mem); math.Abs(got-0.5) > 1e-12 { // 5 GB/s of 10
		t.Errorf("memory use %v, want 0.5", got)
	}
	if got := l.Use(100*time.Microsecond, &mem); got != 1 {
		t.Errorf("memory use above the channel %v, want 1", got)
	}
	if got := l.Use(time.Millisecond, &llc); got != 0.5 {
		t.Errorf("cache use %v, want 0.5", got)
	}
}

// TestAnalyticLoad checks the analytic loads on the phone's big core: a
// memory-bound network (a wide element-wise-heavy one) is more sensitive
// than a compute-bound one, and every figure is finite and in range.
func TestAnalyticLoad(t *testing.T) {
	pl := hwtest.Preset(t, "phone")
	a := NewAnalytic(pl)
	cpu, _ := pl.Find("cpu-prime")
	on := pl.DefaultConfig(cpu)
	for _, name := range []string{"mobilenet_v2", "resnet50"} {
		lg := zootest.Layers(t, name)
		set := graph.Range(0, len(lg.Layers))
		l, err := a.Load(lg, set, on)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := a.Subgraph(lg, set, on)
		if !(l.DRAMBytes > 0 && l.WorkingSet > 0 && l.Sensitivity > 0 && l.Sensitivity <= pl.Processors[cpu].ContentionSensitivity) {
			t.Errorf("%s: load %+v out of range", name, l)
		}
		t.Logf("%s: %.1f MB in %v (%.2f GB/s), working set %.1f MB, k %.3f", name, l.DRAMBytes/1e6, d, l.DRAMBytes/float64(d), l.WorkingSet/1e6, l.Sensitivity)
	}
}
