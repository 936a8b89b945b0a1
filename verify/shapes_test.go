package verify

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

// maxListed bounds how many mismatches a failing test lists per model.
const maxListed = 12

// TestShapesMatchORT checks, for every real model, that the dtype and shape
// package onnx infers for every top-level node output equal what ONNX
// Runtime produces, and that every value it folds at load time equals ONNX
// Runtime's.
func TestShapesMatchORT(t *testing.T) { checkShapes(t, realSources()) }

// TestZooShapesMatchORT does the same for the zoo networks, as zoo.Build
// infers them and onnx.Encode writes them.
func TestZooShapesMatchORT(t *testing.T) {
	checkShapes(t, zooSourcesUnlessShort(t))
}

// TestShapesMatchORTOtherInputs repeats the check at input shapes other than
// the typical ones (other batch sizes and resolutions), where shape
// arithmetic that was only right for the typical shapes would show.
func TestShapesMatchORTOtherInputs(t *testing.T) {
	checkShapes(t, otherInputSources())
}

// otherInputSources are real models at other input shapes (all of which
// ONNX Runtime runs).
func otherInputSources() []source {
	others := map[string]map[string][]int64{
		"ocr_det":      {"x": {2, 3, 160, 96}},
		"ocr_cls":      {"x": {3, 3, 48, 192}},
		"ocr_rec":      {"x": {2, 3, 48, 160}},
		"melspec":      {"input": {2, 1760}},
		"speech_embed": {"input_1": {3, 76, 32, 1}},
		"vad":          {"input": {2, 1024}, "h": {2, 2, 64}, "c": {2, 2, 64}},
	}
	var out []source
	for _, src := range realSources() {
		if in := others[src.name]; in != nil {
			src.inputs = in
			src.name += "@" + shapesKey(in)
			out = append(out, src)
		}
	}
	return out
}

// shapesKey formats input shapes for a source name: "x=2x3x160x96".
func shapesKey(in map[string][]int64) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(in)) {
		parts = append(parts, name+"="+graph.Shape(in[name]).String())
	}
	return strings.Join(parts, ",")
}

func checkShapes(t *testing.T, sources []source) {
	openRuntime(t)
	var totalChecked, totalFolded, totalBad int
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			fr, p := loaded(t, src)
			checked, folded, bad := compareShapes(fr, p)
			t.Logf("%-34s %4d node outputs checked (%d folded values), %d mismatches", src.name, checked, folded, len(bad))
			totalChecked += checked
			totalFolded += folded
			totalBad += len(bad)
			if len(bad) > 0 {
				t.Errorf("%d of %d node outputs differ from ONNX Runtime:\n  %s", len(bad), checked, strings.Join(firstN(bad, maxListed), "\n  "))
			}
			// Every layer has a compute node whose output ONNX Runtime
			// can expose: fewer checked means the check checked little.
			if n := len(p.layers.Layers); checked < max(n, 1) {
				t.Errorf("only %d node outputs checked for %d layers", checked, n)
			}
		})
	}
	t.Logf("total: %d node outputs checked (%d folded values), %d mismatches", totalChecked, totalFolded, totalBad)
}

// compareShapes compares the loaded model's graph inputs and node outputs
// with the full run's values.
func compareShapes(fr *fullRun, p *prepared) (checked, folded int, bad []string) {
	m := p.model
	for _, name := range fr.inputs {
		want := fr.values[name]
		if got := m.Tensors[name]; got == nil || got.DType != want.DType || !got.Shape.Equal(want.Dims) {
			bad = append(bad, fmt.Sprintf("graph input %q: fed %s %s, loaded as %s", name, want.DType, want.Dims, describe(got)))
		}
	}
	for _, e := range fr.exposed {
		want := fr.values[e.tensor]
		where := fmt.Sprintf("%s node %q output %q", e.node.GetOpType(), e.node.GetName(), e.tensor)
		checked++
		got := m.Tensors[e.tensor]
		if got == nil || got.DType != want.DType || !got.Shape.Equal(want.Dims) {
			bad = append(bad, fmt.Sprintf("%s: ORT %s %s, inferred %s", where, want.DType, want.Dims, describe(got)))
			continue
		}
		if got.IsConst() && got.Data != nil && got.Data.Raw != nil {
			folded++
			if msg := compareData(got.Data, want); msg != "" {
				bad = append(bad, fmt.Sprintf("%s: folded value differs from ORT's: %s", where, msg))
			}
		}
	}
	return checked, folded, bad
}

// describe formats a loaded tensor's dtype and shape.
func describe(t *graph.Tensor) string {
	if t == nil {
		return "(no such tensor)"
	}
	return t.DType.String() + " " + t.Shape.String()
}

// firstN returns the first n items, with a note of how many were left out.
func firstN(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(items[:n:n], fmt.Sprintf("... and %d more", len(items)-n))
}
