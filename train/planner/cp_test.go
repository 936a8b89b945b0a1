package planner

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/train"
)

// cpSetup is Llama-3-8B on seq-token sequences on gpus.
func cpSetup(t testing.TB, seq int, gpus string) (*train.Model, *train.Cluster) {
	m, c := setup(t, "llama-3-8b", gpus)
	m.Seq = seq
	return m, c
}

// TestExportCP: Megatron-LM and torchtitan take CP; DeepSpeed and Sailor
// refuse it in one line pointing to the per-rank file, which lists every
// rank's CP index and ring.
func TestExportCP(t *testing.T) {
	m, c := cpSetup(t, 32768, "32xA100-40")
	p, err := train.Uniform(m, "A100-40", 2, 2, 4, 1, 32)
	if err != nil {
		t.Fatal(err)
	}
	p.CP, p.Zero = 2, 1
	mega, err := Export("megatron", m, c, p)
	if err != nil || !strings.Contains(string(mega), "--context-parallel-size 2") {
		t.Fatalf("megatron: %v\n%s", err, mega)
	}
	// a wrong CP size fails Megatron-LM's world-size check
	bad := strings.Replace(string(mega), "--context-parallel-size 2", "--context-parallel-size 4", 1)
	if CheckExport("megatron", m, c, p, []byte(bad)) == nil {
		t.Error("megatron check passed cp 4 for a cp-2 plan")
	}
	tt, err := Export("torchtitan", m, c, p)
	if err != nil || !strings.Contains(string(tt), "context_parallel_degree = 2") {
		t.Fatalf("torchtitan: %v\n%s", err, tt)
	}
	for _, f := range []string{"deepspeed", "sailor"} {
		_, err := Export(f, m, c, p)
		if err == nil || !strings.Contains(err.Error(), "cp 2") || !strings.Contains(err.Error(), "--export ranks") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", f, err)
		}
	}
	data, err := Export("ranks", m, c, p)
	if err != nil {
		t.Fatal(err)
	}
	var f RankFile
	if err := json.Unmarshal(data, &f); err != nil || f.WorldSize != 32 {
		t.Fatalf("ranks: %v, world %d", err, f.WorldSize)
	}
	// rank 3: replica 0, stage 0, the second GPU pair: tp rank 1, cp rank 1
	r := f.Ranks[3]
	if r.CPRank == nil || *r.CPRank != 1 || r.TPRank != 1 || fmt_(r.CPGroup) != "1 3" || fmt_(r.TPGroup) != "2 3" || fmt_(r.DPGroup) != "3 7 11 15" || fmt_(r.PPGroup) != "3 19" {
		t.Errorf("rank 3: %+v (cp rank %v)", r, r.CPRank)
	}
	// a CP-1 plan's ranks carry no CP fields
	p.CP = 0
	data, _ = Export("ranks", m, c, p)
	if strings.Contains(string(data), "cp_") {
		t.Error("a plan without CP lists CP ranks")
	}
	// Megatron-LM wants a sequence of 2 × cp chunks
	odd, _ := setup(t, "llama-3-8b", "32xA100-40")
	odd.Seq = 3 * 1025
	q, _ := train.Uniform(odd, "A100-40", 2, 1, 1, 1, 1)
	q.CP = 3
	if _, err := Export("megatron", odd, c, q); err == nil || !strings.Contains(err.Error(), "2 × cp = 6") {
		t.Errorf("seq 3072 cp 3: %v", err)
	}
}

// fmt_ writes a list of ints as "1 2 3".
func fmt_(v []int) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(strings.Trim(string(b), "[]"), ",", " ")
}

// TestInlayChoosesCP: on 32k-token sequences on one 8-GPU A100-80
// server the planner's plan uses context parallelism and beats the
// megatron baseline's plan (no CP); below 4k tokens it never tries CP;
// the search stays quick.
func TestInlayChoosesCP(t *testing.T) {
	m, c := cpSetup(t, 32768, "8xA100-80")
	start := time.Now()
	res, err := Inlay{}.Plan(m, c, Options{GlobalBatch: 16})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("search took %v", time.Since(start))
	}
	t.Logf("%s cp %d: %.0f tokens/s, peak %.1f GiB", Shape(res.Plan), res.Plan.ContextParallel(), res.Sim.TokensPerS, res.Sim.PeakMemoryBytes/(1<<30))
	if res.Plan.ContextParallel() < 2 || !res.Sim.Fits {
		t.Errorf("plan without CP: %s", Shape(res.Plan))
	}
	if mega, err := (Megatron{}).Plan(m, c, Options{GlobalBatch: 16}); err == nil && mega.Sim.TokensPerS >= res.Sim.TokensPerS {
		t.Errorf("megatron's plan without CP %s: %.0f tokens/s, inlay's %.0f", Shape(mega.Plan), mega.Sim.TokensPerS, res.Sim.TokensPerS)
	}
	if got := res.Explain.Choices[0]; !strings.Contains(got, ", cp ") {
		t.Errorf("explain: %q", got)
	}
	if fmt_(cpOptions(m)) != "1 2 4 8" {
		t.Errorf("cp options at 32k: %v", cpOptions(m))
	}
	m.Seq = 4096
	if fmt_(cpOptions(m)) != "1 2 4" {
		t.Errorf("cp options at 4k: %v", cpOptions(m))
	}
	m.Seq = 2048
	if fmt_(cpOptions(m)) != "1" {
		t.Errorf("cp options at 2k: %v", cpOptions(m))
	}
}
