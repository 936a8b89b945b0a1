package workload

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/loadfile"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/zoo"
)

// Load reads a workload file, loads every model (ONNX files through
// onnx.Load with the listed input shapes, zoo networks through zoo.Build)
// and builds their layer graphs. Paths in the file are relative to the
// file's folder; so is the platform when it looks like a file path (has a
// slash or a .yaml/.yml extension). Models with the same source share one
// loaded graph.
func Load(path string) (*Workload, error) {
	return loadfile.Read("workload", path, func(file string, data []byte) (*Workload, error) { return LoadData(data, file) })
}

// LoadData is Load of a file's contents: path names the file in errors and
// is the folder relative paths are resolved against, as if the file lived
// there (it need not exist).
func LoadData(data []byte, path string) (*Workload, error) {
	w, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	if looksLikeFile(w.Platform) {
		w.Platform = resolve(path, w.Platform)
	}
	type loaded struct {
		g  *graph.Model
		lg *graph.LayerGraph
	}
	cache := map[string]loaded{}
	for i, m := range w.Models {
		if m.ONNX != "" {
			m.Source = resolveModel(path, m.ONNX)
		}
		key := m.Source + "\x00" + shapesKey(m.Inputs) + "\x00" + m.ZooInput.String()
		if l, ok := cache[key]; ok {
			m.Graph, m.Layers = l.g, l.lg
			continue
		}
		where := fmt.Sprintf("workload: %s:%d: models[%d] (%s)", path, m.line, i, m.Name)
		var g *graph.Model
		if m.Zoo != "" {
			g, err = zoo.BuildWith(m.Zoo, m.ZooInput)
		} else if ferr := assets.CheckFetched(m.Source); ferr != nil && errors.Is(ferr, assets.ErrMissing) {
			err = ferr
		} else {
			g, err = onnx.Load(m.Source, onnx.Options{Inputs: m.Inputs})
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		lg, err := graph.BuildLayers(g)
		if err != nil {
			return nil, fmt.Errorf("%s: layers: %v", where, err)
		}
		if len(lg.Layers) == 0 {
			return nil, fmt.Errorf("%s: the model computes nothing (no layers)", where)
		}
		m.Graph, m.Layers = g, lg
		cache[key] = loaded{g, lg}
	}
	return w, nil
}

// CachePrefix starts an ONNX path that names a file in the folder of
// fetched models (internal/assets: the cache's models folder, where
// scripts/fetch.sh puts the real models): "cache:melspectrogram.onnx".
// It lets an example workload name the real models without an absolute path.
const CachePrefix = "cache:"

// resolveModel resolves an ONNX path: CachePrefix paths against the fetched
// models' folder, others as resolve does.
func resolveModel(file, path string) string {
	if rest, ok := strings.CutPrefix(path, CachePrefix); ok {
		return assets.ModelPath(rest)
	}
	return resolve(file, path)
}

func looksLikeFile(s string) bool {
	return strings.Contains(s, "/") || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml")
}

// shapesKey formats input shapes in sorted order.
func shapesKey(in map[string]graph.Shape) string {
	names := slices.Sorted(maps.Keys(in))
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%s;", n, in[n])
	}
	return b.String()
}
