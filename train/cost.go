package train

import "math"

// precision holds the bytes of each kind of tensor under a precision.
type precision struct {
	act   float64 // an activation element
	param float64 // a weight as the forward pass reads it
	grad  float64 // a gradient as kept for the optimizer
	optim float64 // optimizer states (FP32 master weights, Adam's m and v)
	comm  float64 // a gradient element as data parallelism reduces it
	step  float64 // bytes the optimizer step moves per parameter
	fp32  bool    // FP32 tensors
	tf32  bool    // FP32 tensors, matrix products on TF32 tensor cores
}

// precisionOf is Megatron-LM's mixed precision (FP32 main gradients and
// master weights: 18 bytes a parameter, Korthikanti et al. Fig. 1) or FP32
// with Adam (16 bytes a parameter), its matrix products on the FP32 cores
// (fp32) or on TF32 tensor cores (tf32, PyTorch's allow_tf32, on by
// default in NVIDIA's containers).
func precisionOf(name string) precision {
	switch name {
	case "fp32":
		return precision{act: 4, param: 4, grad: 4, optim: 8, comm: 4, step: 36, fp32: true}
	case "tf32":
		return precision{act: 4, param: 4, grad: 4, optim: 8, comm: 4, step: 36, fp32: true, tf32: true}
	case "fp16":
		return precision{act: 2, param: 2, grad: 4, optim: 12, comm: 2, step: 38}
	default: // bf16: gradients reduced in FP32
		return precision{act: 2, param: 2, grad: 4, optim: 12, comm: 4, step: 38}
	}
}

// planPrecision is the precision of plan p with its optimizer's states:
// Adam keeps two FP32 moments a parameter (precisionOf); SGD with
// momentum keeps one, so it holds 4 bytes a parameter less and its step
// moves 16 bytes less (reading and writing the second moment).
func planPrecision(p *Plan) precision {
	pr := precisionOf(p.Precision)
	if p.Optimizer == "sgd" {
		pr.optim -= 4
		pr.step -= 16
	}
	return pr
}

// hostAdamRate is the parameters a second the host steps under offload
// (DeepSpeed's CPU Adam on a server's cores, per GPU; not calibrated).
const hostAdamRate = 1e9

// device is a GPU type with the figures the costs read, in SI units.
type device struct {
	peak, bw, launch, eG, eT, eM, back float64
}

func newDevice(g *GPU, p precision) device {
	peak := g.TensorTFLOPS
	switch {
	case p.tf32 && g.BF16:
		// TF32 runs at half the FP16/BF16 rate on Ampere and newer (the
		// GPUs whose tensor cores also take BF16).
		peak = g.TensorTFLOPS / 2
	case p.fp32 && g.FP32TFLOPS > 0:
		peak = g.FP32TFLOPS
	}
	e := g.Eff
	return device{peak: peak * 1e12, bw: g.MemBandwidthGBs * 1e9, launch: e.LaunchUs * 1e-6,
		eG: e.GEMM, eT: e.GEMMTraffic, eM: e.Memory, back: e.Backward}
}

// gemm is the time of an M×K by K×N product (copies weight matrices of
// K×N, for experts) with elem-byte operands: its FLOPs at the GEMM
// efficiency plus its operand traffic, scaled by GEMMTraffic, at the
// memory bandwidth.
func (d *device) gemm(m, k, n, copies, elem float64) float64 {
	return 2*m*k*n/(d.peak*d.eG) + d.eT*elem*(m*k+copies*k*n+m*n)/d.bw
}

// stream is the time of element-wise kernels moving bytes.
func (d *device) stream(bytes float64) float64 { return bytes / (d.bw * d.eM) }

// link is a collective's path: bandwidth in bytes a second and the latency
// of a step.
type link struct{ bw, lat float64 }

// allReduce is a ring (or tree) all-reduce of n bytes over k ranks.
func (l link) allReduce(n float64, k int, tree bool) float64 {
	if k <= 1 || n <= 0 {
		return 0
	}
	kf := float64(k)
	if tree {
		return 2*n/l.bw + 2*math.Ceil(math.Log2(kf))*l.lat
	}
	return 2*(kf-1)/kf*n/l.bw + 2*(kf-1)*l.lat
}

// allGather (and reduce-scatter) of n bytes in all over k ranks.
func (l link) allGather(n float64, k int) float64 {
	if k <= 1 || n <= 0 {
		return 0
	}
	kf := float64(k)
	return (kf-1)/kf*n/l.bw + (kf-1)*l.lat
}

// send is a point-to-point transfer of n bytes.
func (l link) send(n float64) float64 { return n/l.bw + l.lat }

// layerCost is one transformer layer's time per micro-batch on one GPU of
// a tensor-parallel group, with that group's collectives.
type layerCost struct {
	fwd, bwd, recompute float64
}

// shape is what a stage's costs depend on besides the GPU.
type shape struct {
	m      *Model
	prec   precision
	tp     int
	b      int // micro-batch, sequences
	sp     bool
	flash  bool
	recomp string
	// cp is the context-parallel degree (0 or 1: none); unbalanced says
	// the sequence does not split into 2 × cp chunks, so causal attention
	// loads the last CP rank most.
	cp         int
	unbalanced bool
}

// planShape is the shape of a stage of plan p on tp-way tensor-parallel
// groups of type g: fused attention when the plan asks for it and g runs
// it (FusedAttention).
func planShape(m *Model, p *Plan, g *GPU, tp int, prec precision) shape {
	return shape{m: m, prec: prec, tp: tp, b: p.MicroBatch, sp: p.SequenceParallel && tp > 1, flash: p.FlashAttention && g.FusedAttention(), recomp: p.Recompute,
		cp: p.ContextParallel(), unbalanced: !p.balancedCP(m)}
}

// cpDegree is the context-parallel degree, at least 1.
func (sh *shape) cpDegree() int { return max(sh.cp, 1) }

// localSeq is the tokens of a sequence one CP rank holds.
func (sh *shape) localSeq() float64 { return float64(sh.m.Seq) / float64(sh.cpDegree()) }

// kvChunk is the bytes of one CP rank's key and value chunk on one GPU of
// its tensor-parallel group (a GPU keeps at least one key/value head).
func (sh *shape) kvChunk() float64 {
	m := sh.m
	dh := float64(m.Hidden) / float64(m.Heads)
	kv := math.Max(float64(m.kvHeads())/float64(sh.tp), 1)
	return 2 * float64(sh.b) * sh.localSeq() * kv * dh * sh.prec.act
}

// fusedSoftmax reports whether Megatron-LM's fused scale-mask-softmax
// kernel takes the attention scores of a 16-bit micro-batch: its
// is_kernel_available asks for keys of 17 to 4,096 and query rows in
// multiples of 4, and for the micro-batch's heads on one GPU (b × heads /
// tp) in whole blocks of the kernel: 4 for rows longer than 128, else 8.
func (sh *shape) fusedSoftmax() bool {
	s := sh.m.Seq / sh.cpDegree()
	if s <= 16 || s > 4096 || s%4 != 0 || sh.m.Seq%4 != 0 {
		return false
	}
	block := 4
	if sh.m.Seq <= 128 {
		block = 8
	}
	return sh.b*sh.m.Heads/sh.tp%block == 0
}

// attnShare is the slowest CP rank's share of the attention work over
// the whole sequence: 1/cp under the load-balanced split (or for an
// encoder), (2cp − 1)/cp² when the last rank's queries see every key.
func (sh *shape) attnShare() float64 {
	c := float64(sh.cpDegree())
	if sh.unbalanced && !sh.m.Encoder {
		return (2*c - 1) / (c * c)
	}
	return 1 / c
}

// ring is ring attention over the CP ranks (Megatron-LM's
// context parallelism): cp steps, each computing one key/value chunk
// while the next chunk travels to the neighbour, so each of the cp − 1
// exchanging steps takes the longer of its transfer and its compute.
// compute is the rank's whole attention time, bytes a step's transfer.
func ring(compute, bytes float64, cp int, l link) float64 {
	if cp <= 1 {
		return compute
	}
	step := compute / float64(cp)
	return float64(cp-1)*math.Max(l.send(bytes), step) + step
}

// layer prices one transformer layer; cpLink is the link the CP ring
// crosses. Under context parallelism a GPU holds sl = seq/cp tokens of
// each sequence: its GEMMs and element-wise work are on sl tokens, its
// queries attend to the whole sequence (the keys and values arrive over
// the ring), and the backward sends the keys and values again and their
// gradients back, twice the forward's bytes.
func (sh *shape) layer(d *device, tpLink, cpLink link) layerCost {
	m := sh.m
	t := float64(sh.tp)
	b, s, h := float64(sh.b), float64(m.Seq), float64(m.Hidden)
	sl := sh.localSeq()
	cp := sh.cpDegree()
	f := float64(m.ffn())
	heads := float64(m.Heads)
	dh := h / heads
	e, k := m.experts()
	tokens := b * sl
	a := sh.prec.act
	rep := 1.0
	if sh.sp {
		rep = 1 / t
	}
	gated := 1.0
	if m.Gated {
		gated = 2
	}
	// GEMMs of the forward pass.
	proj := d.gemm(tokens, h, float64(m.qkvWidth())/t, 1, a) + d.gemm(tokens, h/t, h, 1, a)
	ffn := d.gemm(tokens*float64(k), h, gated*f/t, float64(e), a) + d.gemm(tokens*float64(k), f/t, h, float64(e), a)
	nb := b * heads / t
	share := sh.attnShare()
	attnFlops := 4 * nb * s * s * share * dh / (d.peak * d.eG)
	var attnTraffic float64
	if sh.flash {
		attnTraffic = 2 * nb * (sl + s) * dh * a
	} else {
		attnTraffic = nb * (2*(sl+s)*dh + 2*s*s*share) * a
	}
	attn := attnFlops + d.eT*attnTraffic/d.bw
	kv := sh.kvChunk()
	attnF := ring(attn, kv, cp, cpLink)
	attnB := ring(2*attn, 2*kv, cp, cpLink)
	// Element-wise traffic of the forward pass: two norms and two
	// bias-dropout-adds on the hidden states, the FFN activation, and the
	// softmax (and dropout) over the attention scores.
	hidden := 10 * tokens * h * a * rep
	if m.Dropout {
		hidden += 2 * tokens * h * rep
	}
	act := tokens * float64(k) * f / t * a * (1 + gated)
	var scores float64
	kernels := 9.0
	if !sh.flash {
		// Megatron-LM fuses scale, mask and softmax for 16-bit types
		// (one read and one write of the scores); in FP32 they are three
		// kernels.
		sq := nb * s * s * share // the rank's scores
		scores = 2 * sq * a
		kernels += 3
		switch {
		case sh.prec.fp32:
			scores *= 3
			kernels += 2
		case !sh.fusedSoftmax():
			// Megatron-LM's unfused path: cast to FP32, scale, mask,
			// softmax and cast back, each a kernel reading and writing
			// the scores (2+4, 4+4, 4+1+4, 4+4, 4+2 bytes an element).
			scores = 37 * sq
			kernels += 4
		}
		if m.AttentionDropout {
			scores += sq * (2*a + 1)
			kernels++
		}
	}
	if m.Gated {
		kernels++
	}
	elem := d.stream(hidden + act + scores)
	comm := 2 * tpLink.allReduce(tokens*h*a, sh.tp, false)
	// The host enqueues kernels ahead of the GPU, so a pass takes the
	// longer of the GPU's work and the host's dispatch (LaunchUs a
	// kernel): small layers are bound by the host.
	c := layerCost{
		fwd: math.Max(proj+ffn+attnF+elem+comm, kernels*d.launch),
		bwd: math.Max(2*(proj+ffn)+attnB+d.back*elem+comm, d.back*kernels*d.launch),
	}
	switch sh.recomp {
	case "full":
		c.recompute = c.fwd
	case "selective":
		c.recompute = math.Max(attnF+d.stream(scores), 3*d.launch)
	}
	return c
}

// embedding is the first stage's extra forward and backward time: the
// token and position lookup, dropout and, under tensor parallelism, the
// vocabulary-parallel all-reduce.
func (sh *shape) embedding(d *device, tpLink link) (fwd, bwd float64) {
	tokens := float64(sh.b) * sh.localSeq()
	h := float64(sh.m.Hidden)
	bytes := 4 * tokens * h * sh.prec.act
	fwd = math.Max(d.stream(bytes)+tpLink.allReduce(tokens*h*sh.prec.act, sh.tp, false), 3*d.launch)
	bwd = d.back * math.Max(d.stream(bytes), 3*d.launch)
	return fwd, bwd
}

// head is the last stage's extra time: the final norm, the logits and the
// cross-entropy over the vocabulary shard (in FP32).
func (sh *shape) head(d *device, tpLink link) (fwd, bwd float64) {
	tokens := float64(sh.b) * sh.localSeq()
	h, v := float64(sh.m.Hidden), float64(sh.m.Vocab)
	t := float64(sh.tp)
	a := sh.prec.act
	logits := d.gemm(tokens, h, v/t, 1, a)
	ce := tokens * v / t * (a + 12)
	norm := 2 * tokens * h * a
	comm := tpLink.allReduce(tokens*h*a, sh.tp, false)
	fwd = math.Max(logits+d.stream(ce+norm), 6*d.launch)
	bwd = math.Max(2*logits+d.stream(tokens*v/t*(4+a)+2*norm)+comm, 8*d.launch)
	return fwd, bwd
}

// MemoryBreakdown is one GPU's memory, bytes.
type MemoryBreakdown struct {
	Parameters  float64 `json:"parameters"`
	Gradients   float64 `json:"gradients"`
	Optimizer   float64 `json:"optimizer"`
	Activations float64 `json:"activations"`
	// Buffers are the pipeline's send and receive buffers, the gradient
	// bucket and the working set of the layer being recomputed or of the
	// loss's gradient.
	Buffers float64 `json:"buffers"`
	// Allocator is the allocator's fragmentation and the framework's
	// context and workspaces (the calibrated Fragmentation and ContextGB).
	Allocator float64 `json:"allocator"`
	Total     float64 `json:"total"`
}

// layerActivations is the memory one transformer layer keeps for its
// backward pass per micro-batch (Korthikanti et al., MLSys'23, Eq. 1–5,
// generalised to GQA, gated FFNs, FP32 and models without dropout): with
// tensor parallelism t, no sequence parallelism and recomputation, a GPT
// with dropout keeps s·b·h·(10 + 24/t + 5·a·s/(h·t)) bytes.
//
// Under context parallelism a GPU keeps its seq/cp tokens' share of every
// term; the attention probabilities are its queries' rows over the whole
// sequence.
func (sh *shape) layerActivations() float64 {
	m := sh.m
	t := float64(sh.tp)
	b, s, h := float64(sh.b), sh.localSeq(), float64(m.Hidden)
	full := float64(m.Seq)
	f := float64(m.ffn())
	heads := float64(m.Heads)
	_, k := m.experts()
	a := sh.prec.act
	sbh := s * b * h
	rep := 1.0
	if sh.sp {
		rep = 1 / t
	}
	if sh.recomp == "full" {
		return a * sbh * rep
	}
	kv := float64(m.kvHeads()) / heads
	// Replicated (or sequence-sharded): the inputs of the two norms, of
	// the QKV projection and of the first FFN matrix; the dropout masks.
	mem := 4 * a * sbh * rep
	if m.Dropout {
		mem += 2 * sbh * rep
	}
	// Tensor-sharded: Q, K, V, the projection's input, the FFN's
	// activation input and output (three for a gated FFN).
	ffnT := 2.0
	if m.Gated {
		ffnT = 3
	}
	mem += (a*sbh*(1+2*kv) + a*sbh + ffnT*a*s*b*f*float64(k)) / t
	// The attention probabilities (and their dropout) over s×s, unless
	// recomputed or never kept (fused attention).
	if !sh.flash && sh.recomp != "selective" {
		sq := a * b * heads * s * full
		if m.AttentionDropout {
			sq += b*heads*s*full + a*b*heads*s*full
		}
		mem += sq / t
	}
	return mem
}

// LayerTimes is one transformer layer's forward and backward time (the
// backward without recomputation) for a micro-batch of micro sequences on
// one GPU of a tp-way tensor-parallel group inside a server whose link
// gives intraGBs one way, at the given precision: the per-layer figure a
// profiler measures around a layer.
func LayerTimes(m *Model, g *GPU, tp, micro int, prec string, intraGBs float64) (fwd, bwd float64) {
	p := precisionOf(prec)
	d := newDevice(g, p)
	sh := shape{m: m, prec: p, tp: tp, b: micro, recomp: "none"}
	l := link{bw: intraGBs * 1e9 * g.Eff.Link, lat: g.Eff.LinkLatencyUs * 1e-6}
	lc := sh.layer(&d, l, l)
	return lc.fwd, lc.bwd
}
