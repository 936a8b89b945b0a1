package onnx

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/graph"
)

// batchParams are dim_param names (lower case) taken to mean the batch size.
var batchParams = map[string]bool{
	"n": true, "b": true, "bs": true, "batch": true, "batch_size": true,
	"batchsize": true, "batches": true, "num_batches": true, "nbatch": true,
}

// isBatchParam reports whether a dim_param names the batch dimension.
func isBatchParam(p string) bool {
	l := strings.ToLower(p)
	return batchParams[l] || strings.Contains(l, "batch")
}

// resolveInputs gives every graph input a fully known shape.
//
// A dimension is resolved, in order, by: the override in overrides (which
// must have the declared rank and agree with every fixed dimension); the
// value an override gave the same dim_param on another input; 1 for the
// leading dimension; 1 for a dimension whose dim_param names the batch
// (batch, batch_size, N, ...). Any other symbolic or missing dimension is an
// error telling the user which flag to pass.
func resolveInputs(m *graph.Model, decl []declared, overrides map[string]graph.Shape) error {
	params := map[string]int64{}
	err := eachOverride(decl, overrides, func(name string, d declared, ok bool) error {
		if !ok {
			if t := m.Tensors[name]; t != nil && t.Kind == graph.Initializer {
				return fmt.Errorf("--input %s: %q is an initializer (a weight), not an input", name, name)
			}
			return fmt.Errorf("--input %s: the model has no input %q (inputs: %s)", name, name, strings.Join(m.Inputs, ", "))
		}
		s := overrides[name]
		for i, x := range s {
			if x < 0 {
				return fmt.Errorf("--input %s: dimension %d is negative (%d)", name, i, x)
			}
		}
		if d.hasShape {
			if len(s) != len(d.dims) {
				return fmt.Errorf("--input %s=%s gives %d dimension(s), but the model declares %d (%s)", name, dimList(s), len(s), len(d.dims), d.shapeString())
			}
			for i, x := range d.dims {
				if x.known && x.value != s[i] {
					return fmt.Errorf("--input %s=%s: dimension %d is fixed to %d in the model", name, dimList(s), i, x.value)
				}
				if !x.known && x.param != "" {
					if _, ok := params[x.param]; !ok {
						params[x.param] = s[i]
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range decl {
		t := m.Tensors[d.name]
		if d.dtype == graph.Undefined {
			return fmt.Errorf("graph input %q has no element type", d.name)
		}
		var shape graph.Shape
		if s, ok := overrides[d.name]; ok {
			shape = s.Clone()
			if shape == nil {
				shape = graph.Shape{}
			}
		} else {
			if !d.hasShape {
				return fmt.Errorf("graph input %q has no declared shape; set it with --input %s=d0,d1,... on the command line, or inputs: {%s: [d0, d1, ...]} on the model in a workload", d.name, d.name, d.name)
			}
			shape = make(graph.Shape, len(d.dims))
			for i, x := range d.dims {
				v, ok := x.value, x.known
				if !ok {
					v, ok = params[x.param]
				}
				if !ok && (i == 0 || isBatchParam(x.param)) {
					v, ok = 1, true
				}
				if !ok {
					what := "is symbolic"
					if x.param != "" {
						what = fmt.Sprintf("(%q)", x.param)
					}
					sug := suggestion(d, params)
					return fmt.Errorf("graph input %q dimension %d %s has no value; planning needs it: set it with --input %s=%s on the command line, or inputs: {%s: [%s]} on the model in a workload", d.name, i, what, d.name, sug, d.name, strings.ReplaceAll(sug, ",", ", "))
				}
				shape[i] = v
			}
		}
		if _, err := shapeElements(d.dtype, shape); err != nil {
			return fmt.Errorf("graph input %q: %w", d.name, err)
		}
		t.Shape = shape
	}
	return nil
}

// eachOverride calls f, in name order, with each override's name and the
// declared input of that name (ok false: the model declares none); it
// stops at f's first error.
func eachOverride[V any](decl []declared, overrides map[string]V, f func(name string, d declared, ok bool) error) error {
	byName := make(map[string]declared, len(decl))
	for _, d := range decl {
		byName[d.name] = d
	}
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		d, ok := byName[name]
		if err := f(name, d, ok); err != nil {
			return err
		}
	}
	return nil
}

// suggestion is the --input value to show: resolved dimensions as numbers,
// the others as d<i> for the user to fill in.
func suggestion(d declared, params map[string]int64) string {
	parts := make([]string, len(d.dims))
	for i, x := range d.dims {
		switch v, ok := params[x.param]; {
		case x.known:
			parts[i] = strconv.FormatInt(x.value, 10)
		case ok && x.param != "":
			parts[i] = strconv.FormatInt(v, 10)
		case i == 0 || isBatchParam(x.param):
			parts[i] = "1"
		default:
			parts[i] = "d" + strconv.Itoa(i)
		}
	}
	return strings.Join(parts, ",")
}

func dimList(s graph.Shape) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, ",")
}
