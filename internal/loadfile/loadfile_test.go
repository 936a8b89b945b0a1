package loadfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(path, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Read("pkg", path, func(file string, data []byte) (int, error) {
		if file != path {
			t.Errorf("parser got file %q, want %q", file, path)
		}
		return len(data), nil
	})
	if err != nil || n != 3 {
		t.Errorf("Read = %d, %v; want 3, nil", n, err)
	}
	_, err = Read("pkg", path+".missing", func(string, []byte) (int, error) { return 0, nil })
	if err == nil || !strings.HasPrefix(err.Error(), "pkg: open ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
