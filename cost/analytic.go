package cost

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

// ErrUnsupported says that a node cannot run on the processor a subgraph
// was mapped to.
var ErrUnsupported = errors.New("cost: unsupported on this processor")

// Estimator predicts durations. Pure after construction; safe for
// concurrent use.
type Estimator interface {
	// Subgraph is the latency of running the layer set as one unit on the
	// config; wraps ErrUnsupported when a node cannot run there.
	Subgraph(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (time.Duration, error)
	// Transfer is the time to move bytes between processors.
	Transfer(bytes int64, from, to int) time.Duration
}

// UnsupportedError is the error Subgraph returns for a node the processor
// cannot run; errors.Is(err, ErrUnsupported) holds.
type UnsupportedError struct {
	Layer int
	// Err is hw.Platform.Supports' error: processor, node and reason.
	Err error
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("cost: layer %d: %v", e.Layer, e.Err)
}

// Unwrap returns ErrUnsupported and the reason.
func (e *UnsupportedError) Unwrap() []error { return []error{ErrUnsupported, e.Err} }

// Analytic is the roofline estimator described in the package doc.
type Analytic struct {
	p   *hw.Platform
	eff []Efficiency
	// fitted holds the factors of data types whose platform entry carries
	// fitted figures (hw.DTypeSpec.Fit), by processor and type; they take
	// the place of eff for those configurations unless the estimator was
	// calibrated (NewCalibrated).
	fitted map[fitKey]Efficiency

	mu      sync.Mutex
	tables  map[tableKey]*tableEntry
	support map[supportKey]*supportEntry
}

var _ Estimator = (*Analytic)(nil)

type fitKey struct {
	proc  int
	dtype graph.DType
}

type tableKey struct {
	lg  *graph.LayerGraph
	cfg hw.Config
}

type supportKey struct {
	lg   *graph.LayerGraph
	proc int
}

type tableEntry struct {
	once sync.Once
	t    *layerTable
}

type supportEntry struct {
	once sync.Once
	errs []error // per layer; nil when the processor runs it
}

// NewAnalytic returns the analytic estimator for a platform with each
// processor's DefaultEfficiency. The platform must be valid (Load, Preset
// and Platform.Validate guarantee it) and must not change afterwards.
func NewAnalytic(p *hw.Platform) *Analytic {
	eff := make([]Efficiency, len(p.Processors))
	for i, pr := range p.Processors {
		eff[i] = DefaultEfficiency(pr.Kind)
	}
	a := newAnalytic(p, eff)
	for i, pr := range p.Processors {
		for _, ds := range pr.DTypes {
			if ds.Fit != nil {
				a.fitted[fitKey{i, ds.DType}] = FittedEfficiency(pr, ds)
			}
		}
	}
	return a
}

// FittedEfficiency is the factors a data type's fitted figures stand
// for: the fitted class fractions and saturation size, the sustained
// throughput and bandwidth as scales of the nominal ones (Memory 1), the
// fitted overheads; no cache or boundary term. ds.Fit must be set and
// valid (hw.Platform.Validate).
func FittedEfficiency(pr *hw.Processor, ds hw.DTypeSpec) Efficiency {
	f := ds.Fit
	e := Efficiency{Compute: map[OpClass]float64{}, Memory: 1, HalfFLOPs: f.HalfFLOPs, OnChipBytes: f.OnChipBytes,
		DispatchOverhead: max(f.DispatchOverhead, 1), LayerOverhead: max(f.LayerOverhead, 1),
		PeakScale: f.SustainedGOPS / ds.PeakGOPS, BandwidthScale: f.MemBandwidthGBs / pr.MemBandwidthGBs, RequantGBs: f.RequantGBs, MoveGBs: f.MoveGBs}
	for k, v := range f.Compute {
		e.Compute[OpClass(k)] = v
	}
	return e
}

// DTypeFitOf is the inverse of FittedEfficiency: the figures to write into
// a platform file for factors fitted to a data type (cache and boundary
// terms, not fitted for whole-model figures, are dropped).
func DTypeFitOf(pr *hw.Processor, ds hw.DTypeSpec, e Efficiency, fittedTo string) *hw.DTypeFit {
	f := &hw.DTypeFit{SustainedGOPS: ds.PeakGOPS * nonZero(e.PeakScale),
		MemBandwidthGBs:  pr.MemBandwidthGBs * nonZero(e.BandwidthScale) * e.Memory,
		DispatchOverhead: e.DispatchOverhead, LayerOverhead: e.LayerOverhead, HalfFLOPs: e.HalfFLOPs,
		OnChipBytes: e.OnChipBytes / 1024 * 1024, RequantGBs: e.RequantGBs, MoveGBs: e.MoveGBs, Compute: map[string]float64{}, FittedTo: fittedTo}
	if f.DispatchOverhead <= 0 {
		f.DispatchOverhead = pr.DispatchOverhead
	}
	if f.LayerOverhead <= 0 {
		f.LayerOverhead = pr.LayerOverhead
	}
	for _, c := range OpClasses {
		f.Compute[string(c)] = e.Of(c)
	}
	return f
}

func nonZero(x float64) float64 {
	if x > 0 {
		return x
	}
	return 1
}

// effFor is the factors of a configuration's processor and data type.
func (a *Analytic) effFor(proc int, d graph.DType) Efficiency {
	if e, ok := a.fitted[fitKey{proc, d}]; ok {
		return e
	}
	return a.eff[proc]
}

// NewCalibrated returns the analytic estimator with fitted efficiency
// factors, one per processor in ID order.
func NewCalibrated(p *hw.Platform, eff []Efficiency) (*Analytic, error) {
	if len(eff) != len(p.Processors) {
		return nil, fmt.Errorf("cost: %d efficiency sets for %d processors", len(eff), len(p.Processors))
	}
	cp := make([]Efficiency, len(eff))
	for i, e := range eff {
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("cost: processor %q: %w", p.Processors[i].Name, err)
		}
		cp[i] = e.Clone()
	}
	return newAnalytic(p, cp), nil
}

// NewPartlyCalibrated is NewAnalytic with fitted factors for the
// processors in byProc (by ID), which replace every data type's factors
// of those processors, fitted figures of the platform included; the other
// processors keep NewAnalytic's.
func NewPartlyCalibrated(p *hw.Platform, byProc map[int]Efficiency) (*Analytic, error) {
	a := NewAnalytic(p)
	for proc, e := range byProc {
		if proc < 0 || proc >= len(p.Processors) {
			return nil, fmt.Errorf("cost: no processor #%d", proc)
		}
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("cost: processor %q: %w", p.Processors[proc].Name, err)
		}
		a.eff[proc] = e.Clone()
		for _, ds := range p.Processors[proc].DTypes {
			delete(a.fitted, fitKey{proc, ds.DType})
		}
	}
	return a, nil
}

func newAnalytic(p *hw.Platform, eff []Efficiency) *Analytic {
	return &Analytic{p: p, eff: eff, fitted: map[fitKey]Efficiency{}, tables: map[tableKey]*tableEntry{}, support: map[supportKey]*supportEntry{}}
}

// Platform returns the platform the estimator was built for.
func (a *Analytic) Platform() *hw.Platform { return a.p }

// Efficiency returns a copy of a processor's efficiency factors.
func (a *Analytic) Efficiency(proc int) Efficiency { return a.eff[proc].Clone() }

// Transfer is the platform's link time (hw.Platform.Transfer).
func (a *Analytic) Transfer(bytes int64, from, to int) time.Duration {
	return a.p.Transfer(bytes, from, to)
}

// Subgraph returns the predicted latency of running set on the config:
// the dispatch overhead plus each layer's roofline time, with the
// subgraph-internal savings of the package doc. An empty set takes 0. It
// caches per-layer figures by layer graph: a layer graph (and its model)
// must not change after its first use. It returns an error when the
// config is not one of the platform's, when a
// layer ID is out of range, and an *UnsupportedError (wrapping
// ErrUnsupported) when the processor cannot run a node. O(|set| + edges
// of the set · log |set|) after the first call per (layer graph, config).
func (a *Analytic) Subgraph(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (time.Duration, error) {
	if len(set) == 0 {
		return 0, nil
	}
	if err := a.p.CheckConfig(on); err != nil {
		return 0, fmt.Errorf("cost: %w", err)
	}
	if set[0] < 0 || set[len(set)-1] >= len(lg.Layers) {
		return 0, fmt.Errorf("cost: layer set %s out of range (model has %d layers)", set.Key(), len(lg.Layers))
	}
	if err := a.supported(lg, set, on.Proc); err != nil {
		return 0, err
	}
	ns := a.sum(lg, set, on, nil)
	return time.Duration(ns + 0.5), nil
}

// LayerTime is one layer's share of a subgraph's predicted time.
type LayerTime struct {
	Layer int
	// Compute and Memory are the two roofline terms; the layer takes the
	// larger, plus Requant (its requantisation passes, integer
	// configurations only) and Overhead (its kernel launch, 0 when fused).
	Compute, Memory, Requant, Overhead time.Duration
	// Bytes is the DRAM traffic counted, after the subgraph's savings.
	Bytes int64
}

// Explain returns each layer's figures in a subgraph, in set order, and
// the subgraph's dispatch overhead; the subgraph's time is the overhead
// plus each layer's max(Compute, Memory) + Requant + Overhead. On a
// processor that prefetches weights (hw.Processor.WeightPrefetch) the
// layers' Memory leaves their weights out (Bytes keeps them), and the
// overhead returned includes the time the weight stream outlasts the
// layers, if it does. Errors as Subgraph.
func (a *Analytic) Explain(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) ([]LayerTime, time.Duration, error) {
	if _, err := a.Subgraph(lg, set, on); err != nil || len(set) == 0 {
		return nil, 0, err
	}
	out := make([]LayerTime, 0, len(set))
	a.sum(lg, set, on, &out)
	dispatch, _ := a.overheads(on)
	dispatch += a.weightExcess(lg, set, on, out)
	return out, time.Duration(dispatch), nil
}

// sum adds up a checked set's time in ns, appending each layer's figures
// to explain when it is not nil.
func (a *Analytic) sum(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config, explain *[]LayerTime) float64 {
	t := a.table(lg, on)
	onChip := t.onChip
	dispatch, layerOverhead := a.overheads(on)
	ns, weightNs := 0.0, 0.0
	for _, id := range set {
		l := &t.layers[id]
		bytes := l.weights
		mem := t.nsFor(l.weights)
		if t.prefetch {
			weightNs += mem
			mem = 0
		}
		internal := true
		for _, in := range l.ins {
			if t.nsPerBoundaryByte > 0 && (in.from < 0 || !set.Contains(in.from)) {
				ns += in.bytes * t.nsPerBoundaryByte
			}
			if in.from >= 0 && in.bytes <= onChip && set.Contains(in.from) {
				continue
			}
			internal = false
			bytes += in.bytes
			mem += t.nsFor(in.bytes)
		}
		for _, out := range l.outs {
			if t.nsPerBoundaryByte > 0 && (out.external || !containsAll(set, out.consumers)) {
				ns += out.bytes * t.nsPerBoundaryByte
			}
			if !out.external && out.bytes <= onChip && containsAll(set, out.consumers) {
				continue
			}
			bytes += out.bytes
			mem += t.nsFor(out.bytes)
		}
		ns += math.Max(l.compute, mem) + l.requant
		over := 0.0
		if !(l.fusable && internal && len(l.ins) > 0) {
			over = layerOverhead
		}
		ns += over
		if explain != nil {
			*explain = append(*explain, LayerTime{Layer: id, Compute: time.Duration(l.compute + 0.5),
				Memory: time.Duration(mem + 0.5), Requant: time.Duration(l.requant + 0.5), Overhead: time.Duration(over), Bytes: int64(bytes + 0.5)})
		}
	}
	return dispatch + math.Max(ns, weightNs)
}

// weightExcess is the time by which a prefetching processor's weight
// stream outlasts the layers' work (0 when it does not, or without
// prefetch): what Explain adds to the dispatch overhead.
func (a *Analytic) weightExcess(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config, rows []LayerTime) float64 {
	dispatch, _ := a.overheads(on)
	var layers float64
	for _, r := range rows {
		layers += float64(max(r.Compute, r.Memory) + r.Requant + r.Overhead)
	}
	return math.Max(0, a.sum(lg, set, on, nil)-dispatch-layers)
}

// overheads returns a configuration's dispatch and layer overheads in ns:
// its efficiency factors' when set, else the processor's.
func (a *Analytic) overheads(on hw.Config) (dispatch, layer float64) {
	pr, e := a.p.Processors[on.Proc], a.effFor(on.Proc, on.DType)
	dispatch, layer = float64(pr.DispatchOverhead), float64(pr.LayerOverhead)
	if e.DispatchOverhead > 0 {
		dispatch = float64(e.DispatchOverhead)
	}
	if e.LayerOverhead > 0 {
		layer = float64(e.LayerOverhead)
	}
	return dispatch, layer
}

func containsAll(set graph.LayerSet, ids []int) bool {
	for _, id := range ids {
		if !set.Contains(id) {
			return false
		}
	}
	return true
}

// supported returns the first unsupported layer of the set, if any.
func (a *Analytic) supported(lg *graph.LayerGraph, set graph.LayerSet, proc int) error {
	e := entry(&a.mu, a.support, supportKey{lg, proc})
	e.once.Do(func() {
		e.errs = make([]error, len(lg.Layers))
		for _, l := range lg.Layers {
			for _, id := range l.Nodes {
				if err := a.p.Supports(proc, lg.Model, lg.Model.Nodes[id]); err != nil {
					e.errs[l.ID] = &UnsupportedError{Layer: l.ID, Err: err}
					break
				}
			}
		}
	})
	for _, id := range set {
		if err := e.errs[id]; err != nil {
			return err
		}
	}
	return nil
}

// layerTable holds the per-layer figures of one layer graph on one config.
type layerTable struct {
	layers    []layerCost
	nsPerByte float64
	// cacheBytes and nsPerCachedByte: a tensor (or a layer's weights) of at
	// most cacheBytes moves at the cache's rate (Efficiency.CacheBytes).
	cacheBytes      float64
	nsPerCachedByte float64
	// nsPerBoundaryByte is paid per byte entering or leaving a subgraph
	// (Efficiency.BoundaryGBs); 0 when not modelled.
	nsPerBoundaryByte float64
	// onChip is the size of a tensor that stays on chip between layers
	// (Efficiency.OnChipBytes, else the processor's).
	onChip float64
	// prefetch: the weights stream beside the layers (hw.Processor.
	// WeightPrefetch), bounding the subgraph, not each layer.
	prefetch bool
}

// nsFor is the time to move one tensor (or a layer's weights) of n bytes.
func (t *layerTable) nsFor(n float64) float64 {
	if n <= t.cacheBytes {
		return n * t.nsPerCachedByte
	}
	return n * t.nsPerByte
}

type layerCost struct {
	compute float64 // ns
	weights float64 // bytes, in the config's data type
	ins     []inEdge
	outs    []outTensor
	// fusable: element-wise only (no MACs, no anchor operator), so it fuses
	// into a producer in the same subgraph.
	fusable bool
	// requant is the time of its requantisation passes (ns; integer
	// configurations, Efficiency.RequantGBs), paid after the roofline.
	requant float64
}

type inEdge struct {
	from  int // producing layer, or -1 for a graph input
	bytes float64
}

type outTensor struct {
	bytes     float64
	consumers []int // consuming layers, ascending
	external  bool  // a graph output
}

func (a *Analytic) table(lg *graph.LayerGraph, cfg hw.Config) *layerTable {
	e := entry(&a.mu, a.tables, tableKey{lg, cfg})
	e.once.Do(func() { e.t = a.build(lg, cfg) })
	return e.t
}

func (a *Analytic) build(lg *graph.LayerGraph, cfg hw.Config) *layerTable {
	m := lg.Model
	pr := a.p.Processors[cfg.Proc]
	eff := a.effFor(cfg.Proc, cfg.DType)
	peak, _ := pr.Peak(cfg.DType)
	bandwidth := pr.MemBandwidthGBs
	if eff.PeakScale > 0 {
		peak *= eff.PeakScale
	}
	if eff.BandwidthScale > 0 {
		bandwidth *= eff.BandwidthScale
	}
	nsPerFLOP := 1 / peak // peak in GOPS: 1e9 ops/s, so ns per op is 1/peak
	t := &layerTable{
		layers:    make([]layerCost, len(lg.Layers)),
		nsPerByte: 1 / (bandwidth * eff.Memory), // GB/s = bytes per ns
	}
	if eff.BoundaryGBs > 0 {
		t.nsPerBoundaryByte = 1 / eff.BoundaryGBs
	}
	t.prefetch = pr.WeightPrefetch
	t.onChip = float64(pr.OnChipBytes)
	if eff.OnChipBytes > 0 {
		t.onChip = float64(eff.OnChipBytes)
	}
	if eff.CacheBytes > 0 && eff.CacheBandwidthScale > 0 {
		t.cacheBytes = float64(eff.CacheBytes)
		t.nsPerCachedByte = t.nsPerByte / eff.CacheBandwidthScale
	}
	isOut := map[string]bool{}
	for _, o := range m.Outputs {
		isOut[o] = true
	}
	scale := func(d graph.DType) float64 { return dtypeScale(d, cfg.DType) }
	tensorBytes := func(name string) float64 { return scaledBytes(m, name, cfg.DType) }
	// Precision (package doc): on an integer configuration, a quantized
	// model's quantized layers run in the integer type with their
	// QuantizeLinear/DequantizeLinear fused away, and its float layers at
	// the processor's float peak; on a float configuration every layer
	// runs in float, quantized ones dequantized (their conversions count).
	intCfg := !cfg.DType.IsFloat()
	quantModel := false
	for _, l := range lg.Layers {
		quantModel = quantModel || l.Precision != graph.Undefined
	}
	floatNsPerFLOP := nsPerFLOP
	if intCfg && quantModel {
		if fp := a.floatPeak(cfg.Proc); fp > 0 {
			floatNsPerFLOP = 1 / fp
		}
	}
	var epilogue map[int]bool
	var nsPerRequantByte float64
	if intCfg && eff.RequantGBs > 0 {
		epilogue, nsPerRequantByte = epilogues(lg), 1/eff.RequantGBs
	}
	for _, l := range lg.Layers {
		lc := &t.layers[l.ID]
		lc.weights = float64(l.Work.WeightBytes) * scale(l.Work.DType)
		lc.fusable = l.Work.MACs == 0
		layerNsPerFLOP := nsPerFLOP
		if intCfg && quantModel && l.Precision == graph.Undefined {
			layerNsPerFLOP = floatNsPerFLOP
		}
		fuseQDQ := intCfg && l.Precision != graph.Undefined
		for _, id := range l.Nodes {
			n := m.Nodes[id]
			c := Classify(m, n)
			anchor := graph.IsAnchor(n)
			if anchor || c != Elementwise && c != DataMovement {
				lc.fusable = false
			}
			if nsPerRequantByte > 0 && needsRequant(m, n, epilogue) {
				for _, o := range n.Outputs {
					lc.requant += tensorBytes(o) * nsPerRequantByte
				}
			}
			if eff.MoveGBs > 0 && MovesData(n.Op) {
				for _, o := range n.Outputs {
					lc.compute += tensorBytes(o) / eff.MoveGBs
				}
			}
			if n.Work.FLOPs <= 0 || fuseQDQ && (n.Op == "QuantizeLinear" || n.Op == "DequantizeLinear") {
				continue
			}
			// f / s(f) = f + HalfFLOPs: the anchor's saturating curve; riders
			// fused into it run at their class's fraction.
			f := float64(n.Work.FLOPs)
			if anchor {
				f += eff.HalfFLOPs
			}
			lc.compute += f * layerNsPerFLOP / eff.Of(c) * channelPadding(m, n, pr.ChannelAlign)
		}
		for _, in := range l.Inputs {
			from := -1
			if tn := m.Tensor(in); tn != nil && tn.Producer >= 0 {
				from = lg.NodeLayer[tn.Producer]
			}
			lc.ins = append(lc.ins, inEdge{from: from, bytes: tensorBytes(in)})
		}
		for _, o := range l.Outputs {
			ot := outTensor{bytes: tensorBytes(o), external: isOut[o]}
			if tn := m.Tensor(o); tn != nil {
				for _, c := range tn.Consumers {
					if cl := lg.NodeLayer[c]; cl >= 0 && cl != l.ID {
						ot.consumers = append(ot.consumers, cl)
					}
				}
			}
			ot.consumers = graph.NewLayerSet(ot.consumers...)
			lc.outs = append(lc.outs, ot)
		}
	}
	return t
}

// floatPeak is the processor's fastest float peak in GOPS, scaled by its
// factors (0: none).
func (a *Analytic) floatPeak(proc int) float64 {
	best := 0.0
	for _, ds := range a.p.Processors[proc].DTypes {
		if !ds.DType.IsFloat() {
			continue
		}
		p := ds.PeakGOPS * nonZero(a.effFor(proc, ds.DType).PeakScale)
		best = math.Max(best, p)
	}
	return best
}

// channelPadding is the factor by which a convolution's work grows when
// its channels are rounded up to a multiple of align (hw.Processor.
// ChannelAlign): input and output channels per group for a dense or
// grouped one, the channels for a depthwise one; 1 for other nodes, for
// align ≤ 1 and for shapes not known.
func channelPadding(m *graph.Model, n *graph.Node, align int) float64 {
	w := 1
	switch n.Op {
	case "Conv", "ConvInteger":
	case "QLinearConv":
		w = 3
	default:
		return 1
	}
	if align <= 1 || len(n.Inputs) <= w {
		return 1
	}
	t := m.Tensor(n.Inputs[w])
	if t == nil || len(t.Shape) < 3 || t.Shape[0] <= 0 || t.Shape[1] <= 0 {
		return 1
	}
	g := int64(align)
	up := func(x int64) float64 { return float64((x+g-1)/g*g) / float64(x) }
	out, in, groups := t.Shape[0], t.Shape[1], n.Attrs.Int("group", 1)
	if groups > 1 && in == 1 {
		return up(out) // depthwise: the channels fill the lanes
	}
	if groups < 1 || out%groups != 0 {
		groups = 1
	}
	return up(out/groups) * up(in)
}

// epilogues returns the nodes that run inside a producer's kernel in an
// integer configuration: every anchor (graph.IsAnchor), and every other
// node whose first activation input comes from one of them (an activation,
// a folded normalisation, a residual add), a Concat excepted. What is left
// (a Concat, a normalisation of a concatenation, arithmetic on a graph
// input) takes tensors whose quantisation parameters are not its own.
func epilogues(lg *graph.LayerGraph) map[int]bool {
	m := lg.Model
	epi := map[int]bool{}
	order, err := m.TopoOrder()
	if err != nil {
		return epi
	}
	for _, id := range order {
		n := m.Nodes[id]
		if lg.NodeLayer[id] < 0 {
			continue
		}
		if graph.IsAnchor(n) {
			epi[id] = true
			continue
		}
		if n.Op == "Concat" {
			continue
		}
		for _, in := range n.Inputs {
			t := m.Tensor(in)
			if in == "" || t == nil || t.IsConst() {
				continue
			}
			epi[id] = t.Producer >= 0 && epi[t.Producer]
			break
		}
	}
	return epi
}

// needsRequant reports whether a node pays a requantisation pass in an
// integer configuration: a Concat of two or more activations, or an
// element-wise or normalisation node outside every epilogue (epilogues);
// clamps (Relu, Clip) fold into the pass before them, and quantisation
// nodes are costed as such.
func needsRequant(m *graph.Model, n *graph.Node, epilogue map[int]bool) bool {
	switch n.Op {
	case "Concat":
		acts := 0
		for _, in := range n.Inputs {
			if t := m.Tensor(in); in != "" && t != nil && !t.IsConst() {
				acts++
			}
		}
		return acts >= 2
	case "Relu", "Clip", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear":
		return false
	}
	if epilogue[n.ID] || graph.IsAnchor(n) {
		return false
	}
	c := Classify(m, n)
	return c == Elementwise || c == Norm
}

// dtypeScale is the factor a float tensor of type d changes size by when
// it runs in type run (1 for the others).
func dtypeScale(d, run graph.DType) float64 {
	if d.IsFloat() && d.Size() > 0 && run.Size() > 0 {
		return float64(run.Size()) / float64(d.Size())
	}
	return 1
}

// scaledBytes is the size of m's tensor name when it runs in type run (0
// for a tensor m does not have).
func scaledBytes(m *graph.Model, name string, run graph.DType) float64 {
	tn := m.Tensor(name)
	if tn == nil {
		return 0
	}
	return float64(tn.Bytes()) * dtypeScale(tn.DType, run)
}

// entry is m[key] under mu, made (zero) when absent.
func entry[K comparable, E any](mu *sync.Mutex, m map[K]*E, key K) *E {
	mu.Lock()
	defer mu.Unlock()
	e := m[key]
	if e == nil {
		e = new(E)
		m[key] = e
	}
	return e
}
