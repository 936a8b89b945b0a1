package serve

import (
	"net/http"
	"strings"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
)

// PlatformSummary is one row of GET /api/platforms (inlay platforms).
type PlatformSummary struct {
	Name        string   `json:"name"`
	Processors  []string `json:"processors"`
	Description string   `json:"description"`
}

// PlatformOut is a platform as the Platform page shows it (inlay
// platforms show).
type PlatformOut struct {
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Source      string      `json:"source"`
	Processors  []ProcOutHW `json:"processors"`
	Domains     []DomainOut `json:"domains"`
	Links       []LinkOut   `json:"links"`
}

// ProcOutHW is one processor of a platform.
type ProcOutHW struct {
	Name            string     `json:"name"`
	Kind            string     `json:"kind"`
	Description     string     `json:"description,omitempty"`
	Backends        []string   `json:"backends"`
	DTypes          []DTypeOut `json:"dtypes"`
	MemBandwidthGBs float64    `json:"mem_bandwidth_gbs"`
	DispatchMs      float64    `json:"dispatch_ms"`
	LayerMs         float64    `json:"layer_ms"`
	OnChipBytes     int64      `json:"on_chip_bytes"`
	Concurrency     int        `json:"concurrency"`
	Domain          string     `json:"domain"`
	Support         SupportOut `json:"support"`
}

// DTypeOut is a data type with its peak.
type DTypeOut struct {
	DType    string  `json:"dtype"`
	PeakGOPS float64 `json:"peak_gops"`
}

// SupportOut is a processor's operator support.
type SupportOut struct {
	Ops              []string `json:"ops,omitempty"`
	Unsupported      []string `json:"unsupported,omitempty"`
	MaxRank          int      `json:"max_rank,omitempty"`
	MaxDim           int64    `json:"max_dim,omitempty"`
	MaxConvKernel    int64    `json:"max_conv_kernel,omitempty"`
	MaxPoolWindow    int64    `json:"max_pool_window,omitempty"`
	StaticShapesOnly bool     `json:"static_shapes_only,omitempty"`
	TensorDTypes     []string `json:"tensor_dtypes,omitempty"`
}

// DomainOut is a memory domain and its processors.
type DomainOut struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Processors  []string `json:"processors"`
}

// LinkOut is a copy path between two domains.
type LinkOut struct {
	From         string  `json:"from"`
	To           string  `json:"to"`
	BandwidthGBs float64 `json:"bandwidth_gbs"`
	LatencyMs    float64 `json:"latency_ms"`
	Shared       bool    `json:"shared"`
}

func (s *Server) platforms(w http.ResponseWriter, r *http.Request) {
	out := []PlatformSummary{}
	for _, name := range hw.Presets() {
		p, err := hw.Preset(name)
		if err != nil {
			fail(w, err)
			return
		}
		out = append(out, PlatformSummary{Name: name, Processors: p.Names(), Description: p.Description})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) platform(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !isPreset(name) {
		if err := checkName("platform", name); err != nil {
			writeError(w, http.StatusNotFound, badf("serve: no platform %q: want a preset (%s) or a platform file of the examples folder", name, strings.Join(hw.Presets(), ", ")))
			return
		}
	}
	pl, err := s.platformNamed(name)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, platformOut(pl))
}

type platformRequest struct {
	Name string `json:"name,omitempty"`
	YAML string `json:"yaml"`
}

func (q *platformRequest) check() error {
	if q.Name == "" {
		q.Name = "platform.yaml"
	}
	return checkName("platform name", q.Name)
}

// platformFile reads a platform file's text (an upload) as inlay
// platforms show FILE does.
func (s *Server) platformFile(w http.ResponseWriter, r *http.Request) {
	var req platformRequest
	if err := decode(r, &req); err != nil {
		fail(w, err)
		return
	}
	pl, err := hw.Parse(s.path(req.Name), []byte(req.YAML))
	if err != nil {
		fail(w, bad(err))
		return
	}
	writeJSON(w, http.StatusOK, platformOut(pl))
}

func platformOut(p *hw.Platform) PlatformOut {
	out := PlatformOut{Name: p.Name, Description: p.Description, Source: p.Source,
		Processors: []ProcOutHW{}, Domains: []DomainOut{}, Links: []LinkOut{}}
	for _, pr := range p.Processors {
		po := ProcOutHW{Name: pr.Name, Kind: pr.Kind, Description: pr.Description, Backends: pr.Backends,
			MemBandwidthGBs: pr.MemBandwidthGBs, DispatchMs: app.Ms(pr.DispatchOverhead), LayerMs: app.Ms(pr.LayerOverhead),
			OnChipBytes: pr.OnChipBytes, Concurrency: pr.Concurrency, Domain: pr.Domain}
		for _, d := range pr.DTypes {
			po.DTypes = append(po.DTypes, DTypeOut{DType: d.DType.String(), PeakGOPS: d.PeakGOPS})
		}
		sp := pr.Support
		po.Support = SupportOut{Ops: sp.Ops, Unsupported: sp.Unsupported, MaxRank: sp.MaxRank, MaxDim: sp.MaxDim,
			MaxConvKernel: sp.MaxConvKernel, MaxPoolWindow: sp.MaxPoolWindow, StaticShapesOnly: sp.StaticShapesOnly}
		for _, d := range sp.TensorDTypes {
			po.Support.TensorDTypes = append(po.Support.TensorDTypes, d.String())
		}
		out.Processors = append(out.Processors, po)
	}
	for _, d := range p.Domains {
		do := DomainOut{Name: d.Name, Description: d.Description, Processors: []string{}}
		for _, pr := range p.Processors {
			if pr.Domain == d.Name {
				do.Processors = append(do.Processors, pr.Name)
			}
		}
		out.Domains = append(out.Domains, do)
	}
	for _, l := range p.Links {
		out.Links = append(out.Links, LinkOut{From: l.From, To: l.To, BandwidthGBs: l.BandwidthGBs, LatencyMs: app.Ms(l.Latency), Shared: l.Shared})
	}
	return out
}
