package hw

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/inlay-dev/inlay/graph"

	"github.com/inlay-dev/inlay/internal/loadfile"
	"github.com/inlay-dev/inlay/internal/yamlpath"
)

// The YAML schema of a platform file (every field but the names may be
// omitted where a default is given):
//
//	name: phone                      # required
//	description: one line            # for listings
//	domains:                         # memory domains; default: one, "memory"
//	  - name: dram
//	    description: unified LPDDR5X
//	    capacity_mib: 8192           # resident weights; 0 or absent: unlimited
//	processors:                      # in ID order
//	  - name: npu                    # unique
//	    kind: npu                    # cpu | gpu | npu | dsp | dla
//	    description: Hexagon-class NPU
//	    backends: [qnn-htp]          # first is the default
//	    dtypes:                      # first is the default
//	      - {dtype: int8, peak_gops: 26000}
//	    mem_bandwidth_gbs: 50
//	    dispatch_overhead: 150us     # Go duration syntax
//	    layer_overhead: 4us
//	    on_chip_kib: 8192
//	    concurrency: 1               # default 1
//	    domain: dram                 # default: the only domain
//	    memory_mib: 2048             # resident weights on it; 0: unlimited
//	    cores: [0, 1]                # CPU cores it is pinned to (host)
//	    support:
//	      ops: [Conv, Relu]          # allow-list (empty: everything)
//	      unsupported: [LSTM, If]    # deny-list
//	      max_rank: 4                # 0: no limit
//	      max_dim: 8192
//	      max_conv_kernel: 32
//	      max_pool_window: 8
//	      static_shapes_only: true
//	      tensor_dtypes: [float32, float16, int8, uint8, int32]
//	    contention_sensitivity: 1.0   # slowdown per unit of neighbour load
//	                                 # on shared resources, in [0, 4]; default 1
//	links:                           # copies between domains
//	  - {from: dram, to: npu-io, bandwidth_gbs: 20, latency: 100us, shared: true}
//	contention:                      # resources processors contend for
//	  - {name: lpddr, kind: memory, bandwidth_gbs: 60}          # every processor
//	  - {name: l3, kind: cache, size_kib: 8192, processors: [cpu-big, cpu-little]}
//
// A link serves both directions unless the opposite direction is listed
// separately.
//
// File is that schema: what Load reads and Encode writes, and, under the
// same names, what the web API returns for a platform.
type File struct {
	Name        string          `yaml:"name" json:"name"`
	Description string          `yaml:"description,omitempty" json:"description,omitempty"`
	Domains     []DomainFile    `yaml:"domains,omitempty" json:"domains,omitempty"`
	Processors  []ProcessorFile `yaml:"processors" json:"processors"`
	Links       []LinkFile      `yaml:"links,omitempty" json:"links,omitempty"`
	Contention  []SharedFile    `yaml:"contention,omitempty" json:"contention,omitempty"`
}

// SharedFile is a resource processors contend for, as written in a platform file.
type SharedFile struct {
	Name         string   `yaml:"name" json:"name"`
	Kind         string   `yaml:"kind" json:"kind"`
	Processors   []string `yaml:"processors,omitempty,flow" json:"processors,omitempty"`
	BandwidthGBs float64  `yaml:"bandwidth_gbs,omitempty" json:"bandwidth_gbs,omitempty"`
	SizeKiB      int64    `yaml:"size_kib,omitempty" json:"size_kib,omitempty"`
	Source       string   `yaml:"source,omitempty" json:"source,omitempty"`
}

// DomainFile is a memory domain, as written in a platform file.
type DomainFile struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	CapacityMiB int64  `yaml:"capacity_mib,omitempty" json:"capacity_mib,omitempty"`
}

// LinkFile is a copy path between two domains, as written in a platform file.
type LinkFile struct {
	From         string  `yaml:"from" json:"from"`
	To           string  `yaml:"to" json:"to"`
	BandwidthGBs float64 `yaml:"bandwidth_gbs" json:"bandwidth_gbs"`
	Latency      string  `yaml:"latency,omitempty" json:"latency,omitempty"`
	Shared       bool    `yaml:"shared,omitempty" json:"shared,omitempty"`
}

// DTypeFile is a data type a processor runs, with its peak, as written in a platform file.
type DTypeFile struct {
	DType    string   `yaml:"dtype" json:"dtype"`
	PeakGOPS float64  `yaml:"peak_gops" json:"peak_gops"`
	Fit      *FitFile `yaml:"fit,omitempty" json:"fit,omitempty"`
}

// FitFile is DTypeFit as written in a platform file.
type FitFile struct {
	SustainedGOPS    float64            `yaml:"sustained_gops" json:"sustained_gops"`
	MemBandwidthGBs  float64            `yaml:"mem_bandwidth_gbs" json:"mem_bandwidth_gbs"`
	DispatchOverhead string             `yaml:"dispatch_overhead" json:"dispatch_overhead"`
	LayerOverhead    string             `yaml:"layer_overhead" json:"layer_overhead"`
	HalfFLOPs        float64            `yaml:"half_flops,omitempty" json:"half_flops,omitempty"`
	OnChipKiB        int64              `yaml:"on_chip_kib,omitempty" json:"on_chip_kib,omitempty"`
	RequantGBs       float64            `yaml:"requant_gbs,omitempty" json:"requant_gbs,omitempty"`
	MoveGBs          float64            `yaml:"move_gbs,omitempty" json:"move_gbs,omitempty"`
	Compute          map[string]float64 `yaml:"compute,flow" json:"compute"`
	FittedTo         string             `yaml:"fitted_to,omitempty" json:"fitted_to,omitempty"`
	HeldOut          string             `yaml:"held_out,omitempty" json:"held_out,omitempty"`
}

// SupportFile is a processor's operator support, as written in a platform file.
type SupportFile struct {
	Ops              []string       `yaml:"ops,omitempty,flow" json:"ops,omitempty"`
	Unsupported      []string       `yaml:"unsupported,omitempty,flow" json:"unsupported,omitempty"`
	MaxRank          int            `yaml:"max_rank,omitempty" json:"max_rank,omitempty"`
	RankByOp         map[string]int `yaml:"rank_by_op,omitempty,flow" json:"rank_by_op,omitempty"`
	MaxDim           int64          `yaml:"max_dim,omitempty" json:"max_dim,omitempty"`
	MaxConvKernel    int64          `yaml:"max_conv_kernel,omitempty" json:"max_conv_kernel,omitempty"`
	MaxPoolWindow    int64          `yaml:"max_pool_window,omitempty" json:"max_pool_window,omitempty"`
	StaticShapesOnly bool           `yaml:"static_shapes_only,omitempty" json:"static_shapes_only,omitempty"`
	TensorDTypes     []string       `yaml:"tensor_dtypes,omitempty,flow" json:"tensor_dtypes,omitempty"`
}

// ProcessorFile is a processor, as written in a platform file.
type ProcessorFile struct {
	Name             string      `yaml:"name" json:"name"`
	Kind             string      `yaml:"kind" json:"kind"`
	Description      string      `yaml:"description,omitempty" json:"description,omitempty"`
	Backends         []string    `yaml:"backends,flow" json:"backends"`
	DTypes           []DTypeFile `yaml:"dtypes" json:"dtypes"`
	MemBandwidthGBs  float64     `yaml:"mem_bandwidth_gbs" json:"mem_bandwidth_gbs"`
	DispatchOverhead string      `yaml:"dispatch_overhead,omitempty" json:"dispatch_overhead,omitempty"`
	LayerOverhead    string      `yaml:"layer_overhead,omitempty" json:"layer_overhead,omitempty"`
	OnChipKiB        int64       `yaml:"on_chip_kib,omitempty" json:"on_chip_kib,omitempty"`
	ChannelAlign     int         `yaml:"channel_align,omitempty" json:"channel_align,omitempty"`
	WeightPrefetch   bool        `yaml:"weight_prefetch,omitempty" json:"weight_prefetch,omitempty"`
	Concurrency      *int        `yaml:"concurrency,omitempty" json:"concurrency,omitempty"`
	Domain           string      `yaml:"domain,omitempty" json:"domain,omitempty"`
	MemoryMiB        int64       `yaml:"memory_mib,omitempty" json:"memory_mib,omitempty"`
	Cores            []int       `yaml:"cores,omitempty,flow" json:"cores,omitempty"`
	Support          SupportFile `yaml:"support,omitempty" json:"support,omitempty"`
	// Sensitivity is contention_sensitivity (nil: the default).
	Sensitivity *float64 `yaml:"contention_sensitivity,omitempty" json:"contention_sensitivity,omitempty"`
}

// maxMiB is the largest capacity a file may give (an exbibyte), so that
// the byte count cannot overflow.
const maxMiB = 1 << 40

// defaultDomain is the implicit domain of a file that lists none.
const defaultDomain = "memory"

// Load reads a platform from a YAML file (schema: see File in
// load.go, or `inlay platforms show NAME --yaml`). Unknown fields are
// errors. Every error is one line naming the file, the line and the field.
func Load(path string) (*Platform, error) {
	return loadfile.Read("hw", path, Parse)
}

// Parse reads a platform from YAML bytes; file names the source in errors
// and becomes Platform.Source.
func Parse(file string, data []byte) (*Platform, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(file, &root, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, fmt.Errorf("hw: %s: empty platform file", file)
	}
	var raw File
	if err := yamlpath.DecodeStrict(data, &raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("hw: %s: empty platform file", file)
		}
		return nil, yamlError(file, &root, err)
	}
	p, fe := raw.platform()
	if fe == nil {
		fe = p.validate()
	}
	if fe != nil {
		return nil, fmt.Errorf("hw: %s:%d: %s", file, yamlpath.Line(&root, fe.path), fe)
	}
	p.Source = file
	return p, nil
}

func (r *File) platform() (*Platform, *fieldError) {
	p := &Platform{Name: r.Name, Description: r.Description}
	for i, d := range r.Domains {
		if d.CapacityMiB < 0 || d.CapacityMiB > maxMiB {
			return nil, ferr(fmt.Sprintf("must be between 0 (unlimited) and %d", maxMiB), "domains", i, "capacity_mib")
		}
		p.Domains = append(p.Domains, Domain{Name: d.Name, Description: d.Description, CapacityBytes: d.CapacityMiB << 20})
	}
	if len(p.Domains) == 0 {
		p.Domains = []Domain{{Name: defaultDomain}}
	}
	for i, rp := range r.Processors {
		pr, fe := rp.processor(p.Domains)
		if fe != nil {
			fe.path = append([]any{"processors", i}, fe.path...)
			return nil, fe
		}
		p.Processors = append(p.Processors, pr)
	}
	for i, rl := range r.Links {
		lat, fe := parseDuration(rl.Latency, "links", i, "latency")
		if fe != nil {
			return nil, fe
		}
		p.Links = append(p.Links, Link{From: rl.From, To: rl.To, BandwidthGBs: rl.BandwidthGBs, Latency: lat, Shared: rl.Shared})
	}
	for _, rs := range r.Contention {
		p.Shared = append(p.Shared, Shared{Name: rs.Name, Kind: rs.Kind, Processors: append([]string(nil), rs.Processors...),
			BandwidthGBs: rs.BandwidthGBs, SizeBytes: rs.SizeKiB * 1024, Source: rs.Source})
	}
	return p, nil
}

func (r *ProcessorFile) processor(domains []Domain) (*Processor, *fieldError) {
	pr := &Processor{
		Name: r.Name, Kind: r.Kind, Description: r.Description,
		Backends:              append([]string(nil), r.Backends...),
		MemBandwidthGBs:       r.MemBandwidthGBs,
		OnChipBytes:           r.OnChipKiB * 1024,
		ChannelAlign:          r.ChannelAlign,
		WeightPrefetch:        r.WeightPrefetch,
		Concurrency:           1,
		Domain:                r.Domain,
		MemoryBytes:           r.MemoryMiB << 20,
		Cores:                 append([]int(nil), r.Cores...),
		ContentionSensitivity: DefaultContentionSensitivity,
	}
	if r.Sensitivity != nil {
		pr.ContentionSensitivity = *r.Sensitivity
	}
	if r.MemoryMiB < 0 || r.MemoryMiB > maxMiB {
		return nil, ferr(fmt.Sprintf("must be between 0 (unlimited) and %d", maxMiB), "memory_mib")
	}
	if r.Concurrency != nil {
		pr.Concurrency = *r.Concurrency
	}
	if pr.Domain == "" {
		if len(domains) != 1 {
			return nil, ferr("is required when the platform has several domains", "domain")
		}
		pr.Domain = domains[0].Name
	}
	var fe *fieldError
	if pr.DispatchOverhead, fe = parseDuration(r.DispatchOverhead, "dispatch_overhead"); fe != nil {
		return nil, fe
	}
	if pr.LayerOverhead, fe = parseDuration(r.LayerOverhead, "layer_overhead"); fe != nil {
		return nil, fe
	}
	for i, d := range r.DTypes {
		dt, err := graph.ParseDType(d.DType)
		if err != nil {
			return nil, ferr(err.Error(), "dtypes", i, "dtype")
		}
		spec := DTypeSpec{DType: dt, PeakGOPS: d.PeakGOPS}
		if f := d.Fit; f != nil {
			fit := &DTypeFit{SustainedGOPS: f.SustainedGOPS, MemBandwidthGBs: f.MemBandwidthGBs, HalfFLOPs: f.HalfFLOPs,
				OnChipBytes: f.OnChipKiB * 1024, RequantGBs: f.RequantGBs, MoveGBs: f.MoveGBs, Compute: map[string]float64{}, FittedTo: f.FittedTo, HeldOut: f.HeldOut}
			var fe *fieldError
			if fit.DispatchOverhead, fe = parseDuration(f.DispatchOverhead, "dtypes", i, "fit", "dispatch_overhead"); fe != nil {
				return nil, fe
			}
			if fit.LayerOverhead, fe = parseDuration(f.LayerOverhead, "dtypes", i, "fit", "layer_overhead"); fe != nil {
				return nil, fe
			}
			for k, v := range f.Compute {
				fit.Compute[k] = v
			}
			spec.Fit = fit
		}
		pr.DTypes = append(pr.DTypes, spec)
	}
	s := r.Support
	pr.Support = Support{
		Ops: append([]string(nil), s.Ops...), Unsupported: append([]string(nil), s.Unsupported...),
		MaxRank: s.MaxRank, MaxDim: s.MaxDim, MaxConvKernel: s.MaxConvKernel, MaxPoolWindow: s.MaxPoolWindow,
		StaticShapesOnly: s.StaticShapesOnly,
	}
	if len(s.RankByOp) > 0 {
		pr.Support.RankByOp = map[string]int{}
		for op, r := range s.RankByOp {
			pr.Support.RankByOp[op] = r
		}
	}
	for i, d := range s.TensorDTypes {
		dt, err := graph.ParseDType(d)
		if err != nil {
			return nil, ferr(err.Error(), "support", "tensor_dtypes", i)
		}
		pr.Support.TensorDTypes = append(pr.Support.TensorDTypes, dt)
	}
	return pr, nil
}

func parseDuration(s string, path ...any) (time.Duration, *fieldError) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, ferr(fmt.Sprintf("bad duration %q (use e.g. 50us, 1.5ms)", s), path...)
	}
	return d, nil
}

var (
	yamlLineRE    = regexp.MustCompile(`(?s)line (\d+): (.*)`)
	yamlUnknownRE = regexp.MustCompile(`(?s)^field (.+) not found in type \S+$`)
)

// yamlError turns a go.yaml.in/yaml error into one line naming the file,
// the line and, where it can, the field.
func yamlError(file string, root *yaml.Node, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("hw: %s: %s", file, firstLine(msg))
	}
	line, _ := strconv.Atoi(m[1])
	what := firstLine(m[2])
	// An unknown key may hold a line break ({"a\nb": 1}): match it whole.
	if u := yamlUnknownRE.FindStringSubmatch(m[2]); u != nil {
		what = fmt.Sprintf("unknown field %q", u[1])
		if p := yamlpath.At(root, line); len(p) > 1 {
			what = yamlpath.String(p[:len(p)-1]) + ": " + what
		}
	} else if p := yamlpath.At(root, line); p != nil {
		what = yamlpath.String(p) + ": " + what
	}
	// A key may hold a line break ({"a\nb": 1}): the message stays one line.
	return fmt.Errorf("hw: %s:%d: %s", file, line, strings.ReplaceAll(what, "\n", "\\n"))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

// FileOf is p in the schema Load reads (Load(Encode(p)) gives p back).
func FileOf(p *Platform) File {
	raw := File{Name: p.Name, Description: p.Description}
	for _, d := range p.Domains {
		raw.Domains = append(raw.Domains, DomainFile{Name: d.Name, Description: d.Description, CapacityMiB: d.CapacityBytes >> 20})
	}
	for _, pr := range p.Processors {
		c := pr.Concurrency
		rp := ProcessorFile{
			Name: pr.Name, Kind: pr.Kind, Description: pr.Description,
			Backends: pr.Backends, MemBandwidthGBs: pr.MemBandwidthGBs,
			DispatchOverhead: durString(pr.DispatchOverhead), LayerOverhead: durString(pr.LayerOverhead),
			OnChipKiB: pr.OnChipBytes / 1024, ChannelAlign: pr.ChannelAlign, WeightPrefetch: pr.WeightPrefetch, Concurrency: &c, Domain: pr.Domain, MemoryMiB: pr.MemoryBytes >> 20, Cores: pr.Cores,
		}
		if cs := pr.ContentionSensitivity; cs != DefaultContentionSensitivity {
			rp.Sensitivity = &cs
		}
		for _, d := range pr.DTypes {
			rd := DTypeFile{DType: d.DType.String(), PeakGOPS: d.PeakGOPS}
			if f := d.Fit; f != nil {
				rd.Fit = &FitFile{SustainedGOPS: f.SustainedGOPS, MemBandwidthGBs: f.MemBandwidthGBs,
					DispatchOverhead: durString(f.DispatchOverhead), LayerOverhead: durString(f.LayerOverhead),
					HalfFLOPs: f.HalfFLOPs, OnChipKiB: f.OnChipBytes / 1024, RequantGBs: f.RequantGBs, MoveGBs: f.MoveGBs, Compute: f.Compute, FittedTo: f.FittedTo, HeldOut: f.HeldOut}
			}
			rp.DTypes = append(rp.DTypes, rd)
		}
		s := pr.Support
		rp.Support = SupportFile{
			Ops: s.Ops, Unsupported: s.Unsupported, MaxRank: s.MaxRank, RankByOp: s.RankByOp, MaxDim: s.MaxDim,
			MaxConvKernel: s.MaxConvKernel, MaxPoolWindow: s.MaxPoolWindow, StaticShapesOnly: s.StaticShapesOnly,
		}
		for _, d := range s.TensorDTypes {
			rp.Support.TensorDTypes = append(rp.Support.TensorDTypes, d.String())
		}
		raw.Processors = append(raw.Processors, rp)
	}
	for _, l := range p.Links {
		raw.Links = append(raw.Links, LinkFile{From: l.From, To: l.To, BandwidthGBs: l.BandwidthGBs, Latency: durString(l.Latency), Shared: l.Shared})
	}
	for _, sh := range p.Shared {
		raw.Contention = append(raw.Contention, SharedFile{Name: sh.Name, Kind: sh.Kind, Processors: sh.Processors,
			BandwidthGBs: sh.BandwidthGBs, SizeKiB: sh.SizeBytes / 1024, Source: sh.Source})
	}
	return raw
}

// Encode writes a platform as YAML in the schema Load reads.
func Encode(w io.Writer, p *Platform) error {
	raw := FileOf(p)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&raw); err != nil {
		return fmt.Errorf("hw: encode %s: %w", p.Name, err)
	}
	return enc.Close()
}

// durString formats a duration the way the presets write them: "50us",
// "1.5ms", "2s" (ASCII, unlike time.Duration.String's "µs").
func durString(d time.Duration) string {
	switch {
	case d == 0:
		return ""
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d%time.Microsecond == 0:
		return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}
