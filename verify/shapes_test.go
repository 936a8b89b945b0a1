package verify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
)

// maxListed bounds how many mismatches a failing test lists per model.
const maxListed = 12

// TestShapesMatchORT checks, for every real model, that the dtype and shape
// package onnx infers for every top-level node output equal what ONNX
// Runtime produces, and that every value it folds at load time equals ONNX
// Runtime's.
func TestShapesMatchORT(t *testing.T) {
	openRuntime(t)
	var totalChecked, totalFolded, totalBad int
	for _, rm := range assets.RealModels() {
		t.Run(rm.Name, func(t *testing.T) {
			fr := getFullRun(t, rm)
			l := getModel(t, rm)
			if l.err != nil {
				t.Fatalf("load: %v", l.err)
			}
			m := l.model
			var bad []string
			checked, folded := 0, 0
			for _, e := range fr.exposed {
				want := fr.values[e.tensor]
				where := fmt.Sprintf("%s node %q output %q", e.node.GetOpType(), e.node.GetName(), e.tensor)
				checked++
				got := m.Tensors[e.tensor]
				if got == nil {
					bad = append(bad, fmt.Sprintf("%s: ORT %s %s, not in the loaded model", where, want.DType, want.Dims))
					continue
				}
				if got.DType != want.DType || !got.Shape.Equal(want.Dims) {
					bad = append(bad, fmt.Sprintf("%s: ORT %s %s, inferred %s %s", where, want.DType, want.Dims, got.DType, got.Shape))
					continue
				}
				if got.IsConst() && got.Data != nil && got.Data.Raw != nil {
					folded++
					if msg := compareData(got.Data, want); msg != "" {
						bad = append(bad, fmt.Sprintf("%s: folded value differs from ORT's: %s", where, msg))
					}
				}
			}
			t.Logf("%-13s %4d node outputs checked (%d folded values), %d mismatches", rm.Name, checked, folded, len(bad))
			totalChecked += checked
			totalFolded += folded
			totalBad += len(bad)
			if len(bad) > 0 {
				t.Errorf("%d of %d node outputs differ from ONNX Runtime:\n  %s", len(bad), checked, strings.Join(firstN(bad, maxListed), "\n  "))
			}
		})
	}
	t.Logf("total: %d node outputs checked (%d folded values), %d mismatches", totalChecked, totalFolded, totalBad)
}

// firstN returns the first n items, with a note of how many were left out.
func firstN(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(items[:n:n], fmt.Sprintf("... and %d more", len(items)-n))
}
