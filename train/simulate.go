package train

import (
	"fmt"
	"math"
	"strings"
)

// Options change what Simulate records.
type Options struct {
	// Trace records every task as a Span (Result.Spans).
	Trace bool
}

// Span is one task on one stage's GPUs, seconds from the iteration's
// start.
type Span struct {
	Replica int     `json:"replica"`
	Stage   int     `json:"stage"`
	Kind    string  `json:"kind"` // forward, backward, grad-sync, optimizer
	Chunk   int     `json:"chunk"`
	Micro   int     `json:"micro_batch"`
	Start   float64 `json:"start_s"`
	End     float64 `json:"end_s"`
}

// StageResult is one stage of one replica: a tensor-parallel group of
// identical GPUs.
type StageResult struct {
	// Replica is the replica, or with per-stage data parallelism the
	// entry of the stage's group (Ranks identical ranks).
	Replica int        `json:"replica"`
	Ranks   int        `json:"ranks,omitempty"`
	Stage   int        `json:"stage"`
	GPU     string     `json:"gpu"`
	TP      int        `json:"tp"`
	Layers  LayerRange `json:"layers"`
	// CP is the plan's context-parallel degree when it has one: the stage
	// runs on TP × CP GPUs.
	CP int `json:"cp,omitempty"`
	// ForwardS and BackwardS are one micro-batch's times through the whole
	// stage (every chunk), the backward with its recomputation.
	ForwardS  float64 `json:"forward_s"`
	BackwardS float64 `json:"backward_s"`
	// ComputeS is the stage's busy time in the iteration; SyncS the
	// gradient reduction left exposed; OptimizerS the optimizer step;
	// EndS when the stage's iteration ends.
	ComputeS float64 `json:"compute_s"`
	// TimeS is the stage's own time in the iteration: compute, exposed
	// gradient reduction and optimizer step (the rest is waiting).
	TimeS      float64         `json:"time_s"`
	SyncS      float64         `json:"sync_s"`
	OptimizerS float64         `json:"optimizer_s"`
	EndS       float64         `json:"end_s"`
	Memory     MemoryBreakdown `json:"memory"`
	// CapacityBytes is the GPU's memory; Fits whether Memory.Total is
	// within it.
	CapacityBytes float64 `json:"capacity_bytes"`
	Fits          bool    `json:"fits"`
}

// Result is a predicted training iteration.
type Result struct {
	Model string `json:"model"`
	GPUs  int    `json:"gpus"`
	// IterationS is the time of one iteration (one global batch).
	IterationS float64 `json:"iteration_s"`
	TokensPerS float64 `json:"tokens_per_s"`
	// SamplesPerS is a graph network's samples a second (its "tokens"
	// are samples; absent for transformers).
	SamplesPerS float64 `json:"samples_per_s,omitempty"`
	// MFU is the model's FLOPs (3 × the forward's, without recomputation)
	// per second over the GPUs' peak at the plan's precision.
	MFU float64 `json:"mfu"`
	// PeakMemoryBytes is the largest of the GPUs' memory.
	PeakMemoryBytes float64 `json:"peak_memory_bytes"`
	Fits            bool    `json:"fits"`
	// Reason says which stage does not fit, and by how much.
	Reason string `json:"reason,omitempty"`
	// Bubble is the fraction of the iteration the slowest replica's stages
	// sit idle, on average.
	Bubble float64       `json:"bubble"`
	Stages []StageResult `json:"stages"`
	Spans  []Span        `json:"spans,omitempty"`
}

// placed is one stage of one replica on the cluster.
type placed struct {
	gpu        *GPU
	group      int // node group
	tp         int
	cp         int  // context-parallel degree: the stage takes tp × cp GPUs
	tpCross    bool // a tensor-parallel group of the stage spans servers
	firstNode  int  // global node index of its first and last GPU
	lastNode   int
	perNode    int
	intra      float64
	sameNodeAs bool // whether the next stage of its replica shares its node
}

// Simulate predicts one iteration of plan p training model m on cluster c.
// A plan that does not fit in memory still gets its time, with Fits false
// and the reason. Errors are one line naming the place.
func Simulate(m *Model, c *Cluster, p *Plan, opt Options) (*Result, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("train: model %s: %v", m.Name, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("train: %v", err)
	}
	if err := p.Check(m); err != nil {
		return nil, fmt.Errorf("train: plan: %v", err)
	}
	if p.StageDP() {
		return simulateGroups(m, c, p, opt)
	}
	pl, err := place(c, p)
	if err != nil {
		return nil, fmt.Errorf("train: plan: %v", err)
	}
	prec := planPrecision(p)
	P, D, V := p.PP(), p.DP(), p.Schedule.chunks()
	// CP ranks hold replicas of the parameters: gradients are reduced,
	// and ZeRO shards, over the DP × CP ranks (Megatron-LM's
	// data-and-context-parallel group).
	CP := p.ContextParallel()
	DC := D * CP
	res := &Result{Model: m.Name, GPUs: p.GPUs(), Stages: make([]StageResult, 0, P*D)}
	w := pipePool.Get().(*pipeWork)
	defer pipePool.Put(w)

	// Per replica and stage: the micro-batch times and the transfer on.
	fwd := make([]float64, D*P)
	bwd := make([]float64, D*P)
	send := make([]float64, D*P)
	optim := make([]float64, D*P)
	params := make([]float64, P) // parameters of each stage
	for s := 0; s < P; s++ {
		params[s] = stageParams(m, p, s)
	}
	for r := 0; r < D; r++ {
		for s := 0; s < P; s++ {
			x := &pl[r*P+s]
			d := newDevice(x.gpu, prec)
			pr := p.forReplica(r)
			var f, b float64
			if m.Net != nil {
				f, b = netStage(m.Net, p.Stages[s], &d, prec, pr.MicroBatch, pr.Recompute == "full")
			} else {
				f, b = transformerStage(m, pr, s, x, &d, prec, c)
			}
			local := params[s] / float64(x.tp)
			if p.Zero == 3 && DC > 1 {
				dl := c.dpLink(pl, p, s)
				g := dl.allGather(local*prec.param, DC)
				f += g
				b += g + dl.allGather(local*prec.comm, DC)
			}
			fwd[r*P+s], bwd[r*P+s] = f, b
			if s < P-1 {
				bytes := sendBytes(m, pr, s, prec)
				if !p.P2PWhole {
					bytes /= float64(min(x.tp, pl[r*P+s+1].tp))
				}
				send[r*P+s] = c.p2pLink(x, &pl[r*P+s+1]).send(bytes)
			}
			optim[r*P+s] = optimizerTime(&d, x.gpu, p, prec, local, DC)
		}
	}

	// Each distinct replica's pipeline once.
	lastB := make([]float64, D*P)
	busy := make([]float64, D*P)
	lastBwd := make([]float64, D*P) // the last micro-batch's backward on the stage
	in := pipeInput{p: P, v: V, kind: p.Schedule.Kind}
	vf := make([]float64, P*V)
	vb := make([]float64, P*V)
	vsend := make([]float64, P*V)
	for r := 0; r < D; r++ {
		if q := sameReplica(p, fwd, bwd, send, r, P); q >= 0 {
			copy(lastB[r*P:(r+1)*P], lastB[q*P:(q+1)*P])
			copy(busy[r*P:(r+1)*P], busy[q*P:(q+1)*P])
			copy(lastBwd[r*P:(r+1)*P], lastBwd[q*P:(q+1)*P])
			if !opt.Trace {
				continue
			}
		}
		in.m = p.Replicas[r].Batch / p.Micro(r)
		for vs := 0; vs < P*V; vs++ {
			s := vs % P
			vf[vs] = fwd[r*P+s] / float64(V)
			vb[vs] = bwd[r*P+s] / float64(V)
			if s < P-1 {
				vsend[vs] = send[r*P+s]
			} else {
				vsend[vs] = send[r*P] // the wrap from the last stage to the first
				if vsend[vs] == 0 {
					vsend[vs] = c.p2pLink(&pl[r*P+P-1], &pl[r*P]).send(sendBytes(m, p.forReplica(r), P-1, prec))
				}
			}
		}
		in.fwd, in.bwd, in.send = vf, vb, vsend
		var trace func(pipeTask)
		if opt.Trace {
			rr := r
			trace = func(t pipeTask) {
				kind := "backward"
				if t.fwd {
					kind = "forward"
				}
				res.Spans = append(res.Spans, Span{Replica: rr, Stage: t.stage, Kind: kind, Chunk: t.chunk, Micro: t.mb, Start: t.start, End: t.end})
			}
		}
		lb, bz, err := in.run(w, trace)
		if err != nil {
			return nil, err
		}
		copy(lastB[r*P:(r+1)*P], lb)
		copy(busy[r*P:(r+1)*P], bz)
		for s := 0; s < P; s++ {
			lastBwd[r*P+s] = bwd[r*P+s] / float64(V)
		}
	}

	// Gradient reduction over each stage's replicas, then the optimizer.
	for s := 0; s < P; s++ {
		ready := 0.0
		window := math.Inf(1)
		for r := 0; r < D; r++ {
			ready = math.Max(ready, lastB[r*P+s])
			window = math.Min(window, lastBwd[r*P+s])
		}
		syncT := 0.0
		if DC > 1 && p.Zero < 3 {
			dl := c.dpLink(pl, p, s)
			minTP := pl[s].tp
			for r := 1; r < D; r++ {
				minTP = min(minTP, pl[r*P+s].tp)
			}
			bytes := params[s] / float64(minTP) * prec.comm
			ar := dl.allReduce(bytes, DC, p.DPAlgorithm == "tree")
			if p.OverlapGradReduce {
				nb := math.Max(1, math.Ceil(bytes/(p.BucketMB*1e6)))
				syncT = math.Max(ar/nb, ar-window*(1-1/nb))
			} else {
				syncT = ar
			}
		}
		if m.Tied && P > 1 && (s == 0 || s == P-1) {
			x, y := &pl[0], &pl[P-1]
			syncT += c.p2pLink(x, y).allReduce(float64(m.Vocab*m.Hidden)/float64(x.tp)*prec.comm, 2, false)
		}
		for r := 0; r < D; r++ {
			i := r*P + s
			x := &pl[i]
			end := ready + syncT + optim[i]
			res.Stages = append(res.Stages, StageResult{Replica: r, Stage: s, GPU: x.gpu.Name, TP: x.tp, CP: p.CP, Layers: p.Stages[s],
				ForwardS: fwd[i], BackwardS: bwd[i], ComputeS: busy[i], SyncS: syncT, OptimizerS: optim[i], EndS: end,
				TimeS: busy[i] + syncT + optim[i]})
			res.IterationS = math.Max(res.IterationS, end)
			if opt.Trace {
				if syncT > 0 {
					res.Spans = append(res.Spans, Span{Replica: r, Stage: s, Kind: "grad-sync", Start: ready, End: ready + syncT})
				}
				res.Spans = append(res.Spans, Span{Replica: r, Stage: s, Kind: "optimizer", Start: ready + syncT, End: end})
			}
		}
	}

	// Memory per GPU.
	res.Fits = true
	peak := 0.0
	var totalBusy float64
	type memKey struct {
		s         int
		gpu       *GPU
		tp        int
		micro     int
		recompute string
	}
	memo := map[memKey]MemoryBreakdown{}
	for i := range res.Stages {
		st := &res.Stages[i]
		x := &pl[st.Replica*P+st.Stage]
		k := memKey{st.Stage, x.gpu, x.tp, p.Micro(st.Replica), p.RecomputeOf(st.Replica)}
		mem, ok := memo[k]
		if !ok {
			mem = stageMemory(m, p.forReplica(st.Replica), st.Stage, x, prec, params[st.Stage])
			memo[k] = mem
		}
		st.Memory = mem
		st.CapacityBytes = x.gpu.MemoryBytes()
		st.Fits = st.Memory.Total <= st.CapacityBytes
		totalBusy += st.ComputeS
		if !st.Fits && res.Fits {
			res.Fits = false
			where := fmt.Sprintf("tp %d", st.TP)
			if CP > 1 {
				where += fmt.Sprintf(", cp %d", CP)
			}
			res.Reason = fmt.Sprintf("replica %d stage %d (%s, %s) needs %.1f GiB of its %.1f GiB", st.Replica, st.Stage, st.GPU, where, st.Memory.Total/(1<<30), st.CapacityBytes/(1<<30))
		}
		peak = math.Max(peak, st.Memory.Total)
	}
	res.PeakMemoryBytes = peak
	tokens := float64(p.GlobalBatch) * float64(m.Seq)
	res.TokensPerS = tokens / res.IterationS
	if m.Net != nil {
		res.SamplesPerS = res.TokensPerS
	}
	var peakFlops float64
	for r := 0; r < D; r++ {
		for s := 0; s < P; s++ {
			x := &pl[r*P+s]
			peakFlops += newDevice(x.gpu, prec).peak * float64(x.tp*CP)
		}
	}
	res.MFU = 3 * m.FLOPsPerToken() * res.TokensPerS / peakFlops
	res.Bubble = 1 - totalBusy/(float64(len(res.Stages))*res.IterationS)
	return res, nil
}

// sameReplica returns an earlier replica with the same pipeline as r (so
// its evaluation can be reused), or -1.
func sameReplica(p *Plan, fwd, bwd, send []float64, r, P int) int {
outer:
	for q := 0; q < r; q++ {
		if p.Replicas[q].Batch != p.Replicas[r].Batch {
			continue
		}
		for s := 0; s < P; s++ {
			if fwd[q*P+s] != fwd[r*P+s] || bwd[q*P+s] != bwd[r*P+s] || send[q*P+s] != send[r*P+s] {
				continue outer
			}
		}
		return q
	}
	return -1
}

// stageParams is the number of parameters stage s holds: its layers, the
// embedding on the first stage, the head on the last (and a copy of the
// tied embedding there when the two differ).
func stageParams(m *Model, p *Plan, s int) float64 {
	if m.Net != nil {
		return m.Net.rangeParams(p.Stages[s])
	}
	n := float64(p.Stages[s].Count()) * float64(m.LayerParams())
	if s == 0 {
		n += float64(m.EmbeddingParams())
	}
	if s == p.PP()-1 {
		n += float64(m.HeadParams())
		if m.Tied && p.PP() > 1 {
			n += float64(m.Vocab) * float64(m.Hidden)
		}
	}
	return n
}

// optimizerTime is the optimizer step of one GPU holding local parameters
// (sharded over the dp replicas from ZeRO 1 on); with offload, the
// gradients go to the host and the weights come back over PCIe, and the
// host steps.
func optimizerTime(d *device, g *GPU, p *Plan, prec precision, local float64, dp int) float64 {
	if p.Zero >= 1 {
		local /= float64(dp)
	}
	if p.Offload {
		return local*(prec.comm+prec.param)/(g.PCIeGBs()*1e9) + local/hostAdamRate
	}
	return d.stream(local*prec.step) + 20*d.launch
}

// stageMemory is one GPU of stage s's memory.
//
// Under context parallelism the parameters, gradients and optimizer
// states are replicated over the CP ranks (ZeRO shards them over DP ×
// CP), the activations and buffers are of seq/cp tokens, and the ring
// keeps two key/value chunks in flight.
func stageMemory(m *Model, p *Plan, s int, x *placed, prec precision, params float64) MemoryBreakdown {
	CP := p.ContextParallel()
	D := float64(p.DP() * CP)
	local := params / float64(x.tp)
	var mb MemoryBreakdown
	mb.Parameters = local * prec.param
	mb.Gradients = local * prec.grad
	mb.Optimizer = local * prec.optim
	if p.Zero >= 1 {
		mb.Optimizer /= D
	}
	if p.Zero >= 2 {
		mb.Gradients /= D
	}
	if p.Zero >= 3 {
		mb.Parameters /= D
	}
	if p.Offload {
		mb.Optimizer = 0
	}
	if m.Net != nil {
		mb.Activations, mb.Buffers = netStageMemory(m.Net, p, s, prec)
		if p.DP() > 1 {
			mb.Buffers += math.Min(p.BucketMB*1e6, local*prec.comm)
		}
		return mb.withAllocator(x.gpu)
	}
	sh := planShape(m, p, x.gpu, x.tp, prec)
	perLayer := sh.layerActivations()
	mb.Activations = perLayer * inFlightLayers(p, s)
	tokens := float64(p.MicroBatch) * sh.localSeq()
	h := float64(m.Hidden)
	rep := 1.0
	if sh.sp {
		rep = 1 / float64(x.tp)
	}
	inflight := inFlight(p, s)
	if s == 0 && m.Dropout {
		mb.Activations += tokens * h * rep * inflight // the embedding's dropout mask
	}
	// Buffers: send and receive of activations and gradients, the
	// gradient bucket, and the largest working set of a backward: one
	// layer's activations re-made by full recomputation, or the loss's
	// FP32 gradient over the vocabulary shard on the last stage.
	mb.Buffers = 4 * tokens * h * prec.act
	if p.DP()*CP > 1 {
		mb.Buffers += math.Min(p.BucketMB*1e6, local*prec.comm)
	}
	if CP > 1 {
		mb.Buffers += 2 * sh.kvChunk() // the chunk in use and the one arriving
	}
	if p.Recompute == "full" {
		full := sh
		full.recomp = "none"
		mb.Buffers += full.layerActivations()
	}
	if s == p.PP()-1 {
		logits := tokens * float64(m.Vocab) / float64(x.tp)
		mb.Activations += (4 + prec.act) * logits * inflight // logits and FP32 softmax kept for the loss's backward
		mb.Buffers += 4 * logits
	}
	return mb.withAllocator(x.gpu)
}

// withAllocator adds the allocator's share on GPU g and the total.
func (mb MemoryBreakdown) withAllocator(g *GPU) MemoryBreakdown {
	tensors := mb.Parameters + mb.Gradients + mb.Optimizer + mb.Activations + mb.Buffers
	mb.Allocator = tensors*g.Eff.Fragmentation + g.Eff.ContextGB*1e9
	mb.Total = tensors + mb.Allocator
	return mb
}

// transformerStage is a transformer stage's forward and backward (with
// recomputation) time per micro-batch on one GPU of x, with the first
// stage's embedding and the last's head.
func transformerStage(m *Model, p *Plan, s int, x *placed, d *device, prec precision, c *Cluster) (f, b float64) {
	sh := planShape(m, p, x.gpu, x.tp, prec)
	tpl := c.groupLink(x, x.tp)
	lc := sh.layer(d, tpl, c.cpLink(x))
	n := float64(p.Stages[s].Count())
	f, b = n*lc.fwd, n*(lc.bwd+lc.recompute)
	if s == 0 {
		ef, eb := sh.embedding(d, tpl)
		f, b = f+ef, b+eb
	}
	if s == p.PP()-1 {
		hf, hb := sh.head(d, tpl)
		f, b = f+hf, b+hb
	}
	return f, b
}

// sendBytes is what stage s sends the next stage per micro-batch (the
// last stage: the first, as the interleaved schedule wraps), before any
// split over tensor-parallel ranks.
func sendBytes(m *Model, p *Plan, s int, prec precision) float64 {
	if m.Net != nil {
		return netSendBytes(m.Net, p, s, prec)
	}
	return float64(p.MicroBatch*m.Seq*m.Hidden) * prec.act / float64(p.ContextParallel())
}

// inFlight is the number of micro-batches whose activations stage s keeps
// at its peak: all of them under GPipe, pp − s under 1F1B (Korthikanti et
// al.'s first stage keeps pp), and under interleaving the warm-up's chunks
// in units of whole stages.
func inFlight(p *Plan, s int) float64 {
	P := p.PP()
	mbs := 0
	for r, rep := range p.Replicas {
		mbs = max(mbs, rep.Batch/p.Micro(r))
	}
	switch p.Schedule.Kind {
	case "gpipe":
		return float64(mbs)
	case "interleaved":
		v := p.Schedule.chunks()
		chunks := min((P-s-1)*2+(v-1)*P+1, mbs*v)
		return float64(chunks) / float64(v)
	}
	return float64(min(P-s, mbs))
}

// inFlightLayers is the number of layer-micro-batches of activations stage
// s keeps at its peak.
func inFlightLayers(p *Plan, s int) float64 {
	return float64(p.Stages[s].Count()) * inFlight(p, s)
}

// place puts every stage of every replica on the cluster's GPUs of its
// type, in Megatron-LM's rank order (tensor-parallel ranks fastest, then
// CP ranks, then replicas, then stages), filling servers in order.
func place(c *Cluster, p *Plan) ([]placed, error) {
	P, D, CP := p.PP(), p.DP(), p.ContextParallel()
	out := make([]placed, D*P)
	next := map[string]int{}
	for s := 0; s < P; s++ {
		for r := 0; r < D; r++ {
			pl := p.Replicas[r].Stages[s]
			x, err := c.take(next, pl.GPU, pl.TP, CP, p)
			if err != nil {
				return nil, fmt.Errorf("replicas[%d].stages[%d]: %v", r, s, err)
			}
			out[r*P+s] = x
		}
	}
	return out, nil
}

// take places the next TP × CP GPUs of type name (empty: the cluster's
// only type), next counting what each type has given already.
func (c *Cluster) take(next map[string]int, name string, tp, cp int, p *Plan) (placed, error) {
	types := c.Types()
	asked := name
	if name == "" {
		if len(types) != 1 {
			return placed{}, fmt.Errorf("no GPU type, and the cluster has %d (%s)", len(types), strings.Join(types, ", "))
		}
		name = types[0]
	}
	if g, ok := LookupGPU(name); ok {
		name = g.Name
	}
	if c.GPUs(name) == 0 {
		return placed{}, fmt.Errorf("the cluster has no %q GPUs (it has %s)", asked, strings.Join(types, ", "))
	}
	first := next[name]
	width := tp * cp // TP ranks innermost, then CP
	next[name] += width
	x := placed{tp: tp, cp: cp}
	// find the GPUs' servers
	idx, node := 0, 0
	for gi := range c.Groups {
		grp := &c.Groups[gi]
		if grp.GPU.Name != name {
			node += grp.Nodes
			continue
		}
		n := grp.Nodes * grp.GPUsPerNode
		if first >= idx && first < idx+n {
			x.gpu = &c.Groups[gi].GPU
			x.group = gi
			x.perNode = grp.GPUsPerNode
			x.intra = grp.IntraGBs
			x.firstNode = node + (first-idx)/grp.GPUsPerNode
			lastIdx := first + width - 1
			if lastIdx < idx+n {
				x.lastNode = node + (lastIdx-idx)/grp.GPUsPerNode
			} else {
				x.lastNode = -1 // spills into the next group
			}
			for k := 0; k < cp; k++ {
				a, b := first+k*tp-idx, first+(k+1)*tp-1-idx
				x.tpCross = x.tpCross || b >= n || a/grp.GPUsPerNode != b/grp.GPUsPerNode
			}
			break
		}
		idx += n
		node += grp.Nodes
	}
	if x.gpu == nil || next[name] > c.GPUs(name) {
		return placed{}, fmt.Errorf("the plan needs %s GPUs beyond the cluster's %d (world size: the plan uses %d GPUs)", name, c.GPUs(name), p.GPUs())
	}
	if x.lastNode < 0 {
		x.lastNode = x.firstNode + 1
	}
	return x, nil
}

// netPerGPU is the network bandwidth one GPU of x's server gets when all
// of the server's GPUs send at once.
func (c *Cluster) netPerGPU(x *placed, sharing int) link {
	bw := c.NetworkGBs * 1e9 * x.gpu.Eff.Network * float64(sharing) / float64(x.perNode)
	return link{bw: bw, lat: c.NetworkLatencyUs * 1e-6}
}

// intraLink is the link inside x's server.
func intraLink(x *placed) link {
	return link{bw: x.intra * 1e9 * x.gpu.Eff.Link, lat: x.gpu.Eff.LinkLatencyUs * 1e-6}
}

// groupLink is the link of x's tensor-parallel groups: the server's link,
// or the network when a group spans servers.
func (c *Cluster) groupLink(x *placed, tp int) link {
	if !x.tpCross {
		return intraLink(x)
	}
	return c.netPerGPU(x, 1)
}

// cpLink is the link x's CP rings cross: the server's link when the
// stage's TP × CP GPUs share a server, else the network, with every GPU
// of the server sending at once (each TP rank has its own ring).
func (c *Cluster) cpLink(x *placed) link {
	if x.firstNode == x.lastNode {
		return intraLink(x)
	}
	return c.netPerGPU(x, 1)
}

// p2pLink is the link between two stages' groups.
func (c *Cluster) p2pLink(x, y *placed) link {
	if x.firstNode == y.firstNode && x.lastNode == y.lastNode && x.firstNode == x.lastNode {
		return intraLink(x)
	}
	a, b := c.netPerGPU(x, 1), c.netPerGPU(y, 1)
	if b.bw < a.bw {
		return b
	}
	return a
}

// dpLink is the slowest link stage s's data-parallel group crosses (see
// dpLinkOf).
func (c *Cluster) dpLink(pl []placed, p *Plan, s int) link {
	P := p.PP()
	return c.dpLinkOf(p.DP(), func(r int) *placed { return &pl[r*P+s] })
}

// dpLinkOf is the slowest link a data-parallel group of n ranks (rank r
// at(r)) crosses: the server's link when every rank shares one server,
// else the network, shared by the server's GPUs but carried by as many of
// the group's ranks as sit on one server.
func (c *Cluster) dpLinkOf(n int, at func(r int) *placed) link {
	first := at(0)
	same := true
	slow := intraLink(first)
	for r := 0; r < n; r++ {
		x := at(r)
		if x.firstNode != first.firstNode || x.lastNode != first.firstNode {
			same = false
		}
		if l := intraLink(x); l.bw < slow.bw {
			slow = l
		}
	}
	if same {
		return slow
	}
	// ranks of the group per server (consecutive ranks share servers;
	// a replica's CP ranks of one TP rank share its servers)
	perServer := 1
	run := 1
	for r := 1; r < n; r++ {
		if at(r).firstNode == at(r-1).firstNode {
			run++
		} else {
			run = 1
		}
		perServer = max(perServer, run)
	}
	perServer *= max(1, min(first.cp, first.perNode/first.tp))
	net := c.netPerGPU(first, perServer)
	for r := 1; r < n; r++ {
		if l := c.netPerGPU(at(r), perServer); l.bw < net.bw {
			net = l
		}
	}
	if slow.bw < net.bw {
		return slow
	}
	return net
}
