package train

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Schedule is a pipeline schedule: gpipe, 1f1b, or interleaved 1F1B with
// Chunks model chunks per stage.
type Schedule struct {
	Kind   string `json:"kind"` // "gpipe", "1f1b", "interleaved"
	Chunks int    `json:"chunks,omitempty"`
}

// String writes the schedule as ParseSchedule reads it.
func (s Schedule) String() string {
	if s.Kind == "interleaved" {
		return "interleaved:" + strconv.Itoa(s.Chunks)
	}
	return s.Kind
}

// chunks is the number of model chunks per stage (1 unless interleaved).
func (s Schedule) chunks() int {
	if s.Kind == "interleaved" && s.Chunks > 1 {
		return s.Chunks
	}
	return 1
}

// ParseSchedule reads gpipe, 1f1b or interleaved:V.
func ParseSchedule(s string) (Schedule, error) {
	switch strings.ToLower(s) {
	case "", "1f1b":
		return Schedule{Kind: "1f1b"}, nil
	case "gpipe":
		return Schedule{Kind: "gpipe"}, nil
	}
	if v, ok := strings.CutPrefix(strings.ToLower(s), "interleaved:"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			return Schedule{}, fmt.Errorf("schedule %q: want interleaved:V with V in 1..64", s)
		}
		return Schedule{Kind: "interleaved", Chunks: n}, nil
	}
	return Schedule{}, fmt.Errorf("schedule %q: want gpipe, 1f1b or interleaved:V", s)
}

// Placement is one stage of one replica: its GPU type and tensor-parallel
// degree.
type Placement struct {
	GPU string `yaml:"gpu" json:"gpu"`
	TP  int    `yaml:"tp" json:"tp"`
}

// Replica is one copy of the pipeline (data parallelism): a placement per
// stage and the sequences of the global batch it takes.
type Replica struct {
	Stages []Placement `json:"stages"`
	Batch  int         `json:"batch"`
	// MicroBatch is the replica's own micro-batch in sequences (0: the
	// plan's): unlike replicas each run their batch share in
	// micro-batches their GPUs' memory and speed suit.
	MicroBatch int `json:"micro_batch,omitempty"`
	// Recompute is the replica's own recomputation (empty: the plan's): a
	// type short of memory recomputes while a roomier one need not, as
	// each replica's ranks run their own activation checkpointing.
	Recompute string `json:"recompute,omitempty"`
}

// LayerRange is a stage's transformer layers, First to Last inclusive
// (0-based); the embedding rides with the first stage, the final norm and
// head with the last.
type LayerRange struct {
	First int `json:"first"`
	Last  int `json:"last"`
}

// Count is the number of layers in the range.
func (r LayerRange) Count() int { return r.Last - r.First + 1 }

// Plan is a parallel training plan.
type Plan struct {
	Name string `json:"name,omitempty"`
	// Stages are the pipeline's layer ranges; every replica has the same.
	Stages   []LayerRange `json:"stages"`
	Replicas []Replica    `json:"replicas"`
	// Groups, in place of Replicas, give every stage data-parallel ranks
	// of its own (one group a stage): each micro-batch passes through the
	// stages once, split over each stage's ranks, and is re-sharded
	// between stages whose ranks differ (Metis's device groups).
	Groups []Group `json:"groups,omitempty"`
	// MicroBatch and GlobalBatch are sequences. MicroBatch is a replica's
	// micro-batch; with Groups, the whole micro-batch a stage's ranks
	// share.
	MicroBatch  int      `json:"micro_batch"`
	GlobalBatch int      `json:"global_batch"`
	Schedule    Schedule `json:"schedule"`
	// Recompute is none, selective (the attention core) or full (each
	// layer's forward again before its backward).
	Recompute        string `json:"recompute"`
	SequenceParallel bool   `json:"sequence_parallel"`
	// Zero is the ZeRO stage: 1 shards optimizer states over the
	// data-parallel group (Megatron's distributed optimizer), 2 also the
	// gradients, 3 also the parameters.
	Zero int `json:"zero"`
	// Offload keeps optimizer states in host memory and steps there.
	Offload bool `json:"offload"`
	// Precision is bf16 or fp16 (mixed, FP32 master weights), or FP32 with
	// the matrix products on TF32 tensor cores (tf32) or FP32 cores (fp32).
	Precision string `json:"precision"`
	// FlashAttention fuses the attention core on the stages whose GPU
	// runs it (GPU.FusedAttention: Ampere and newer): no sequence-squared
	// tensors are kept or moved there.
	FlashAttention bool `json:"flash_attention"`
	// OverlapGradReduce reduces gradients in buckets during the backward
	// pass (Megatron's --overlap-grad-reduce, PyTorch DDP); off, the
	// reduction follows the last backward (DeepSpeed's pipeline engine).
	OverlapGradReduce bool    `json:"overlap_grad_reduce"`
	BucketMB          float64 `json:"bucket_mb"`
	// DPAlgorithm is ring or tree.
	DPAlgorithm string `json:"dp_algorithm"`
	// P2PWhole sends each stage's whole activation from every
	// tensor-parallel rank (DeepSpeed's pipeline engine) instead of a
	// 1/tp slice gathered on arrival (Megatron-LM's scatter-gather).
	// Transfers between stages block both stages in either case, as the
	// engines' send and receive calls do.
	P2PWhole bool `json:"p2p_whole"`
	// CP is the context-parallel degree (Megatron-LM's
	// --context-parallel-size): every stage of every replica runs on TP ×
	// CP GPUs, each holding seq/CP tokens of every sequence, with ring
	// attention over the CP ranks. 0 reads as 1.
	CP int `json:"cp,omitempty"`
	// Optimizer is adam (the default, also when empty) or sgd (SGD with
	// momentum: one state a parameter, as convolutional networks train).
	Optimizer string `json:"optimizer,omitempty"`
}

// Micro is replica r's micro-batch: its own, else the plan's.
func (p *Plan) Micro(r int) int {
	if mb := p.Replicas[r].MicroBatch; mb > 0 {
		return mb
	}
	return p.MicroBatch
}

// RecomputeOf is replica r's recomputation: its own, else the plan's.
func (p *Plan) RecomputeOf(r int) string {
	if rc := p.Replicas[r].Recompute; rc != "" {
		return rc
	}
	return p.Recompute
}

// forReplica is p as replica r runs it: with the replica's own
// micro-batch and recomputation as the plan's.
func (p *Plan) forReplica(r int) *Plan {
	if mb, rc := p.Micro(r), p.RecomputeOf(r); mb != p.MicroBatch || rc != p.Recompute {
		q := *p
		q.MicroBatch, q.Recompute = mb, rc
		return &q
	}
	return p
}

// ContextParallel is the plan's context-parallel degree (at least 1).
func (p *Plan) ContextParallel() int { return max(p.CP, 1) }

// PP is the number of pipeline stages.
func (p *Plan) PP() int { return len(p.Stages) }

// DP is the number of replicas (0 for a plan with Groups: see
// StageDP).
func (p *Plan) DP() int { return len(p.Replicas) }

// GPUs is the number of GPUs the plan uses: TP × CP for every stage of
// every replica (or every rank of every group).
func (p *Plan) GPUs() int {
	n := 0
	for _, g := range p.Groups {
		for _, r := range g.Ranks {
			n += r.TP * r.Count
		}
	}
	for _, r := range p.Replicas {
		for _, s := range r.Stages {
			n += s.TP
		}
	}
	return n * p.ContextParallel()
}

// Uniform builds the plan of tp × pp × dp GPUs of one type with the
// layers split as evenly as possible (earlier stages take one more when
// pp does not divide them) and the batch split evenly. A graph network's
// stages are of about equal forward FLOPs, each ending where one tensor
// crosses (Network.EvenCuts).
func Uniform(m *Model, gpu string, tp, pp, dp, micro, global int) (*Plan, error) {
	if tp <= 0 || pp <= 0 || dp <= 0 {
		return nil, fmt.Errorf("tp, pp and dp must be positive")
	}
	if pp > m.Layers {
		return nil, fmt.Errorf("pp %d exceeds the model's %d layers", pp, m.Layers)
	}
	if dp > 1<<20 || tp > 1<<12 || pp > 1<<16 {
		return nil, fmt.Errorf("tp, pp or dp too large")
	}
	p := &Plan{MicroBatch: micro, GlobalBatch: global, Schedule: Schedule{Kind: "1f1b"}, Recompute: "none", Precision: "bf16", DPAlgorithm: "ring", BucketMB: 40}
	p.Stages = EvenStages(m.Layers, pp)
	if m.Net != nil {
		st, ok := m.Net.EvenCuts(pp)
		if !ok {
			return nil, fmt.Errorf("pp %d: %s has fewer places where one tensor crosses between layers than the %d stage boundaries", pp, m.Name, pp-1)
		}
		p.Stages = st
	}
	if global%dp != 0 {
		return nil, fmt.Errorf("global batch %d is not a multiple of dp %d", global, dp)
	}
	for r := 0; r < dp; r++ {
		rep := Replica{Batch: global / dp}
		for s := 0; s < pp; s++ {
			rep.Stages = append(rep.Stages, Placement{GPU: gpu, TP: tp})
		}
		p.Replicas = append(p.Replicas, rep)
	}
	return p, nil
}

// EvenStages splits layers into pp contiguous ranges whose sizes differ by
// at most one, the larger first.
func EvenStages(layers, pp int) []LayerRange {
	out := make([]LayerRange, pp)
	first := 0
	for s := range out {
		n := layers / pp
		if s < layers%pp {
			n++
		}
		out[s] = LayerRange{First: first, Last: first + n - 1}
		first += n
	}
	return out
}

// rawPlan is the YAML form of a plan.
type rawPlan struct {
	Name              string       `yaml:"name"`
	GPU               string       `yaml:"gpu"`
	TP                int          `yaml:"tp"`
	PP                int          `yaml:"pp"`
	DP                int          `yaml:"dp"`
	WorldSize         int          `yaml:"world_size"`
	MicroBatch        int          `yaml:"micro_batch"`
	GlobalBatch       int          `yaml:"global_batch"`
	Schedule          string       `yaml:"schedule"`
	Recompute         string       `yaml:"recompute"`
	SequenceParallel  bool         `yaml:"sequence_parallel"`
	Zero              int          `yaml:"zero"`
	Offload           bool         `yaml:"offload"`
	Precision         string       `yaml:"precision"`
	FlashAttention    bool         `yaml:"flash_attention"`
	OverlapGradReduce bool         `yaml:"overlap_grad_reduce"`
	BucketMB          float64      `yaml:"bucket_mb"`
	DPAlgorithm       string       `yaml:"dp_algorithm"`
	P2PWhole          bool         `yaml:"p2p_whole"`
	CP                *int         `yaml:"cp"`
	Optimizer         string       `yaml:"optimizer"`
	Stages            []rawStage   `yaml:"stages"`
	Replicas          []rawReplica `yaml:"replicas"`
	Groups            []Group      `yaml:"groups"`
}

type rawStage struct {
	Layers string `yaml:"layers"`
}

type rawReplica struct {
	Batch      int         `yaml:"batch"`
	MicroBatch int         `yaml:"micro_batch"`
	Recompute  string      `yaml:"recompute"`
	GPU        string      `yaml:"gpu"`
	TP         int         `yaml:"tp"`
	Stages     []Placement `yaml:"stages"`
}

// PlanOptions are the settings a plan takes when its file or flags leave
// them out.
func (p *Plan) fillDefaults() {
	if p.Schedule.Kind == "" {
		p.Schedule = Schedule{Kind: "1f1b"}
	}
	if p.Recompute == "" {
		p.Recompute = "none"
	}
	if p.Precision == "" {
		p.Precision = "bf16"
	}
	if p.DPAlgorithm == "" {
		p.DPAlgorithm = "ring"
	}
	if p.BucketMB <= 0 {
		p.BucketMB = 40
	}
}

// LoadPlan reads a plan file: a .json file is inlay's plan JSON (what
// `inlay train plan --json` writes, or a bare plan) or Sailor's
// plan_config JSON; anything else inlay's YAML. The model gives the layer count for shorthand plans (tp,
// pp, dp).
func LoadPlan(path string, m *Model) (*Plan, *SailorInfo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("train: %w", err)
	}
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		if p, ok, err := ParsePlanJSON(path, data, m); ok {
			return p, nil, err
		}
		return ParseSailorPlan(path, data, m)
	}
	p, err := ParsePlan(path, data, m)
	return p, nil, err
}

// ParsePlan reads a YAML plan; file names the source in errors. Either the
// shorthand (gpu, tp, pp, dp: even stages, identical replicas, the batch
// split evenly) or stages (layers "A-B") with replicas (batch, and gpu/tp
// for every stage or a placement per stage).
func ParsePlan(file string, data []byte, m *Model) (*Plan, error) {
	var raw rawPlan
	if err := decodeYAML(data, &raw); err != nil {
		return nil, fmt.Errorf("train: %s: %s", file, err)
	}
	p, err := raw.build(m)
	if err != nil {
		return nil, fmt.Errorf("train: %s: %v", file, err)
	}
	return p, nil
}

func (r *rawPlan) build(m *Model) (*Plan, error) {
	sched, err := ParseSchedule(r.Schedule)
	if err != nil {
		return nil, fmt.Errorf("schedule: %v", err)
	}
	var p *Plan
	if len(r.Stages) == 0 && len(r.Replicas) == 0 && len(r.Groups) == 0 {
		if r.TP == 0 {
			r.TP = 1
		}
		if r.PP == 0 {
			r.PP = 1
		}
		if r.DP == 0 {
			r.DP = 1
		}
		if p, err = Uniform(m, r.GPU, r.TP, r.PP, r.DP, r.MicroBatch, r.GlobalBatch); err != nil {
			return nil, err
		}
	} else {
		if r.TP != 0 || r.PP != 0 || r.DP != 0 {
			return nil, fmt.Errorf("tp/pp/dp: give either the shorthand or stages and replicas, not both")
		}
		p = &Plan{MicroBatch: r.MicroBatch, GlobalBatch: r.GlobalBatch}
		for i, s := range r.Stages {
			lr, err := parseLayerRange(s.Layers)
			if err != nil {
				return nil, fmt.Errorf("stages[%d].layers: %v", i, err)
			}
			p.Stages = append(p.Stages, lr)
		}
		if len(p.Stages) == 0 {
			p.Stages = []LayerRange{{0, m.Layers - 1}}
		}
		if len(r.Groups) > 0 && len(r.Replicas) > 0 {
			return nil, fmt.Errorf("groups: give replicas or groups, not both")
		}
		for _, g := range r.Groups {
			g.Ranks = append([]Rank(nil), g.Ranks...)
			for j := range g.Ranks {
				g.Ranks[j].fillDefaults()
			}
			p.Groups = append(p.Groups, g)
		}
		for i, rr := range r.Replicas {
			rep := Replica{Batch: rr.Batch, MicroBatch: rr.MicroBatch, Recompute: strings.ToLower(rr.Recompute)}
			switch {
			case len(rr.Stages) > 0 && (rr.GPU != "" || rr.TP != 0):
				return nil, fmt.Errorf("replicas[%d]: give gpu/tp or stages, not both", i)
			case len(rr.Stages) > 0:
				if len(rr.Stages) != len(p.Stages) {
					return nil, fmt.Errorf("replicas[%d].stages: %d placements for %d stages", i, len(rr.Stages), len(p.Stages))
				}
				rep.Stages = append(rep.Stages, rr.Stages...)
			default:
				tp := rr.TP
				if tp == 0 {
					tp = 1
				}
				for range p.Stages {
					rep.Stages = append(rep.Stages, Placement{GPU: rr.GPU, TP: tp})
				}
			}
			p.Replicas = append(p.Replicas, rep)
		}
		if len(p.Replicas) == 0 && len(p.Groups) == 0 {
			return nil, fmt.Errorf("replicas: at least one is required (or groups, one a stage)")
		}
		if err := p.splitBatch(); err != nil {
			return nil, err
		}
	}
	p.Name = r.Name
	p.Schedule = sched
	p.Recompute = strings.ToLower(r.Recompute)
	p.SequenceParallel = r.SequenceParallel
	p.Zero = r.Zero
	p.Offload = r.Offload
	p.Precision = strings.ToLower(r.Precision)
	p.FlashAttention = r.FlashAttention
	p.OverlapGradReduce = r.OverlapGradReduce
	p.BucketMB = r.BucketMB
	p.DPAlgorithm = strings.ToLower(r.DPAlgorithm)
	p.P2PWhole = r.P2PWhole
	p.Optimizer = strings.ToLower(r.Optimizer)
	if r.CP != nil {
		if *r.CP < 1 {
			return nil, fmt.Errorf("cp: %d must be at least 1", *r.CP)
		}
		p.CP = *r.CP
	}
	p.fillDefaults()
	if r.WorldSize != 0 && r.WorldSize != p.GPUs() {
		if p.CP > 1 {
			return nil, fmt.Errorf("world_size: %d, but the stages and replicas use %d GPUs (dp × pp × tp × cp, cp %d)", r.WorldSize, p.GPUs(), p.CP)
		}
		return nil, fmt.Errorf("world_size: %d, but the stages and replicas use %d GPUs", r.WorldSize, p.GPUs())
	}
	if err := p.Check(m); err != nil {
		return nil, err
	}
	return p, nil
}

// splitBatch gives replicas without a batch an even share of what the
// others leave.
func (p *Plan) splitBatch() error {
	left, open := p.GlobalBatch, 0
	for _, r := range p.Replicas {
		if r.Batch == 0 {
			open++
		}
		left -= r.Batch
	}
	if open == 0 {
		return nil
	}
	if left <= 0 || left%open != 0 {
		return fmt.Errorf("replicas: the %d replicas without a batch cannot share the %d sequences left evenly", open, left)
	}
	for i := range p.Replicas {
		if p.Replicas[i].Batch == 0 {
			p.Replicas[i].Batch = left / open
		}
	}
	return nil
}

func parseLayerRange(s string) (LayerRange, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		b = a
	}
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return LayerRange{}, fmt.Errorf("%q: want FIRST-LAST (0-based, inclusive)", s)
	}
	return LayerRange{First: first, Last: last}, nil
}

// Check validates the plan against the model; the error names the place:
// layers not covered or covered twice, TP not dividing the heads, batch
// shares that do not add up, unknown settings.
func (p *Plan) Check(m *Model) error {
	if len(p.Stages) == 0 {
		return fmt.Errorf("stages: none")
	}
	next := 0
	for i, s := range p.Stages {
		switch {
		case s.First < next:
			return fmt.Errorf("stages[%d]: layer %d is covered twice (stage %d ends at %d)", i, s.First, i-1, next-1)
		case s.First > next:
			return fmt.Errorf("stages[%d]: layers %d-%d are not covered", i, next, s.First-1)
		case s.Last >= m.Layers:
			return fmt.Errorf("stages[%d]: layer %d is past the model's last layer %d", i, s.Last, m.Layers-1)
		}
		next = s.Last + 1
	}
	if next != m.Layers {
		return fmt.Errorf("stages: layers %d-%d are not covered", next, m.Layers-1)
	}
	if p.MicroBatch <= 0 {
		return fmt.Errorf("micro_batch must be positive")
	}
	if p.GlobalBatch <= 0 {
		return fmt.Errorf("global_batch must be positive")
	}
	v := p.Schedule.chunks()
	if len(p.Groups) > 0 {
		if err := p.checkGroups(m); err != nil {
			return err
		}
	} else if err := p.checkReplicas(m); err != nil {
		return err
	}
	if m.Net != nil {
		if err := p.checkNet(m); err != nil {
			return err
		}
	}
	if err := p.checkCP(m); err != nil {
		return err
	}
	if v > 1 {
		for i, s := range p.Stages {
			if s.Count()%v != 0 {
				return fmt.Errorf("stages[%d]: %d layers do not split into %d interleaved chunks", i, s.Count(), v)
			}
		}
	}
	return p.checkSettings()
}

// checkReplicas checks the replicas' placements, batches and
// micro-batches.
func (p *Plan) checkReplicas(m *Model) error {
	total := 0
	v := p.Schedule.chunks()
	for r, rep := range p.Replicas {
		if len(rep.Stages) != len(p.Stages) {
			return fmt.Errorf("replicas[%d]: %d placements for %d stages", r, len(rep.Stages), len(p.Stages))
		}
		if rep.MicroBatch < 0 || rep.MicroBatch > 1<<20 {
			return fmt.Errorf("replicas[%d].micro_batch: %d must be in 0..%d (0: the plan's)", r, rep.MicroBatch, 1<<20)
		}
		if err := checkRecompute(rep.Recompute, true); err != nil {
			return fmt.Errorf("replicas[%d].%v", r, err)
		}
		if rep.Batch <= 0 || rep.Batch%p.Micro(r) != 0 {
			return fmt.Errorf("replicas[%d].batch: %d is not a positive multiple of the micro-batch %d", r, rep.Batch, p.Micro(r))
		}
		mb := rep.Batch / p.Micro(r)
		if v > 1 && mb%len(p.Stages) != 0 {
			return fmt.Errorf("replicas[%d]: the interleaved schedule needs the micro-batches (%d) to be a multiple of pp (%d)", r, mb, len(p.Stages))
		}
		if mb > 1<<20 {
			return fmt.Errorf("replicas[%d]: %d micro-batches is too many", r, mb)
		}
		total += rep.Batch
		for s, pl := range rep.Stages {
			if err := checkTP(m, pl.TP); err != nil {
				return fmt.Errorf("replicas[%d].stages[%d].tp: %v", r, s, err)
			}
		}
	}
	if total != p.GlobalBatch {
		return fmt.Errorf("replicas: batches add up to %d, not the global batch %d", total, p.GlobalBatch)
	}
	return nil
}

// checkTP checks a tensor-parallel degree against the model's heads.
func checkTP(m *Model, tp int) error {
	switch {
	case tp <= 0 || tp > 1<<12:
		return fmt.Errorf("%d must be in 1..4096", tp)
	case m.Heads%tp != 0:
		return fmt.Errorf("%d does not divide the %d attention heads", tp, m.Heads)
	case m.KVHeads > 0 && m.KVHeads%tp != 0 && tp%m.KVHeads != 0:
		return fmt.Errorf("%d and the %d key/value heads do not divide one another", tp, m.KVHeads)
	}
	return nil
}

// checkSettings checks the plan-wide settings.
func (p *Plan) checkSettings() error {
	if err := checkRecompute(p.Recompute, false); err != nil {
		return err
	}
	switch p.Precision {
	case "bf16", "fp16", "fp32", "tf32":
	default:
		return fmt.Errorf("precision: %q: want bf16, fp16, tf32 or fp32", p.Precision)
	}
	switch p.DPAlgorithm {
	case "ring", "tree":
	default:
		return fmt.Errorf("dp_algorithm: %q: want ring or tree", p.DPAlgorithm)
	}
	switch p.Optimizer {
	case "", "adam", "sgd":
	default:
		return fmt.Errorf("optimizer: %q: want adam or sgd", p.Optimizer)
	}
	if p.Zero < 0 || p.Zero > 3 {
		return fmt.Errorf("zero: %d: want 0, 1, 2 or 3", p.Zero)
	}
	if !(p.BucketMB > 0) || p.BucketMB > 1e6 {
		return fmt.Errorf("bucket_mb: must be in (0, 1e6]")
	}
	return nil
}

// checkRecompute checks a recomputation setting (empty allowed where the
// plan's applies).
func checkRecompute(rc string, empty bool) error {
	switch {
	case rc == "" && empty, rc == "none", rc == "selective", rc == "full":
		return nil
	}
	return fmt.Errorf("recompute: %q: want none, selective or full", rc)
}

// checkCP checks the context-parallel degree: positive, and splitting the
// sequence into CP equal chunks (Megatron-LM's load-balanced split wants
// 2 × CP; with CP chunks only, causal attention loads the last rank most).
func (p *Plan) checkCP(m *Model) error {
	switch {
	case p.CP < 0 || p.CP > 1<<10:
		return fmt.Errorf("cp: %d must be in 1..1024", p.CP)
	case p.CP > 1 && m.Seq%p.CP != 0:
		return fmt.Errorf("cp: %d does not divide the sequence length %d (Megatron-LM's load-balanced split wants a multiple of 2 × cp = %d)", p.CP, m.Seq, 2*p.CP)
	case p.CP > 1 && m.Seq/p.CP < 2:
		return fmt.Errorf("cp: %d leaves fewer than 2 tokens of the %d-token sequence a rank", p.CP, m.Seq)
	}
	return nil
}

// balancedCP reports whether the sequence splits into 2 × CP chunks, the
// load-balanced split under which every CP rank does the same causal
// attention work.
func (p *Plan) balancedCP(m *Model) bool {
	cp := p.ContextParallel()
	return cp == 1 || m.Seq%(2*cp) == 0
}
