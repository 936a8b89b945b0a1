// Package job holds training jobs and traces of them: the job model, the
// readers of JSONL, YAML and Gavel's tab-separated trace lines, the writer
// of JSONL, validation against a throughput table and a cluster, and a
// seeded generator with Gavel's distributions.
//
// A job's ID is its position in the trace; traces are in arrival order.
package job

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/zoo"
)

// Job is one training job.
type Job struct {
	ID int `json:"id" yaml:"id"`
	// Type is the job type, a model with its batch size, as the throughput
	// table names it ("ResNet-50 (batch size 64)").
	Type string `json:"type" yaml:"type"`
	// GPUs is the scale factor: the GPUs the job asks for.
	GPUs int `json:"gpus" yaml:"gpus"`
	// Steps is the total number of training steps.
	Steps float64 `json:"steps" yaml:"steps"`
	// Arrival is the submission time in seconds from the trace's start.
	Arrival float64 `json:"arrival_s" yaml:"arrival_s"`
	// Weight is the priority weight (default 1).
	Weight float64 `json:"weight,omitempty" yaml:"weight,omitempty"`
	User   string  `json:"user,omitempty" yaml:"user,omitempty"`
	// Duration is the generator's run time on the reference GPU, in
	// seconds (information only; 0 when unknown).
	Duration float64 `json:"duration_s,omitempty" yaml:"duration_s,omitempty"`
	// CPUs and MemoryGiB are per-GPU demands for multi-resource packing
	// (0: none).
	CPUs      float64 `json:"cpus,omitempty" yaml:"cpus,omitempty"`
	MemoryGiB float64 `json:"memory_gib,omitempty" yaml:"memory_gib,omitempty"`
	// Stages, when present, make the job a DAG: each stage is a piece of
	// training (its own type, GPUs and steps) that starts after its
	// predecessors end. Type, GPUs and Steps then describe the first stage.
	Stages []Stage `json:"stages,omitempty" yaml:"stages,omitempty"`
	// Elastic, when present, lets a policy run the job on between Min and
	// Max GPUs.
	Elastic *Elastic `json:"elastic,omitempty" yaml:"elastic,omitempty"`
	// Model, when set, gives the job as a model the training planner
	// knows: a train preset ("gpt3-1.7b", "llama-3-8b", "opt-350m") or a
	// zoo network ("resnet50"), Input one sample's shape for a zoo network
	// ("3x224x224"; empty: its default), Batch its global batch (sequences
	// or samples a step). Type is then ModelType's; its throughput comes
	// from the planner (package cluster/planned).
	Model string `json:"model,omitempty" yaml:"model,omitempty"`
	Input string `json:"input,omitempty" yaml:"input,omitempty"`
	Batch int    `json:"batch,omitempty" yaml:"batch,omitempty"`
	// Line is the job's line in the file it was read from (0: not read).
	Line int `json:"-" yaml:"-"`
}

// modelPrefix marks a job type given as a model.
const modelPrefix = "model:"

// ModelType is the job type of a job given as a model:
// "model:NAME (batch size B)", or "model:NAME@INPUT (batch size B)".
func ModelType(model, input string, batch int) string {
	if input != "" {
		model += "@" + input
	}
	return fmt.Sprintf("%s%s (batch size %d)", modelPrefix, model, batch)
}

// ParseModelType splits a job type made by ModelType; ok is false for
// any other.
func ParseModelType(jobType string) (model, input string, batch int, ok bool) {
	rest, found := strings.CutPrefix(jobType, modelPrefix)
	if !found {
		return "", "", 0, false
	}
	open := strings.LastIndex(rest, " (batch size ")
	if open < 0 || !strings.HasSuffix(rest, ")") {
		return "", "", 0, false
	}
	b, err := strconv.Atoi(rest[open+len(" (batch size ") : len(rest)-1])
	if err != nil || b < 1 || b > 1<<24 {
		return "", "", 0, false
	}
	model, input, _ = strings.Cut(rest[:open], "@")
	return model, input, b, model != ""
}

// checkModel validates a job given as a model and sets its type: a
// one-line reason, or "".
func (j *Job) checkModel() string {
	if m, in, b, ok := ParseModelType(j.Type); ok && j.Model == "" && j.Input == "" && j.Batch == 0 {
		j.Model, j.Input, j.Batch = m, in, b // a Gavel line's job_type
	}
	if j.Model == "" {
		if j.Input != "" || j.Batch != 0 {
			return "input and batch need a model"
		}
		return ""
	}
	if j.Batch < 1 || j.Batch > 1<<24 {
		return fmt.Sprintf("model %s: batch (the global batch) must be 1 to %d, got %d", j.Model, 1<<24, j.Batch)
	}
	if strings.ContainsAny(j.Model+j.Input, "@() ") {
		return fmt.Sprintf("model %q, input %q: no spaces, @ or brackets", j.Model, j.Input)
	}
	t := ModelType(j.Model, j.Input, j.Batch)
	if j.Type != "" && j.Type != t {
		return fmt.Sprintf("type %q and model %s both given (leave type out)", j.Type, j.Model)
	}
	j.Type = t
	_, preset := train.Preset(j.Model)
	_, zerr := zoo.Lookup(strings.TrimPrefix(j.Model, "zoo:"))
	switch {
	case !preset && zerr != nil:
		return fmt.Sprintf("unknown model %q (a train preset: %s; or a zoo network, e.g. resnet50)", j.Model, strings.Join(train.PresetNames(), ", "))
	case preset && j.Input != "":
		return fmt.Sprintf("model %s: input is for zoo networks, not train presets", j.Model)
	case j.Input != "":
		if _, err := train.ParseInputShape(j.Input); err != nil {
			return fmt.Sprintf("model %s: input %q: want one sample's shape, e.g. 3x224x224", j.Model, j.Input)
		}
	}
	return ""
}

// Stage is one node of a DAG job.
type Stage struct {
	Name  string   `json:"name" yaml:"name"`
	Type  string   `json:"type" yaml:"type"`
	GPUs  int      `json:"gpus" yaml:"gpus"`
	Steps float64  `json:"steps" yaml:"steps"`
	After []string `json:"after,omitempty" yaml:"after,omitempty"`
}

// Elastic is a moldable or elastic range of GPU counts.
type Elastic struct {
	Min int `json:"min_gpus" yaml:"min_gpus"`
	Max int `json:"max_gpus" yaml:"max_gpus"`
	// Speedup[g-1] is the throughput on g GPUs relative to one GPU
	// (non-decreasing, Speedup[0] = 1). Empty: taken from the throughput
	// table's scale factors, linear in between.
	Speedup []float64 `json:"speedup,omitempty" yaml:"speedup,omitempty"`
	// Online jobs may change GPU count while they run (elastic); others
	// keep the count they start with (moldable).
	Online bool `json:"online,omitempty" yaml:"online,omitempty"`
}

// PriorityWeight returns Weight, or 1 when unset.
func (j *Job) PriorityWeight() float64 {
	if j.Weight > 0 {
		return j.Weight
	}
	return 1
}

// check validates the fields that need no table: a one-line reason, or "".
func (j *Job) check() string {
	switch {
	case j.Type == "":
		return "type is required"
	case j.GPUs < 1:
		return fmt.Sprintf("gpus must be at least 1, got %d", j.GPUs)
	case !(j.Steps > 0) || math.IsInf(j.Steps, 0):
		return fmt.Sprintf("steps must be a positive number, got %g", j.Steps)
	case !(j.Arrival >= 0) || math.IsInf(j.Arrival, 0):
		return fmt.Sprintf("arrival_s must be a non-negative number, got %g", j.Arrival)
	case !(j.Weight >= 0) || math.IsInf(j.Weight, 0):
		return fmt.Sprintf("weight must be positive, got %g", j.Weight)
	case !(j.CPUs >= 0) || !(j.MemoryGiB >= 0):
		return "cpus and memory_gib must not be negative"
	}
	if e := j.Elastic; e != nil {
		switch {
		case e.Min < 1 || e.Max < e.Min:
			return fmt.Sprintf("elastic: want 1 ≤ min_gpus ≤ max_gpus, got %d..%d", e.Min, e.Max)
		case e.Max > 1024:
			return "elastic: max_gpus above 1024"
		case j.GPUs < e.Min || j.GPUs > e.Max:
			return fmt.Sprintf("elastic: gpus %d outside %d..%d", j.GPUs, e.Min, e.Max)
		case len(e.Speedup) != 0 && len(e.Speedup) != e.Max:
			return fmt.Sprintf("elastic: speedup needs %d entries (one per GPU count), got %d", e.Max, len(e.Speedup))
		}
		for i, s := range e.Speedup {
			if !(s > 0) || math.IsInf(s, 0) || (i > 0 && s < e.Speedup[i-1]) {
				return "elastic: speedup must be positive and non-decreasing"
			}
		}
	}
	names := map[string]bool{}
	for i, s := range j.Stages {
		switch {
		case s.Name == "":
			return fmt.Sprintf("stages[%d]: name is required", i)
		case names[s.Name]:
			return fmt.Sprintf("stages[%d]: duplicate name %q", i, s.Name)
		case s.Type == "":
			return fmt.Sprintf("stages[%d]: type is required", i)
		case s.GPUs < 1:
			return fmt.Sprintf("stages[%d]: gpus must be at least 1", i)
		case !(s.Steps > 0) || math.IsInf(s.Steps, 0):
			return fmt.Sprintf("stages[%d]: steps must be positive", i)
		}
		for _, a := range s.After {
			if !names[a] {
				return fmt.Sprintf("stages[%d]: after %q: no earlier stage of that name (list stages in dependency order)", i, a)
			}
		}
		names[s.Name] = true
	}
	return ""
}
