package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/internal/loadfile"
	"github.com/inlay-dev/inlay/internal/yamlpath"
	"go.yaml.in/yaml/v3"
)

// Subgraph is a convex set of layers of one model that runs as one unit.
type Subgraph struct {
	Layers graph.LayerSet
	// Processor is the processor's name on the platform.
	Processor string
	// Backend is one of the processor's backends.
	Backend string
	// DType is the data type's name (graph.DType.String), one of the
	// processor's data types.
	DType string
}

// ModelPlan is the plan of one model.
type ModelPlan struct {
	Model string
	// Priority orders models competing for a processor: lower runs first.
	Priority int
	// Hash is the content hash of the model's source (graph.Model.Hash) when
	// the plan was made; "" when not recorded. The runtime refuses to run a
	// plan whose model file has changed since (see StampHashes).
	Hash string
	// Subgraphs are listed in a topological order: a subgraph's inputs come
	// from subgraphs listed before it (or from the model's inputs).
	Subgraphs []Subgraph
}

// Plan is a whole workload's plan.
type Plan struct {
	// Planner names the planner that made the plan (informational).
	Planner string
	// Platform names the platform the plan was made for (informational).
	Platform string
	Models   []ModelPlan
	// Decisions are what the planner recorded as it chose, one per
	// subgraph or per model (nil when it recorded nothing: the milp
	// planner, a plan read from a file); informational, not saved.
	Decisions []Decision
	// Selection is how a search planner chose the whole plan (nil for the
	// others); informational, not saved.
	Selection *Selection
}

// Model returns the named model's plan, or nil.
func (p *Plan) Model(name string) *ModelPlan {
	for i := range p.Models {
		if p.Models[i].Model == name {
			return &p.Models[i]
		}
	}
	return nil
}

// file is the on-disk form, shared by YAML and JSON.
type file struct {
	Planner  string      `yaml:"planner,omitempty" json:"planner,omitempty"`
	Platform string      `yaml:"platform,omitempty" json:"platform,omitempty"`
	Models   []fileModel `yaml:"models" json:"models"`
}

type fileModel struct {
	Model     string         `yaml:"model" json:"model"`
	Priority  int            `yaml:"priority" json:"priority"`
	Hash      string         `yaml:"hash,omitempty" json:"hash,omitempty"`
	Subgraphs []fileSubgraph `yaml:"subgraphs" json:"subgraphs"`
}

type fileSubgraph struct {
	Layers    string `yaml:"layers" json:"layers"`
	Processor string `yaml:"processor" json:"processor"`
	Backend   string `yaml:"backend,omitempty" json:"backend,omitempty"`
	DType     string `yaml:"dtype,omitempty" json:"dtype,omitempty"`
}

// Format is a plan file's encoding.
type Format string

const (
	YAML Format = "yaml"
	JSON Format = "json"
)

// FormatOf picks the format from a file name's extension.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return YAML, nil
	case ".json":
		return JSON, nil
	}
	return "", fmt.Errorf("plan: %s: unknown extension (want .yaml, .yml or .json)", path)
}

// Load reads a plan file, YAML or JSON by its extension, and checks its form.
func Load(path string) (*Plan, error) {
	f, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	return loadfile.Read("plan", path, func(file string, data []byte) (*Plan, error) { return Parse(data, f, file) })
}

// Parse decodes a plan and checks its form: known fields only, model names
// given once, layer keys well formed, non-empty and disjoint within a
// model, processor named. name labels errors.
func Parse(data []byte, f Format, name string) (*Plan, error) {
	var fp file
	switch f {
	case YAML:
		if err := yamlpath.DecodeStrict(data, &fp); err != nil {
			return nil, fmt.Errorf("plan: %s: %s", name, yamlMessage(err))
		}
	case JSON:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&fp); err != nil {
			return nil, fmt.Errorf("plan: %s: %s", name, errline.JSON(data, err))
		}
		if dec.More() {
			return nil, fmt.Errorf("plan: %s: data after the plan object", name)
		}
	default:
		return nil, fmt.Errorf("plan: %s: unknown format %q", name, f)
	}
	p := &Plan{Planner: fp.Planner, Platform: fp.Platform}
	for i, fm := range fp.Models {
		if fm.Model == "" {
			return nil, fmt.Errorf("plan: %s: models[%d]: no model name", name, i)
		}
		if p.Model(fm.Model) != nil {
			return nil, fmt.Errorf("plan: %s: model %q planned twice", name, fm.Model)
		}
		mp := ModelPlan{Model: fm.Model, Priority: fm.Priority, Hash: fm.Hash}
		if len(fm.Subgraphs) == 0 {
			return nil, fmt.Errorf("plan: %s: model %q: no subgraphs", name, fm.Model)
		}
		owner := map[int]int{}
		for j, fs := range fm.Subgraphs {
			where := fmt.Sprintf("plan: %s: model %q: subgraph %d", name, fm.Model, j)
			set, err := graph.ParseLayerSet(fs.Layers)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			if len(set) == 0 {
				return nil, fmt.Errorf("%s: no layers", where)
			}
			for _, l := range set {
				if k, dup := owner[l]; dup {
					return nil, fmt.Errorf("%s: layer %d is in subgraph %d too", where, l, k)
				}
				owner[l] = j
			}
			if fs.Processor == "" {
				return nil, fmt.Errorf("%s (layers %s): no processor", where, set.Key())
			}
			mp.Subgraphs = append(mp.Subgraphs, Subgraph{Layers: set, Processor: fs.Processor, Backend: fs.Backend, DType: fs.DType})
		}
		p.Models = append(p.Models, mp)
	}
	return p, nil
}

// Encode writes the plan in the given format.
func (p *Plan) Encode(f Format) ([]byte, error) {
	fp := file{Planner: p.Planner, Platform: p.Platform, Models: []fileModel{}}
	for _, mp := range p.Models {
		fm := fileModel{Model: mp.Model, Priority: mp.Priority, Hash: mp.Hash, Subgraphs: []fileSubgraph{}}
		for _, s := range mp.Subgraphs {
			fm.Subgraphs = append(fm.Subgraphs, fileSubgraph{Layers: s.Layers.Key(), Processor: s.Processor, Backend: s.Backend, DType: s.DType})
		}
		fp.Models = append(fp.Models, fm)
	}
	switch f {
	case YAML:
		var doc yaml.Node
		if err := doc.Encode(fp); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		flowSubgraphs(&doc)
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(&doc); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		return b.Bytes(), nil
	case JSON:
		b, err := json.MarshalIndent(fp, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		return append(b, '\n'), nil
	}
	return nil, fmt.Errorf("plan: unknown format %q", f)
}

// flowSubgraphs writes each subgraph on one line: {layers: ..., processor: ...}.
func flowSubgraphs(doc *yaml.Node) {
	value := func(m *yaml.Node, key string) *yaml.Node {
		for i := 0; m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
		return nil
	}
	models := value(doc, "models")
	if models == nil {
		return
	}
	for _, m := range models.Content {
		if subs := value(m, "subgraphs"); subs != nil {
			for _, s := range subs.Content {
				s.Style = yaml.FlowStyle
			}
		}
	}
}

// Save writes the plan to path, YAML or JSON by its extension.
func (p *Plan) Save(path string) error {
	f, err := FormatOf(path)
	if err != nil {
		return err
	}
	data, err := p.Encode(f)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	return nil
}

// yamlMessage is the first of a YAML decoding error's messages, as
// "line N: what" (the first problem is the one to fix first).
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if len(te.Errors) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(te.Errors)-1)
		}
		return strings.ReplaceAll(msg, "\n", "\\n")
	}
	return strings.TrimPrefix(errline.OneLine(err), "yaml: ")
}
