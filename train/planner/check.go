package planner

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
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
//     split of megatron/core/utils.py's get_batch_on_this_cp_rank);
//     --max-position-embeddings given and at least the sequence
//     (validate_args); Megatron-FSDP with the fsdp_dtensor checkpoint
//     format, and the sharding the plan's ZeRO stage.
//   - deepspeed: deepspeed/runtime/config.py's batch assertion,
//     train_batch_size = micro-batch × gradient accumulation × dp; ZeRO
//     stage 0–3; its pipeline engine takes ZeRO stage 0 or 1 only
//     (deepspeed/runtime/pipe/engine.py).
//   - torchtitan (v0.2.2, the last release that reads TOML): the keys
//     JobConfig declares and its Literal values (ConfigManager); the
//     degrees multiply to the world size (ParallelDims); the global batch
//     a multiple of the local batch × the data-parallel degree (the
//     trainer), the local batch the micro-batch without pipelining, else
//     a multiple of the pipeline micro-batch; the model parts a multiple
//     of pp, the layers in order, each rank's as many as its stage's.
//   - sailor: inlay's reader of Sailor's plan_config (train.ParseSailorPlan,
//     which follows Sailor's own loader) reads it back to the same stages,
//     placements and batch; every zone is one of Sailor's network files
//     (its simulator looks them up there).
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
		if err := checkSailorZones(data); err != nil {
			return err
		}
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

// sailorZones are the zones of Sailor's network files at eth-easl/sailor
// commit cf2c8e3 (sailor/providers/multizone_bandwidths_het.json,
// gcp/communication_cost.json).
var sailorZones = []string{"us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f", "us-west1-b"}

// checkSailorZones checks the plan_config's zone and each placement's.
func checkSailorZones(data []byte) error {
	var f struct {
		Zone      string `json:"zone"`
		Pipelines []struct {
			TMP [][][]json.RawMessage `json:"tmp_per_stage"`
		} `json:"pipeline_list"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	zones := []string{f.Zone}
	for _, pipe := range f.Pipelines {
		for _, stage := range pipe.TMP {
			for _, rep := range stage {
				var vms [][]any
				if len(rep) == 0 || json.Unmarshal(rep[0], &vms) != nil {
					return fmt.Errorf("tmp_per_stage: want [[[gpu_type, gpus_per_node, zone]], tp]")
				}
				for _, vm := range vms {
					if len(vm) != 3 {
						return fmt.Errorf("tmp_per_stage: want [gpu_type, gpus_per_node, zone], not %v", vm)
					}
					z, _ := vm[2].(string)
					zones = append(zones, z)
				}
			}
		}
	}
	for _, z := range zones {
		if !slices.Contains(sailorZones, z) {
			return fmt.Errorf("zone %q is not in Sailor's network files (%s): its simulator fails with KeyError", z, strings.Join(sailorZones, ", "))
		}
	}
	return nil
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
	"max-position-embeddings": true, "position-embedding-type": true, "untie-embeddings-and-output-weights": true,
	"hidden-dropout": true, "attention-dropout": true, "num-experts": true, "moe-router-topk": true,
	"use-megatron-fsdp": true, "data-parallel-sharding-strategy": true, "ckpt-format": true,
	"optimizer-cpu-offload": true, "use-precision-aware-optimizer": true,
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
	for _, k := range []string{"num-layers", "hidden-size", "num-attention-heads", "max-position-embeddings"} {
		if _, ok := args[k]; !ok {
			return fmt.Errorf("%s argument is None", strings.ReplaceAll(k, "-", "_"))
		}
	}
	if num("max-position-embeddings") < num("seq-length") {
		return fmt.Errorf("max_position_embeddings (%d) must be greater than or equal to seq_length (%d)", num("max-position-embeddings"), num("seq-length"))
	}
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
	_, fsdp := args["use-megatron-fsdp"]
	if fsdp && args["ckpt-format"] != "fsdp_dtensor" {
		return fmt.Errorf("Megatron-FSDP requires the `fsdp_dtensor` checkpointing format")
	}
	// the plan's ZeRO stage: the distributed optimizer shards the optimizer
	// state (1); Megatron-FSDP's strategy the gradients (2) and parameters (3)
	zero := map[string]int{"optim": 1, "optim_grads": 2, "optim_grads_params": 3}[args["data-parallel-sharding-strategy"]]
	if _, ok := args["use-distributed-optimizer"]; ok && !fsdp {
		zero = 1
	}
	if zero != p.Zero || !fsdp && args["data-parallel-sharding-strategy"] != "" {
		return fmt.Errorf("the arguments shard as ZeRO %d, the plan is ZeRO %d", zero, p.Zero)
	}
	_, offload := args["optimizer-cpu-offload"]
	if _, aware := args["use-precision-aware-optimizer"]; offload && !aware {
		return fmt.Errorf("The optimizer cpu offload must be used in conjunction with `--use-precision-aware-optimizer`")
	}
	if offload != p.Offload {
		return fmt.Errorf("optimizer offload %v, the plan's %v", offload, p.Offload)
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

// torchtitanKeys are the keys written, by section, as JobConfig declares
// them at torchtitan v0.2.2 (torchtitan/config/job_config.py), with the
// values a Literal type allows ("" for any); ConfigManager rejects a key
// its dataclass lacks ("Invalid field names").
var torchtitanKeys = map[string]map[string][]string{
	"training": {"local_batch_size": nil, "global_batch_size": nil, "seq_len": nil,
		"mixed_precision_param": {"bfloat16", "float32"}, "enable_cpu_offload": nil},
	"parallelism": {"data_parallel_replicate_degree": nil, "data_parallel_shard_degree": nil,
		"fsdp_reshard_after_forward": {"default", "always", "never"}, "tensor_parallel_degree": nil,
		"pipeline_parallel_degree": nil, "context_parallel_degree": nil, "pipeline_parallel_schedule": nil,
		"pipeline_parallel_microbatch_size": nil, "module_fqns_per_model_part": nil},
	"activation_checkpoint": {"mode": {"selective", "full", "memory_budget", "none"}, "selective_ac_option": nil},
}

// readTOML reads the TOML the torchtitan export writes: [section]
// headers, key = value lines, and arrays (of arrays) of strings over
// several lines; values are kept as written, keyed "section.key".
func readTOML(data []byte) (map[string]string, error) {
	kv := map[string]string{}
	section, key, value, depth := "", "", "", 0
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if depth > 0 {
			value += line
			depth += strings.Count(line, "[") - strings.Count(line, "]")
			if depth == 0 {
				kv[section+"."+key] = value
			}
			continue
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.TrimSpace(line[1 : len(line)-1])
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				return nil, fmt.Errorf("line %d: %q is not key = value in a section", i+1, line)
			}
			key, value = strings.TrimSpace(k), strings.TrimSpace(v)
			if _, dup := kv[section+"."+key]; dup {
				return nil, fmt.Errorf("line %d: %s.%s given twice", i+1, section, key)
			}
			if depth = strings.Count(value, "[") - strings.Count(value, "]"); depth == 0 {
				kv[section+"."+key] = value
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("an array of %s.%s is not closed", section, key)
	}
	return kv, nil
}

// quoted matches one TOML basic string, innerList one list inside a list.
var (
	quoted    = regexp.MustCompile(`"([^"]*)"`)
	innerList = regexp.MustCompile(`\[([^\[\]]*)\]`)
)

func checkTorchtitan(p *train.Plan, data []byte) error {
	kv, err := readTOML(data)
	if err != nil {
		return err
	}
	for k, v := range kv {
		sec, key, _ := strings.Cut(k, ".")
		allowed, ok := torchtitanKeys[sec][key]
		if !ok {
			return fmt.Errorf("Invalid field names in %s: {'%s'} (not a key of torchtitan's JobConfig)", sec, key)
		}
		if allowed != nil && !slices.Contains(allowed, strings.Trim(v, `"`)) {
			return fmt.Errorf("%s = %s: torchtitan's JobConfig takes %s", k, v, strings.Join(allowed, ", "))
		}
	}
	num := func(k string, def int) int {
		if v, ok := kv[k]; ok {
			n, _ := strconv.Atoi(v)
			return n
		}
		return def
	}
	rep, shard := num("parallelism.data_parallel_replicate_degree", 1), num("parallelism.data_parallel_shard_degree", -1)
	tp, pp, cp := num("parallelism.tensor_parallel_degree", 1), num("parallelism.pipeline_parallel_degree", 1), num("parallelism.context_parallel_degree", 1)
	if cp != p.ContextParallel() {
		return fmt.Errorf("context_parallel_degree %d, the plan's cp %d", cp, p.ContextParallel())
	}
	// ParallelDims._validate (torchtitan/distributed/parallel_dims.py)
	for _, d := range []int{rep, tp, pp, cp, shard} {
		if d > 1<<20 {
			return fmt.Errorf("parallel degree %d: more than the plan's %d GPUs", d, p.GPUs())
		}
	}
	if rep < 1 || tp < 1 || pp < 1 || cp < 1 || shard == 0 || shard < -1 {
		return fmt.Errorf("Parallelism degree should be >= 1, except for dp_shard")
	}
	if shard < 0 {
		if shard = p.GPUs() / (rep * cp * tp * pp); shard < 1 {
			return fmt.Errorf("dp_shard must be >= 1")
		}
	}
	if dp := rep * shard; rep*shard*cp*tp*pp != p.GPUs() || dp != p.DP() || pp != p.PP() {
		return fmt.Errorf("Invalid parallel dims: dp_replicate(%d) * dp_shard(%d) * cp(%d) * tp(%d) * pp(%d) != WORLD_SIZE(%d), or not the plan's dp %d and pp %d", rep, shard, cp, tp, pp, p.GPUs(), p.DP(), p.PP())
	}
	// the trainer (torchtitan/train.py): gradient accumulation over local batches
	local, global := num("training.local_batch_size", 8), num("training.global_batch_size", -1)
	if local <= 0 || local > 1<<30 || global%(local*rep*shard) != 0 || global != p.GlobalBatch {
		return fmt.Errorf("global batch size %d must be a multiple of the local batch size %d times the data-parallel degree %d (and the plan's %d)", global, local, rep*shard, p.GlobalBatch)
	}
	if pp == 1 {
		if local != p.MicroBatch {
			return fmt.Errorf("without pipeline parallelism a step runs local_batch_size %d sequences at once; the plan's micro-batch is %d", local, p.MicroBatch)
		}
		return nil
	}
	mb := num("parallelism.pipeline_parallel_microbatch_size", 1)
	if mb <= 0 || local%mb != 0 || mb != p.MicroBatch {
		return fmt.Errorf("Batch size %d must be divisible by microbatch_size %d (the plan's micro-batch %d)", local, mb, p.MicroBatch)
	}
	// the model parts (torchtitan/distributed/pipeline_parallel.py
	// pipeline_module_split): pp × V of them, part k·pp + s on rank s
	var parts [][]string
	outer := strings.TrimSpace(kv["parallelism.module_fqns_per_model_part"])
	if len(outer) < 2 || outer[0] != '[' || outer[len(outer)-1] != ']' {
		return fmt.Errorf("module_fqns_per_model_part = %q: want a list of lists of module names", outer)
	}
	for _, row := range innerList.FindAllStringSubmatch(outer[1:len(outer)-1], -1) {
		var part []string
		for _, q := range quoted.FindAllStringSubmatch(row[1], -1) {
			part = append(part, q[1])
		}
		parts = append(parts, part)
	}
	if len(parts)%pp != 0 {
		return fmt.Errorf("num_stages %d must be evenly divisible by pp_degree %d", len(parts), pp)
	}
	next, count := 0, make([]int, pp)
	for i, part := range parts {
		for _, name := range part {
			if n, ok := strings.CutPrefix(name, "layers."); ok {
				if l, err := strconv.Atoi(n); err != nil || l != next {
					return fmt.Errorf("model part %d: %q where layers.%d comes next", i, name, next)
				}
				next++
				count[i%pp]++
			} else if name != "tok_embeddings" && name != "norm" && name != "output" {
				return fmt.Errorf("model part %d: %q is not a module of torchtitan's decoder", i, name)
			}
		}
	}
	for s := range count {
		if count[s] != p.Stages[s].Count() {
			return fmt.Errorf("rank %d holds %d layers, the plan's stage %d has %d", s, count[s], s, p.Stages[s].Count())
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
		rc := p.Recompute
		if p.StageDP() {
			micro = groupShare(p.Groups[r.Stage], r.Replica)
		} else {
			micro, rc = p.Micro(r.Replica), p.RecomputeOf(r.Replica)
		}
		if r.Recompute != rc {
			return fmt.Errorf("rank %d: recompute %q, its replica's %q", i, r.Recompute, rc)
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
