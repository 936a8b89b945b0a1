package cost

import (
	"slices"
	"testing"

	"github.com/inlay-dev/inlay/hw"
)

// TestFitClassesMatch: the class names a platform file's fitted figures
// take are the cost model's classes.
func TestFitClassesMatch(t *testing.T) {
	var names []string
	for _, c := range OpClasses {
		names = append(names, string(c))
	}
	if !slices.Equal(names, hw.FitClasses) {
		t.Fatalf("hw.FitClasses %v, cost.OpClasses %v", hw.FitClasses, names)
	}
}
