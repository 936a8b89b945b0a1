package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestZooExport(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "m.onnx")
	if _, err := runInlayStdout(t, "zoo", "export", "mobilenet_v2", "-o", file, "--seed", "5"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Size() < 3_500_000*4 {
		t.Fatalf("exported file: %v, %v", fi, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"zoo", "export", "alexnet", "-o", file}, "valid: mobilenet_v2"},
		{[]string{"zoo", "export", "resnet50"}, "-o FILE is required"},
	} {
		_, err := runInlay(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line containing %q", c.args, err, c.want)
		}
	}
}
