package planner

import (
	"os"
	"testing"
	"time"
)

func TestScratch(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	for _, s := range Scenarios() {
		if os.Getenv("ONLY") != "" && s.Model != os.Getenv("ONLY") {
			continue
		}
		for _, r := range RunBench(s, []string{"inlay", "megatron", "metis", "amp"}, Options{}, 20*time.Second) {
			t.Logf("%-40s %-8s %10.0f %5.2f %6.2fs %4d %s %s", r.Scenario, r.Planner, r.TokensPerS, r.Fraction, r.SearchSeconds, r.GPUs, r.Shape, r.Error)
		}
	}
}
