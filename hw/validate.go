package hw

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/internal/yamlpath"
)

// fieldError is a validation error at a place in the YAML schema: path
// holds mapping keys (string) and sequence indices (int).
type fieldError struct {
	path []any
	msg  string
}

func (e *fieldError) Error() string { return yamlpath.String(e.path) + ": " + e.msg }

// checkName refuses a name with a space or a control character: names
// appear in plan files, CLI flags, tables and one-line errors.
func checkName(name string, path ...any) *fieldError {
	if msg := errline.BadName(name); msg != "" {
		return ferr(msg, path...)
	}
	return nil
}

func ferr(msg string, path ...any) *fieldError {
	return &fieldError{path: path, msg: msg}
}

// Validate checks a platform built in code the way Load checks a file:
// known kinds, backends and data types; positive peaks and bandwidths;
// non-negative overheads; concurrency ≥ 1; unique names; domains that
// exist; links between existing, distinct domains; and a link between every
// two domains that hold processors.
func (p *Platform) Validate() error {
	if fe := p.validate(); fe != nil {
		return fmt.Errorf("hw: platform %q: %w", p.Name, fe)
	}
	return nil
}

func (p *Platform) validate() *fieldError {
	if p.Name == "" {
		return ferr("is required", "name")
	}
	if fe := checkName(p.Name, "name"); fe != nil {
		return fe
	}
	domains := map[string]bool{}
	for i, d := range p.Domains {
		if d.Name == "" {
			return ferr("is required", "domains", i, "name")
		}
		if fe := checkName(d.Name, "domains", i, "name"); fe != nil {
			return fe
		}
		if domains[d.Name] {
			return ferr(fmt.Sprintf("duplicate domain %q", d.Name), "domains", i, "name")
		}
		domains[d.Name] = true
		if d.CapacityBytes < 0 {
			return ferr("must be ≥ 0 (0: unlimited)", "domains", i, "capacity_mib")
		}
	}
	if len(p.Processors) == 0 {
		return ferr("at least one processor is required", "processors")
	}
	names := map[string]bool{}
	for i, pr := range p.Processors {
		if fe := pr.validate(domains); fe != nil {
			fe.path = append([]any{"processors", i}, fe.path...)
			return fe
		}
		if names[pr.Name] {
			return ferr(fmt.Sprintf("duplicate processor %q", pr.Name), "processors", i, "name")
		}
		names[pr.Name] = true
	}
	type pair struct{ a, b string }
	seen := map[pair]bool{}
	for i, l := range p.Links {
		if !domains[l.From] {
			return ferr(fmt.Sprintf("unknown domain %q", l.From), "links", i, "from")
		}
		if !domains[l.To] {
			return ferr(fmt.Sprintf("unknown domain %q", l.To), "links", i, "to")
		}
		if l.From == l.To {
			return ferr("a link joins two different domains", "links", i, "to")
		}
		if !(l.BandwidthGBs > 0) {
			return ferr("must be > 0", "links", i, "bandwidth_gbs")
		}
		if l.Latency < 0 {
			return ferr("must be ≥ 0", "links", i, "latency")
		}
		if seen[pair{l.From, l.To}] {
			return ferr(fmt.Sprintf("duplicate link %q → %q", l.From, l.To), "links", i)
		}
		seen[pair{l.From, l.To}] = true
	}
	if fe := p.validateShared(); fe != nil {
		return fe
	}
	var used []string
	usedSet := map[string]bool{}
	for _, pr := range p.Processors {
		if !usedSet[pr.Domain] {
			usedSet[pr.Domain] = true
			used = append(used, pr.Domain)
		}
	}
	for i, a := range used {
		for _, b := range used[i+1:] {
			if _, ok := p.domainLink(a, b); !ok {
				return ferr(fmt.Sprintf("no link between domains %q and %q, which both hold processors", a, b), "links")
			}
		}
	}
	return nil
}

func (pr *Processor) validate(domains map[string]bool) *fieldError {
	if pr.Name == "" {
		return ferr("is required", "name")
	}
	if fe := checkName(pr.Name, "name"); fe != nil {
		return fe
	}
	if !slices.Contains(Kinds, pr.Kind) {
		return ferr(fmt.Sprintf("unknown kind %q (kinds: %s)", pr.Kind, strings.Join(Kinds, ", ")), "kind")
	}
	if len(pr.Backends) == 0 {
		return ferr("at least one backend is required", "backends")
	}
	for i, b := range pr.Backends {
		if !slices.Contains(Backends, b) {
			return ferr(fmt.Sprintf("unknown backend %q (backends: %s)", b, strings.Join(Backends, ", ")), "backends", i)
		}
		if slices.Contains(pr.Backends[:i], b) {
			return ferr(fmt.Sprintf("duplicate backend %q", b), "backends", i)
		}
	}
	if len(pr.DTypes) == 0 {
		return ferr("at least one data type is required", "dtypes")
	}
	for i, d := range pr.DTypes {
		if !IsComputeDType(d.DType) {
			return ferr(fmt.Sprintf("%s is not a compute data type", d.DType), "dtypes", i, "dtype")
		}
		for _, e := range pr.DTypes[:i] {
			if e.DType == d.DType {
				return ferr(fmt.Sprintf("duplicate data type %s", d.DType), "dtypes", i, "dtype")
			}
		}
		if !(d.PeakGOPS > 0) {
			return ferr("must be > 0", "dtypes", i, "peak_gops")
		}
		if fe := validateFit(d.Fit); fe != nil {
			fe.path = append([]any{"dtypes", i, "fit"}, fe.path...)
			return fe
		}
	}
	if !(pr.MemBandwidthGBs > 0) {
		return ferr("must be > 0", "mem_bandwidth_gbs")
	}
	if pr.MemoryBytes < 0 {
		return ferr("must be ≥ 0 (0: unlimited)", "memory_mib")
	}
	if pr.DispatchOverhead < 0 {
		return ferr("must be ≥ 0", "dispatch_overhead")
	}
	if pr.LayerOverhead < 0 {
		return ferr("must be ≥ 0", "layer_overhead")
	}
	if pr.OnChipBytes < 0 {
		return ferr("must be ≥ 0", "on_chip_kib")
	}
	if pr.ChannelAlign < 0 || pr.ChannelAlign > 1024 {
		return ferr("must be in [0, 1024]", "channel_align")
	}
	if pr.Concurrency < 1 {
		return ferr("must be ≥ 1", "concurrency")
	}
	if !domains[pr.Domain] {
		return ferr(fmt.Sprintf("unknown domain %q", pr.Domain), "domain")
	}
	for i, c := range pr.Cores {
		if c < 0 {
			return ferr("must be ≥ 0", "cores", i)
		}
		for _, d := range pr.Cores[:i] {
			if c == d {
				return ferr(fmt.Sprintf("duplicate core %d", c), "cores", i)
			}
		}
	}
	s := pr.Support
	switch {
	case s.MaxRank < 0:
		return ferr("must be ≥ 0", "support", "max_rank")
	case badRankByOp(s.RankByOp) != "":
		return ferr("must be ≥ 0", "support", "rank_by_op", badRankByOp(s.RankByOp))
	case s.MaxDim < 0:
		return ferr("must be ≥ 0", "support", "max_dim")
	case s.MaxConvKernel < 0:
		return ferr("must be ≥ 0", "support", "max_conv_kernel")
	case s.MaxPoolWindow < 0:
		return ferr("must be ≥ 0", "support", "max_pool_window")
	}
	for i, op := range s.Ops {
		if op == "" {
			return ferr("empty operator name", "support", "ops", i)
		}
	}
	for i, op := range s.Unsupported {
		if op == "" {
			return ferr("empty operator name", "support", "unsupported", i)
		}
	}
	for i, d := range s.TensorDTypes {
		if d == graph.Undefined {
			return ferr("undefined data type", "support", "tensor_dtypes", i)
		}
	}
	return nil
}

// IsComputeDType reports whether a processor can list d as a data type it
// computes in: a numeric type (not string, bool, complex or undefined).
func IsComputeDType(d graph.DType) bool {
	switch d {
	case graph.Undefined, graph.String, graph.Bool, graph.Complex64, graph.Complex128:
		return false
	}
	return d.Size() > 0
}

// validateFit checks a data type's fitted figures (nil: none).
func validateFit(f *DTypeFit) *fieldError {
	if f == nil {
		return nil
	}
	if !(f.SustainedGOPS > 0) || math.IsInf(f.SustainedGOPS, 0) {
		return ferr("must be > 0", "sustained_gops")
	}
	if !(f.MemBandwidthGBs > 0) || math.IsInf(f.MemBandwidthGBs, 0) {
		return ferr("must be > 0", "mem_bandwidth_gbs")
	}
	if f.DispatchOverhead < 0 {
		return ferr("must be ≥ 0", "dispatch_overhead")
	}
	if f.LayerOverhead < 0 {
		return ferr("must be ≥ 0", "layer_overhead")
	}
	if !(f.HalfFLOPs >= 0) || math.IsInf(f.HalfFLOPs, 0) {
		return ferr("must be ≥ 0", "half_flops")
	}
	if f.OnChipBytes < 0 {
		return ferr("must be ≥ 0", "on_chip_kib")
	}
	if !(f.RequantGBs >= 0) || math.IsInf(f.RequantGBs, 0) {
		return ferr("must be ≥ 0", "requant_gbs")
	}
	if !(f.MoveGBs >= 0) || math.IsInf(f.MoveGBs, 0) {
		return ferr("must be ≥ 0", "move_gbs")
	}
	if _, ok := f.Compute["other"]; !ok {
		return ferr(`needs class "other" (the fallback)`, "compute")
	}
	names := slices.Sorted(maps.Keys(f.Compute))
	for _, k := range names {
		if !slices.Contains(FitClasses, k) {
			return ferr(fmt.Sprintf("unknown class %q (classes: %s)", k, strings.Join(FitClasses, ", ")), "compute", k)
		}
		if v := f.Compute[k]; !(v > 0 && v <= 1) {
			return ferr(fmt.Sprintf("%g is not in (0, 1]", v), "compute", k)
		}
	}
	return nil
}

// badRankByOp is the first operator (in name order) of a rank_by_op map
// with a negative rank or an empty name, or "".
func badRankByOp(m map[string]int) string {
	ops := slices.Sorted(maps.Keys(m))
	for _, op := range ops {
		if op == "" || m[op] < 0 {
			if op == "" {
				return "(empty operator name)"
			}
			return op
		}
	}
	return ""
}
