package bestmap

import (
	"context"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/internal/fixture"
)

func TestBestMap(t *testing.T) {
	w, err := fixture.Workload(3, false, "a")
	if err != nil {
		t.Fatal(err)
	}
	noGemmGPU := fixture.Platform()
	noGemmGPU.Processors[1].Support.Unsupported = []string{"Gemm"}
	noConvCPU := fixture.Platform()
	noConvCPU.Processors[0].Support.Unsupported = []string{"Conv"}
	noConvCPU.Processors[1].Support.Unsupported = []string{"Gemm"}
	tests := []struct {
		name    string
		pl      *hw.Platform
		per     []time.Duration
		factor  map[graph.DType]float64
		link    time.Duration
		want    string
		wantErr bool
	}{
		// The NPU is fastest but cannot run the Gemm; the GPU in float16 is next.
		{name: "fastest whole-model config", pl: fixture.Platform(), per: []time.Duration{10, 4, 1}, want: "0-4:gpu/opencl/float16"},
		{name: "data type choice", pl: fixture.Platform(), per: []time.Duration{10, 4, 1}, factor: map[graph.DType]float64{graph.Float16: 1.5},
			want: "0-4:gpu/opencl/float32"},
		{name: "tie goes to the lower processor", pl: fixture.Platform(), per: []time.Duration{4, 4, 1}, want: "0-4:cpu/xnnpack/float32"},
		// Only the CPU runs the Gemm and it cannot run Conv: no processor runs
		// the model whole, so the NPU with CPU fallback (the fastest
		// fallback partition) wins over the GPU with fallback.
		{name: "fallback when none runs it whole", pl: noConvCPU, per: []time.Duration{10, 4, 1}, link: 1,
			want: "0-2:npu/qnn-htp/int8 3:cpu/xnnpack/float32 4:npu/qnn-htp/int8"},
		{name: "gpu without gemm still leaves the cpu", pl: noGemmGPU, per: []time.Duration{10, 4, 1}, want: "0-4:cpu/xnnpack/float32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			est := &fixture.Estimator{Platform: tc.pl, PerLayer: tc.per, DTypeFactor: tc.factor, Overhead: 1, Link: tc.link}
			got, err := Planner{}.Plan(context.Background(), &plan.Request{Workload: w, Platform: tc.pl, Cost: est}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := got.Validate(w, tc.pl); err != nil {
				t.Fatal(err)
			}
			if s := fixture.Format(&got.Models[0]); s != tc.want {
				t.Errorf("got %s, want %s", s, tc.want)
			}
		})
	}
}
