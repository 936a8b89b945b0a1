package single

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search/internal/fixture"
	"github.com/inlay-dev/inlay/workload"
)

func TestSingle(t *testing.T) {
	w, err := fixture.Workload(3, false, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	// a in g (deadline 100 ms), b in h (deadline 20 ms): b goes first.
	w.Groups[0].Models = []string{"a"}
	w.Groups = append(w.Groups, &workload.Group{Name: "h", Models: []string{"b"}, Period: 50 * time.Millisecond, Deadline: 20 * time.Millisecond, Arrival: workload.Periodic})
	pl := fixture.Platform()
	est := &fixture.Estimator{Platform: pl, PerLayer: []time.Duration{10, 4, 1}}
	req := &plan.Request{Workload: w, Platform: pl, Cost: est}
	tests := []struct{ target, want string }{
		// The Gemm (layer 3) falls back to the CPU; the join (4) cannot join
		// 0-2 since the path 0 -> 3 -> 4 leaves the NPU.
		{"npu", "0-2:npu/qnn-htp/int8 3:cpu/xnnpack/float32 4:npu/qnn-htp/int8"},
		{"gpu", "0-4:gpu/opencl/float16"},
		{"cpu", "0-4:cpu/xnnpack/float32"},
	}
	for _, tc := range tests {
		p, _ := New(tc.target)
		got, err := p.Plan(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.Validate(w, pl); err != nil {
			t.Errorf("%s: %v", tc.target, err)
		}
		if got.Models[0].Priority != 1 || got.Models[1].Priority != 0 {
			t.Errorf("single:%s: priorities a %d b %d, want 1 and 0", tc.target, got.Models[0].Priority, got.Models[1].Priority)
		}
		if s := fixture.Format(&got.Models[0]); s != tc.want {
			t.Errorf("single:%s: got %s, want %s", tc.target, s, tc.want)
		}
	}
	// single weighs no scores: its record says the target by design, and
	// the CPU where the target lacks an operator.
	p, _ := New("npu")
	got, err := p.Plan(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range got.Decisions[:3] { // model a's three subgraphs
		for _, c := range d.Candidates {
			var want string
			switch {
			case d.Layers == "3" && c.Processor == "npu":
				want = plan.FilterSupport
			case d.Layers == "3" && c.Processor == "cpu", d.Layers != "3" && c.Processor == "npu":
				want = "chosen"
			default:
				want = plan.FilterPlanner
			}
			got := c.Filter
			if c.Chosen {
				got = "chosen"
			}
			if got != want || c.Filter != "" && c.Why == "" || len(c.Scores) != 0 {
				t.Errorf("[%s] %s: %s (%q, %d scores), want %s with a reason and no scores", d.Layers, c.Processor, got, c.Why, len(c.Scores), want)
			}
		}
	}
	p, _ = New("tpu")
	if _, err := p.Plan(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), `"tpu"`) {
		t.Errorf("single:tpu: %v", err)
	}
	if _, err := New(""); err == nil {
		t.Error("single without a target accepted")
	}
}
