package hw

import (
	"fmt"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/graph"
)

// ProcID is a processor's index in Platform.Processors.
type ProcID = int

// Platform is a device: its processors, memory domains and links.
type Platform struct {
	Name string
	// Description is one line for listings.
	Description string
	// Processors in file order; the index is the processor's ID.
	Processors []*Processor
	// Domains are the memory domains; processors in one domain share memory
	// without copies.
	Domains []Domain
	// Links connect domains; a copy between two domains uses the link listed
	// for that direction, else the one listed for the opposite direction.
	Links []Link
	// Shared are the resources processors contend for: last-level caches
	// and memory channels (see Shared); nil means none is modelled.
	Shared []Shared
	// Source is where the platform came from: "preset:NAME" or a file path.
	Source string
}

// Domain is a memory domain: memory that its processors read and write
// without copies.
type Domain struct {
	Name        string
	Description string
	// CapacityBytes bounds the weights resident in the domain: every
	// layer placed on one of its processors keeps its weights there (in
	// the subgraph's data type). 0 means unlimited.
	CapacityBytes int64
}

// Link is a copy path between two memory domains.
type Link struct {
	From, To     string // domain names
	BandwidthGBs float64
	// Latency is the fixed cost of one transfer (setup, synchronisation,
	// format conversion), paid on top of bytes/bandwidth.
	Latency time.Duration
	// Shared marks a link that carries one transfer at a time (contended).
	Shared bool
}

// DTypeSpec is one data type a processor computes in, with its peak.
type DTypeSpec struct {
	DType graph.DType
	// PeakGOPS is the peak of one running subgraph in 10⁹ arithmetic
	// operations per second (a multiply-accumulate counts as two), as vendor
	// spec sheets state it. A processor with Concurrency k runs k subgraphs
	// at this peak each.
	PeakGOPS float64
	// Fit, when set, holds the cost model's figures for this data type
	// fitted to measurements (inlay calibrate --published): they replace
	// the processor's estimates for configurations in this type.
	Fit *DTypeFit
}

// DTypeFit is a data type's fitted cost-model figures (see package cost).
type DTypeFit struct {
	// SustainedGOPS is the throughput a large layer reaches (10⁹ ops/s),
	// before the per-class fractions.
	SustainedGOPS float64
	// MemBandwidthGBs is the sustained memory bandwidth.
	MemBandwidthGBs float64
	// DispatchOverhead and LayerOverhead are paid per subgraph and per
	// (unfused) layer.
	DispatchOverhead, LayerOverhead time.Duration
	// HalfFLOPs is the layer size at which a layer reaches half its class's
	// fraction (0: every layer reaches all of it).
	HalfFLOPs float64
	// OnChipBytes is the size of a tensor that stays on chip between two
	// layers (0: the processor's on_chip_kib).
	OnChipBytes int64
	// RequantGBs is the rate of the requantisation passes of an integer
	// type (cost.Efficiency.RequantGBs; 0: none).
	RequantGBs float64
	// MoveGBs is the rate of the data-movement operators' rewrites
	// (transpose, concat, resize, relayouting reshapes; cost.Efficiency.
	// MoveGBs; 0: they cost their memory traffic only).
	MoveGBs float64
	// Compute is the fraction of SustainedGOPS each operator class reaches,
	// in (0, 1], by class name (FitClasses); "other" is required.
	Compute map[string]float64
	// FittedTo says which figures the fit used.
	FittedTo string
	// HeldOut says how well the fit predicts what it was not fitted to
	// (a leave-one-model-out summary); empty when not measured.
	HeldOut string
}

// FitClasses are the operator class names DTypeFit.Compute takes (package
// cost's OpClasses; a test there keeps the two lists equal).
var FitClasses = []string{"conv", "depthwise", "conv1d", "matmul", "elementwise", "pool", "norm", "reduce", "recurrent", "data-movement", "control", "other"}

// Processor is one unit that runs subgraphs: a CPU cluster or core, a GPU,
// an NPU, a DSP or a DLA.
type Processor struct {
	Name string
	// Kind is one of Kinds.
	Kind        string
	Description string
	// Backends are the runtimes that drive it (see Backends); the first is
	// the default.
	Backends []string
	// DTypes are the data types it computes in; the first is the default.
	DTypes []DTypeSpec
	// MemBandwidthGBs is the DRAM bandwidth one running subgraph reaches at
	// best, in GB/s (10⁹ bytes).
	MemBandwidthGBs float64
	// DispatchOverhead is paid once per subgraph launch.
	DispatchOverhead time.Duration
	// LayerOverhead is paid once per layer (kernel launch) inside a subgraph;
	// element-wise work fused into its producer pays none.
	LayerOverhead time.Duration
	// OnChipBytes is on-chip memory (cache, tile memory, scratchpad) that
	// keeps a tensor passed between two layers of one subgraph out of DRAM
	// when the tensor fits; 0 means none.
	OnChipBytes int64
	// ChannelAlign is the channel granule of its convolution kernels: a
	// convolution computes its input and output channels (per group; a
	// depthwise one its channels) rounded up to a multiple of it, as a
	// vector or tensor unit with a fixed depth does (0 or 1: none).
	ChannelAlign int
	// WeightPrefetch says that it streams a subgraph's weights into on-chip
	// memory ahead of the layers that use them (a DMA engine beside the
	// compute units): the weights' DRAM time then overlaps the layers'
	// work, bounding the subgraph as a whole instead of each layer.
	WeightPrefetch bool
	// Concurrency is how many subgraphs it runs at once (≥ 1).
	Concurrency int
	// Domain is the memory domain it reads and writes.
	Domain string
	// MemoryBytes bounds the weights resident on this processor (memory
	// it can address or has of its own, within its domain's capacity);
	// 0 means unlimited.
	MemoryBytes int64
	// Cores are the CPU cores it is pinned to (host platform); nil otherwise.
	Cores []int
	// Support says which operators and shapes it can run.
	Support Support
	// ContentionSensitivity scales the slowdown its subgraphs suffer from
	// neighbours on shared resources (Platform.Shared): the slowdown of a
	// wholly memory-bound subgraph per unit of neighbour load, in
	// [0, MaxContentionSensitivity]; files that omit it get
	// DefaultContentionSensitivity. Profiling (inlay profile --corun)
	// fits it per configuration.
	ContentionSensitivity float64
}

// Support is a processor's operator support.
type Support struct {
	// Ops, when not empty, lists the only operators it runs (an allow-list).
	Ops []string
	// Unsupported lists operators it cannot run (a deny-list).
	Unsupported []string
	// MaxRank is the largest tensor rank it handles; 0 means no limit.
	MaxRank int
	// RankByOp raises or lowers MaxRank for the operators it names (a
	// runtime that lowers rank-5 reshapes and transposes, not rank-5
	// convolutions); 0 there means no limit.
	RankByOp map[string]int
	// MaxDim is the largest size of any tensor dimension; 0 means no limit.
	MaxDim int64
	// MaxConvKernel is the largest convolution kernel side; 0 means no limit.
	MaxConvKernel int64
	// MaxPoolWindow is the largest pooling window side; 0 means no limit.
	MaxPoolWindow int64
	// StaticShapesOnly rejects nodes whose tensors have unknown dimensions.
	StaticShapesOnly bool
	// TensorDTypes, when not empty, lists the element types its activations
	// (non-constant inputs and outputs) may have.
	TensorDTypes []graph.DType
}

// Config is a processor configuration: processor, backend and data type.
type Config struct {
	Proc    ProcID
	Backend string
	DType   graph.DType
}

// String formats a config as "proc#2/qnn-htp/int8".
func (c Config) String() string {
	return fmt.Sprintf("proc#%d/%s/%s", c.Proc, c.Backend, c.DType)
}

// Kinds are the processor kinds.
var Kinds = []string{"cpu", "dla", "dsp", "gpu", "npu"}

// Backends are the backend names a platform may use.
var Backends = []string{
	"acl", "armnn", "coreml", "cuda", "directml", "dla", "nnapi", "opencl",
	"openvino", "ort-cpu", "qnn-cpu", "qnn-gpu", "qnn-htp", "rocm", "snpe",
	"tensorrt", "tflite-gpu", "vulkan", "xnnpack",
}

// Proc returns the processor with the given ID, or nil when out of range.
func (p *Platform) Proc(id ProcID) *Processor {
	if id < 0 || id >= len(p.Processors) {
		return nil
	}
	return p.Processors[id]
}

// Names returns the processor names in ID order.
func (p *Platform) Names() []string {
	out := make([]string, len(p.Processors))
	for i, pr := range p.Processors {
		out[i] = pr.Name
	}
	return out
}

// Find returns the ID of the processor named nameOrKind or, when no
// processor has that name, of the fastest processor of that kind: the one
// with the highest peak in its default data type (ties: the lowest ID).
func (p *Platform) Find(nameOrKind string) (ProcID, error) {
	for i, pr := range p.Processors {
		if pr.Name == nameOrKind {
			return i, nil
		}
	}
	best := -1
	kind := strings.ToLower(nameOrKind)
	for i, pr := range p.Processors {
		if pr.Kind != kind {
			continue
		}
		if best < 0 || pr.DefaultPeak() > p.Processors[best].DefaultPeak() {
			best = i
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("hw: platform %q has no processor or processor kind %q (processors: %s)",
			p.Name, nameOrKind, strings.Join(p.Names(), ", "))
	}
	return best, nil
}

// DefaultPeak is the peak of the default data type, in GOPS.
func (pr *Processor) DefaultPeak() float64 {
	if len(pr.DTypes) == 0 {
		return 0
	}
	return pr.DTypes[0].PeakGOPS
}

// Peak returns the peak for a data type, in GOPS; ok is false when the
// processor does not compute in it.
func (pr *Processor) Peak(d graph.DType) (gops float64, ok bool) {
	for _, s := range pr.DTypes {
		if s.DType == d {
			return s.PeakGOPS, true
		}
	}
	return 0, false
}

// HasBackend reports whether the processor lists the backend.
func (pr *Processor) HasBackend(b string) bool {
	for _, x := range pr.Backends {
		if x == b {
			return true
		}
	}
	return false
}

// DefaultConfig is the processor's default backend and data type.
func (p *Platform) DefaultConfig(proc ProcID) Config {
	pr := p.Processors[proc]
	c := Config{Proc: proc}
	if len(pr.Backends) > 0 {
		c.Backend = pr.Backends[0]
	}
	if len(pr.DTypes) > 0 {
		c.DType = pr.DTypes[0].DType
	}
	return c
}

// Configs returns every backend × data type combination of a processor,
// the default first, then backends in listed order with data types in
// listed order.
func (p *Platform) Configs(proc ProcID) []Config {
	pr := p.Processors[proc]
	out := make([]Config, 0, len(pr.Backends)*len(pr.DTypes))
	for _, b := range pr.Backends {
		for _, d := range pr.DTypes {
			out = append(out, Config{Proc: proc, Backend: b, DType: d.DType})
		}
	}
	return out
}

// CheckConfig returns an error when the config names a processor, backend
// or data type the platform does not have.
func (p *Platform) CheckConfig(c Config) error {
	pr := p.Proc(c.Proc)
	if pr == nil {
		return fmt.Errorf("hw: platform %q has no processor #%d", p.Name, c.Proc)
	}
	if !pr.HasBackend(c.Backend) {
		return fmt.Errorf("hw: processor %q has no backend %q (backends: %s)", pr.Name, c.Backend, strings.Join(pr.Backends, ", "))
	}
	if _, ok := pr.Peak(c.DType); !ok {
		return fmt.Errorf("hw: processor %q does not compute in %s", pr.Name, c.DType)
	}
	return nil
}

// Link returns the index in p.Links of the link a transfer from one
// processor to another uses; ok is false when no copy is needed (same
// processor or same memory domain) or when no link connects the domains
// (Validate rejects such platforms).
func (p *Platform) Link(from, to ProcID) (link int, ok bool) {
	if from == to {
		return -1, false
	}
	a, b := p.Processors[from].Domain, p.Processors[to].Domain
	if a == b {
		return -1, false
	}
	return p.domainLink(a, b)
}

func (p *Platform) domainLink(a, b string) (int, bool) {
	for i, l := range p.Links {
		if l.From == a && l.To == b {
			return i, true
		}
	}
	for i, l := range p.Links {
		if l.From == b && l.To == a {
			return i, true
		}
	}
	return -1, false
}

// Transfer is the time to move bytes from one processor to another:
// 0 within one memory domain (zero-copy shared memory), else the link's
// latency plus bytes over its bandwidth.
func (p *Platform) Transfer(bytes int64, from, to ProcID) time.Duration {
	i, ok := p.Link(from, to)
	if !ok {
		return 0
	}
	l := p.Links[i]
	secs := float64(bytes) / (l.BandwidthGBs * 1e9)
	return l.Latency + time.Duration(secs*1e9+0.5)
}
