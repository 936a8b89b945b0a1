package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCachePrefix: an ONNX path starting with "cache:" names a file in the
// fetched models' folder, not one beside the workload.
func TestCachePrefix(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("INLAY_CACHE", cache)
	path := filepath.Join(t.TempDir(), "w.yaml")
	text := "models:\n  - {name: m, onnx: cache:absent.onnx}\ngroups:\n  - {name: g, models: [m], rate_hz: 10}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if want := filepath.Join(cache, "models", "absent.onnx"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v does not name %s", err, want)
	}
}
