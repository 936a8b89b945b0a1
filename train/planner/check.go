package planner

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/train"
)

// CheckExport re-implements the consumer's own consistency checks on an
// exported form and checks that it says what the plan says.
//
//   - megatron: NVIDIA/Megatron-LM at commit d98e8a6: the argument names
//     of megatron/training/arguments.py; its validate_args (layers
//     divisible by pp without uneven stages); TransformerConfig's uneven
//     pipeline check in megatron/core/transformer/transformer_config.py
//     (first/last > 0, the middle layers divisible by the middle stages,
//     none left without middle stages); the micro-batch calculator's
//     global batch divisible by micro-batch × dp
//     (megatron/core/num_microbatches_calculator.py); world size = tp ×
//     pp × cp × dp (megatron/core/parallel_state.py); with context
//     parallelism the sequence a multiple of 2 × cp (the load-balanced
//     split of megatron/core/utils.py's get_batch_on_this_cp_rank).
//   - deepspeed: deepspeed/runtime/config.py's batch assertion,
//     train_batch_size = micro-batch × gradient accumulation × dp; ZeRO
//     stage 0–3; its pipeline engine takes ZeRO stage 0 or 1 only
//     (deepspeed/runtime/pipe/engine.py).
//   - torchtitan: the parallel degrees (context_parallel_degree too)
//     multiply to the world size; the
//     global batch is the local batch × the data-parallel degree; the
//     local batch a multiple of the pipeline micro-batch; pp − 1 split
//     points, increasing.
//   - sailor: inlay's reader of Sailor's plan_config (train.ParseSailorPlan,
//     which follows Sailor's own loader) reads it back to the same stages,
//     placements and batch.
//   - ranks: every rank once, within the cluster's GPUs, TP groups inside
//     one server, data-parallel groups one rank per replica, CP groups of
//     cp ranks with the CP ranks 0..cp−1 (when cp > 1), batches adding up
//     to the global batch.
func CheckExport(format string, m *train.Model, c *train.Cluster, p *train.Plan, data []byte) error {
	switch format {
	case "megatron":
		return checkMegatron(m, p, data)
	case "deepspeed":
		return checkDeepSpeed(p, data)
	case "torchtitan":
		return checkTorchtitan(p, data)
	case "sailor":
		q, _, err := train.ParseSailorPlan("export", data, m)
		if err != nil {
			return err
		}
		if fmt.Sprint(q.Stages) != fmt.Sprint(p.Stages) || q.GlobalBatch != p.GlobalBatch || q.MicroBatch != p.MicroBatch || q.DP() != p.DP() {
			return fmt.Errorf("read back as a different plan")
		}
		for r := range q.Replicas {
			if fmt.Sprint(q.Replicas[r]) != fmt.Sprint(p.Replicas[r]) {
				return fmt.Errorf("replica %d read back as %v, not %v", r, q.Replicas[r], p.Replicas[r])
			}
		}
		return nil
	case "ranks":
		return checkRanks(c, p, data)
	}
	return fmt.Errorf("unknown form %q", format)
}

var megatronArg = regexp.MustCompile(`^--([a-z0-9-]+)(?: (\S+))?$`)

// megatronNames are the argument names written, as arguments.py at
// d98e8a6 defines them.
var megatronNames = map[string]bool{
	"num-layers": true, "hidden-size": true, "num-attention-heads": true, "seq-length": true, "ffn-hidden-size": true,
	"tensor-model-parallel-size": true, "pipeline-model-parallel-size": true, "micro-batch-size": true, "global-batch-size": true,
	"decoder-first-pipeline-num-layers": true, "decoder-last-pipeline-num-layers": true, "recompute-granularity": true,
	"recompute-method": true, "recompute-num-layers": true, "sequence-parallel": true, "use-distributed-optimizer": true,
	"overlap-grad-reduce": true, "use-flash-attn": true, "bf16": true, "fp16": true, "group-query-attention": true,
	"num-query-groups": true, "swiglu": true, "num-virtual-stages-per-pipeline-rank": true, "context-parallel-size": true,
}

func checkMegatron(m *train.Model, p *train.Plan, data []byte) error {
	args := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "\\"))
		g := megatronArg.FindStringSubmatch(line)
		if g == nil || !megatronNames[g[1]] {
			return fmt.Errorf("%q is not an argument of Megatron-LM's arguments.py", line)
		}
		args[g[1]] = g[2]
	}
	num := func(k string) int { n, _ := strconv.Atoi(args[k]); return n }
	L, tp, pp, mb, gb := num("num-layers"), num("tensor-model-parallel-size"), num("pipeline-model-parallel-size"), num("micro-batch-size"), num("global-batch-size")
	if L != m.Layers || pp != p.PP() || mb != p.MicroBatch || gb != p.GlobalBatch {
		return fmt.Errorf("layers, pp or batch differ from the plan")
	}
	_, hasF := args["decoder-first-pipeline-num-layers"]
	_, hasL := args["decoder-last-pipeline-num-layers"]
	if !hasF && !hasL && L%pp != 0 {
		return fmt.Errorf("Number of layers should be divisible by the pipeline-model-parallel size")
	}
	mid, midPP := L, pp
	if hasF {
		if num("decoder-first-pipeline-num-layers") <= 0 {
			return fmt.Errorf("num_layers_in_first_pipeline_stage must be larger than 0")
		}
		mid -= num("decoder-first-pipeline-num-layers")
		midPP--
	}
	if hasL {
		if num("decoder-last-pipeline-num-layers") <= 0 {
			return fmt.Errorf("num_layers_in_last_pipeline_stage must be larger than 0")
		}
		mid -= num("decoder-last-pipeline-num-layers")
		midPP--
	}
	if (mid != 0) != (midPP != 0) {
		return fmt.Errorf("Mismatch: %d middle layers remaining but %d middle PP stages available", mid, midPP)
	}
	if midPP > 0 && mid%midPP != 0 {
		return fmt.Errorf("number of layers at middle stage: %d must be divisible by the middle pipeline model parallel size %d", mid, midPP)
	}
	cp := max(num("context-parallel-size"), 1)
	if cp != p.ContextParallel() {
		return fmt.Errorf("context-parallel size %d, the plan's cp %d", cp, p.ContextParallel())
	}
	if cp > 1 && m.Seq%(2*cp) != 0 {
		return fmt.Errorf("sequence length %d is not a multiple of 2 × context-parallel size %d", m.Seq, cp)
	}
	dp := p.GPUs() / (tp * pp * cp)
	if tp*pp*cp*dp != p.GPUs() {
		return fmt.Errorf("world size %d is not divisible by tp %d × pp %d × cp %d", p.GPUs(), tp, pp, cp)
	}
	if gb%(mb*dp) != 0 {
		return fmt.Errorf("global batch size (%d) is not divisible by micro batch size (%d) times data parallel size (%d)", gb, mb, dp)
	}
	if m.Heads%tp != 0 {
		return fmt.Errorf("num_attention_heads (%d) must be a multiple of tensor_model_parallel_size (%d)", m.Heads, tp)
	}
	if args["recompute-granularity"] == "full" && args["recompute-method"] == "" {
		return fmt.Errorf("full recompute needs --recompute-method")
	}
	// the stages Megatron-LM builds are the plan's
	for s, r := range p.Stages {
		want := mid / max(midPP, 1)
		switch {
		case s == 0 && hasF:
			want = num("decoder-first-pipeline-num-layers")
		case s == pp-1 && hasL:
			want = num("decoder-last-pipeline-num-layers")
		case !hasF && !hasL:
			want = L / pp
		}
		if r.Count() != want {
			return fmt.Errorf("stage %d: Megatron-LM builds %d layers, the plan has %d", s, want, r.Count())
		}
	}
	return nil
}

func checkDeepSpeed(p *train.Plan, data []byte) error {
	var cfg deepSpeedConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return err
	}
	dp := p.DP()
	if cfg.TrainBatchSize != cfg.MicroBatch*cfg.GradAccum*dp {
		return fmt.Errorf("Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size %d != %d * %d * %d", cfg.TrainBatchSize, cfg.MicroBatch, cfg.GradAccum, dp)
	}
	stage, _ := cfg.Zero["stage"].(float64)
	if stage < 0 || stage > 3 {
		return fmt.Errorf("zero_optimization.stage %v: want 0-3", stage)
	}
	if cfg.Pipeline != nil && stage >= 2 {
		return fmt.Errorf("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism")
	}
	if cfg.FP16 != nil && cfg.BF16 != nil {
		return fmt.Errorf("fp16 and bf16 cannot both be enabled")
	}
	if cfg.TrainBatchSize != p.GlobalBatch || cfg.MicroBatch != p.MicroBatch {
		return fmt.Errorf("batch differs from the plan")
	}
	return nil
}

var tomlLine = regexp.MustCompile(`^([a-z_]+) = (.+)$`)

func checkTorchtitan(p *train.Plan, data []byte) error {
	kv := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if g := tomlLine.FindStringSubmatch(strings.TrimSpace(line)); g != nil {
			kv[g[1]] = g[2]
		}
	}
	num := func(k string) int { n, _ := strconv.Atoi(kv[k]); return n }
	dp, tp, pp := num("data_parallel_shard_degree")*max(num("data_parallel_replicate_degree"), 1), num("tensor_parallel_degree"), num("pipeline_parallel_degree")
	cp := max(num("context_parallel_degree"), 1)
	if cp != p.ContextParallel() {
		return fmt.Errorf("context_parallel_degree %d, the plan's cp %d", cp, p.ContextParallel())
	}
	if dp*tp*pp*cp != p.GPUs() {
		return fmt.Errorf("parallel degrees %d × %d × %d × %d do not make the world size %d", dp, tp, pp, cp, p.GPUs())
	}
	if num("global_batch_size") != num("local_batch_size")*dp {
		return fmt.Errorf("global batch %d is not local batch %d × dp %d", num("global_batch_size"), num("local_batch_size"), dp)
	}
	if pp > 1 {
		if num("local_batch_size")%num("pipeline_parallel_microbatch_size") != 0 {
			return fmt.Errorf("local batch not a multiple of the pipeline micro-batch")
		}
		pts := strings.Split(strings.Trim(kv["pipeline_parallel_split_points"], "[]"), ",")
		if len(pts) != pp-1 {
			return fmt.Errorf("%d split points for %d stages", len(pts), pp)
		}
		last := 0
		for i, s := range pts {
			n, err := strconv.Atoi(strings.TrimPrefix(strings.Trim(strings.TrimSpace(s), `"`), "layers."))
			if err != nil || n <= last || n != p.Stages[i+1].First {
				return fmt.Errorf("split point %q", s)
			}
			last = n
		}
	}
	return nil
}

func checkRanks(c *train.Cluster, p *train.Plan, data []byte) error {
	var f RankFile
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	if f.WorldSize != p.GPUs() || len(f.Ranks) != f.WorldSize {
		return fmt.Errorf("world size %d, plan %d GPUs", f.WorldSize, p.GPUs())
	}
	seen := map[[2]int]bool{}
	batch := map[[2]int]int{} // per stage and replica
	for i, r := range f.Ranks {
		if r.Rank != i || r.Node < 0 || r.Node >= len(f.Nodes) || f.Nodes[r.Node] != r.GPU {
			return fmt.Errorf("rank %d: bad rank, node or GPU type", i)
		}
		if seen[[2]int{r.Node, r.LocalGPU}] {
			return fmt.Errorf("rank %d: GPU %d of node %d is used twice", i, r.LocalGPU, r.Node)
		}
		seen[[2]int{r.Node, r.LocalGPU}] = true
		for _, q := range r.TPGroup {
			if f.Ranks[q].Node != r.Node {
				return fmt.Errorf("rank %d: its TP group leaves node %d", i, r.Node)
			}
		}
		dp, micro := p.DP(), 0
		if p.StageDP() {
			if r.Stage < 0 || r.Stage >= p.PP() {
				return fmt.Errorf("rank %d: stage %d of %d", i, r.Stage, p.PP())
			}
			dp = p.Groups[r.Stage].DP()
		}
		if len(r.DPGroup) != dp || len(r.PPGroup) != p.PP() {
			return fmt.Errorf("rank %d: groups of the wrong size", i)
		}
		if err := checkCPRank(f.Ranks, i, p.ContextParallel()); err != nil {
			return err
		}
		if r.Replica < 0 || r.Replica >= dp {
			return fmt.Errorf("rank %d: replica %d of %d", i, r.Replica, dp)
		}
		if p.StageDP() {
			micro = groupShare(p.Groups[r.Stage], r.Replica)
		} else {
			micro = p.Micro(r.Replica)
		}
		if r.MicroBatch != micro || r.MicroBatch*r.MicroBatches != r.Batch {
			return fmt.Errorf("rank %d: micro-batches of %d × %d do not make its replica's batch of %d (micro-batch %d)", i, r.MicroBatches, r.MicroBatch, r.Batch, micro)
		}
		batch[[2]int{r.Stage, r.Replica}] = r.Batch
	}
	// every stage (one for replicas, which share their stages) takes the
	// global batch
	total := map[int]int{}
	for k, b := range batch {
		if p.StageDP() || k[0] == 0 {
			total[k[0]] += b
		}
	}
	for s := range total {
		if total[s] != p.GlobalBatch {
			return fmt.Errorf("batches add up to %d, not %d", total[s], p.GlobalBatch)
		}
	}
	_ = c
	return nil
}

// groupShare is the share of data-parallel rank d of a stage's group.
func groupShare(g train.Group, d int) int {
	for _, r := range g.Ranks {
		if d < r.Count {
			return r.Share
		}
		d -= r.Count
	}
	return -1
}

// checkCPRank checks rank i's context-parallel ring: none without CP;
// else cp ranks of its replica and stage, the i-th of them at CP rank i,
// and rank i among them at its own CP rank.
func checkCPRank(ranks []RankEntry, i, cp int) error {
	r := ranks[i]
	if cp <= 1 {
		if r.CPRank != nil || len(r.CPGroup) > 0 {
			return fmt.Errorf("rank %d: a CP rank in a plan without context parallelism", i)
		}
		return nil
	}
	if r.CPRank == nil || *r.CPRank < 0 || *r.CPRank >= cp || len(r.CPGroup) != cp || r.CPGroup[*r.CPRank] != i {
		return fmt.Errorf("rank %d: its CP rank and group do not make a ring of %d", i, cp)
	}
	for k, q := range r.CPGroup {
		if q < 0 || q >= len(ranks) || ranks[q].CPRank == nil || *ranks[q].CPRank != k || ranks[q].Replica != r.Replica || ranks[q].Stage != r.Stage {
			return fmt.Errorf("rank %d: CP group member %d is not CP rank %d of its replica and stage", i, q, k)
		}
	}
	return nil
}
