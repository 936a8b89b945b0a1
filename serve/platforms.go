package serve

import (
	"net/http"
	"strings"

	"github.com/inlay-dev/inlay/hw"
)

// PlatformSummary is one row of GET /api/platforms (inlay platforms).
type PlatformSummary struct {
	Name        string   `json:"name"`
	Processors  []string `json:"processors"`
	Description string   `json:"description"`
}

// PlatformOut is a platform as the Platform page shows it (inlay
// platforms show): the platform file's own fields and names (hw.File),
// where it came from, and each memory domain with its processors.
type PlatformOut struct {
	hw.File
	Source string `json:"source"`
	// Domains shadows File.Domains: the same, with each domain's processors.
	Domains []DomainOut `json:"domains"`
}

// DomainOut is a memory domain and its processors.
type DomainOut struct {
	hw.DomainFile
	Processors []string `json:"processors"`
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
	req, ok := request[platformRequest](w, r)
	if !ok {
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
	f := hw.FileOf(p)
	out := PlatformOut{File: f, Source: p.Source, Domains: []DomainOut{}}
	for _, d := range f.Domains {
		do := DomainOut{DomainFile: d, Processors: []string{}}
		for _, pr := range p.Processors {
			if pr.Domain == d.Name {
				do.Processors = append(do.Processors, pr.Name)
			}
		}
		out.Domains = append(out.Domains, do)
	}
	return out
}
