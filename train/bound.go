package train

import "math"

// flopsPerTokenSim is the matrix and attention work one token costs in
// the forward pass exactly as the cost model counts it (the QKV and
// output projections, the FFN's matrices for its top-k experts, the
// attention scores and values, and the head's logits), with a
// multiply-add counted as two. The backward pass costs twice this.
func flopsPerTokenSim(m *Model) float64 {
	h, s := float64(m.Hidden), float64(m.Seq)
	f := float64(m.ffn())
	_, k := m.experts()
	gated := 1.0
	if m.Gated {
		gated = 2
	}
	layer := 2*h*float64(m.qkvWidth()) + 2*h*h + 2*float64(k)*(gated+1)*h*f + 4*s*h
	return float64(m.Layers)*layer + 2*h*float64(m.Vocab)
}

// trainFLOPsSim is the matrix work a token (a graph network's sample)
// costs forward and backward as the cost model counts it: 3 × the
// forward's, less the input gradient of a graph layer that reads only the
// graph's inputs (netCost).
func trainFLOPsSim(m *Model) float64 {
	if m.Net == nil {
		return 3 * flopsPerTokenSim(m)
	}
	w := 0.0
	for i := range m.Net.Layers {
		l := &m.Net.Layers[i]
		k := 3.0
		if l.NoInputGrad {
			k = 2
		}
		w += k * 2 * l.MACs
	}
	return w
}

// Bound is a proven upper bound on a plan's throughput.
type Bound struct {
	// TokensPerS is the bound: the GPUs' calibrated matrix rate (peak
	// times the fitted GEMM efficiency, summed over the GPUs) over the
	// training work per token (three times the forward's matrix work).
	TokensPerS float64 `json:"tokens_per_s"`
	// WorkPerToken is that work, FLOPs; RateFLOPS the summed rate.
	WorkPerToken float64 `json:"work_per_token_flops"`
	RateFLOPS    float64 `json:"rate_flops"`
	// MemoryLimited says that the GPUs together cannot hold the training
	// state (parameters, gradients and optimizer states, fully sharded),
	// so no plan runs and the bound is 0.
	MemoryLimited bool `json:"memory_limited"`
}

// ThroughputBound bounds the tokens a second any plan of the model on the
// given GPUs (count per type name in c) can reach under Simulate at the
// precision. Why it holds: every stage's forward time is at least its
// matrix FLOPs over peak × GEMM efficiency (the cost model adds traffic,
// element-wise work and communication, and takes the larger of that and
// the host's dispatch), the backward at least twice that, and tensor
// parallelism splits the FLOPs without removing any; so each GPU is busy
// at least its share of 3 × work per token × tokens over its rate, the
// iteration lasts at least as long as any GPU is busy, and summing over
// the GPUs gives iteration × Σ rate ≥ 3 × work × tokens.
// It is tightened by memory: when the GPUs' memory together cannot hold
// the model's training state sharded over all of them (ZeRO 3, no
// activations at all), no plan fits and the bound is 0.
func ThroughputBound(m *Model, c *Cluster, use map[string]int, prec string) Bound {
	pr := precisionOf(prec)
	var rate, mem float64
	for _, name := range c.Types() {
		n := use[name]
		if n <= 0 {
			continue
		}
		n = min(n, c.GPUs(name))
		for i := range c.Groups {
			if c.Groups[i].GPU.Name == name {
				g := &c.Groups[i].GPU
				d := newDevice(g, pr)
				rate += float64(n) * d.peak * d.eG
				mem += float64(n) * g.MemoryBytes()
				break
			}
		}
	}
	work := trainFLOPsSim(m)
	b := Bound{WorkPerToken: work, RateFLOPS: rate}
	state := float64(m.Params()) * (pr.param + pr.grad + pr.optim)
	if mem < state || rate <= 0 {
		b.MemoryLimited = mem < state
		return b
	}
	b.TokensPerS = rate / work
	return b
}

// PartCost is what one micro-batch costs a GPU of a tensor-parallel group
// of one type, forward plus backward with the plan's recomputation, in
// seconds: one transformer layer, the first stage's embedding, and the
// last stage's head.
type PartCost struct {
	Layer, Embedding, Head float64
	// LayerMemory is the activation memory one layer keeps per micro-batch
	// in flight, bytes.
	LayerMemory float64
}

// PartCosts prices a plan's parts on one GPU of type g in a tp-way group
// (and, under context parallelism, its CP ring) inside a server whose link
// gives intraGBs one way: what a planner needs
// to balance stages without simulating every split.
func PartCosts(m *Model, g *GPU, tp int, p *Plan, intraGBs float64) PartCost {
	prec := planPrecision(p)
	d := newDevice(g, prec)
	sh := planShape(m, p, g, tp, prec)
	l := link{bw: intraGBs * 1e9 * g.Eff.Link, lat: g.Eff.LinkLatencyUs * 1e-6}
	lc := sh.layer(&d, l, l) // the CP ring inside the server too
	ef, eb := sh.embedding(&d, l)
	hf, hb := sh.head(&d, l)
	return PartCost{Layer: lc.fwd + lc.bwd + lc.recompute, Embedding: ef + eb, Head: hf + hb, LayerMemory: sh.layerActivations()}
}

// StageMemory is one GPU's memory on stage s of plan p when the stage
// runs on type g with tensor parallelism tp (every replica alike).
func StageMemory(m *Model, p *Plan, s int, g *GPU, tp int) MemoryBreakdown {
	x := &placed{gpu: g, tp: tp}
	return stageMemory(m, p, s, x, planPrecision(p), stageParams(m, p, s))
}

// Fits reports whether every stage of every replica of p fits its GPU's
// memory on cluster c, without timing the plan.
func Fits(m *Model, c *Cluster, p *Plan) bool {
	if p.StageDP() {
		return fitsGroups(m, c, p)
	}
	prec := planPrecision(p)
	for s := range p.Stages {
		params := stageParams(m, p, s)
		type use struct {
			pl        Placement
			micro     int
			recompute string
		}
		var done []use // replicas with the same placement, micro-batch and recomputation need the same memory
	next:
		for ri, r := range p.Replicas {
			u := use{r.Stages[s], p.Micro(ri), p.RecomputeOf(ri)}
			for _, d := range done {
				if d == u {
					continue next
				}
			}
			done = append(done, u)
			g := c.gpu(u.pl.GPU)
			if g == nil {
				return false
			}
			mb := stageMemory(m, p.forReplica(ri), s, &placed{gpu: g, tp: u.pl.TP}, prec, params)
			if mb.Total > g.MemoryBytes() || math.IsNaN(mb.Total) {
				return false
			}
		}
	}
	return true
}

// gpu is the cluster's GPU type called name (or an alias; empty, the
// cluster's only type, as plans read it), nil if none.
func (c *Cluster) gpu(name string) *GPU {
	if types := c.Types(); name == "" && len(types) == 1 {
		name = types[0]
	}
	if g, ok := LookupGPU(name); ok {
		name = g.Name
	}
	for i := range c.Groups {
		if c.Groups[i].GPU.Name == name {
			return &c.Groups[i].GPU
		}
	}
	return nil
}

// GPUType is the cluster's GPU type called name, or false.
func (c *Cluster) GPUType(name string) (GPU, bool) {
	g := c.gpu(name)
	if g == nil {
		return GPU{}, false
	}
	return *g, true
}

// IntraGBs is the intra-server bandwidth of the first group of type name.
func (c *Cluster) IntraGBs(name string) float64 {
	for _, g := range c.Groups {
		if g.GPU.Name == name {
			return g.IntraGBs
		}
	}
	return 0
}

// GPUsPerNode is the server size of the first group of type name.
func (c *Cluster) GPUsPerNode(name string) int {
	for _, g := range c.Groups {
		if g.GPU.Name == name {
			return g.GPUsPerNode
		}
	}
	return 0
}
