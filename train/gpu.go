package train

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// gpusCSV is a copy of the GPU specification table with its sources per
// row (datasheets and whitepapers; see the source and notes columns). Its
// first tensor column is the dense FP16/BF16 rate with FP32 accumulation,
// which is what mixed-precision training gets: the GeForce cards run it at
// half their FP16-accumulate rate.
//
//go:embed gpus.csv
var gpusCSV []byte

// GPU is one GPU type: its datasheet figures and the efficiency it reaches.
type GPU struct {
	// Name is the type's name ("A100-80"); Aliases are other names for it
	// ("GH-96" for "GH200-96", as Sailor writes it).
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
	// TensorTFLOPS is the dense FP16/BF16 tensor peak with FP32
	// accumulation; FP32TFLOPS the FP32 peak without tensor cores.
	TensorTFLOPS float64 `json:"tensor_tflops"`
	FP32TFLOPS   float64 `json:"fp32_tflops"`
	BF16         bool    `json:"bf16"`
	MemoryGB     float64 `json:"memory_gb"`
	// MemBandwidthGBs is the peak device-memory bandwidth.
	MemBandwidthGBs float64 `json:"mem_bandwidth_gbs"`
	// LinkGBs is the total bidirectional GPU-to-GPU link bandwidth per GPU
	// (0: none); PCIeGen the host link's PCIe generation.
	LinkGBs float64 `json:"link_gbs"`
	PCIeGen int     `json:"pcie_gen"`
	Source  string  `json:"source,omitempty"`
	// Eff is the calibrated efficiency (DefaultEfficiency where none was
	// fitted for this type).
	Eff Efficiency `json:"efficiency"`
	// Calibrated says whether Eff was fitted to measurements of this type.
	Calibrated bool `json:"calibrated"`
}

// MemoryBytes is the GPU's memory in bytes.
func (g *GPU) MemoryBytes() float64 { return g.MemoryGB * 1e9 }

// FusedAttention reports whether g runs fused attention kernels
// (FlashAttention-2 needs Ampere or newer: the types whose tensor cores
// take BF16). A plan's flash_attention fuses the attention of the stages
// on such GPUs; Volta's and Turing's stages keep the unfused core, so one
// data-parallel gang may mix the two, each replica with its own kernels.
func (g *GPU) FusedAttention() bool { return g.BF16 }

// PCIeGBs is the host link's bandwidth one way (x16).
func (g *GPU) PCIeGBs() float64 {
	switch {
	case g.PCIeGen >= 5:
		return 64
	case g.PCIeGen == 4:
		return 32
	default:
		return 16
	}
}

// Efficiency holds the few parameters per GPU type that turn shapes into
// times (and tensors into memory). They are shared by every model and plan
// on the type and fitted to measurements (train/published).
type Efficiency struct {
	// GEMM is the fraction of the peak a large matrix multiplication
	// reaches.
	GEMM float64 `json:"gemm"`
	// GEMMTraffic multiplies a GEMM's operand bytes (A, B and C) moved at
	// the memory bandwidth, added to its compute time: the penalty of thin
	// and small matrices.
	GEMMTraffic float64 `json:"gemm_traffic"`
	// Memory is the fraction of the memory bandwidth that element-wise
	// kernels (norms, softmax, activations, optimizer) reach.
	Memory float64 `json:"memory"`
	// Backward is the backward pass's element-wise traffic and kernel count
	// over the forward's (the gradient of each norm, softmax, dropout and
	// activation reads the saved input and the output gradient, and
	// autograd adds accumulations and bias reductions).
	Backward float64 `json:"backward"`
	// LaunchUs is the fixed cost of one kernel, microseconds.
	LaunchUs float64 `json:"launch_us"`
	// Link and Network are the fractions of the intra-node link and of the
	// network bandwidth that collectives reach.
	Link    float64 `json:"link"`
	Network float64 `json:"network"`
	// LinkLatencyUs is the latency of one step of a collective inside a
	// server (a ring all-reduce over k GPUs takes 2(k−1) steps),
	// microseconds: what small tensor-parallel messages pay.
	LinkLatencyUs float64 `json:"link_latency_us"`
	// ContextGB is memory the framework holds besides tensors (CUDA
	// context, library workspaces, the allocator's reserve), GB.
	ContextGB float64 `json:"context_gb"`
	// Fragmentation is the allocator's overhead over the tensors' peak, a
	// fraction.
	Fragmentation float64 `json:"fragmentation"`
}

// DefaultEfficiency is the efficiency of a GPU type that has no fitted
// parameters: the median of the fitted types (see calibrated.go).
func DefaultEfficiency() Efficiency { return defaultEfficiency }

var gpuCatalogue = sync.OnceValues(parseGPUs)

// GPUs returns the GPU types of the embedded table, in its order, with
// their calibrated efficiency.
func GPUs() []GPU {
	g, err := gpuCatalogue()
	if err != nil {
		panic(err) // the embedded table is part of the build
	}
	return append([]GPU(nil), g...)
}

// extraAliases are names other data gives a type, beyond the table's
// aliases_in_data column: Sailor's (GH-96) and the one-word names.
var extraAliases = map[string][]string{
	"GH200-96":   {"GH-96", "GH200"},
	"A100-40":    {"A100"},
	"H100-SXM":   {"H100"},
	"RTX-2080Ti": {"RTX-2080-Ti"},
}

func parseGPUs() ([]GPU, error) {
	rows, err := csv.NewReader(bytes.NewReader(gpusCSV)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("train: gpus.csv: %w", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	num := func(r []string, name string) float64 {
		v, _ := strconv.ParseFloat(strings.TrimSpace(r[col[name]]), 64)
		return v
	}
	var out []GPU
	for _, r := range rows[1:] {
		g := GPU{
			Name:            r[col["gpu"]],
			TensorTFLOPS:    num(r, "tensor_fp16_bf16_dense_tflops"),
			FP32TFLOPS:      num(r, "fp32_tflops"),
			BF16:            r[col["bf16"]] == "yes",
			MemoryGB:        num(r, "memory_gb"),
			MemBandwidthGBs: num(r, "memory_bandwidth_gbs"),
			LinkGBs:         num(r, "gpu_link_gbs"),
			PCIeGen:         int(num(r, "pcie_gen")),
			Source:          r[col["source"]],
		}
		g.Aliases = append(g.Aliases, extraAliases[g.Name]...)
		// "Sailor V100-16" in aliases_in_data names the same type; the
		// other words there describe clusters, not names.
		g.Eff, g.Calibrated = calibratedEfficiency(g.Name)
		out = append(out, g)
	}
	return out, nil
}

// LookupGPU returns the GPU type called name (or one of its aliases; case
// does not matter).
func LookupGPU(name string) (GPU, bool) {
	gs, _ := gpuCatalogue()
	for _, g := range gs {
		if strings.EqualFold(g.Name, name) {
			return g, true
		}
		for _, a := range g.Aliases {
			if strings.EqualFold(a, name) {
				return g, true
			}
		}
	}
	return GPU{}, false
}

// GPUNames lists the catalogue's type names.
func GPUNames() []string {
	gs, _ := gpuCatalogue()
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Name
	}
	return out
}

// WithEfficiency returns the catalogue type with eff in place of its
// calibrated efficiency (the calibration's trial parameters).
func (g GPU) WithEfficiency(eff Efficiency) GPU {
	g.Eff = eff
	g.Calibrated = true
	return g
}
