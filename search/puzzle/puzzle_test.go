package puzzle

import (
	"context"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/hw/hwtest"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
)

func TestUPMXKeepsPermutations(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.Intn(12)
		a, b := rng.Perm(n), rng.Perm(n)
		c, d := upmx(a, b, rng)
		for _, p := range [][]int{c, d} {
			s := append([]int(nil), p...)
			sort.Ints(s)
			for i, x := range s {
				if x != i {
					t.Fatalf("upmx(%v, %v) = %v, %v: not a permutation", a, b, c, d)
				}
			}
		}
	}
}

func TestSplice(t *testing.T) {
	tests := []struct {
		k            int
		want1, want2 []int
	}{
		{0, []int{5, 6, 7}, []int{1, 2, 3}},
		{2, []int{1, 2, 7}, []int{5, 6, 3}},
		{3, []int{1, 2, 3}, []int{5, 6, 7}},
		{9, []int{1, 2, 3}, []int{5, 6, 7}},
		{-1, []int{5, 6, 7}, []int{1, 2, 3}},
	}
	for _, tc := range tests {
		c, d := splice([]int{1, 2, 3}, []int{5, 6, 7}, tc.k)
		if !slices.Equal(c, tc.want1) || !slices.Equal(d, tc.want2) {
			t.Errorf("splice at %d = %v, %v; want %v, %v", tc.k, c, d, tc.want1, tc.want2)
		}
	}
}

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions("pop=32, gen=5,mut=0.1,cut=0.2")
	if err != nil || o.Population != 32 || o.Generations != 5 || o.Mutation != 0.1 || o.CutProb != 0.2 {
		t.Fatalf("ParseOptions = %+v, %v", o, err)
	}
	for _, bad := range []string{"pop", "pop=x", "mut=2", "size=3"} {
		if _, err := ParseOptions(bad); err == nil {
			t.Errorf("ParseOptions(%q) accepted", bad)
		}
	}
}

func scenario(t testing.TB) (*workload.Workload, *hw.Platform, cost.Estimator) {
	t.Helper()
	pl := hwtest.Preset(t, "phone")
	opt := workload.ScenarioOptions{Networks: []string{"mobilenet_v2", "resnet50", "mobilebert", "yolov5s"}, MinModels: 4}
	w, err := workload.Scenario(rand.New(rand.NewSource(2)), opt, zoo.Layers)
	if err != nil {
		t.Fatal(err)
	}
	return w, pl, cost.NewAnalytic(pl)
}

// TestPlanDeterministicAndValid runs the GA twice with one seed and an
// evaluation budget: the plans must be equal, valid, and at least as good
// as the best of the first generation (elitism).
func TestPlanDeterministicAndValid(t *testing.T) {
	w, pl, est := scenario(t)
	var first []byte
	for run := 0; run < 2; run++ {
		req := &plan.Request{Workload: w, Platform: pl, Cost: est, Seed: 5, Evals: 60, Workers: 2}
		p, err := New(Options{Population: 8}).Plan(context.Background(), req, sim.NewEvaluator(w, pl, est, sim.Options{Seed: 1}))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(w, pl); err != nil {
			t.Fatalf("invalid plan: %v", err)
		}
		b, err := p.Encode(plan.JSON)
		if err != nil {
			t.Fatal(err)
		}
		if run == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Fatal("same seed and evaluation budget gave different plans")
		}
	}
}
