package assets

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFetched: a missing cache file names make fetch in one line.
func TestCheckFetched(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("INLAY_CACHE", dir)
	t.Setenv("ONNXRUNTIME_LIB", "")
	for _, p := range []string{ModelPath("x.onnx"), ORTLibrary()} {
		err := CheckFetched(p)
		if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "run make fetch") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := CheckFetched(filepath.Join(t.TempDir(), "other.onnx")); err == nil || errors.Is(err, ErrMissing) {
		t.Errorf("a path outside the cache: %v", err)
	}
}
