package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/inlay-dev/inlay/onnx"
	"github.com/inlay-dev/inlay/zoo"
)

// Zoo counts every network's layers, parameters and MACs.
func TestZoo(t *testing.T) {
	rows, err := Zoo()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(zoo.Names()) {
		t.Fatalf("%d rows, want %d", len(rows), len(zoo.Names()))
	}
	for _, r := range rows {
		if r.Layers == 0 || r.MACs == 0 {
			t.Errorf("%s: %d layers, %d MACs", r.Spec.Name, r.Layers, r.MACs)
		}
		if r.Spec.Name == "resnet50" && (r.Params/100_000 != 255 || r.MACs/10_000_000 != 408) {
			t.Errorf("resnet50: %d params, %d MACs; want 25.5M and 4.09G", r.Params, r.MACs)
		}
	}
}

// rawInputFlags reads --input values and rejects malformed or repeated ones.
func TestRawInputFlags(t *testing.T) {
	got, sizes, err := rawInputFlags([]string{"x=1,3,H,W", "y=1x2"})
	if err != nil || sizes || len(got["x"]) != 4 || got["x"][2] != "H" || len(got["y"]) != 2 {
		t.Errorf("rawInputFlags = %v, %v, %v", got, sizes, err)
	}
	for _, bad := range [][]string{{"x"}, {"x=1", "x=2"}} {
		if _, _, err := rawInputFlags(bad); err == nil {
			t.Errorf("rawInputFlags(%q): no error", bad)
		}
	}
}

func TestExportZoo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.onnx")
	name, size, err := ExportZoo("mobilenet_v2", path, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Load(path, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi == nil || fi.Size() != int64(size) || name != "mobilenet_v2" || len(m.Nodes) == 0 {
		t.Errorf("wrote %s (%d bytes); read back %d nodes", name, size, len(m.Nodes))
	}
	if _, _, err := ExportZoo("no-such-net", path, 1); err == nil {
		t.Error("an unknown network exported")
	}
}
