package train

import (
	"fmt"
	"strings"
)

// Spec is a prediction request as the command line and the web API give
// it: names, paths and numbers, resolved by Build.
type Spec struct {
	// Model is a preset, a one-line model (gpt:hidden=…) or a YAML file;
	// or a graph network: zoo:NAME, a zoo network's name, or an ONNX file.
	Model string
	// Input is a graph network's input shape per sample (3x224x224; empty:
	// the network's own).
	Input string
	// Cluster is a cluster platform preset or file; empty with Gpus to
	// build a uniform cluster, or with a Sailor plan to use the cluster
	// the plan names.
	Cluster string
	// Gpus is "COUNTxTYPE"; GPUsPerNode, IntraGBs (GB/s per GPU inside a
	// server) and InterGbps (Gbit/s per server) describe its servers.
	Gpus        string
	GPUsPerNode int
	IntraGBs    float64
	InterGbps   float64
	// Plan is a plan file (YAML, or Sailor's plan_config JSON); empty to
	// build the plan from the fields below.
	Plan       string
	TP, PP, DP int
	// CP is the context-parallel degree (0: the plan file's, else 1).
	CP                        int
	MicroBatch, GlobalBatch   int
	Schedule, Recompute       string
	Zero                      int
	SequenceParallel, Offload bool
	FlashAttention, Overlap   bool
	Precision                 string
	// Optimizer is adam or sgd (empty: the plan file's, else adam).
	Optimizer string
	// Set records which of the plan fields the user gave (by flag name),
	// so that they can override a plan file's.
	Set map[string]bool
}

// Request is a resolved prediction request.
type Request struct {
	Model   Model
	Cluster *Cluster
	Plan    *Plan
	// Sailor is what a Sailor plan file said besides the plan (nil for
	// other plans).
	Sailor *SailorInfo
}

// Build resolves a Spec: the model, the cluster and the plan, each
// checked, with one-line errors naming the place.
func Build(s Spec) (*Request, error) {
	m, err := s.model()
	if err != nil {
		return nil, err
	}
	req := &Request{Model: m}
	if s.Plan != "" {
		p, info, err := LoadPlan(s.Plan, &req.Model)
		if err != nil {
			return nil, err
		}
		req.Plan, req.Sailor = p, info
		if err := s.override(p, &req.Model); err != nil {
			return nil, fmt.Errorf("train: %s: %v", s.Plan, err)
		}
	}
	switch {
	case s.Cluster != "" && s.Gpus != "":
		return nil, fmt.Errorf("train: give --cluster or --gpus, not both")
	case s.Cluster != "":
		if req.Cluster, err = ResolveCluster(s.Cluster); err != nil {
			return nil, err
		}
	case strings.Contains(s.Gpus, ","):
		if req.Cluster, err = s.listCluster(); err != nil {
			return nil, err
		}
	case s.Gpus != "":
		n, g, err := ParseGPUCount(s.Gpus)
		if err != nil {
			return nil, err
		}
		per, intra, inter := s.GPUsPerNode, s.IntraGBs, s.InterGbps
		if per <= 0 {
			per = 8
		}
		if intra <= 0 {
			intra = g.LinkGBs / 2
			if intra <= 0 {
				intra = g.PCIeGBs()
			}
		}
		if inter <= 0 {
			inter = 800
		}
		if req.Cluster, err = UniformCluster(g, n, per, intra, inter/8); err != nil {
			return nil, err
		}
	case req.Sailor != nil:
		if req.Cluster, err = SailorCluster(req.Plan, req.Sailor); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("train: no cluster: give --cluster, or --gpus COUNTxTYPE")
	}
	if req.Plan == nil {
		tp, pp, dp, cp := max(s.TP, 1), max(s.PP, 1), s.DP, max(s.CP, 1)
		if dp <= 0 {
			dp = req.Cluster.GPUs("") / (tp * pp * cp)
			if dp == 0 && cp > 1 {
				return nil, fmt.Errorf("train: tp %d × pp %d × cp %d is more than the cluster's %d GPUs", tp, pp, cp, req.Cluster.GPUs(""))
			}
			if dp == 0 {
				return nil, fmt.Errorf("train: tp %d × pp %d is more than the cluster's %d GPUs", tp, pp, req.Cluster.GPUs(""))
			}
		}
		micro, global := max(s.MicroBatch, 1), s.GlobalBatch
		if global <= 0 {
			global = micro * dp
		}
		p, err := Uniform(&req.Model, "", tp, pp, dp, micro, global)
		if err != nil {
			return nil, fmt.Errorf("train: plan: %v", err)
		}
		if err := s.override(p, &req.Model); err != nil {
			return nil, fmt.Errorf("train: plan: %v", err)
		}
		if types := req.Cluster.Types(); req.Model.Net != nil && pp > 1 && len(types) > 0 {
			// a graph network's stages of equal time on the cluster's first type
			if st, ok := BalancedStages(&req.Model, req.Cluster.gpu(types[0]), p, pp); ok {
				p.Stages = st
			}
		}
		if s.Gpus != "" && p.GPUs() != req.Cluster.GPUs("") && cp > 1 {
			return nil, fmt.Errorf("train: world size: tp %d × pp %d × cp %d × dp %d = %d GPUs, but --gpus gives %d", tp, pp, cp, dp, p.GPUs(), req.Cluster.GPUs(""))
		}
		if s.Gpus != "" && p.GPUs() != req.Cluster.GPUs("") {
			return nil, fmt.Errorf("train: world size: tp %d × pp %d × dp %d = %d GPUs, but --gpus gives %d", tp, pp, dp, p.GPUs(), req.Cluster.GPUs(""))
		}
		req.Plan = p
	}
	return req, nil
}

// override applies the settings the user gave to p.
func (s Spec) override(p *Plan, m *Model) error {
	set := func(name string) bool { return s.Set == nil || s.Set[name] }
	if set("schedule") && s.Schedule != "" {
		sc, err := ParseSchedule(s.Schedule)
		if err != nil {
			return err
		}
		p.Schedule = sc
	}
	if set("recompute") && s.Recompute != "" {
		p.Recompute = strings.ToLower(s.Recompute)
	}
	if set("zero") {
		p.Zero = s.Zero
	}
	if set("sequence-parallel") {
		p.SequenceParallel = s.SequenceParallel
	}
	if set("offload") {
		p.Offload = s.Offload
	}
	if set("flash-attention") {
		p.FlashAttention = s.FlashAttention
	}
	if set("overlap-grad-reduce") {
		p.OverlapGradReduce = s.Overlap
	}
	if set("precision") && s.Precision != "" {
		p.Precision = strings.ToLower(s.Precision)
	}
	if set("optimizer") && s.Optimizer != "" {
		p.Optimizer = strings.ToLower(s.Optimizer)
	}
	if set("cp") && s.CP > 0 {
		p.CP = s.CP
	}
	return p.Check(m)
}

// Predict resolves the spec and simulates it.
func Predict(s Spec, opt Options) (*Request, *Result, error) {
	req, err := Build(s)
	if err != nil {
		return nil, nil, err
	}
	res, err := Simulate(&req.Model, req.Cluster, req.Plan, opt)
	if err != nil {
		return nil, nil, err
	}
	return req, res, nil
}

// ResolveTarget resolves what a planner needs from a spec: the model, and
// the cluster from --cluster or --gpus (one or more COUNTxTYPE, each type
// in its own servers of GPUsPerNode, 8 unless given).
func ResolveTarget(s Spec) (Model, *Cluster, error) {
	m, err := s.model()
	if err != nil {
		return Model{}, nil, err
	}
	switch {
	case s.Cluster != "" && s.Gpus != "":
		return Model{}, nil, fmt.Errorf("train: give --cluster or --gpus, not both")
	case s.Cluster != "":
		c, err := ResolveCluster(s.Cluster)
		return m, c, err
	case s.Gpus != "":
		c, err := s.listCluster()
		return m, c, err
	}
	return Model{}, nil, fmt.Errorf("train: no cluster: give --cluster, or --gpus COUNTxTYPE[,COUNTxTYPE…]")
}

// listCluster is the cluster of --gpus read as a list of types
// (ParseGPUList), each in its own servers of GPUsPerNode (8 unless
// given), with InterGbps from each server (800 unless given).
func (s Spec) listCluster() (*Cluster, error) {
	list, err := ParseGPUList(s.Gpus)
	if err != nil {
		return nil, err
	}
	per, inter := s.GPUsPerNode, s.InterGbps
	if per <= 0 {
		per = 8
	}
	if inter <= 0 {
		inter = 800
	}
	return MixedCluster(list, per, s.IntraGBs, inter/8)
}

// model resolves the spec's model; --input is for graph networks only.
func (s Spec) model() (Model, error) {
	if s.Input == "" {
		return ResolveModel(s.Model)
	}
	if _, ok := Preset(s.Model); ok || !graphModelArg(s.Model) {
		return Model{}, fmt.Errorf("train: --input %s: %s is not a graph network (zoo:NAME or an .onnx file)", s.Input, s.Model)
	}
	return ResolveNetwork(s.Model, s.Input)
}
