package testfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteMakesFolders(t *testing.T) {
	dir := t.TempDir()
	path := Write(t, dir, filepath.Join("a", "b", "w.yaml"), "x: 1\n")
	if path != filepath.Join(dir, "a", "b", "w.yaml") {
		t.Errorf("path %s", path)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "x: 1\n" {
		t.Errorf("read %q, %v", got, err)
	}
}
