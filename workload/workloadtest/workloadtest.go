// Package workloadtest holds workload fixtures that tests of several
// packages share: writing a workload text to a file and loading it, and the
// one-model real workload the profile and run tests measure.
package workloadtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/workload"
)

// Write writes text to dir/name and returns the file's path.
func Write(tb testing.TB, dir, name, text string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Load writes text into a temporary folder and loads it as a workload.
func Load(tb testing.TB, text string) *workload.Workload {
	tb.Helper()
	w, err := workload.Load(Write(tb, tb.TempDir(), "workload.yaml", text))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// MelFile writes dir/mel.yaml, a workload of one real model, the
// melspectrogram of shared/REAL_MODELS.md, alone in a group at 12.5 Hz on
// the host platform, and returns its path. Without the fetched model the
// test stops as assets.Require says.
func MelFile(tb testing.TB, dir string) string {
	tb.Helper()
	model := assets.Require(tb, assets.ModelPath("melspectrogram.onnx"))
	text := fmt.Sprintf("platform: host\nmodels:\n  - {name: mel, onnx: %q, inputs: {input: [1, 1280]}}\ngroups:\n  - {name: voice, models: [mel], period_ms: 80}\n", model)
	return Write(tb, dir, "mel.yaml", text)
}
