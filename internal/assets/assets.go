// Package assets locates what scripts/fetch.sh puts into the cache outside the
// repository: the real ONNX models of shared/REAL_MODELS.md and the ONNX
// Runtime CPU library. It downloads nothing itself.
package assets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/graph"
)

// Dir is the cache folder: $INLAY_CACHE, else $XDG_CACHE_HOME/inlay, else
// ~/.cache/inlay (the same rule as scripts/fetch.sh).
func Dir() string {
	if d := os.Getenv("INLAY_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "inlay")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".cache", "inlay")
	}
	return filepath.Join(os.TempDir(), "inlay-cache")
}

// RealModel is one model of shared/REAL_MODELS.md.
type RealModel struct {
	// Name is a short, stable name used in workloads and tests.
	Name string
	// File is the file name in the cache's models folder.
	File string
	// Inputs gives typical values for the model's symbolic input dimensions
	// (input name → shape); inputs not listed have fully known shapes.
	Inputs map[string][]int64
}

// Shapes is Inputs as the shapes onnx.Options takes (an empty map when
// the model lists none).
func (rm RealModel) Shapes() map[string]graph.Shape {
	out := make(map[string]graph.Shape, len(rm.Inputs))
	for name, s := range rm.Inputs {
		out[name] = graph.Shape(s)
	}
	return out
}

// RealModels lists the real models in a fixed order.
func RealModels() []RealModel {
	return []RealModel{
		{Name: "ocr_det", File: "ch_PP-OCRv4_det_infer.onnx", Inputs: map[string][]int64{"x": {1, 3, 640, 640}}},
		{Name: "ocr_cls", File: "ch_ppocr_mobile_v2.0_cls_infer.onnx", Inputs: map[string][]int64{"x": {1, 3, 48, 192}}},
		{Name: "ocr_rec", File: "ch_PP-OCRv4_rec_infer.onnx", Inputs: map[string][]int64{"x": {1, 3, 48, 320}}},
		{Name: "melspec", File: "melspectrogram.onnx", Inputs: map[string][]int64{"input": {1, 1280}}},
		{Name: "speech_embed", File: "embedding_model.onnx", Inputs: map[string][]int64{"input_1": {1, 76, 32, 1}}},
		{Name: "wakeword", File: "hey_jarvis_v0.1.onnx"},
		{Name: "vad", File: "silero_vad_legacy.onnx", Inputs: map[string][]int64{"input": {1, 512}, "h": {2, 1, 64}, "c": {2, 1, 64}}},
		{Name: "blazeface", File: "face_detection_front_128x128_barracuda.onnx"},
	}
}

// ModelPath is the cached path of a real model's file.
func ModelPath(file string) string { return filepath.Join(Dir(), "models", file) }

// ORTLibrary is the cached path of the ONNX Runtime shared library; the
// environment variable ONNXRUNTIME_LIB overrides it.
func ORTLibrary() string {
	if p := os.Getenv("ONNXRUNTIME_LIB"); p != "" {
		return p
	}
	return filepath.Join(Dir(), "ort", "libonnxruntime.so.1")
}

// ErrMissing says that a fetched file is not in the cache.
var ErrMissing = errors.New("not fetched yet; run make fetch (scripts/fetch.sh) to fetch ONNX Runtime and the real models")

// CheckFetched returns nil when path exists; else, for a path in the
// cache (a fetched model or the ONNX Runtime library), a one-line error
// wrapping ErrMissing that names the file and the command that fetches
// it, and for any other path the file system's error.
func CheckFetched(path string) error {
	_, err := os.Stat(path)
	if err == nil {
		return nil
	}
	if rel, rerr := filepath.Rel(Dir(), path); rerr == nil && !strings.HasPrefix(rel, "..") || path == ORTLibrary() {
		return fmt.Errorf("%s: %w", path, ErrMissing)
	}
	return err
}

// Require returns path, or stops the test when the file is missing (see
// Missing).
func Require(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, fmt.Sprintf("%s: %v", path, ErrMissing))
	}
	return path
}

// Missing stops a test that needs an asset this machine lacks (a fetched
// model, ONNX Runtime, CBC, Chromium, a file of the shared data): it skips
// the test, unless INLAY_REQUIRE_ASSETS=1 (set by make test), when it fails
// it. msg is one line that names the asset and says how to get it.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("INLAY_REQUIRE_ASSETS") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// RequireTraining is RequireShared for rel inside the shared training data
// (shared/training/).
func RequireTraining(t testing.TB, rel string) string {
	t.Helper()
	return RequireShared(t, filepath.Join("training", rel))
}

// ModuleRoot is the folder of the go.mod at or above the working directory
// (in a test, its package folder): the checkout's root.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// RequireShared returns the path of rel inside the project's shared data
// folder (shared/, beside the repository: ../shared from the module root),
// or skips the test when the file is missing — unless INLAY_REQUIRE_ASSETS=1
// (set by make test), when a missing file fails it with the one line that
// says where the folder belongs.
func RequireShared(t testing.TB, rel string) string {
	t.Helper()
	root, err := ModuleRoot()
	path := filepath.Join(root, "..", "shared", rel)
	if err == nil {
		_, err = os.Stat(path)
	}
	if err != nil {
		Missing(t, fmt.Sprintf("shared/%s is missing: put the project's shared data folder beside the repository (../shared from its root)", rel))
	}
	return path
}
