package planner

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/train"
)

// The forms below are what the consumers' own parsers rejected when they
// were first run on inlay's exports (scripts/check-exports.sh; Megatron-LM
// at d98e8a6, torchtitan v0.2.2, Sailor at cf2c8e3): CheckExport must
// reject each of them as the consumer did, and Export must no longer
// write them.

// TestMegatronRequiredArgs: validate_args requires
// --max-position-embeddings, at least the sequence length.
func TestMegatronRequiredArgs(t *testing.T) {
	m, c := setup(t, "llama-3-8b", "16xA100-40")
	p := uniformPlan(t, m, "A100-40", 2, 1, 8, 1, 64)
	mega, err := Export("megatron", m, c, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--max-position-embeddings 8192", "--position-embedding-type rope",
		"--untie-embeddings-and-output-weights", "--hidden-dropout 0", "--attention-dropout 0"} {
		if !bytes.Contains(mega, []byte(want)) {
			t.Errorf("Llama-3-8B's arguments lack %s:\n%s", want, mega)
		}
	}
	var without []string
	for _, line := range strings.Split(string(mega), "\n") {
		if !strings.Contains(line, "--max-position-embeddings") {
			without = append(without, line)
		}
	}
	if err := CheckExport("megatron", m, c, p, []byte(strings.Join(without, "\n"))); err == nil || !strings.Contains(err.Error(), "max_position_embeddings argument is None") {
		t.Errorf("arguments without --max-position-embeddings: %v", err)
	}
	short := strings.Replace(string(mega), "--max-position-embeddings 8192", "--max-position-embeddings 4096", 1)
	if err := CheckExport("megatron", m, c, p, []byte(short)); err == nil {
		t.Error("max_position_embeddings below the sequence length passed")
	}
	// OPT-350M: learned positions, tied, dropout on the hidden states
	m, c = setup(t, "opt-350m", "16xA100-40")
	p = uniformPlan(t, m, "A100-40", 1, 1, 16, 1, 64)
	mega, err = Export("megatron", m, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(mega, []byte("rope")) || bytes.Contains(mega, []byte("untie")) || bytes.Contains(mega, []byte("hidden-dropout")) ||
		!bytes.Contains(mega, []byte("--max-position-embeddings 2048")) {
		t.Errorf("OPT-350M's arguments:\n%s", mega)
	}
}

// TestMegatronZeRO: ZeRO 1 is the distributed optimizer, 2 and 3
// Megatron-FSDP with its sharding strategy (and the checkpoint format it
// requires).
func TestMegatronZeRO(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40")
	p := uniformPlan(t, m, "A100-40", 1, 1, 16, 1, 64)
	for zero, want := range map[int]string{0: "", 1: "--use-distributed-optimizer", 2: "--data-parallel-sharding-strategy optim_grads\n",
		3: "--data-parallel-sharding-strategy optim_grads_params"} {
		p.Zero = zero
		mega, err := Export("megatron", m, c, p)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(mega), " \\\n", "\n")
		if zero == 0 && strings.Contains(s, "optimizer") || !strings.Contains(s, want) ||
			zero >= 2 && !strings.Contains(s, "--ckpt-format fsdp_dtensor") {
			t.Errorf("zero %d:\n%s", zero, mega)
		}
		if zero >= 2 {
			if err := CheckExport("megatron", m, c, p, []byte(strings.Replace(s, "\n  --ckpt-format fsdp_dtensor", "", 1))); err == nil || !strings.Contains(err.Error(), "fsdp_dtensor") {
				t.Errorf("zero %d without --ckpt-format fsdp_dtensor: %v", zero, err)
			}
		}
		p.Zero = (zero + 1) % 4
		if CheckExport("megatron", m, c, p, mega) == nil {
			t.Errorf("zero %d arguments passed for a ZeRO %d plan", zero, p.Zero)
		}
	}
}

// TestMegatronOffload: optimizer offload is Megatron's hybrid device
// optimizer, which validate_args runs on the precision-aware optimizer.
func TestMegatronOffload(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40")
	p := uniformPlan(t, m, "A100-40", 1, 1, 16, 2, 512)
	p.Zero, p.Offload = 2, true
	mega, err := Export("megatron", m, c, p)
	if err != nil || !bytes.Contains(mega, []byte("--optimizer-cpu-offload")) {
		t.Fatalf("%v\n%s", err, mega)
	}
	bad := bytes.Replace(mega, []byte(" \\\n  --use-precision-aware-optimizer"), nil, 1)
	if err := CheckExport("megatron", m, c, p, bad); err == nil || !strings.Contains(err.Error(), "precision-aware") {
		t.Errorf("offload without --use-precision-aware-optimizer: %v", err)
	}
	p.Offload = false
	if CheckExport("megatron", m, c, p, mega) == nil {
		t.Error("offloading arguments passed for a plan without offload")
	}
}

// TestTorchtitanForm: the keys of JobConfig at v0.2.2 (no
// pipeline_parallel_split_points: model parts instead), its precision
// choices, the local batch without pipelining, ZeRO as FSDP settings.
func TestTorchtitanForm(t *testing.T) {
	m, c := setup(t, "gpt-neo-2.7b", "64xA100-40")
	p := uniformPlan(t, m, "A100-40", 2, 4, 8, 2, 512)
	p.Stages = ranges([]int{8, 8, 8, 8})
	p.Schedule = train.Schedule{Kind: "interleaved", Chunks: 2}
	tt, err := Export("torchtitan", m, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(tt), "\n  ["); n != 8 || !strings.Contains(string(tt), `"Interleaved1F1B"`) {
		t.Errorf("interleaved:2 on pp 4: %d model parts, want 8:\n%s", n, tt)
	}
	old := strings.Replace(string(tt), "module_fqns_per_model_part = [", "pipeline_parallel_split_points = [\"layers.8\"]\nmodule_fqns_per_model_part = [", 1)
	if err := CheckExport("torchtitan", m, c, p, []byte(old)); err == nil || !strings.Contains(err.Error(), "Invalid field names") {
		t.Errorf("pipeline_parallel_split_points: %v", err)
	}
	// a layer moved from rank 1's part to rank 0's
	moved := strings.Replace(string(tt), `"layers.3"],`+"\n"+`  ["layers.4",`, `"layers.3", "layers.4"],`+"\n"+`  [`, 1)
	if moved == string(tt) || CheckExport("torchtitan", m, c, p, []byte(moved)) == nil {
		t.Error("model parts with the wrong layers per rank passed")
	}
	if err := CheckExport("torchtitan", m, c, p, []byte(strings.Replace(string(tt), `"bfloat16"`, `"float16"`, 1))); err == nil {
		t.Error("mixed_precision_param float16 passed")
	}
	p.Precision = "fp16"
	if _, err := Export("torchtitan", m, c, p); err == nil {
		t.Error("an fp16 plan exported to torchtitan")
	}

	// without pipelining, a step runs local_batch_size sequences at once
	p = uniformPlan(t, m, "A100-40", 2, 1, 32, 2, 512)
	for zero, want := range map[int]string{0: "data_parallel_replicate_degree = 32\ndata_parallel_shard_degree = 1\n",
		1: `fsdp_reshard_after_forward = "never"`, 3: `fsdp_reshard_after_forward = "always"`} {
		p.Zero = zero
		tt, err = Export("torchtitan", m, c, p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(tt), "local_batch_size = 2\n") || !strings.Contains(string(tt), want) {
			t.Errorf("zero %d, pp 1:\n%s", zero, tt)
		}
	}
	whole := strings.Replace(string(tt), "local_batch_size = 2\n", "local_batch_size = 16\n", 1)
	if err := CheckExport("torchtitan", m, c, p, []byte(whole)); err == nil {
		t.Error("a local batch of the replica's whole share (micro-batch 2) passed")
	}
}

// TestSailorZone: Sailor's simulator looks zones up in its network files.
func TestSailorZone(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40")
	p := uniformPlan(t, m, "A100-40", 1, 2, 8, 1, 64)
	data, err := Export("sailor", m, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckExport("sailor", m, c, p, bytes.ReplaceAll(data, []byte(sailorZone), []byte("zone-a"))); err == nil || !strings.Contains(err.Error(), "zone-a") {
		t.Errorf("zone-a: %v", err)
	}
}

// TestDeepSpeedSchedule: DeepSpeed's pipeline engine runs 1F1B only.
func TestDeepSpeedSchedule(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40")
	p := uniformPlan(t, m, "A100-40", 1, 2, 8, 1, 64)
	for _, s := range []train.Schedule{{Kind: "gpipe"}, {Kind: "interleaved", Chunks: 2}} {
		p.Schedule = s
		if _, err := Export("deepspeed", m, c, p); err == nil {
			t.Errorf("%s exported to DeepSpeed", s)
		}
	}
	p.Schedule = train.Schedule{Kind: "1f1b"}
	if _, err := Export("deepspeed", m, c, p); err != nil {
		t.Error(err)
	}
}

// TestExportUnnamedGPU: a plan built from flags or a plan file that
// leaves the GPU type out (one type in the cluster) or gives an alias
// exports in every form with the cluster's name for it.
func TestExportUnnamedGPU(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40")
	for _, gpu := range []string{"", "a100-40"} {
		p := uniformPlan(t, m, gpu, 1, 2, 8, 1, 64)
		for _, f := range ExportFormats {
			data, err := Export(f, m, c, p)
			if err != nil {
				t.Errorf("gpu %q, %s: %v", gpu, f, err)
				continue
			}
			if f == "ranks" {
				var rf RankFile
				if json.Unmarshal(data, &rf) != nil || rf.Ranks[0].GPU != "A100-40" {
					t.Errorf("gpu %q: ranks name %q", gpu, rf.Ranks[0].GPU)
				}
			}
		}
		if p.Replicas[0].Stages[0].GPU != gpu {
			t.Error("Export changed the caller's plan")
		}
	}
	p := uniformPlan(t, m, "V100-16", 1, 2, 8, 1, 64)
	if _, err := Export("ranks", m, c, p); err == nil {
		t.Error("a V100-16 plan exported for an A100-40 cluster")
	}
}

// FuzzCheckExport: the checks read any bytes without panicking.
func FuzzCheckExport(f *testing.F) {
	m, c := setup(f, "gpt-neo-2.7b", "64xA100-40")
	p := uniformPlan(f, m, "A100-40", 2, 4, 8, 2, 512)
	for i, format := range ExportFormats {
		data, err := Export(format, m, c, p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(i, data)
	}
	f.Fuzz(func(t *testing.T, i int, data []byte) {
		_ = CheckExport(ExportFormats[uint(i)%uint(len(ExportFormats))], m, c, p, data)
	})
}

// uniformPlan is train.Uniform's plan, or the test's end.
func uniformPlan(tb testing.TB, m *train.Model, gpu string, tp, pp, dp, micro, global int) *train.Plan {
	tb.Helper()
	p, err := train.Uniform(m, gpu, tp, pp, dp, micro, global)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestExportUnnamedGroupGPU: a plan with per-stage data parallelism
// whose ranks leave the GPU type out (one type in the cluster) goes to
// the per-rank file under the cluster's name.
func TestExportUnnamedGroupGPU(t *testing.T) {
	m, c := setup(t, "opt-350m", "16xA100-40")
	res, err := New("metis")
	if err != nil {
		t.Fatal(err)
	}
	r, err := res.Plan(m, c, Options{GlobalBatch: 64})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Plan.StageDP() {
		t.Skip("metis returned replicas here")
	}
	for _, g := range r.Plan.Groups {
		for i := range g.Ranks {
			g.Ranks[i].GPU = ""
		}
	}
	data, err := Export("ranks", m, c, r.Plan)
	if err != nil {
		t.Fatal(err)
	}
	var f RankFile
	if json.Unmarshal(data, &f) != nil || f.Ranks[0].GPU != "A100-40" {
		t.Errorf("ranks name %q", f.Ranks[0].GPU)
	}
}
