// Package published reads published measurements of training iterations
// (vTrain's single-node runs, Korthikanti et al.'s Table 5, Megatron-LM
// SC'21 Table 1, Sailor's GH200 runs), turns each row into a model, a
// cluster and a plan for the train package, fits the few efficiency
// parameters per GPU type to them, and scores the fit on rows it never saw
// (leave-one-out, or ten folds for large sets).
package published

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/internal/loadfile"
	"github.com/inlay-dev/inlay/train"
)

// Case is one measured iteration: what ran, on what, and what it took.
type Case struct {
	// Set names the data set ("vtrain", "korthikanti", "sc21", "sailor");
	// Label the row within it.
	Set   string
	Label string
	// Group ties measurements of one row together (Korthikanti's two
	// recomputation settings): leave-one-out leaves out a whole group.
	Group   string
	Model   train.Model
	Cluster *train.Cluster
	Plan    *train.Plan
	// GPU is the type whose efficiency the case informs.
	GPU string
	// MeasuredS is the measured iteration time; MeasuredMemBytes the
	// measured peak memory per GPU (0: not measured).
	MeasuredS        float64
	MeasuredMemBytes float64
	// Shape names the model shape (for rank correlation within a shape).
	Shape string
	// Flagged says why the data's README doubts the row (empty: it does
	// not); cross-validation leaves flagged rows out unless asked.
	Flagged string
}

// Load reads a published data file; the kind is told by its header.
func Load(path string) ([]Case, error) {
	return loadfile.Read("published", path, Parse)
}

// Parse reads a published data file's bytes; file names it in errors.
func Parse(file string, data []byte) ([]Case, error) {
	rd := csv.NewReader(bytes.NewReader(data))
	rd.FieldsPerRecord = -1
	header, err := rd.Read()
	if err != nil {
		return nil, fmt.Errorf("published: %s: %v", file, err)
	}
	t := &table{file: filepath.Base(file), col: map[string]int{}}
	for i, h := range header {
		t.col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	err = eachRecord(rd, file, func(line int, rec []string) error {
		if len(rec) != len(header) {
			return fmt.Errorf("published: %s:%d: %d fields, the header has %d", file, line, len(rec), len(header))
		}
		t.rows = append(t.rows, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var read func(*table) ([]Case, error)
	switch {
	case t.has("iteration_ms", "hidden_size", "attention_heads"):
		read = readVTrain
	case t.has("full_recompute_s", "selective_sp_s"):
		read = readKorthikanti
	case t.has("tflops_per_gpu", "batch"):
		read = readSC21
	case t.has("measured_iteration_s", "layers_per_stage"):
		read = readSailor
	default:
		return nil, fmt.Errorf("published: %s: not a known data set (vTrain, Korthikanti Table 5, Megatron-LM SC'21 Table 1, Sailor GH200)", file)
	}
	cases, err := read(t)
	if err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("published: %s: no rows", file)
	}
	return cases, nil
}

// eachRecord calls each with every record after the header and its line
// (the header is line 1); a read error names file.
func eachRecord(rd *csv.Reader, file string, each func(line int, rec []string) error) error {
	for line := 2; ; line++ {
		rec, err := rd.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("published: %s: %v", file, err)
		}
		if err := each(line, rec); err != nil {
			return err
		}
	}
}

type table struct {
	file string
	col  map[string]int
	rows [][]string
	row  int
}

func (t *table) has(cols ...string) bool {
	for _, c := range cols {
		if _, ok := t.col[c]; !ok {
			return false
		}
	}
	return true
}

// fieldErr is a one-line error at the current row and column.
func (t *table) fieldErr(name, msg string) error {
	return fmt.Errorf("published: %s:%d: %s: %s", t.file, t.row+2, name, msg)
}

func (t *table) str(name string) (string, error) {
	i, ok := t.col[name]
	if !ok {
		return "", fmt.Errorf("published: %s: no column %q", t.file, name)
	}
	return strings.TrimSpace(t.rows[t.row][i]), nil
}

func (t *table) int(name string) (int, error) {
	s, err := t.str(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 1<<24 {
		return 0, t.fieldErr(name, fmt.Sprintf("%q is not a positive integer", s))
	}
	return n, nil
}

func (t *table) float(name string) (float64, error) {
	s, err := t.str(name)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || v > 1e30 {
		return 0, t.fieldErr(name, fmt.Sprintf("%q is not a positive number", s))
	}
	return v, nil
}

// ints reads several integer columns.
func (t *table) ints(names ...string) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		v, err := t.int(n)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func gpu(name string) train.GPU {
	g, ok := train.LookupGPU(name)
	if !ok {
		panic("published: no GPU type " + name) // the catalogue is embedded
	}
	return g
}

// selene is NVIDIA's Selene (Megatron-LM SC'21 §5, Korthikanti et al.):
// DGX A100 80 GB servers of 8 GPUs on NVSwitch (600 GB/s bidirectional per
// GPU, 300 one way) with 8 × 200 Gbit/s HDR InfiniBand per server.
func selene(gpus int) (*train.Cluster, error) {
	return train.UniformCluster(gpu("A100-80"), gpus, 8, 300, 200)
}

// gptModel is a Megatron-LM GPT of the given shape.
func gptModel(hidden, layers, heads, seq, vocab int) (train.Model, error) {
	return train.ParseModelLine(fmt.Sprintf("gpt:hidden=%d,layers=%d,heads=%d,seq=%d,vocab=%d", hidden, layers, heads, seq, vocab))
}

// uniformPlan is tp × pp × dp with even stages, FP16 and full
// recomputation unless changed.
func uniformPlan(m *train.Model, tp, pp, dp, micro, global int) (*train.Plan, error) {
	p, err := train.Uniform(m, "", tp, pp, dp, micro, global)
	if err != nil {
		return nil, err
	}
	p.Precision = "fp16"
	p.Recompute = "full"
	return p, nil
}

// readVTrain reads vTrain's single-node runs (Megatron-DeepSpeed on one
// node of 8 A100s, vTrain's validation configs: 150 GB/s inside the node,
// 800 Gbit/s out, full recomputation, 1F1B, no gradient buckets, vocabulary
// 50,257). vTrain does not say 40 or 80 GB; the GPU table files it under
// A100-40.
func readVTrain(t *table) ([]Case, error) {
	var out []Case
	for t.row = 0; t.row < len(t.rows); t.row++ {
		v, err := t.ints("gpus", "global_batch", "micro_batch", "hidden_size", "attention_heads", "layers", "seq_len", "tp", "dp", "pp")
		if err != nil {
			return nil, err
		}
		ms, err := t.float("iteration_ms")
		if err != nil {
			return nil, err
		}
		gpus, global, micro, hidden, heads, layers, seq, tp, dp, pp := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]
		if tp*dp*pp != gpus {
			return nil, t.fieldErr("gpus", fmt.Sprintf("%d is not tp·dp·pp = %d", gpus, tp*dp*pp))
		}
		m, err := gptModel(hidden, layers, heads, seq, 50257)
		if err != nil {
			return nil, t.fieldErr("hidden_size", err.Error())
		}
		c, err := train.UniformCluster(gpu("A100-40"), gpus, 8, 150, 800.0/8)
		if err != nil {
			return nil, t.fieldErr("gpus", err.Error())
		}
		p, err := uniformPlan(&m, tp, pp, dp, micro, global)
		if err != nil {
			return nil, t.fieldErr("tp", err.Error())
		}
		if err := p.Check(&m); err != nil {
			return nil, t.fieldErr("micro_batch", err.Error())
		}
		label := fmt.Sprintf("row %d: h%d L%d b%d/%d tp%d pp%d dp%d", t.row+1, hidden, layers, micro, global, tp, pp, dp)
		out = append(out, Case{Set: "vtrain", Label: label, Group: label, Model: m, Cluster: c, Plan: p, GPU: "A100-40", MeasuredS: ms / 1e3,
			Shape: fmt.Sprintf("h%d-L%d", hidden, layers)})
	}
	return out, nil
}

// readKorthikanti reads Table 5 of Korthikanti et al. (MLSys'23) as
// Calculon has it: each row twice, with full recomputation and with
// sequence parallelism and selective recomputation.
func readKorthikanti(t *table) ([]Case, error) {
	var out []Case
	for t.row = 0; t.row < len(t.rows); t.row++ {
		v, err := t.ints("hidden", "heads", "layers", "seq", "ffn_hidden", "gpus", "tp", "pp", "dp", "global_batch", "micro_batch", "pipeline_interleaving")
		if err != nil {
			return nil, err
		}
		hidden, heads, layers, seq, ffn, gpus, tp, pp, dp, global, micro, inter := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]
		name, _ := t.str("model")
		m, err := gptModel(hidden, layers, heads, seq, 51200)
		if err != nil {
			return nil, t.fieldErr("hidden", err.Error())
		}
		m.FFN = ffn
		c, err := selene(gpus)
		if err != nil {
			return nil, t.fieldErr("gpus", err.Error())
		}
		for _, variant := range []struct{ col, recompute string }{{"full_recompute_s", "full"}, {"selective_sp_s", "selective"}} {
			s, err := t.float(variant.col)
			if err != nil {
				return nil, err
			}
			p, err := uniformPlan(&m, tp, pp, dp, micro, global)
			if err != nil {
				return nil, t.fieldErr("tp", err.Error())
			}
			p.Recompute = variant.recompute
			p.SequenceParallel = variant.recompute == "selective"
			if inter > 1 {
				p.Schedule = train.Schedule{Kind: "interleaved", Chunks: inter}
			}
			if err := p.Check(&m); err != nil {
				return nil, t.fieldErr("pipeline_interleaving", err.Error())
			}
			out = append(out, Case{Set: "korthikanti", Label: name + " " + variant.recompute, Group: name, Model: m, Cluster: c, Plan: p,
				GPU: "A100-80", MeasuredS: s, Shape: name})
		}
	}
	return out, nil
}

// sc21Run is how Megatron-LM ran one row of SC'21 Table 1, from its
// examples/sc21/run_table_1.sh (MBS, --num-layers-per-virtual-pipeline-stage,
// DDP): the micro-batch, the layers of a virtual pipeline stage (0: no
// interleaving) and whether PyTorch's DDP reduced the gradients (DDP=torch:
// buckets of 25 MB during the last micro-batch's backward; DDP=local:
// Megatron's own, after the backward).
type sc21Run struct {
	micro, virtualLayers int
	torchDDP             bool
}

// sc21Runs are the script's runs by hidden size and layers.
var sc21Runs = map[[2]int]sc21Run{
	{2304, 24}: {16, 0, true}, {3072, 30}: {16, 0, true}, {4096, 36}: {16, 0, true}, {6144, 40}: {8, 0, true},
	{8192, 48}: {4, 0, false}, {10240, 60}: {2, 5, false}, {12288, 80}: {2, 5, false}, {16384, 96}: {1, 3, false},
	{20480, 105}: {1, 1, false}, {25600, 128}: {1, 0, false},
}

// readSC21 reads Table 1 of Narayanan et al. (SC'21): the iteration time
// is the paper's FLOPs (Eq. 3, counting the recomputation) over the GPUs
// times the achieved rate. Vocabulary 51,200, sequence 2,048, full
// recomputation, FP16; the micro-batch, the interleaving and the gradient
// reduction as Megatron-LM's script for the table ran them (sc21Runs;
// a shape it does not list: micro-batch 1, 1F1B, Megatron's reduction).
func readSC21(t *table) ([]Case, error) {
	var out []Case
	for t.row = 0; t.row < len(t.rows); t.row++ {
		v, err := t.ints("heads", "hidden", "layers", "tp", "pp", "gpus", "batch")
		if err != nil {
			return nil, err
		}
		heads, hidden, layers, tp, pp, gpus, batch := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
		x, err := t.float("tflops_per_gpu")
		if err != nil {
			return nil, err
		}
		if gpus%(tp*pp) != 0 {
			return nil, t.fieldErr("gpus", fmt.Sprintf("%d is not a multiple of tp·pp = %d", gpus, tp*pp))
		}
		dp := gpus / (tp * pp)
		const seq, vocab = 2048, 51200
		m, err := gptModel(hidden, layers, heads, seq, vocab)
		if err != nil {
			return nil, t.fieldErr("hidden", err.Error())
		}
		c, err := selene(gpus)
		if err != nil {
			return nil, t.fieldErr("gpus", err.Error())
		}
		run, ok := sc21Runs[[2]int{hidden, layers}]
		if !ok {
			run = sc21Run{micro: 1}
		}
		p, err := uniformPlan(&m, tp, pp, dp, run.micro, batch)
		if err != nil {
			return nil, t.fieldErr("tp", err.Error())
		}
		if run.virtualLayers > 0 && layers%(pp*run.virtualLayers) == 0 && layers/(pp*run.virtualLayers) > 1 {
			p.Schedule = train.Schedule{Kind: "interleaved", Chunks: layers / (pp * run.virtualLayers)}
		}
		if run.torchDDP {
			p.OverlapGradReduce, p.BucketMB = true, 25
		}
		if err := p.Check(&m); err != nil {
			return nil, t.fieldErr("batch", err.Error())
		}
		b, s, l, h := float64(batch), float64(seq), float64(layers), float64(hidden)
		flops := 96 * b * s * l * h * h * (1 + s/(6*h) + float64(vocab)/(16*l*h))
		ps, _ := t.str("params_billion")
		out = append(out, Case{Set: "sc21", Label: ps + "B", Group: ps, Model: m, Cluster: c, Plan: p, GPU: "A100-80",
			MeasuredS: flops / (float64(gpus) * x * 1e12), Shape: ps})
	}
	return out, nil
}

// sailorModels are Sailor's model names.
var sailorModels = map[string]string{"OPT-350": "opt-350m", "GPT-Neo-2.7": "gpt-neo-2.7b"}

// readSailor reads Sailor's GH200 runs (Alps Clariden: 4 GH200 per node;
// FP32 with TF32 matrix products, DeepSpeed's pipeline engine: 1F1B, no
// recomputation, activations sent partitioned over the tensor-parallel
// ranks). The data's README flags the row whose plan is another model's
// (GPT-NEO N4_D4) and the two runs of a global batch of one sequence.
func readSailor(t *table) ([]Case, error) {
	var out []Case
	for t.row = 0; t.row < len(t.rows); t.row++ {
		src, _ := t.str("source_file")
		flag := ""
		switch {
		case strings.HasSuffix(src, "GPT-NEO/N4/plan_config_N4_D4.json"):
			flag = "an OPT-350 plan filed under GPT-Neo (its layers and red_grads)"
		case strings.HasSuffix(src, "GPT-NEO/N2/plan_config_N2_D1.json"), strings.HasSuffix(src, "OPT-350/N1/plan_config_N1_D1_M4_G1.json"):
			flag = "a global batch of one sequence"
		}
		name, _ := t.str("model")
		preset, ok := sailorModels[name]
		if !ok {
			return nil, t.fieldErr("model", fmt.Sprintf("unknown model %q", name))
		}
		m, _ := train.Preset(preset)
		v, err := t.ints("dp", "pp", "tp", "micro_batch", "global_batch", "layers_total")
		if err != nil {
			return nil, err
		}
		dp, pp, tp, micro, global, total := v[0], v[1], v[2], v[3], v[4], v[5]
		if total != m.Layers+2 {
			if flag != "" {
				continue // the flagged row cannot be modelled as the model it names
			}
			return nil, t.fieldErr("layers_total", fmt.Sprintf("%d, but %s has %d layers with the embedding and head", total, name, m.Layers+2))
		}
		lps, _ := t.str("layers_per_stage")
		parts := strings.Split(lps, ";")
		if len(parts) != pp {
			return nil, t.fieldErr("layers_per_stage", fmt.Sprintf("%d stages, pp is %d", len(parts), pp))
		}
		gt, _ := t.str("gpu_type")
		g, ok := train.LookupGPU(gt)
		if !ok {
			return nil, t.fieldErr("gpu_type", fmt.Sprintf("unknown GPU type %q", gt))
		}
		p := &train.Plan{MicroBatch: micro, GlobalBatch: global, Schedule: train.Schedule{Kind: "1f1b"}, Recompute: "none",
			Precision: "tf32", DPAlgorithm: "ring", BucketMB: 500}
		first := 0
		for i, s := range parts {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				return nil, t.fieldErr("layers_per_stage", fmt.Sprintf("%q is not a layer count", s))
			}
			if i == 0 {
				n-- // the embedding
			}
			if i == pp-1 {
				n-- // the head
			}
			p.Stages = append(p.Stages, train.LayerRange{First: first, Last: first + n - 1})
			first += n
		}
		if global%dp != 0 {
			return nil, t.fieldErr("global_batch", "not a multiple of dp")
		}
		for r := 0; r < dp; r++ {
			rep := train.Replica{Batch: global / dp}
			for range parts {
				rep.Stages = append(rep.Stages, train.Placement{GPU: g.Name, TP: tp})
			}
			p.Replicas = append(p.Replicas, rep)
		}
		if err := p.Check(&m); err != nil {
			return nil, t.fieldErr("layers_per_stage", err.Error())
		}
		c, err := train.SailorCluster(p, &train.SailorInfo{GPUsPerNode: map[string]int{g.Name: 4}})
		if err != nil {
			return nil, t.fieldErr("gpu_type", err.Error())
		}
		s, err := t.float("measured_iteration_s")
		if err != nil {
			return nil, err
		}
		mem, err := t.float("measured_peak_mem_bytes")
		if err != nil {
			return nil, err
		}
		label := strings.TrimSuffix(strings.TrimPrefix(src, "sailor/Planner/simulations/validation/clariden/"), ".json")
		out = append(out, Case{Set: "sailor", Label: label, Group: label, Model: m, Cluster: c, Plan: p, GPU: g.Name,
			MeasuredS: s, MeasuredMemBytes: mem, Shape: name, Flagged: flag})
	}
	return out, nil
}
