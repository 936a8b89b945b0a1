// Package planned gives cluster jobs given as models (job.Job.Model: a
// train preset or a zoo network, with its global batch) their throughput
// from inlay's training planner (train/planner.JobThroughput): on one GPU
// type, for the throughput tables the policies read (Fill), and on any
// allocation, mixed-type gangs included, for the adaptive simulator
// (AdaptJobs). The planner's samples a second become the job's progress
// units, steps a second: samples/s ÷ global batch. Figures are cached by
// allocation, so each is planned once per job type.
package planned

import (
	"fmt"
	"math"
	"strings"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/train"
	"github.com/inlay-dev/inlay/train/planner"
)

// Job is one job type given as a model.
type Job struct {
	Type  string
	Batch int
	T     *planner.JobThroughput
}

// New builds the job of a job type made by job.ModelType; networkGBs is
// each server's network bandwidth (0: the planner's default).
func New(jobType string, networkGBs float64) (*Job, error) {
	name, input, batch, ok := job.ParseModelType(jobType)
	if !ok {
		return nil, fmt.Errorf("job type %q is not a model", jobType)
	}
	var m train.Model
	var err error
	if input != "" {
		m, err = train.ResolveNetwork(name, input)
	} else {
		m, err = train.ResolveModel(name)
	}
	if err != nil {
		return nil, err
	}
	return &Job{Type: jobType, Batch: batch, T: &planner.JobThroughput{Model: m, NetworkGBs: networkGBs, Options: planner.Options{GlobalBatch: batch}}}, nil
}

// StepsPerS is the job's steps a second on gpus (counts by train GPU
// type) with perNode of each type in one server (0 when no plan fits).
func (j *Job) StepsPerS(gpus, perNode map[string]int) (float64, error) {
	s, err := j.T.SamplesPerS(planner.Allocation{GPUs: gpus, PerNode: perNode})
	return s / float64(j.Batch), err
}

// TrainGPU is the training planner's GPU type for a cluster's: the one of
// its name or alias, else the one whose name starts with it and whose
// memory is nearest ("v100" with 16 GiB: V100-16).
func TrainGPU(g hw.GPUType) (string, bool) {
	if t, ok := train.LookupGPU(g.Name); ok {
		return t.Name, true
	}
	best, gap := "", math.Inf(1)
	for _, t := range train.GPUs() {
		if !strings.HasPrefix(strings.ToLower(t.Name), strings.ToLower(g.Name)+"-") {
			continue
		}
		if d := math.Abs(t.MemoryGB - g.MemoryGiB); d < gap {
			best, gap = t.Name, d
		}
	}
	return best, best != ""
}

// Fill adds to table t the rows of the jobs (and DAG stages) of trace
// file given as models, for every GPU type of cluster c: alone, the job's
// GPUs on the fewest servers; spread, one GPU a server. A job whose model
// runs on no GPU type of c at its GPU count is an error naming its line.
func Fill(file string, t *throughput.Table, c *hw.Platform, jobs []job.Job) error {
	names := map[string]string{} // cluster type → train type
	for _, g := range c.GPUTypes {
		if n, ok := TrainGPU(g); ok && t.GPUIndex(g.Name) >= 0 {
			names[g.Name] = n
		}
	}
	models := map[string]*Job{}
	row := func(jb *job.Job, typ string, gpus int) error {
		if _, _, _, ok := job.ParseModelType(typ); !ok {
			return nil
		}
		m, ok := models[typ]
		if !ok {
			var err error
			if m, err = New(typ, c.Network.BandwidthGBs); err != nil {
				return fmt.Errorf("cluster/planned: %s:%d: %v", file, jb.Line, err)
			}
			models[typ] = m
		}
		k := throughput.Key{JobType: typ, Scale: gpus}
		t.Add(k)
		runs := false
		for _, g := range c.Types() {
			tn, ok := names[g]
			if !ok || c.Count(g) < gpus {
				continue
			}
			per := min(gpus, c.MaxGPUsPerNode(g))
			alone, err := m.StepsPerS(map[string]int{tn: gpus}, map[string]int{tn: per})
			if err != nil {
				return fmt.Errorf("cluster/planned: %s:%d: %v", file, jb.Line, err)
			}
			t.SetAlone(k, g, alone)
			if gpus > 1 && per > 1 {
				spread, err := m.StepsPerS(map[string]int{tn: gpus}, map[string]int{tn: 1})
				if err != nil {
					return fmt.Errorf("cluster/planned: %s:%d: %v", file, jb.Line, err)
				}
				t.SetSpread(k, g, spread)
			}
			runs = runs || alone > 0
		}
		if !runs {
			return fmt.Errorf("cluster/planned: %s:%d: model %s fits no GPU type of cluster %s on %d GPUs", file, jb.Line, strings.TrimPrefix(typ, "model:"), c.Name, gpus)
		}
		return nil
	}
	for i := range jobs {
		jb := &jobs[i]
		counts := []int{jb.GPUs}
		if e := jb.Elastic; e != nil {
			for n := e.Min; n <= e.Max; n++ {
				if n != jb.GPUs {
					counts = append(counts, n)
				}
			}
		}
		for _, n := range counts {
			if err := row(jb, jb.Type, n); err != nil {
				return err
			}
		}
		for _, s := range jb.Stages {
			if err := row(jb, s.Type, s.GPUs); err != nil {
				return err
			}
		}
	}
	return nil
}

// AdaptJobs turns a trace whose jobs are all given as models into jobs of
// the adaptive simulator on cluster c (its type names are the training
// planner's GPU types): each runs its steps at its global batch, rigid,
// or scale-gpus when the trace makes it elastic; every allocation's rate,
// mixed-type gangs included, comes from the planner with each type's
// servers as c has them. restart is the checkpoint-restore delay of a
// reallocation, in seconds. Jobs of one type share the planner's cache.
func AdaptJobs(file string, jobs []job.Job, c *adapt.Cluster, networkGBs, restart float64) ([]adapt.Job, error) {
	names := make([]string, len(c.Types))
	perNode := map[string]int{}
	for i, ty := range c.Types {
		g, ok := train.LookupGPU(ty.Name)
		if !ok {
			return nil, fmt.Errorf("cluster/planned: unknown GPU type %q (the training planner's: %s)", ty.Name, strings.Join(train.GPUNames(), ", "))
		}
		names[i] = g.Name
		perNode[g.Name] = ty.PerNode
	}
	type model struct {
		runs []bool
		rate func(goodput.Alloc) float64
	}
	models := map[string]model{}
	var out []adapt.Job
	for i := range jobs {
		jb := &jobs[i]
		at := fmt.Sprintf("cluster/planned: %s:%d", file, jb.Line)
		if jb.Model == "" || len(jb.Stages) > 0 {
			return nil, fmt.Errorf("%s: job %d: the adaptive simulator runs jobs given as models, without stages", at, jb.ID)
		}
		m, ok := models[jb.Type]
		if !ok {
			pj, err := New(jb.Type, networkGBs)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", at, err)
			}
			m.rate = func(a goodput.Alloc) float64 {
				gpus := map[string]int{}
				for _, p := range a {
					gpus[names[p.Type]] += p.GPUs
				}
				v, err := pj.StepsPerS(gpus, perNode)
				if err != nil {
					return 0
				}
				return v * float64(pj.Batch) // samples a second
			}
			m.runs = make([]bool, len(c.Types))
			any := false
			for t := range c.Types {
				n := min(jb.GPUs, c.GPUs(t))
				m.runs[t] = m.rate(goodput.Alloc{{Type: t, GPUs: n, Nodes: c.MinNodes(t, n)}}) > 0
				any = any || m.runs[t]
			}
			if !any {
				return nil, fmt.Errorf("%s: model %s fits no GPU type of the cluster on %d GPUs", at, strings.TrimPrefix(jb.Type, "model:"), jb.GPUs)
			}
			models[jb.Type] = m
		}
		kind := adapt.Rigid
		if jb.Elastic != nil {
			kind = adapt.ScaleGPUs
		}
		gm := goodput.NewPlanned(jb.Type, float64(jb.Batch), jb.Steps, m.runs, restart, m.rate)
		out = append(out, adapt.Job{ID: len(out), Name: fmt.Sprintf("job%d", jb.ID), Model: gm, Arrival: jb.Arrival, GPUs: jb.GPUs, Batch: float64(jb.Batch), Kind: kind})
	}
	return out, nil
}

// AdaptCluster is cluster c as the adaptive simulator sees it: each GPU
// type that maps to a training planner's (TrainGPU) with its servers, in
// c's order; a type with no match (k80) is left out. A type whose servers
// differ in size is an error (the simulator's servers of a type are
// alike), and so is a cluster with no type left.
func AdaptCluster(c *hw.Platform) (*adapt.Cluster, error) {
	out := &adapt.Cluster{}
	for _, name := range c.Types() {
		g, ok := c.GPUType(name)
		if !ok {
			continue
		}
		tn, ok := TrainGPU(g)
		if !ok {
			continue
		}
		per, nodes := 0, 0
		for _, n := range c.Nodes {
			if n.GPU != name {
				continue
			}
			if per != 0 && n.GPUs != per {
				return nil, fmt.Errorf("cluster/planned: cluster %s: the %s servers hold %d and %d GPUs; the adaptive simulator needs one size a type", c.Name, name, per, n.GPUs)
			}
			per = n.GPUs
			nodes++
		}
		out.Types = append(out.Types, adapt.Type{Name: tn, PerNode: per, Nodes: nodes})
	}
	if len(out.Types) == 0 {
		return nil, fmt.Errorf("cluster/planned: cluster %s has no GPU type of the training planner's (%s)", c.Name, strings.Join(train.GPUNames(), ", "))
	}
	return out, nil
}
