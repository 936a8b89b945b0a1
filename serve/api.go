package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/inspect"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/search"
	"github.com/inlay-dev/inlay/search/driver"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
)

// demoName is the built-in example: inlay demo's workload on the phone.
const demoName = "demo.yaml"

// Example is one example workload.
type Example struct {
	Name string `json:"name"`
	// About is the file's first comment line.
	About string `json:"about"`
	YAML  string `json:"yaml,omitempty"`
}

// exampleFiles lists the examples: the demo, then the examples folder's
// YAML workloads by name (files that parse as workloads; platform files
// and others are left out).
func (s *Server) exampleFiles() []Example {
	demo, _ := workload.DemoYAML("phone", false)
	out := []Example{{Name: demoName, About: about(demo), YAML: demo}}
	if s.cfg.Examples == "" {
		return out
	}
	ents, err := os.ReadDir(s.cfg.Examples)
	if err != nil {
		return out
	}
	for _, e := range ents { // os.ReadDir sorts by name
		name := e.Name()
		if e.IsDir() || name == demoName || checkName("example", name) != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.cfg.Examples, name))
		if err != nil {
			continue
		}
		if _, err := workload.Parse(data, name); err != nil {
			continue
		}
		out = append(out, Example{Name: name, About: about(string(data)), YAML: string(data)})
	}
	return out
}

func about(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if c, ok := strings.CutPrefix(strings.TrimSpace(l), "#"); ok && strings.TrimSpace(c) != "" {
			return strings.TrimSpace(c)
		}
	}
	return ""
}

func (s *Server) examples(w http.ResponseWriter, r *http.Request) {
	ex := s.exampleFiles()
	for i := range ex {
		ex[i].YAML = ""
	}
	writeJSON(w, http.StatusOK, ex)
}

func (s *Server) example(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	for _, e := range s.exampleFiles() {
		if e.Name == name {
			writeJSON(w, http.StatusOK, e)
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("serve: no example %q (GET /api/examples lists them)", name))
}

// Validation describes a workload that loads: what the Workload page shows
// beside the editor.
type Validation struct {
	Workload string      `json:"workload"`
	Platform string      `json:"platform"`
	Models   []ModelInfo `json:"models"`
	Groups   []GroupInfo `json:"groups"`
}

// ModelInfo is a loaded model's size.
type ModelInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Ref and Inputs are what POST /api/inspect takes for the model.
	Ref    string             `json:"ref"`
	Inputs map[string][]int64 `json:"inputs,omitempty"`
	Nodes  int                `json:"nodes"`
	Layers int                `json:"layers"`
	Params int64              `json:"params"`
	MACs   int64              `json:"macs"`
}

// GroupInfo is a group as the workload states it.
type GroupInfo struct {
	Name       string              `json:"name"`
	Models     []string            `json:"models"`
	After      map[string][]string `json:"after,omitempty"`
	RateHz     float64             `json:"rate_hz"`
	DeadlineMs float64             `json:"deadline_ms"`
	Arrival    string              `json:"arrival"`
}

type validateRequest struct {
	Workload WorkloadInput `json:"workload"`
}

func (v *validateRequest) check() error { return v.Workload.check() }

// validate loads a workload as inlay plan would, and answers its models
// and groups, or the CLI's one-line error (with its line) as a 400.
func (s *Server) validate(w http.ResponseWriter, r *http.Request) {
	req, ok := request[validateRequest](w, r)
	if !ok {
		return
	}
	wl, pl, err := s.load(req.Workload)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, validation(wl, pl))
}

func validation(wl *workload.Workload, pl *hw.Platform) Validation {
	v := Validation{Workload: wl.Path, Platform: pl.Name, Models: []ModelInfo{}, Groups: []GroupInfo{}}
	for _, m := range wl.Models {
		mi := ModelInfo{Name: m.Name, Source: m.Source, Ref: m.Zoo}
		if m.Zoo != "" {
			mi.Source = "zoo:" + m.Zoo
		} else if m.ONNX != "" {
			mi.Source, mi.Ref = m.ONNX, m.ONNX
		}
		for in, sh := range m.Inputs {
			if mi.Inputs == nil {
				mi.Inputs = map[string][]int64{}
			}
			mi.Inputs[in] = []int64(sh)
		}
		if m.Graph != nil {
			mi.Nodes, mi.Params, mi.MACs = len(m.Graph.Nodes), m.Graph.Params(), m.Graph.Totals().MACs
		}
		if m.Layers != nil {
			mi.Layers = len(m.Layers.Layers)
		}
		v.Models = append(v.Models, mi)
	}
	for _, g := range wl.Groups {
		v.Groups = append(v.Groups, GroupInfo{Name: g.Name, Models: g.Models, After: g.After, RateHz: g.RateHz(),
			DeadlineMs: app.Ms(g.Deadline), Arrival: g.Arrival})
	}
	return v
}

// Planners is what GET /api/planners answers.
type Planners struct {
	// Registry lists the registry's base names; Suggested the full names
	// the pages offer (single:<kind> for each kind of the platform).
	Registry        []string `json:"registry"`
	Suggested       []string `json:"suggested"`
	Default         string   `json:"default"`
	DefaultBudgetMs int64    `json:"default_budget_ms"`
	MaxBudgetMs     int64    `json:"max_budget_ms"`
	MaxSearches     int      `json:"max_searches"`
}

func (s *Server) planners(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, Planners{
		Registry:  search.Names(),
		Suggested: []string{"single:npu", "single:cpu", "bestmap", "heft", "puzzle", "inlay"},
		Default:   "inlay", DefaultBudgetMs: driver.DefaultBudget.Milliseconds(), MaxBudgetMs: s.cfg.MaxBudget.Milliseconds(),
		MaxSearches: s.cfg.MaxSearches,
	})
}

// SimulateRequest asks for a plan's figures (inlay simulate), with a
// what-if change applied when given.
type SimulateRequest struct {
	Workload WorkloadInput `json:"workload"`
	// Plan is a plan file's text, YAML or JSON.
	Plan   string  `json:"plan"`
	Seed   *int64  `json:"seed,omitempty"`
	WhatIf *WhatIf `json:"whatif,omitempty"`
}

func (q *SimulateRequest) check() error {
	if err := q.Workload.check(); err != nil {
		return err
	}
	if strings.TrimSpace(q.Plan) == "" {
		return errors.New("serve: no plan text (plan)")
	}
	return q.WhatIf.check()
}

// parsePlan reads a plan's text, JSON when it starts with '{'.
func parsePlan(text string) (*plan.Plan, error) {
	f := plan.YAML
	if bytes.HasPrefix(bytes.TrimSpace([]byte(text)), []byte("{")) {
		f = plan.JSON
	}
	p, err := plan.Parse([]byte(text), f, "plan."+string(f))
	if err != nil {
		return nil, bad(err)
	}
	return p, nil
}

func seedOf(p *int64) int64 {
	if p == nil {
		return 1
	}
	return *p
}

// simulate re-simulates a plan, with its what-if changes: no search.
func (s *Server) simulate(w http.ResponseWriter, r *http.Request) {
	req, ok := request[SimulateRequest](w, r)
	if !ok {
		return
	}
	o, err := s.simulatePlan(r.Context(), &req)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

func (s *Server) simulatePlan(ctx context.Context, req *SimulateRequest) (*Outcome, error) {
	wl, pl, err := s.load(req.Workload)
	if err != nil {
		return nil, err
	}
	p, err := parsePlan(req.Plan)
	if err != nil {
		return nil, err
	}
	if err := usesOff(p, req.WhatIf); err != nil {
		return nil, bad(err)
	}
	wl, pl, err = req.WhatIf.apply(wl, pl)
	if err != nil {
		return nil, err
	}
	est, err := s.cost(pl, wl)
	if err != nil {
		return nil, err
	}
	return evaluate(ctx, app.EvaluateInput{Problem: app.Problem{Workload: wl, Platform: pl, Cost: est}, Plan: p, Seed: seedOf(req.Seed)})
}

func (s *Server) recentPlan(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	o, ok := s.plans.get(r.PathValue("id"))
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("serve: no recent plan %q (the server keeps the last 32 and forgets them when it stops)", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, o)
}

// InspectRequest asks for inlay inspect: a zoo network's name, a cache:
// file of the fetched models, or an ONNX file of the examples folder,
// with shapes for symbolic inputs (--input).
type InspectRequest struct {
	Model  string             `json:"model"`
	Inputs map[string][]int64 `json:"inputs,omitempty"`
}

func (q *InspectRequest) check() error {
	if q.Model == "" {
		return errors.New("serve: inspect: no model (a zoo name, cache:FILE.onnx or an ONNX file of the examples folder)")
	}
	return nil
}

// inspect answers inlay inspect --json of a model: the symbolic summary
// when dimensions stay open, the plain one otherwise.
func (s *Server) inspect(w http.ResponseWriter, r *http.Request) {
	req, ok := request[InspectRequest](w, r)
	if !ok {
		return
	}
	if _, err := zoo.Lookup(req.Model); err == nil {
		if len(req.Inputs) > 0 {
			fail(w, badf("%s: inputs apply to ONNX files; zoo networks have fixed input shapes", req.Model))
			return
		}
		m, err := zoo.Build(req.Model)
		if err != nil {
			fail(w, err)
			return
		}
		sum, err := inspect.Summarize(m)
		if err != nil {
			fail(w, fmt.Errorf("%s: %w", req.Model, err))
			return
		}
		writeJSON(w, http.StatusOK, sum)
		return
	}
	path := ""
	if rest, ok := strings.CutPrefix(req.Model, workload.CachePrefix); ok {
		if rest == "" || strings.ContainsAny(rest, `/\`) {
			fail(w, badf("serve: inspect: %q: a cache: path names a file of the fetched models' folder, without folders", req.Model))
			return
		}
		path = assets.ModelPath(rest)
	} else if !strings.HasSuffix(req.Model, ".onnx") {
		fail(w, badf("%s: not a zoo network (%s) nor an .onnx file", req.Model, strings.Join(zoo.Names(), ", ")))
		return
	} else {
		if err := s.inside("request", "model", req.Model); err != nil {
			fail(w, badf("serve: inspect: %q is outside the examples folder; the server reads only files in it and cache: models", req.Model))
			return
		}
		path = s.path(req.Model)
	}
	if err := assets.CheckFetched(path); err != nil {
		fail(w, bad(err))
		return
	}
	raw := map[string][]string{}
	shapes := map[string]graph.Shape{}
	for name, dims := range req.Inputs {
		for _, d := range dims {
			if d < 0 {
				fail(w, badf("serve: inspect: inputs %s: negative dimension %d", name, d))
				return
			}
			raw[name] = append(raw[name], strconv.FormatInt(d, 10))
		}
		shapes[name] = graph.Shape(dims)
	}
	sym, err := onnx.LoadSymbolic(path, raw)
	if err != nil {
		fail(w, bad(err))
		return
	}
	if sym != nil {
		writeJSON(w, http.StatusOK, inspect.SummarizeSymbolic(sym))
		return
	}
	m, err := onnx.Load(path, onnx.Options{Inputs: shapes})
	if err != nil {
		fail(w, bad(err))
		return
	}
	sum, err := inspect.Summarize(m)
	if err != nil {
		fail(w, bad(fmt.Errorf("%s: %w", req.Model, err)))
		return
	}
	writeJSON(w, http.StatusOK, sum)
}
