package app

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/inspect"
	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/ort"
	"github.com/inlay-dev/inlay/quant"
	"github.com/inlay-dev/inlay/workload"
	"github.com/inlay-dev/inlay/zoo"
)

// ModelPath is the file a model argument names: cache:FILE.onnx is a
// fetched real model; anything else is itself (a file or a zoo name).
func ModelPath(arg string) string {
	if rest, ok := strings.CutPrefix(arg, workload.CachePrefix); ok {
		return assets.ModelPath(rest)
	}
	return arg
}

// ModelSummary is inlay inspect's account of a model; it prints as text
// (WriteText) or as JSON.
type ModelSummary interface {
	WriteText(io.Writer) error
}

// Inspect summarises the model arg names (ModelPath; an ONNX file, or a
// zoo network) with the input shapes of inputs (name=d0,d1,...): an ONNX
// file whose dimensions stay symbolic gets a symbolic summary.
func Inspect(arg string, inputs []string) (ModelSummary, error) {
	arg = ModelPath(arg)
	if sym, err := loadSymbolic(arg, inputs); err != nil {
		return nil, err
	} else if sym != nil {
		return inspect.SummarizeSymbolic(sym), nil
	}
	m, err := LoadModel(arg, inputs)
	if err != nil {
		return nil, err
	}
	s, err := inspect.Summarize(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	return s, nil
}

// calibrateRandom calibrates m's activation ranges for static
// quantization on samples ONNX Runtime runs of seeded random inputs.
func calibrateRandom(m *graph.Model, ortLib string, samples int, seed int64) (quant.Ranges, error) {
	rt, err := ort.Open(ortLib)
	if err != nil {
		return nil, fmt.Errorf("%w (pass --ort-lib PATH to the ONNX Runtime shared library)", err)
	}
	rng := rand.New(rand.NewSource(seed))
	feeds := make([][]*graph.Data, samples)
	for i := range feeds {
		for _, name := range m.Inputs {
			t := m.Tensors[name]
			feeds[i] = append(feeds[i], ort.RandomData(t.DType, t.Shape, rng))
		}
	}
	return quant.Calibrate(rt, m, feeds, ort.SessionOptions{})
}

// parseInputFlags reads --input name=d0,d1,... values.
func parseInputFlags(flags []string) (map[string]graph.Shape, error) {
	out := map[string]graph.Shape{}
	for _, f := range flags {
		i := strings.LastIndex(f, "=")
		if i <= 0 {
			return nil, fmt.Errorf("--input %q: want name=d0,d1,... (e.g. x=1,3,640,640)", f)
		}
		name := f[:i]
		s, err := graph.ParseShape(f[i+1:])
		if err != nil {
			return nil, fmt.Errorf("--input %q: %w", f, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--input %s is given twice", name)
		}
		out[name] = s
	}
	return out, nil
}

// loadSymbolic loads an ONNX file with dimensions left symbolic, or
// returns nil when every dimension has a value (a zoo network, or sizes
// for all).
func loadSymbolic(arg string, inputFlags []string) (*onnx.Symbolic, error) {
	if _, err := os.Stat(arg); err != nil {
		return nil, nil // a zoo name, or LoadModel's (one-line) error
	}
	raw, _, err := rawInputFlags(inputFlags)
	if err != nil {
		return nil, err
	}
	return onnx.LoadSymbolic(arg, raw)
}

// LoadModel opens an ONNX file, or builds a zoo network when arg is not a
// file but names one.
func LoadModel(arg string, inputFlags []string) (*graph.Model, error) {
	shapes, err := parseInputFlags(inputFlags)
	if err != nil {
		return nil, err
	}
	if _, statErr := os.Stat(arg); statErr != nil && !strings.HasSuffix(arg, ".onnx") {
		if spec, lookErr := zoo.Lookup(arg); lookErr == nil {
			var in graph.Shape
			switch {
			case len(shapes) > 1:
				return nil, fmt.Errorf("%s: a zoo network has one input; give one --input", arg)
			case len(shapes) == 1:
				for _, s := range shapes {
					in = s
				}
				if err := spec.CheckInput(in); err != nil {
					return nil, fmt.Errorf("%s: --input: %s", arg, strings.TrimPrefix(err.Error(), "zoo: "))
				}
			}
			return zoo.BuildWith(arg, in)
		}
		return nil, fmt.Errorf("%s: no such file, and not a zoo network (%s)", arg, strings.Join(zoo.Names(), ", "))
	}
	if err := assets.CheckFetched(arg); errors.Is(err, assets.ErrMissing) {
		return nil, err
	}
	return onnx.Load(arg, onnx.Options{Inputs: shapes})
}

// rawInputFlags reads --input name=d0,d1,... values with each dimension
// as written (a size, or a symbol); it fails when one is malformed, and
// sizes reports whether every dimension is a size.
func rawInputFlags(flags []string) (out map[string][]string, sizes bool, err error) {
	out = map[string][]string{}
	sizes = true
	for _, f := range flags {
		i := strings.LastIndex(f, "=")
		if i <= 0 {
			return nil, false, fmt.Errorf("--input %q: want name=d0,d1,... (e.g. x=1,3,640,640, or x=1,3,H,W to keep symbols)", f)
		}
		name, v := f[:i], strings.TrimSpace(f[i+1:])
		if _, dup := out[name]; dup {
			return nil, false, fmt.Errorf("--input %s is given twice", name)
		}
		sep := ","
		if !strings.Contains(v, ",") {
			sep = "x"
		}
		var dims []string
		if v != "" && v != "scalar" {
			dims = strings.Split(v, sep)
		}
		for j := range dims {
			dims[j] = strings.TrimSpace(dims[j])
			if n, err := strconv.ParseInt(dims[j], 10, 64); err != nil || n < 0 {
				sizes = false
			}
		}
		out[name] = dims
	}
	return out, sizes, nil
}

// ZooRow is one zoo network as inlay zoo list shows it.
type ZooRow struct {
	Spec   zoo.Spec
	Layers int
	Params int64
	MACs   int64
}

// Zoo builds every zoo network and counts its layers, parameters and MACs.
func Zoo() ([]ZooRow, error) {
	var rows []ZooRow
	for _, s := range zoo.Specs() {
		m, err := zoo.Build(s.Name)
		if err != nil {
			return nil, err
		}
		lg, err := graph.BuildLayers(m)
		if err != nil {
			return nil, fmt.Errorf("zoo: %s: %w", s.Name, err)
		}
		rows = append(rows, ZooRow{Spec: s, Layers: len(lg.Layers), Params: zoo.TrainableParams(m), MACs: m.Totals().MACs})
	}
	return rows, nil
}

// ExportZoo writes the zoo network name as an ONNX file at path with
// seeded random weights; it returns the network's name and the file's size.
func ExportZoo(name, path string, seed int64) (model string, size int, err error) {
	m, err := zoo.Build(name)
	if err != nil {
		return "", 0, err
	}
	data, err := onnx.Encode(m, seed)
	if err != nil {
		return "", 0, fmt.Errorf("zoo export: %s: %w", name, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", 0, fmt.Errorf("zoo export: %w", err)
	}
	return m.Name, len(data), nil
}

// QuantizeInput asks for a model quantized as ONNX Runtime's quantizer
// does: the model argument (ModelPath) with its --input shapes, the
// format, and for the static formats the calibration's library, runs and
// seed.
type QuantizeInput struct {
	Model   string
	Inputs  []string
	Format  quant.Format
	Library string
	Samples int
	Seed    int64
}

// Quantize loads, calibrates (static formats) and quantizes the model,
// and encodes the result as ONNX.
func Quantize(in QuantizeInput) (*quant.Result, []byte, error) {
	m, err := LoadModel(ModelPath(in.Model), in.Inputs)
	if err != nil {
		return nil, nil, err
	}
	var ranges quant.Ranges
	if in.Format.Static() {
		if ranges, err = calibrateRandom(m, in.Library, in.Samples, in.Seed); err != nil {
			return nil, nil, fmt.Errorf("quantize: %w", err)
		}
	}
	res, err := quant.Quantize(m, in.Format, ranges)
	if err != nil {
		return nil, nil, err
	}
	data, err := onnx.Encode(res.Model, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("quantize: %w", err)
	}
	return res, data, nil
}
