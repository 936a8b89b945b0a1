package assets

import (
	"errors"
	"os"
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

// TestModuleRoot: from this package's folder, the root is two folders up
// and holds go.mod.
func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Dir(filepath.Dir(wd)); root != want {
		t.Errorf("ModuleRoot = %s, want %s", root, want)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Error(err)
	}
}
