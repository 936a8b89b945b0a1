package app

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/planned"
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/policy/gavel"
	"github.com/inlay-dev/inlay/cluster/policy/registry"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/cluster/throughput"
	"github.com/inlay-dev/inlay/graph"
)

// The cluster wing's use cases (inlay cluster): drawing a job trace,
// simulating a trace on a cluster under a policy, and the benches. Their
// inputs carry the flags' text; the parsers here give the errors the
// flags' names.

// ParseWindow reads FIRST:LAST job IDs (--window).
func ParseWindow(s string) ([2]int, error) {
	a, b, ok := strings.Cut(s, ":")
	x, err1 := strconv.Atoi(strings.TrimSpace(a))
	y, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || x < 0 || y < x {
		return [2]int{}, fmt.Errorf("--window: want FIRST:LAST job IDs with 0 ≤ FIRST ≤ LAST, got %q", s)
	}
	return [2]int{x, y}, nil
}

// ParseHours reads FROM:TO hours (--gantt-hours) with TO after FROM;
// "" gives nil (the chart's default stretch).
func ParseHours(s string) (*[2]float64, error) {
	if s == "" {
		return nil, nil
	}
	a, b, ok := strings.Cut(s, ":")
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if !ok || err1 != nil || err2 != nil || !(y > x) {
		return nil, fmt.Errorf("--gantt-hours: want FROM:TO hours, got %q", s)
	}
	return &[2]float64{x, y}, nil
}

// LPFlagHelp describes the --lp flag's values.
const LPFlagHelp = "how the LP policies solve: simplex (a vertex, with a tie-break that uses the capacity) or interior (as Gavel does: an interior-point method, a point inside the optimal face)"

// LPConfig is the LP policies' configuration for --lp.
func LPConfig(mode string) (gavel.Config, error) {
	switch mode {
	case "", "simplex":
		return gavel.Config{}, nil
	case "interior":
		return gavel.Config{Interior: true}, nil
	}
	return gavel.Config{}, fmt.Errorf("--lp: unknown %q (simplex, interior)", mode)
}

// GenerateInput is a trace to draw with Gavel's distributions (inlay
// cluster generate). With Jobs 0, enough jobs are drawn to cover Window
// plus TailHours of arrivals at Rate.
type GenerateInput struct {
	Jobs               int
	Rate               float64
	Seed               uint64
	MultiGPU, Static   bool
	Window             string
	TailHours          float64
	Throughputs        string
	Resources, Elastic bool
	DAGStages          int
}

// Generate draws the trace.
func Generate(in GenerateInput) ([]job.Job, error) {
	t, err := throughput.Load(in.Throughputs)
	if err != nil {
		return nil, err
	}
	n := in.Jobs
	if n == 0 {
		if in.Static {
			return nil, fmt.Errorf("--static needs --jobs")
		}
		w, err := ParseWindow(in.Window)
		if err != nil {
			return nil, err
		}
		if !(in.Rate > 0) || !(in.TailHours >= 0) {
			return nil, fmt.Errorf("--rate must be positive and --tail-hours non-negative")
		}
		n = w[1] + 1 + int(math.Ceil(in.Rate*in.TailHours))
	}
	return job.Generate(job.GenConfig{Jobs: n, Rate: in.Rate, Seed: in.Seed, MultiGPU: in.MultiGPU, Static: in.Static,
		Resources: in.Resources, Elastic: in.Elastic, DAGStages: in.DAGStages}, t)
}

// ClusterSimInput is a trace to simulate on a cluster under a policy
// (inlay cluster simulate).
type ClusterSimInput struct {
	Trace, Cluster, Policy string
	// Throughputs is Gavel's format's file, "" for Gavel's measurements,
	// or "estimate" for inlay's cost model on the cluster's GPUs.
	Throughputs string
	// Window is FIRST:LAST job IDs to measure ("" for all).
	Window, Placement, LP string
	Preempt, Round, Reset float64
	EventDriven, Timeline bool
	Seed                  uint64
	// LoadGraph opens the ONNX files of job types "onnx:PATH (…)" when
	// the table is estimated.
	LoadGraph func(path string) (*graph.Model, error)
}

// ClusterSim is a simulation ready to run: its cluster, jobs, table,
// policy and configuration, all checked.
type ClusterSim struct {
	Platform *chw.Platform
	Jobs     []job.Job
	Table    *throughput.Table
	Config   sim.Config
	policy   policy.Policy
}

// PrepareClusterSim loads and checks what a simulation needs.
func PrepareClusterSim(in ClusterSimInput) (*ClusterSim, error) {
	c, err := chw.Resolve(in.Cluster)
	if err != nil {
		return nil, err
	}
	jobs, err := job.Load(in.Trace)
	if err != nil {
		return nil, err
	}
	var t *throughput.Table
	if in.Throughputs == "estimate" {
		t, err = EstimateTable(c, jobs, in.LoadGraph)
	} else {
		t, err = throughput.Load(in.Throughputs)
	}
	if err != nil {
		return nil, err
	}
	if err := planned.Fill(in.Trace, t, c, jobs); err != nil {
		return nil, err
	}
	if err := job.Validate(in.Trace, jobs, t, c); err != nil {
		return nil, err
	}
	lp, err := LPConfig(in.LP)
	if err != nil {
		return nil, err
	}
	pol, err := registry.New(in.Policy, registry.Options{Seed: in.Seed, LP: lp})
	if err != nil {
		return nil, err
	}
	s := &ClusterSim{Platform: c, Jobs: jobs, Table: t, policy: pol}
	s.Config = sim.Config{
		Sched:       sched.Config{Round: in.Round, ResetInterval: in.Reset, Placement: sched.Placement(in.Placement), Seed: in.Seed},
		EventDriven: in.EventDriven, Preempt: in.Preempt, Timeline: in.Timeline,
	}
	if !(in.Preempt >= 0) {
		return nil, fmt.Errorf("--preempt must not be negative")
	}
	if in.Window != "" {
		w, err := ParseWindow(in.Window)
		if err != nil {
			return nil, err
		}
		if w[1] >= len(jobs) {
			return nil, fmt.Errorf("--window %s: the trace has jobs 0:%d", in.Window, len(jobs)-1)
		}
		s.Config.Window, s.Config.StopAtWindow = w, true
	}
	return s, nil
}

// Run simulates, telling progress (when set) of the jobs done, and
// returns the result and the wall time the simulation took.
func (s *ClusterSim) Run(ctx context.Context, progress func(done, total int)) (*sim.Result, time.Duration, error) {
	cfg := s.Config
	cfg.Progress = progress
	start := time.Now()
	res, err := sim.Run(ctx, cfg, s.Jobs, s.Platform, s.Table, s.policy)
	return res, time.Since(start), err
}

// EstimateTable builds a throughput table for the trace's job types
// (and DAG stages) from inlay's cost model on the cluster's GPU types;
// job types given as ONNX files ("onnx:PATH (batch size B)") are opened
// with load.
func EstimateTable(c *chw.Platform, jobs []job.Job, load func(path string) (*graph.Model, error)) (*throughput.Table, error) {
	fam, err := throughput.Families()
	if err != nil {
		return nil, err
	}
	seen := map[throughput.Key]bool{}
	var keys []throughput.Key
	add := func(k throughput.Key) {
		if _, _, _, model := job.ParseModelType(k.JobType); model {
			return // planned.Fill's
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, j := range jobs {
		add(throughput.Key{JobType: j.Type, Scale: j.GPUs})
		for _, st := range j.Stages {
			add(throughput.Key{JobType: st.Type, Scale: st.GPUs})
		}
	}
	for _, k := range keys {
		model, _, ok := throughput.ParseJobType(k.JobType)
		if !ok || !strings.HasPrefix(model, "onnx:") {
			continue
		}
		if _, done := fam[model]; done {
			continue
		}
		if load == nil {
			return nil, fmt.Errorf("job type %q: no loader for ONNX files", k.JobType)
		}
		m, err := load(strings.TrimPrefix(model, "onnx:"))
		if err != nil {
			return nil, fmt.Errorf("job type %q: %w", k.JobType, err)
		}
		fam[model] = throughput.FromGraph(model, m)
	}
	return throughput.Estimate(c, keys, fam, throughput.DefaultModel)
}
