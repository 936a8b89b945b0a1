package throughput

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/cluster/hw"
)

// TestEstimateAgainstGavel compares the cost model's speed ratios between
// GPU types with Gavel's measured ones, for the job types inlay can build
// (ResNet-18, ResNet-50, Transformer, LM at Gavel's batch sizes, one GPU),
// and prints the error. The model is not fitted to these figures.
func TestEstimateAgainstGavel(t *testing.T) {
	gv, err := Gavel()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := hw.Preset("gavel-108")
	fam, err := Families()
	if err != nil {
		t.Fatal(err)
	}
	var keys []Key
	for _, jt := range gv.JobTypes() {
		if m, _, ok := ParseJobType(jt); ok && fam[m].Name != "" {
			keys = append(keys, Key{jt, 1})
		}
	}
	if len(keys) != 19 {
		t.Fatalf("%d job types of the four families, want 19", len(keys))
	}
	est, err := Estimate(c, keys, fam, DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2]string{{"v100", "k80"}, {"p100", "k80"}, {"v100", "p100"}}
	var b strings.Builder
	fmt.Fprintf(&b, "%-30s %s\n", "job type", "ratio: Gavel measured / inlay estimated")
	sumErr, n := map[[2]string]float64{}, 0
	for _, k := range keys {
		ge, _ := gv.Lookup(k)
		ee, _ := est.Lookup(k)
		line := fmt.Sprintf("%-30s", k.JobType)
		for _, p := range pairs {
			gm := gv.Alone(ge, gv.GPUIndex(p[0])) / gv.Alone(ge, gv.GPUIndex(p[1]))
			ea, eb := est.Alone(ee, est.GPUIndex(p[0])), est.Alone(ee, est.GPUIndex(p[1]))
			if ea <= 0 || eb <= 0 {
				line += fmt.Sprintf("  %s/%s %.2f / (does not fit)", p[0], p[1], gm)
				continue
			}
			em := ea / eb
			sumErr[p] += math.Abs(em-gm) / gm
			line += fmt.Sprintf("  %s/%s %.2f / %.2f", p[0], p[1], gm, em)
		}
		n++
		b.WriteString(line + "\n")
	}
	for _, p := range pairs {
		fmt.Fprintf(&b, "mean relative error of %s/%s: %.0f %%\n", p[0], p[1], 100*sumErr[p]/float64(n))
	}
	t.Log("\n" + b.String())
	for _, p := range pairs {
		if e := sumErr[p] / float64(n); e > 0.6 {
			t.Errorf("%s/%s: mean relative error %.0f %% above 60 %%", p[0], p[1], 100*e)
		}
	}
}

func TestEstimateErrors(t *testing.T) {
	c, _ := hw.Preset("modern-mix")
	fam, _ := Families()
	if _, err := Estimate(c, []Key{{"A3C", 1}}, fam, DefaultModel); err == nil || !strings.Contains(err.Error(), `want "MODEL (batch size B)"`) {
		t.Errorf("got %v", err)
	}
	if _, err := Estimate(c, []Key{{"GPT (batch size 8)", 1}}, fam, DefaultModel); err == nil || !strings.Contains(err.Error(), `no profile of "GPT"`) {
		t.Errorf("got %v", err)
	}
	tb, err := Estimate(c, []Key{{"zoo:resnet50 (batch size 32)", 1}, {"ResNet-50 (batch size 64)", 8}, {"Transformer (batch size 64)", 16}}, fam, DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	h, a, l := tb.GPUIndex("h100"), tb.GPUIndex("a100"), tb.GPUIndex("t4")
	id, _ := tb.Lookup(Key{"zoo:resnet50 (batch size 32)", 1})
	if !(tb.Alone(id, h) > tb.Alone(id, a) && tb.Alone(id, a) > tb.Alone(id, l)) {
		t.Errorf("h100 %.1f a100 %.1f t4 %.1f steps/s", tb.Alone(id, h), tb.Alone(id, a), tb.Alone(id, l))
	}
	id8, _ := tb.Lookup(Key{"ResNet-50 (batch size 64)", 8})
	if !(tb.Spread(id8, a) < tb.Alone(id8, a)) {
		t.Errorf("spread %.2f not below consolidated %.2f", tb.Spread(id8, a), tb.Alone(id8, a))
	}
	id16, _ := tb.Lookup(Key{"Transformer (batch size 64)", 16})
	if tb.Alone(id16, a) <= 0 || tb.Alone(id16, a) != tb.Spread(id16, a) {
		t.Errorf("16 GPUs over 8-GPU servers: alone %.3f spread %.3f", tb.Alone(id16, a), tb.Spread(id16, a))
	}
}
