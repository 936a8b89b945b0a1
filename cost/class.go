package cost

import (
	"fmt"
	"math"
	"time"

	"github.com/inlay-dev/inlay/graph"
)

// OpClass groups operators that reach a similar fraction of a processor's
// peak.
type OpClass string

const (
	Conv         OpClass = "conv"          // dense and grouped convolutions
	Depthwise    OpClass = "depthwise"     // one filter per channel
	Conv1D       OpClass = "conv1d"        // convolutions over one axis (audio front-ends, sequences)
	MatMul       OpClass = "matmul"        // Gemm, MatMul, attention products
	Elementwise  OpClass = "elementwise"   // activations, arithmetic, casts
	Pool         OpClass = "pool"          // windowed pooling, resizing
	Norm         OpClass = "norm"          // batch, layer, instance, group norm
	Reduce       OpClass = "reduce"        // reductions (global pools included), softmax, top-k
	Recurrent    OpClass = "recurrent"     // LSTM, GRU, RNN
	DataMovement OpClass = "data-movement" // reshape, transpose, concat, gather
	Control      OpClass = "control"       // If, Loop, Scan
	Other        OpClass = "other"
)

// OpClasses lists every class in a fixed order.
var OpClasses = []OpClass{Conv, Depthwise, Conv1D, MatMul, Elementwise, Pool, Norm, Reduce, Recurrent, DataMovement, Control, Other}

var opClass = map[string]OpClass{
	"Conv": Conv, "ConvTranspose": Conv, "ConvInteger": Conv, "QLinearConv": Conv,
	"Gemm": MatMul, "MatMul": MatMul, "MatMulInteger": MatMul, "QLinearMatMul": MatMul, "Einsum": MatMul,
	"Attention": MatMul, "MultiHeadAttention": MatMul, "FusedMatMul": MatMul,
	"MaxPool": Pool, "AveragePool": Pool, "LpPool": Pool, "MaxRoiPool": Pool, "RoiAlign": Pool, "MaxUnpool": Pool,
	"Resize": Pool, "Upsample": Pool, "GridSample": Pool,
	"BatchNormalization": Norm, "LayerNormalization": Norm, "InstanceNormalization": Norm,
	"GroupNormalization": Norm, "LRN": Norm, "SkipLayerNormalization": Norm, "SimplifiedLayerNormalization": Norm,
	// A global pool is a reduction over the spatial axes (GlobalAveragePool
	// is ReduceMean over them), not a windowed pool.
	"GlobalAveragePool": Reduce, "GlobalMaxPool": Reduce, "GlobalLpPool": Reduce,
	"ReduceMean": Reduce, "ReduceSum": Reduce, "ReduceMax": Reduce, "ReduceMin": Reduce, "ReduceProd": Reduce,
	"ReduceL1": Reduce, "ReduceL2": Reduce, "ReduceLogSum": Reduce, "ReduceLogSumExp": Reduce,
	"ReduceSumSquare": Reduce, "Softmax": Reduce, "LogSoftmax": Reduce, "Hardmax": Reduce, "TopK": Reduce,
	"ArgMax": Reduce, "ArgMin": Reduce, "CumSum": Reduce, "DFT": Reduce, "STFT": Reduce,
	"LSTM": Recurrent, "GRU": Recurrent, "RNN": Recurrent,
	"Reshape": DataMovement, "Flatten": DataMovement, "Squeeze": DataMovement, "Unsqueeze": DataMovement,
	"Transpose": DataMovement, "Concat": DataMovement, "Split": DataMovement, "Slice": DataMovement,
	"Gather": DataMovement, "GatherElements": DataMovement, "GatherND": DataMovement, "Scatter": DataMovement,
	"ScatterND": DataMovement, "ScatterElements": DataMovement, "Pad": DataMovement, "Tile": DataMovement,
	"Expand": DataMovement, "Identity": DataMovement, "Shape": DataMovement, "Size": DataMovement,
	"DepthToSpace": DataMovement, "SpaceToDepth": DataMovement, "Dropout": DataMovement,
	"NonZero": DataMovement, "NonMaxSuppression": DataMovement, "Unique": DataMovement, "ConstantOfShape": DataMovement,
	"Range": DataMovement, "OneHot": DataMovement, "Compress": DataMovement, "Trilu": DataMovement,
	"If": Control, "Loop": Control, "Scan": Control,
}

// Classify returns a node's operator class. A Conv whose groups each see
// one input channel is Depthwise; another Conv or ConvTranspose with 1-D
// kernels (rank-3 weights) is Conv1D. Operators not listed with a class count
// as Elementwise when they do no MACs, else Other.
func Classify(m *graph.Model, n *graph.Node) OpClass {
	c, ok := opClass[n.Op]
	if !ok {
		if n.Work.MACs == 0 {
			return Elementwise
		}
		return Other
	}
	if c == Conv && n.Op == "Conv" && n.Attrs.Int("group", 1) > 1 && len(n.Inputs) > 1 {
		if w := m.Tensor(n.Inputs[1]); w != nil && len(w.Shape) > 1 && w.Shape[1] == 1 {
			return Depthwise
		}
	}
	if c == Conv && (n.Op == "Conv" || n.Op == "ConvTranspose") && len(n.Inputs) > 1 {
		if w := m.Tensor(n.Inputs[1]); w != nil && len(w.Shape) == 3 {
			return Conv1D
		}
	}
	return c
}

// Efficiency is the fraction of a processor's peaks that layers reach: the
// factors a calibration step fits.
type Efficiency struct {
	// Compute is the fraction of peak a large layer of each class reaches,
	// in (0, 1]. Classes not listed use Compute[Other].
	Compute map[OpClass]float64 `json:"compute"`
	// Memory is the fraction of the memory bandwidth reached, in (0, 1].
	Memory float64 `json:"memory"`
	// HalfFLOPs is the layer size (FLOPs) at which a layer reaches half of
	// its class's fraction: the saturating curve s(f) = f / (f + HalfFLOPs).
	// 0 means every layer reaches the full fraction.
	HalfFLOPs float64 `json:"half_flops"`
	// DispatchOverhead and LayerOverhead, when positive, replace the
	// processor's figures (hw.Processor) in the estimator built with these
	// factors, so that a calibration can fit them too; 0 keeps the
	// processor's.
	DispatchOverhead time.Duration `json:"dispatch_overhead,omitempty"`
	LayerOverhead    time.Duration `json:"layer_overhead,omitempty"`
	// PeakScale and BandwidthScale, when positive, multiply the processor's
	// peaks and memory bandwidth, for a calibration that finds the nominal
	// figures off (a faster clock, data served from caches); 0 means 1.
	PeakScale      float64 `json:"peak_scale,omitempty"`
	BandwidthScale float64 `json:"bandwidth_scale,omitempty"`
	// CacheBytes and CacheBandwidthScale, when both positive, model a cache:
	// a tensor, or a layer's weights, of at most CacheBytes moves at
	// CacheBandwidthScale times the (scaled, efficiency-weighted) memory
	// bandwidth, as it does when a subgraph runs again and again and its
	// data stays cached. 0 means no cache.
	CacheBytes          int64   `json:"cache_bytes,omitempty"`
	CacheBandwidthScale float64 `json:"cache_bandwidth_scale,omitempty"`
	// BoundaryGBs, when positive, charges every byte entering or leaving a
	// subgraph (its inputs and outputs: the copies a runtime makes to hand
	// tensors in and out of a session) at this rate in GB/s, on top of the
	// roofline; 0 means such copies are free.
	BoundaryGBs float64 `json:"boundary_gbs,omitempty"`
	// OnChipBytes, when positive, replaces the processor's on-chip memory
	// (hw.Processor.OnChipBytes) as the size of a tensor that stays on chip
	// between two layers of a subgraph: the share of a scratchpad a tensor
	// gets beside its producer's and consumer's working sets, which a
	// calibration can fit. 0 keeps the processor's.
	OnChipBytes int64 `json:"on_chip_bytes,omitempty"`
	// RequantGBs, when positive, charges a requantisation pass in integer
	// configurations: a node that cannot take its inputs' quantisation
	// parameters as they are (a Concat of tensors with their own scales,
	// an element-wise or normalisation node that is no convolution's
	// epilogue) rewrites its output at this rate in GB/s, after the
	// layer's roofline time; 0 means such passes are free.
	RequantGBs float64 `json:"requant_gbs,omitempty"`
	// MoveGBs, when positive, charges the operators that rewrite a tensor
	// without arithmetic (MovesData: transposes, concatenations, resizes,
	// reshapes that change the layout of a blocked tensor) their output
	// bytes at this rate in GB/s as compute, under the layer's roofline: an
	// accelerator's data movement has its own throughput, not its DRAM
	// bandwidth; 0 means they cost their memory traffic only.
	MoveGBs float64 `json:"move_gbs,omitempty"`
}

// movesData are the operators Efficiency.MoveGBs charges.
var movesData = map[string]bool{
	"Transpose": true, "Resize": true, "Upsample": true, "Reshape": true, "Flatten": true,
	"Slice": true, "Split": true, "Pad": true, "Gather": true, "GatherElements": true, "Tile": true,
	"Expand": true, "DepthToSpace": true, "SpaceToDepth": true,
}

// MovesData reports whether an operator rewrites its tensor without
// arithmetic (what Efficiency.MoveGBs charges): squeezes, identities and
// shape queries, which a runtime folds into a view, do not.
func MovesData(op string) bool { return movesData[op] }

// Of returns the compute fraction for a class.
func (e Efficiency) Of(c OpClass) float64 {
	if x, ok := e.Compute[c]; ok {
		return x
	}
	return e.Compute[Other]
}

// Validate checks the factors' ranges.
func (e Efficiency) Validate() error {
	if _, ok := e.Compute[Other]; !ok {
		return fmt.Errorf("cost: efficiency: class %q is required (the fallback)", Other)
	}
	for _, c := range OpClasses {
		if x, ok := e.Compute[c]; ok && !(x > 0 && x <= 1) {
			return fmt.Errorf("cost: efficiency: class %q: %g is not in (0, 1]", c, x)
		}
	}
	for c := range e.Compute {
		if !knownClass(c) {
			return fmt.Errorf("cost: efficiency: unknown class %q", c)
		}
	}
	if !(e.Memory > 0 && e.Memory <= 1) {
		return fmt.Errorf("cost: efficiency: memory %g is not in (0, 1]", e.Memory)
	}
	if e.HalfFLOPs < 0 {
		return fmt.Errorf("cost: efficiency: half_flops %g is negative", e.HalfFLOPs)
	}
	if !(e.PeakScale >= 0 && e.PeakScale <= 1e6) || !(e.BandwidthScale >= 0 && e.BandwidthScale <= 1e6) {
		return fmt.Errorf("cost: efficiency: scales must be in [0, 1e6] (peak %g, bandwidth %g)", e.PeakScale, e.BandwidthScale)
	}
	if !(e.RequantGBs >= 0) || math.IsInf(e.RequantGBs, 0) {
		return fmt.Errorf("cost: efficiency: requant_gbs %g is not a rate", e.RequantGBs)
	}
	if !(e.MoveGBs >= 0) || math.IsInf(e.MoveGBs, 0) {
		return fmt.Errorf("cost: efficiency: move_gbs %g is not a rate", e.MoveGBs)
	}
	if !(e.BoundaryGBs >= 0) {
		return fmt.Errorf("cost: efficiency: boundary_gbs %g is negative", e.BoundaryGBs)
	}
	if e.CacheBytes < 0 || !(e.CacheBandwidthScale >= 0 && e.CacheBandwidthScale <= 1e6) {
		return fmt.Errorf("cost: efficiency: cache_bytes %d must not be negative, cache_bandwidth_scale %g must be in [0, 1e6]", e.CacheBytes, e.CacheBandwidthScale)
	}
	if e.DispatchOverhead < 0 || e.LayerOverhead < 0 {
		return fmt.Errorf("cost: efficiency: negative overhead (dispatch %v, layer %v)", e.DispatchOverhead, e.LayerOverhead)
	}
	return nil
}

func knownClass(c OpClass) bool {
	for _, x := range OpClasses {
		if x == c {
			return true
		}
	}
	return false
}

// Clone returns a deep copy.
func (e Efficiency) Clone() Efficiency {
	out := e
	out.Compute = make(map[OpClass]float64, len(e.Compute))
	for k, v := range e.Compute {
		out.Compute[k] = v
	}
	return out
}

// DefaultEfficiency returns the starting factors for a processor kind,
// before calibration. They encode what the literature reports about each
// kind: CPUs reach a large share of peak on every class and saturate on
// small layers (XNNPACK, ORT: roughly half of peak on dense convolutions,
// much less on depthwise ones); GPUs need large kernels (large HalfFLOPs),
// do poorly on depthwise convolutions and sequential recurrent cells
// (AI-Benchmark, Ignatov et al. 2019; TFLite GPU delegate notes); NPUs and
// DLAs are fast on convolutions but need even larger layers to fill their
// MAC arrays and are weak on everything else (Puzzle, arXiv 2508.17764;
// Band, MobiSys'22).
func DefaultEfficiency(kind string) Efficiency {
	var c map[OpClass]float64
	e := Efficiency{}
	switch kind {
	case "gpu":
		c = map[OpClass]float64{Conv: 0.25, Depthwise: 0.05, MatMul: 0.4, Elementwise: 0.25, Pool: 0.15,
			Norm: 0.15, Reduce: 0.08, Recurrent: 0.02, DataMovement: 0.2, Control: 0.01, Other: 0.05}
		e.Memory, e.HalfFLOPs = 0.7, 10e6
	case "npu", "dsp":
		c = map[OpClass]float64{Conv: 0.25, Depthwise: 0.12, MatMul: 0.06, Elementwise: 0.1, Pool: 0.1,
			Norm: 0.08, Reduce: 0.04, Recurrent: 0.01, DataMovement: 0.1, Control: 0.01, Other: 0.02}
		e.Memory, e.HalfFLOPs = 0.6, 20e6
		if kind == "dsp" {
			for k, v := range c {
				c[k] = v / 2
			}
		}
	case "dla":
		c = map[OpClass]float64{Conv: 0.5, Depthwise: 0.1, MatMul: 0.2, Elementwise: 0.1, Pool: 0.1,
			Norm: 0.1, Reduce: 0.03, Recurrent: 0.01, DataMovement: 0.1, Control: 0.01, Other: 0.02}
		e.Memory, e.HalfFLOPs = 0.6, 40e6
	default: // cpu
		c = map[OpClass]float64{Conv: 0.55, Depthwise: 0.15, MatMul: 0.6, Elementwise: 0.2, Pool: 0.2,
			Norm: 0.2, Reduce: 0.15, Recurrent: 0.3, DataMovement: 0.3, Control: 0.1, Other: 0.1}
		e.Memory, e.HalfFLOPs = 0.7, 2e6
	}
	// 1-D convolutions start as 2-D ones do; calibration tells them apart.
	c[Conv1D] = c[Conv]
	e.Compute = c
	return e
}
