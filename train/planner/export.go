package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/inlay-dev/inlay/train"
)

// ExportFormats are the forms Export writes.
var ExportFormats = []string{"megatron", "torchtitan", "deepspeed", "sailor", "ranks"}

// Export writes plan p of model m on cluster c in the form an engine
// takes; each form is checked against its consumer's rules (CheckExport)
// before it is returned. An engine that cannot run the plan (Megatron-LM,
// torchtitan and DeepSpeed take one GPU type, identical replicas and an
// even batch) gets an error that says why and points to the per-rank file.
func Export(format string, m *train.Model, c *train.Cluster, p *train.Plan) ([]byte, error) {
	p, err := byName(c, p)
	if err != nil {
		return nil, fmt.Errorf("export %s: %v", format, err)
	}
	var out []byte
	if p.StageDP() && format != "ranks" && slices.Contains(ExportFormats, format) {
		return nil, fmt.Errorf("export %s: the plan gives each stage its own data-parallel ranks, which %s cannot express (every stage of its pipelines has the same data parallelism); --export ranks writes it", format, format)
	}
	switch format {
	case "megatron":
		out, err = exportMegatron(m, p)
	case "torchtitan":
		out, err = exportTorchtitan(m, p)
	case "deepspeed":
		out, err = exportDeepSpeed(p)
	case "sailor":
		out, err = exportSailor(m, c, p)
	case "ranks":
		out, err = exportRanks(c, p)
	default:
		return nil, fmt.Errorf("export: unknown form %q (forms: %s)", format, strings.Join(ExportFormats, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("export %s: %v", format, err)
	}
	if err := CheckExport(format, m, c, p, out); err != nil {
		return nil, fmt.Errorf("export %s: the written form fails its consumer's check: %v", format, err)
	}
	return out, nil
}

// byName returns p with every placement's GPU type by the cluster's name
// for it: a plan file or the flags may leave the type out on a cluster of
// one type, or give an alias (a100-40), which the simulator accepts and
// the engines' forms must not.
func byName(c *train.Cluster, p *train.Plan) (*train.Plan, error) {
	types := c.Types()
	name := func(gpu, where string) (string, error) {
		if g, ok := c.GPUType(gpu); ok { // "" is the only type of a one-type cluster
			return g.Name, nil
		}
		return "", fmt.Errorf("%s: the cluster has no GPU type %q (it has %s)", where, gpu, strings.Join(types, ", "))
	}
	q := *p
	q.Replicas = make([]train.Replica, len(p.Replicas))
	for r, rep := range p.Replicas {
		q.Replicas[r] = rep
		q.Replicas[r].Stages = make([]train.Placement, len(rep.Stages))
		for s, pl := range rep.Stages {
			var err error
			if pl.GPU, err = name(pl.GPU, fmt.Sprintf("replicas[%d].stages[%d]", r, s)); err != nil {
				return nil, err
			}
			q.Replicas[r].Stages[s] = pl
		}
	}
	q.Groups = make([]train.Group, len(p.Groups))
	for s, g := range p.Groups {
		q.Groups[s].Ranks = make([]train.Rank, len(g.Ranks))
		for i, rk := range g.Ranks {
			var err error
			if rk.GPU, err = name(rk.GPU, fmt.Sprintf("groups[%d].ranks[%d]", s, i)); err != nil {
				return nil, err
			}
			q.Groups[s].Ranks[i] = rk
		}
	}
	if p.Groups == nil {
		q.Groups = nil
	}
	return &q, nil
}

// uniform returns the plan's single GPU type and TP when every stage of
// every replica is alike and the batch is split evenly, else an error.
func uniform(p *train.Plan, engine string) (string, int, error) {
	first := p.Replicas[0].Stages[0]
	for _, r := range p.Replicas {
		if r.Batch != p.Replicas[0].Batch {
			return "", 0, fmt.Errorf("%s splits the batch evenly over data-parallel replicas; this plan gives them %d and %d sequences (use --export ranks)", engine, p.Replicas[0].Batch, r.Batch)
		}
		if r.MicroBatch != 0 && r.MicroBatch != p.MicroBatch {
			return "", 0, fmt.Errorf("%s runs one micro-batch on every replica; this plan's replicas run %d and %d (use --export ranks)", engine, p.MicroBatch, r.MicroBatch)
		}
		if r.Recompute != "" && r.Recompute != p.Recompute {
			return "", 0, fmt.Errorf("%s recomputes alike on every replica; this plan's replicas recompute %s and %s (use --export ranks)", engine, p.Recompute, r.Recompute)
		}
		for _, s := range r.Stages {
			if s != first {
				return "", 0, fmt.Errorf("%s runs one GPU type and one TP degree; this plan has %s tp %d and %s tp %d (use --export ranks)", engine, first.GPU, first.TP, s.GPU, s.TP)
			}
		}
	}
	return first.GPU, first.TP, nil
}

// exportMegatron writes Megatron-LM's command-line arguments (names of
// megatron/training/arguments.py at NVIDIA/Megatron-LM commit d98e8a6,
// core_v0.15.0rc7-2333): uneven first and last stages through
// --decoder-first-pipeline-num-layers and
// --decoder-last-pipeline-num-layers, the middle stages even.
func exportMegatron(m *train.Model, p *train.Plan) ([]byte, error) {
	gpu, tp, err := uniform(p, "Megatron-LM")
	if err != nil {
		return nil, err
	}
	P := p.PP()
	if cp := p.ContextParallel(); cp > 1 && m.Seq%(2*cp) != 0 {
		return nil, fmt.Errorf("Megatron-LM splits each sequence into 2 × cp = %d chunks; the sequence length %d is not a multiple (use --export ranks)", 2*cp, m.Seq)
	}
	args := []string{
		fmt.Sprintf("--num-layers %d", m.Layers), fmt.Sprintf("--hidden-size %d", m.Hidden),
		fmt.Sprintf("--num-attention-heads %d", m.Heads), fmt.Sprintf("--seq-length %d", m.Seq),
		fmt.Sprintf("--tensor-model-parallel-size %d", tp), fmt.Sprintf("--pipeline-model-parallel-size %d", P),
		fmt.Sprintf("--micro-batch-size %d", p.MicroBatch), fmt.Sprintf("--global-batch-size %d", p.GlobalBatch),
	}
	if cp := p.ContextParallel(); cp > 1 {
		args = append(args, fmt.Sprintf("--context-parallel-size %d", cp))
	}
	args = append(args, megatronModel(m)...)
	if m.KVHeads > 0 && m.KVHeads != m.Heads {
		args = append(args, "--group-query-attention", fmt.Sprintf("--num-query-groups %d", m.KVHeads))
	}
	if m.FFN > 0 {
		args = append(args, fmt.Sprintf("--ffn-hidden-size %d", m.FFN))
	}
	if m.Gated {
		args = append(args, "--swiglu")
	}
	if P > 2 {
		first, last, mid := p.Stages[0].Count(), p.Stages[P-1].Count(), p.Stages[1].Count()
		for _, s := range p.Stages[1 : P-1] {
			if s.Count() != mid {
				return nil, fmt.Errorf("Megatron-LM's uneven stages are the first and the last only; stages 1-%d differ (%d and %d layers; use --export ranks)", P-2, mid, s.Count())
			}
		}
		if first != mid {
			args = append(args, fmt.Sprintf("--decoder-first-pipeline-num-layers %d", first))
		}
		if last != mid {
			args = append(args, fmt.Sprintf("--decoder-last-pipeline-num-layers %d", last))
		}
	} else if P == 2 && p.Stages[0].Count() != p.Stages[1].Count() {
		args = append(args, fmt.Sprintf("--decoder-first-pipeline-num-layers %d", p.Stages[0].Count()),
			fmt.Sprintf("--decoder-last-pipeline-num-layers %d", p.Stages[1].Count()))
	}
	switch p.Recompute {
	case "selective":
		args = append(args, "--recompute-granularity selective")
	case "full":
		args = append(args, "--recompute-granularity full", "--recompute-method uniform", "--recompute-num-layers 1")
	}
	if p.SequenceParallel && tp > 1 {
		args = append(args, "--sequence-parallel")
	}
	switch {
	case p.Zero >= 2:
		// Megatron-FSDP shards gradients (ZeRO 2) and parameters too (3)
		strategy := map[bool]string{true: "optim_grads_params", false: "optim_grads"}[p.Zero >= 3]
		args = append(args, "--use-distributed-optimizer", "--use-megatron-fsdp", "--data-parallel-sharding-strategy "+strategy, "--ckpt-format fsdp_dtensor")
	case p.Zero == 1:
		args = append(args, "--use-distributed-optimizer")
	}
	if p.Offload {
		// the optimizer states and step on the host (Megatron's hybrid
		// device optimizer runs on the precision-aware optimizer's path)
		args = append(args, "--optimizer-cpu-offload", "--use-precision-aware-optimizer")
	}
	if p.OverlapGradReduce {
		args = append(args, "--overlap-grad-reduce")
	}
	if g, ok := train.LookupGPU(gpu); p.FlashAttention && (!ok || g.FusedAttention()) {
		// the simulator fuses attention only where the GPU runs it
		args = append(args, "--use-flash-attn")
	}
	switch p.Precision {
	case "bf16":
		args = append(args, "--bf16")
	case "fp16":
		args = append(args, "--fp16")
	}
	if p.Schedule.Kind == "interleaved" {
		args = append(args, fmt.Sprintf("--num-virtual-stages-per-pipeline-rank %d", p.Schedule.Chunks))
	}
	return []byte(strings.Join(args, " \\\n  ") + "\n"), nil
}

// megatronModel is the model's shape beyond the sizes, in Megatron-LM's
// arguments: the position embedding (max_position_embeddings is required
// by validate_args, and at least the sequence), untied output weights,
// dropout off where the model has none (Megatron's default is 0.1), and a
// mixture of experts.
func megatronModel(m *train.Model) []string {
	var args []string
	if m.Positions > 0 {
		args = append(args, fmt.Sprintf("--max-position-embeddings %d", max(m.Positions, m.Seq)))
	} else {
		args = append(args, "--position-embedding-type rope", fmt.Sprintf("--max-position-embeddings %d", m.Seq))
	}
	if !m.Tied {
		args = append(args, "--untie-embeddings-and-output-weights")
	}
	if !m.Dropout {
		args = append(args, "--hidden-dropout 0")
	}
	if !m.AttentionDropout {
		args = append(args, "--attention-dropout 0")
	}
	if m.Experts > 1 {
		args = append(args, fmt.Sprintf("--num-experts %d", m.Experts), fmt.Sprintf("--moe-router-topk %d", max(m.TopK, 1)))
	}
	return args
}

// exportTorchtitan writes a torchtitan job TOML, in the sections and
// keys of torchtitan's JobConfig (torchtitan/config/job_config.py) at
// v0.2.2, the last release that reads TOML files (pytorch/torchtitan
// commit 73a0e69; its config system moved to Python registries after
// it). Without pipeline parallelism a step runs local_batch_size
// sequences on each rank and accumulates gradients up to
// global_batch_size, so the local batch is the plan's micro-batch; with
// it the local batch is the replica's share, run in micro-batches of
// pipeline_parallel_microbatch_size. The stages are model parts
// (module_fqns_per_model_part: tok_embeddings, layers.N, norm, output;
// pp × V of them, part k·pp + s on rank s, under the interleaved
// schedule). ZeRO 0 is plain data parallelism (replicate), 1 and 2 FSDP
// that keeps the gathered parameters from forward to backward
// (fsdp_reshard_after_forward = "never"; torchtitan has no optimizer-only
// sharding, so ZeRO 1 becomes 2, which holds less), 3 FSDP that reshards.
func exportTorchtitan(m *train.Model, p *train.Plan) ([]byte, error) {
	_, tp, err := uniform(p, "torchtitan")
	if err != nil {
		return nil, err
	}
	param := "bfloat16"
	switch p.Precision {
	case "fp16":
		return nil, fmt.Errorf("torchtitan's mixed precision is bfloat16 or float32 (training.mixed_precision_param); this plan trains in fp16 (use --export megatron or deepspeed)")
	case "fp32", "tf32":
		param = "float32"
	}
	var b bytes.Buffer
	dp, P := p.DP(), p.PP()
	local := p.MicroBatch
	if P > 1 {
		local = p.GlobalBatch / dp
	}
	fmt.Fprintf(&b, "# torchtitan job config written by inlay train plan\n[training]\nlocal_batch_size = %d\nglobal_batch_size = %d\nseq_len = %d\nmixed_precision_param = %q\n",
		local, p.GlobalBatch, m.Seq, param)
	if p.Offload {
		b.WriteString("enable_cpu_offload = true\n")
	}
	replicate, shard, reshard := 1, dp, "never"
	switch p.Zero {
	case 0:
		replicate, shard = dp, 1
	case 3:
		reshard = "always"
	}
	fmt.Fprintf(&b, "\n[parallelism]\ndata_parallel_replicate_degree = %d\ndata_parallel_shard_degree = %d\n", replicate, shard)
	if shard > 1 {
		fmt.Fprintf(&b, "fsdp_reshard_after_forward = %q\n", reshard)
	}
	fmt.Fprintf(&b, "tensor_parallel_degree = %d\npipeline_parallel_degree = %d\n", tp, P)
	if cp := p.ContextParallel(); cp > 1 {
		fmt.Fprintf(&b, "context_parallel_degree = %d\n", cp)
	}
	if P > 1 {
		sched := "1F1B"
		switch p.Schedule.Kind {
		case "gpipe":
			sched = "GPipe"
		case "interleaved":
			sched = "Interleaved1F1B"
		}
		fmt.Fprintf(&b, "pipeline_parallel_schedule = %q\npipeline_parallel_microbatch_size = %d\nmodule_fqns_per_model_part = [\n", sched, p.MicroBatch)
		for _, part := range torchtitanParts(p) {
			fmt.Fprintf(&b, "  [%s],\n", strings.Join(part, ", "))
		}
		b.WriteString("]\n")
	}
	mode, option := p.Recompute, ""
	if mode == "selective" {
		option = "selective_ac_option = \"op\"\n" // per-op, not every n-th layer
	}
	fmt.Fprintf(&b, "\n[activation_checkpoint]\nmode = %q\n%s", mode, option)
	return b.Bytes(), nil
}

// torchtitanParts are the plan's model parts in torchtitan's module
// names, quoted: pp × V parts (V model chunks per stage), part k·pp + s
// the k-th chunk of stage s, the layers handed out in part order; the
// embedding with the first part, the final norm and the output with the
// last.
func torchtitanParts(p *train.Plan) [][]string {
	P, V := p.PP(), max(p.Schedule.Chunks, 1)
	if p.Schedule.Kind != "interleaved" {
		V = 1
	}
	parts := make([][]string, 0, P*V)
	layer := 0
	for k := 0; k < V; k++ {
		for s := 0; s < P; s++ {
			var part []string
			if k == 0 && s == 0 {
				part = append(part, `"tok_embeddings"`)
			}
			for i := 0; i < p.Stages[s].Count()/V; i++ {
				part = append(part, fmt.Sprintf(`"layers.%d"`, layer))
				layer++
			}
			if k == V-1 && s == P-1 {
				part = append(part, `"norm"`, `"output"`)
			}
			parts = append(parts, part)
		}
	}
	return parts
}

// deepSpeedConfig is the part of DeepSpeed's JSON config written.
type deepSpeedConfig struct {
	TrainBatchSize int            `json:"train_batch_size"`
	MicroBatch     int            `json:"train_micro_batch_size_per_gpu"`
	GradAccum      int            `json:"gradient_accumulation_steps"`
	Zero           map[string]any `json:"zero_optimization"`
	FP16           map[string]any `json:"fp16,omitempty"`
	BF16           map[string]any `json:"bf16,omitempty"`
	Pipeline       map[string]any `json:"pipeline,omitempty"`
}

// exportDeepSpeed writes a DeepSpeed config JSON: batch sizes, ZeRO stage
// and offload, precision.
func exportDeepSpeed(p *train.Plan) ([]byte, error) {
	if _, _, err := uniform(p, "DeepSpeed"); err != nil {
		return nil, err
	}
	if cp := p.ContextParallel(); cp > 1 {
		return nil, fmt.Errorf("DeepSpeed has no context parallelism (DeepSpeed-Ulysses splits the attention heads, a different scheme); this plan has cp %d (use --export ranks)", cp)
	}
	if p.PP() > 1 && (p.Schedule.Kind == "gpipe" || p.Schedule.Kind == "interleaved" && p.Schedule.Chunks > 1) {
		return nil, fmt.Errorf("DeepSpeed's pipeline engine runs one schedule, 1F1B (deepspeed/runtime/pipe/schedule.py TrainSchedule); this plan's is %s (use --export megatron or torchtitan)", p.Schedule)
	}
	dp := p.DP()
	cfg := deepSpeedConfig{TrainBatchSize: p.GlobalBatch, MicroBatch: p.MicroBatch, GradAccum: p.GlobalBatch / (p.MicroBatch * dp),
		Zero: map[string]any{"stage": p.Zero, "overlap_comm": p.OverlapGradReduce, "reduce_bucket_size": int(p.BucketMB * 1e6)}}
	if p.Offload {
		cfg.Zero["offload_optimizer"] = map[string]any{"device": "cpu"}
	}
	switch p.Precision {
	case "bf16":
		cfg.BF16 = map[string]any{"enabled": true}
	case "fp16":
		cfg.FP16 = map[string]any{"enabled": true}
	}
	if p.PP() > 1 {
		cfg.Pipeline = map[string]any{"stages": p.PP(), "partition": "parameters"}
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// sailorZone is the zone written in a plan_config: Sailor's simulator
// looks zones up in its network files (sailor/providers/
// multizone_bandwidths_het.json, gcp/communication_cost.json), whose
// zones are Google Cloud's; us-central1-a is its own cluster configs'.
const sailorZone = "us-central1-a"

// exportSailor writes Sailor's plan_config JSON: every run of identical
// replicas one pipeline entry, layers in Sailor's numbering (the
// embedding 0, the head L+1).
func exportSailor(m *train.Model, c *train.Cluster, p *train.Plan) ([]byte, error) {
	if cp := p.ContextParallel(); cp > 1 {
		return nil, fmt.Errorf("Sailor's plan_config has no context parallelism; this plan has cp %d (use --export ranks)", cp)
	}
	for _, r := range p.Replicas {
		if r.Batch != p.Replicas[0].Batch {
			return nil, fmt.Errorf("Sailor's plan_config splits the batch evenly over replicas; this plan gives them %d and %d sequences (use --export ranks)", p.Replicas[0].Batch, r.Batch)
		}
		if r.MicroBatch != 0 && r.MicroBatch != p.MicroBatch {
			return nil, fmt.Errorf("Sailor's plan_config has one micro-batch (mbs) for every replica; this plan's replicas run %d and %d (use --export ranks)", p.MicroBatch, r.MicroBatch)
		}
		if r.Recompute != "" && r.Recompute != p.Recompute {
			return nil, fmt.Errorf("Sailor's plan_config has no recomputation per replica; this plan's replicas recompute %s and %s (use --export ranks)", p.Recompute, r.Recompute)
		}
	}
	P := p.PP()
	ids := make([][]int, P)
	for s, r := range p.Stages {
		if s == 0 {
			ids[s] = append(ids[s], 0)
		}
		for l := r.First; l <= r.Last; l++ {
			ids[s] = append(ids[s], l+1)
		}
		if s == P-1 {
			ids[s] = append(ids[s], m.Layers+1)
		}
	}
	type pipe struct {
		NumStages int       `json:"num_stages"`
		Layers    [][]int   `json:"layers_per_stage"`
		TMP       [][][]any `json:"tmp_per_stage"`
		DP        []int     `json:"dp"`
	}
	var pipes []pipe
	gpus := map[string]int{}
	for i := 0; i < len(p.Replicas); {
		j := i
		for j < len(p.Replicas) && fmt.Sprint(p.Replicas[j].Stages) == fmt.Sprint(p.Replicas[i].Stages) {
			j++
		}
		pp := pipe{NumStages: P, Layers: ids}
		for s := 0; s < P; s++ {
			pl := p.Replicas[i].Stages[s]
			name, per, ok := train.SailorName(pl.GPU)
			if !ok {
				return nil, fmt.Errorf("Sailor has no GPU type for %s", pl.GPU)
			}
			if pl.TP > per {
				return nil, fmt.Errorf("Sailor's %s nodes have %d GPUs; this plan's stage %d runs tp %d across nodes (use --export ranks)", name, per, s, pl.TP)
			}
			var reps [][]any
			for r := i; r < j; r++ {
				reps = append(reps, []any{[]any{[]any{name, per, sailorZone}}, pl.TP})
				gpus[pl.GPU] += pl.TP
			}
			pp.TMP = append(pp.TMP, reps)
			pp.DP = append(pp.DP, j-i)
		}
		pipes = append(pipes, pp)
		i = j
	}
	nodes := 0
	for t, n := range gpus {
		_, per, _ := train.SailorName(t)
		nodes += (n + per - 1) / per
	}
	out := map[string]any{"zone": sailorZone, "pipeline_list": pipes, "mbs": p.MicroBatch, "gbs": p.GlobalBatch, "N": nodes}
	return json.MarshalIndent(out, "", "  ")
}

// RankEntry is one GPU of the per-rank file.
type RankEntry struct {
	Rank     int              `json:"rank"`
	Node     int              `json:"node"`
	LocalGPU int              `json:"local_gpu"`
	GPU      string           `json:"gpu"`
	Replica  int              `json:"replica"`
	Stage    int              `json:"stage"`
	Layers   train.LayerRange `json:"layers"`
	TPRank   int              `json:"tp_rank"`
	// CPRank is the rank's place in its context-parallel ring (plans
	// with cp > 1 only); CPGroup the ring's ranks, in ring order.
	CPRank  *int  `json:"cp_rank,omitempty"`
	CPGroup []int `json:"cp_group,omitempty"`
	TPGroup []int `json:"tp_group"`
	DPGroup []int `json:"dp_group"`
	PPGroup []int `json:"pp_group"`
	// Batch is the replica's sequences per iteration; MicroBatches its
	// micro-batches, of MicroBatch sequences each (the replica's own
	// micro-batch, else the file's).
	Batch        int `json:"batch"`
	MicroBatches int `json:"micro_batches"`
	MicroBatch   int `json:"micro_batch"`
	// Recompute is the rank's activation recomputation (none, selective,
	// full): its replica's own, else the plan's.
	Recompute string `json:"recompute"`
}

// RankFile is the per-rank file a launcher reads.
type RankFile struct {
	WorldSize   int         `json:"world_size"`
	MicroBatch  int         `json:"micro_batch"`
	GlobalBatch int         `json:"global_batch"`
	Nodes       []string    `json:"nodes"` // GPU type of each node
	Ranks       []RankEntry `json:"ranks"`
}

// Ranks lays the plan out on the cluster as the simulator does: each
// type's GPUs in server order, stage by stage, replica by replica, TP
// ranks adjacent, then CP ranks (a stage's TP × CP GPUs consecutive);
// ranks are numbered in that order.
func Ranks(c *train.Cluster, p *train.Plan) (*RankFile, error) {
	if p.StageDP() {
		return groupRanks(c, p)
	}
	f := &RankFile{MicroBatch: p.MicroBatch, GlobalBatch: p.GlobalBatch}
	slots := newGPUSlots(c, f)
	P, D, CP := p.PP(), p.DP(), p.ContextParallel()
	start := make([][]int, D) // first rank of each replica's stage
	for r := range start {
		start[r] = make([]int, P)
	}
	for s := 0; s < P; s++ {
		for r := 0; r < D; r++ {
			pl := p.Replicas[r].Stages[s]
			g, ok := c.GPUType(pl.GPU)
			if !ok {
				return nil, fmt.Errorf("the cluster has no %s", pl.GPU)
			}
			start[r][s] = len(f.Ranks)
			proto := RankEntry{Replica: r, Stage: s, Layers: p.Stages[s], Batch: p.Replicas[r].Batch, MicroBatches: p.Replicas[r].Batch / p.Micro(r), MicroBatch: p.Micro(r), Recompute: p.RecomputeOf(r)}
			if err := slots.place(f, g.Name, pl.TP, CP, proto); err != nil {
				return nil, err
			}
		}
	}
	for i := range f.Ranks {
		e := &f.Ranks[i]
		r, s := e.Replica, e.Stage
		tp := p.Replicas[r].Stages[s].TP
		c := e.tpcp(start[r][s], tp, CP)
		for q := 0; q < D; q++ {
			// the data-parallel peer holding the same shard: same TP rank
			// when the TP degrees match, else the rank that holds its
			// slice; the same CP rank
			tq := p.Replicas[q].Stages[s].TP
			e.DPGroup = append(e.DPGroup, start[q][s]+c*tq+e.TPRank*tq/tp)
		}
		for t := 0; t < P; t++ {
			tt := p.Replicas[r].Stages[t].TP
			e.PPGroup = append(e.PPGroup, start[r][t]+c*tt+e.TPRank*tt/tp)
		}
	}
	f.WorldSize = len(f.Ranks)
	return f, nil
}

// gpuSlots hands out a cluster's GPUs of each type in server order.
type gpuSlots struct {
	c         *train.Cluster
	firstNode map[string][]int // per type: global node index of each of its nodes
	per       map[string]int
	next      map[string]int
}

// newGPUSlots lays out the cluster's nodes, writing each node's type
// into f.
func newGPUSlots(c *train.Cluster, f *RankFile) *gpuSlots {
	g := &gpuSlots{c: c, firstNode: map[string][]int{}, per: map[string]int{}, next: map[string]int{}}
	for _, grp := range c.Groups {
		for n := 0; n < grp.Nodes; n++ {
			g.firstNode[grp.GPU.Name] = append(g.firstNode[grp.GPU.Name], len(f.Nodes))
			f.Nodes = append(f.Nodes, grp.GPU.Name)
		}
		g.per[grp.GPU.Name] = grp.GPUsPerNode
	}
	return g
}

// take is the next GPU of type name: its node and its place there.
func (g *gpuSlots) take(name string) (node, local int, err error) {
	i := g.next[name]
	g.next[name]++
	n := i / g.per[name]
	if n >= len(g.firstNode[name]) {
		return 0, 0, fmt.Errorf("the plan needs more %s GPUs than the cluster's %d", name, g.c.GPUs(name))
	}
	return g.firstNode[name][n], i % g.per[name], nil
}

// place appends a stage's TP × CP GPUs of type gpu as ranks like proto,
// TP ranks innermost, then CP ranks.
func (g *gpuSlots) place(f *RankFile, gpu string, tp, cp int, proto RankEntry) error {
	for j := 0; j < tp*cp; j++ {
		node, local, err := g.take(gpu)
		if err != nil {
			return err
		}
		e := proto
		e.Rank, e.Node, e.LocalGPU, e.GPU, e.TPRank = len(f.Ranks), node, local, gpu, j%tp
		if cp > 1 {
			c := j / tp
			e.CPRank = &c
		}
		f.Ranks = append(f.Ranks, e)
	}
	return nil
}

// tpcp fills rank e's CP ring and TP group, its stage's TP × CP GPUs
// starting at rank first, and returns its CP rank (0 without CP).
func (e *RankEntry) tpcp(first, tp, cp int) int {
	c := 0
	if e.CPRank != nil {
		c = *e.CPRank
		for k := 0; k < cp; k++ {
			e.CPGroup = append(e.CPGroup, first+k*tp+e.TPRank)
		}
	}
	for k := 0; k < tp; k++ {
		e.TPGroup = append(e.TPGroup, first+c*tp+k)
	}
	return c
}

// groupRanks lays out a plan with per-stage data parallelism as the
// simulator does: stage by stage, each stage's ranks in order, TP ranks
// adjacent. A rank's replica is its data-parallel rank in its stage, its
// batch its share of every micro-batch times the micro-batches; its
// pp_group names, in every stage, the rank at the same place in the
// micro-batch (whom it sends to and receives from when the stages' data
// parallelism is the same; re-sharding spreads the exchange otherwise).
func groupRanks(c *train.Cluster, p *train.Plan) (*RankFile, error) {
	f := &RankFile{MicroBatch: p.MicroBatch, GlobalBatch: p.GlobalBatch}
	slots := newGPUSlots(c, f)
	CP := p.ContextParallel()
	start := make([][]int, p.PP()) // first rank of each stage's data-parallel ranks
	tps := make([][]int, p.PP())
	for s, grp := range p.Groups {
		for _, r := range grp.Ranks {
			g, ok := c.GPUType(r.GPU)
			if !ok {
				return nil, fmt.Errorf("the cluster has no %s", r.GPU)
			}
			for k := 0; k < r.Count; k++ {
				d := len(start[s])
				start[s] = append(start[s], len(f.Ranks))
				tps[s] = append(tps[s], r.TP)
				proto := RankEntry{Replica: d, Stage: s, Layers: p.Stages[s], Batch: r.Share * p.Micros(), MicroBatches: p.Micros(), MicroBatch: r.Share, Recompute: p.Recompute}
				if err := slots.place(f, g.Name, r.TP, CP, proto); err != nil {
					return nil, err
				}
			}
		}
	}
	for i := range f.Ranks {
		e := &f.Ranks[i]
		s, d := e.Stage, e.Replica
		tp := tps[s][d]
		c := e.tpcp(start[s][d], tp, CP)
		for q := range start[s] {
			e.DPGroup = append(e.DPGroup, start[s][q]+c*tps[s][q]+e.TPRank*tps[s][q]/tp)
		}
		for t := range start {
			q := d * len(start[t]) / len(start[s])
			e.PPGroup = append(e.PPGroup, start[t][q]+c*tps[t][q]+e.TPRank*tps[t][q]/tp)
		}
	}
	f.WorldSize = len(f.Ranks)
	return f, nil
}

func exportRanks(c *train.Cluster, p *train.Plan) ([]byte, error) {
	f, err := Ranks(c, p)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(f, "", "  ")
}
