package cost

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/hw"
)

// Entry is one measured time: a layer set of one model on one processor
// configuration.
type Entry struct {
	// Model is the model's content hash (graph.Model.Hash) or, for a model
	// without one, its name.
	Model string `json:"model"`
	// Layers is the layer set's key (graph.LayerSet.Key): "0-4,7". A set of
	// one layer ("12") is also that layer's per-layer figure.
	Layers string `json:"layers"`
	// Processor is a processor name or kind (hw.Platform.Find).
	Processor string `json:"processor"`
	Backend   string `json:"backend"`
	DType     string `json:"dtype"`
	// Ms is the measured latency in milliseconds.
	Ms float64 `json:"ms"`
}

// Measured overrides another estimator with measured times. For a subgraph
// whose exact layer set was measured on the config, the measurement is the
// answer. Otherwise each of its layers measured alone corrects the base
// figure by (measured − base time of that layer alone), which keeps the
// base's subgraph non-linearity. Unsupported nodes stay unsupported.
type Measured struct {
	base Estimator
	// byModel: model ID → config → figures.
	byModel map[string]map[hw.Config]*measuredFigures
	n       int
}

type measuredFigures struct {
	sets   map[string]time.Duration // layer-set key → time
	layers map[int]time.Duration    // single layer → time
}

var _ Estimator = (*Measured)(nil)

// LoadMeasured reads a table of measured times and returns an estimator
// that answers from it where it can and from base elsewhere. Processor
// names resolve against p.
//
// JSON: an object {"entries": [ENTRY, ...]} or a bare array of entries,
// each with the fields of Entry:
//
//	{"entries": [
//	  {"model": "3f2a…", "layers": "0-53", "processor": "npu", "backend": "qnn-htp", "dtype": "int8", "ms": 0.92},
//	  {"model": "3f2a…", "layers": "7", "processor": "gpu", "backend": "tflite-gpu", "dtype": "float16", "ms": 0.11}
//	]}
//
// CSV (".csv"): a header naming the columns model, layers, processor,
// backend, dtype, ms (any order; quote layer keys with commas):
//
//	model,layers,processor,backend,dtype,ms
//	3f2a…,"0-20,22",cpu-prime,xnnpack,float32,6.4
//
// Errors name the file and the entry (JSON) or line (CSV).
func LoadMeasured(path string, base Estimator, p *hw.Platform) (*Measured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cost: %w", err)
	}
	var entries []Entry
	var where []string // where[i] names entry i in errors
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		entries, where, err = parseCSV(data)
	} else {
		entries, where, err = parseJSON(data)
	}
	if err != nil {
		return nil, fmt.Errorf("cost: %s: %w", path, err)
	}
	m := &Measured{base: base, byModel: map[string]map[hw.Config]*measuredFigures{}}
	for i, e := range entries {
		if err := m.add(e, p); err != nil {
			return nil, fmt.Errorf("cost: %s: %s: %w", path, where[i], err)
		}
	}
	return m, nil
}

// NewMeasured builds the estimator from entries in memory.
func NewMeasured(entries []Entry, base Estimator, p *hw.Platform) (*Measured, error) {
	m := &Measured{base: base, byModel: map[string]map[hw.Config]*measuredFigures{}}
	for i, e := range entries {
		if err := m.add(e, p); err != nil {
			return nil, fmt.Errorf("cost: entry %d: %w", i, err)
		}
	}
	return m, nil
}

func (m *Measured) add(e Entry, p *hw.Platform) error {
	if e.Model == "" {
		return errors.New("model: is required")
	}
	set, err := graph.ParseLayerSet(e.Layers)
	if err != nil || len(set) == 0 {
		return fmt.Errorf("layers: bad layer set %q", e.Layers)
	}
	proc, err := p.Find(e.Processor)
	if err != nil {
		return fmt.Errorf("processor: %w", err)
	}
	dt, err := graph.ParseDType(e.DType)
	if err != nil {
		return fmt.Errorf("dtype: %w", err)
	}
	cfg := hw.Config{Proc: proc, Backend: e.Backend, DType: dt}
	if err := p.CheckConfig(cfg); err != nil {
		return err
	}
	if !(e.Ms >= 0) || e.Ms > 1e9 {
		return fmt.Errorf("ms: %g is not a duration", e.Ms)
	}
	byCfg := m.byModel[e.Model]
	if byCfg == nil {
		byCfg = map[hw.Config]*measuredFigures{}
		m.byModel[e.Model] = byCfg
	}
	f := byCfg[cfg]
	if f == nil {
		f = &measuredFigures{sets: map[string]time.Duration{}, layers: map[int]time.Duration{}}
		byCfg[cfg] = f
	}
	d := time.Duration(e.Ms*1e6 + 0.5)
	key := set.Key()
	if _, dup := f.sets[key]; dup {
		return fmt.Errorf("layers %q measured twice on this config", key)
	}
	f.sets[key] = d
	if len(set) == 1 {
		f.layers[set[0]] = d
	}
	m.n++
	return nil
}

// Len is the number of measurements.
func (m *Measured) Len() int { return m.n }

// Transfer is the base estimator's.
func (m *Measured) Transfer(bytes int64, from, to int) time.Duration {
	return m.base.Transfer(bytes, from, to)
}

// Subgraph answers from the measurements where they cover the set (see
// Measured), else from the base estimator.
func (m *Measured) Subgraph(lg *graph.LayerGraph, set graph.LayerSet, on hw.Config) (time.Duration, error) {
	base, err := m.base.Subgraph(lg, set, on)
	if err != nil || len(set) == 0 {
		return base, err
	}
	id := lg.Model.Hash
	if id == "" {
		id = lg.Model.Name
	}
	f := m.byModel[id][on]
	if f == nil {
		return base, nil
	}
	if d, ok := f.sets[set.Key()]; ok {
		return d, nil
	}
	if len(f.layers) == 0 {
		return base, nil
	}
	t := base
	for _, l := range set {
		d, ok := f.layers[l]
		if !ok {
			continue
		}
		alone, err := m.base.Subgraph(lg, graph.LayerSet{l}, on)
		if err != nil {
			return 0, err
		}
		t += d - alone
	}
	if t < 0 {
		t = 0
	}
	return t, nil
}

func parseJSON(data []byte) ([]Entry, []string, error) {
	var entries []Entry
	trimmed := bytes.TrimSpace(data)
	dec := func(v any) error {
		d := json.NewDecoder(bytes.NewReader(trimmed))
		d.DisallowUnknownFields()
		return d.Decode(v)
	}
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := dec(&entries); err != nil {
			return nil, nil, err
		}
	} else {
		var doc struct {
			Entries []Entry `json:"entries"`
		}
		if err := dec(&doc); err != nil {
			return nil, nil, err
		}
		entries = doc.Entries
	}
	where := make([]string, len(entries))
	for i := range entries {
		where[i] = fmt.Sprintf("entries[%d]", i)
	}
	return entries, where, nil
}

var csvColumns = []string{"model", "layers", "processor", "backend", "dtype", "ms"}

func parseCSV(data []byte) ([]Entry, []string, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, errors.New("empty table (want a header: model,layers,processor,backend,dtype,ms)")
		}
		return nil, nil, err
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	for _, c := range csvColumns {
		if _, ok := col[c]; !ok {
			return nil, nil, fmt.Errorf("line 1: header lacks column %q", c)
		}
	}
	var entries []Entry
	var where []string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		line, _ := r.FieldPos(0)
		get := func(c string) string {
			if i := col[c]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		ms, err := strconv.ParseFloat(get("ms"), 64)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: ms: bad number %q", line, get("ms"))
		}
		entries = append(entries, Entry{Model: get("model"), Layers: get("layers"), Processor: get("processor"),
			Backend: get("backend"), DType: get("dtype"), Ms: ms})
		where = append(where, fmt.Sprintf("line %d", line))
	}
	return entries, where, nil
}
