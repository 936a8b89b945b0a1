package driver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/plan"
)

// fakeEval scores a plan by its first model's priority and counts calls.
type fakeEval struct {
	mu    sync.Mutex
	calls int
}

func (f *fakeEval) Evaluate(ctx context.Context, p *plan.Plan) (plan.Score, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if p.Models[0].Priority < 0 {
		return plan.Score{}, errors.New("rejected\nsecond line")
	}
	return plan.Score{Scale: float64(p.Models[0].Priority)}, nil
}

func mk(prio int) *plan.Plan {
	return &plan.Plan{Models: []plan.ModelPlan{{Model: "m", Priority: prio, Subgraphs: []plan.Subgraph{{Layers: graph.NewLayerSet(0), Processor: "p"}}}}}
}

func TestBatchCachesAndKeepsBest(t *testing.T) {
	ev := &fakeEval{}
	d := New(&plan.Request{Evals: 100, Workers: 3}, ev)
	scores, ok := d.Batch(context.Background(), []*plan.Plan{mk(3), mk(1), mk(3), mk(7), mk(-1)})
	want := []float64{3, 1, 3, 7, 0}
	for i := range want {
		if !ok[i] || scores[i].Scale != want[i] {
			t.Errorf("plan %d: score %v ok %v, want %v", i, scores[i].Scale, ok[i], want[i])
		}
	}
	if scores[4].Reason != "rejected; second line" {
		t.Errorf("evaluator error reason %q, want one line", scores[4].Reason)
	}
	if ev.calls != 4 || d.Evals() != 4 {
		t.Errorf("calls %d, evals %d; want 4 (duplicate in a batch evaluated once)", ev.calls, d.Evals())
	}
	d.Batch(context.Background(), []*plan.Plan{mk(7), mk(1)})
	if ev.calls != 4 {
		t.Errorf("cached plans evaluated again: %d calls", ev.calls)
	}
	best, s := d.Best()
	if best == nil || s.Scale != 7 || best.Models[0].Priority != 7 {
		t.Errorf("best = %v, %v", best, s)
	}
}

func TestEvalBudget(t *testing.T) {
	ev := &fakeEval{}
	d := New(&plan.Request{Evals: 2}, ev)
	_, ok := d.Batch(context.Background(), []*plan.Plan{mk(1), mk(2), mk(3)})
	if !ok[0] || !ok[1] || ok[2] || !d.Done(context.Background()) {
		t.Errorf("ok %v, done %v; want the first two evaluated and the budget spent", ok, d.Done(context.Background()))
	}
}

func TestFirstPlanAlwaysEvaluated(t *testing.T) {
	ev := &fakeEval{}
	d := New(&plan.Request{Budget: 1}, ev) // 1 ns: spent at once
	_, ok := d.Batch(context.Background(), []*plan.Plan{mk(1), mk(2)})
	if !ok[0] || ok[1] {
		t.Errorf("ok %v: want only the first plan evaluated", ok)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d2 := New(&plan.Request{Evals: 10}, ev)
	if _, ok := d2.Batch(ctx, []*plan.Plan{mk(1)}); ok[0] {
		t.Error("evaluated after cancellation")
	}
}

func TestKeyIgnoresOrder(t *testing.T) {
	a := &plan.Plan{Models: []plan.ModelPlan{{Model: "b", Priority: 1}, {Model: "a", Priority: 0}}}
	b := &plan.Plan{Models: []plan.ModelPlan{{Model: "a", Priority: 0}, {Model: "b", Priority: 1}}}
	if Key(a) != Key(b) {
		t.Errorf("Key depends on model order: %q vs %q", Key(a), Key(b))
	}
	b.Models[0].Priority = 2
	if Key(a) == Key(b) {
		t.Error("Key ignores priorities")
	}
}

// TestStaleBatchesEnd checks that a search whose planner proposes only
// plans already seen ends, with an evaluation budget it can never spend,
// and says why; and that a new plan resets the count.
func TestStaleBatchesEnd(t *testing.T) {
	ev := &fakeEval{}
	var last plan.Progress
	d := New(&plan.Request{Evals: 1000, Progress: func(pg plan.Progress) { last = pg }}, ev)
	ctx := context.Background()
	d.Batch(ctx, []*plan.Plan{mk(1)})
	for i := 0; i < StaleBatches-1; i++ {
		d.Batch(ctx, []*plan.Plan{mk(1)})
	}
	if d.Done(ctx) {
		t.Fatalf("done after %d stale batches, want %d", StaleBatches-1, StaleBatches)
	}
	d.Batch(ctx, []*plan.Plan{mk(1), mk(2)}) // something new: the count restarts
	for i := 0; i < StaleBatches-1; i++ {
		d.Batch(ctx, nil) // an empty batch has nothing new either
	}
	if d.Done(ctx) {
		t.Fatal("a new plan did not restart the count")
	}
	d.Batch(ctx, []*plan.Plan{mk(2)})
	if !d.Done(ctx) {
		t.Fatalf("not done after %d stale batches", StaleBatches)
	}
	if !strings.Contains(d.Stopped(), "exhausted") || last.Stopped != d.Stopped() {
		t.Errorf("Stopped %q, last progress %q", d.Stopped(), last.Stopped)
	}
	if ev.calls != 2 {
		t.Errorf("%d evaluations, want 2", ev.calls)
	}
}

func TestStoppedSaysWhy(t *testing.T) {
	ctx := context.Background()
	d := New(&plan.Request{Evals: 1}, &fakeEval{})
	d.Batch(ctx, []*plan.Plan{mk(1)})
	if !d.Done(ctx) || !strings.Contains(d.Stopped(), "evaluation budget") {
		t.Errorf("evals: done %v, %q", d.Done(ctx), d.Stopped())
	}
	d = New(&plan.Request{Budget: 1}, &fakeEval{})
	if !d.Done(ctx) || !strings.Contains(d.Stopped(), "wall-clock") {
		t.Errorf("budget: %q", d.Stopped())
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	d = New(&plan.Request{Evals: 5}, &fakeEval{})
	if !d.Done(cctx) || d.Stopped() != "interrupted" {
		t.Errorf("cancelled: %q", d.Stopped())
	}
}
