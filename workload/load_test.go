package workload

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/internal/testfile"
)

func TestLoadZoo(t *testing.T) {
	dir := t.TempDir()
	path := testfile.Write(t, dir, "w.yaml", `platform: plat/my.yaml
models:
  - {name: a, zoo: mobilenet_v2}
  - {name: b, zoo: mobilenet_v2}
groups:
  - {name: g, models: [a, b], after: {b: [a]}, rate_hz: 30}
`)
	w, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Platform != filepath.Join(dir, "plat", "my.yaml") {
		t.Errorf("platform %q not resolved against the workload's folder", w.Platform)
	}
	a, b := w.Model("a"), w.Model("b")
	if a.Graph == nil || a.Layers == nil || len(a.Layers.Layers) < 10 {
		t.Fatalf("model a not loaded: %+v", a)
	}
	if b.Graph != a.Graph {
		t.Error("two models of one source loaded twice")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	testfile.Write(t, dir, "models/bad.onnx", "not a model")
	tests := []struct{ name, yaml, want string }{
		{"missing onnx", "models:\n  - {name: a, onnx: models/none.onnx}\ngroups: [{name: g, models: [a], rate_hz: 1}]",
			"w.yaml:2: models[0] (a): "},
		{"bad onnx", "models:\n  - {name: a, onnx: models/bad.onnx}\ngroups: [{name: g, models: [a], rate_hz: 1}]",
			"w.yaml:2: models[0] (a): "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(testfile.Write(t, dir, "w.yaml", tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line containing %q", err, tc.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "none.yaml")); err == nil {
		t.Error("missing workload file accepted")
	}
}

// TestLoadReal loads every real model through a workload, with its typical
// input shapes, from a path relative to the workload file.
func TestLoadReal(t *testing.T) {
	var b strings.Builder
	b.WriteString("models:\n")
	var names []string
	for _, rm := range assets.RealModels() {
		path := assets.Require(t, assets.ModelPath(rm.File))
		fmt.Fprintf(&b, "  - name: %s\n    onnx: %s\n", rm.Name, path)
		if len(rm.Inputs) > 0 {
			b.WriteString("    inputs:\n")
			for _, in := range slices.Sorted(maps.Keys(rm.Inputs)) {
				fmt.Fprintf(&b, "      %s: %v\n", in, strings.ReplaceAll(fmt.Sprint(rm.Inputs[in]), " ", ", "))
			}
		}
		names = append(names, rm.Name)
	}
	fmt.Fprintf(&b, "groups:\n  - {name: all, models: [%s], rate_hz: 10}\n", strings.Join(names, ", "))
	w, err := Load(testfile.Write(t, t.TempDir(), "real.yaml", b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range w.Models {
		if m.Layers == nil || len(m.Layers.Layers) == 0 {
			t.Errorf("%s: no layers", m.Name)
		}
	}
}

func TestLoadExample(t *testing.T) {
	w, err := Load(filepath.Join("testdata", "phone_camera.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Platform != "phone" || len(w.Models) != 4 || len(w.Groups) != 2 {
		t.Fatalf("got %+v", w)
	}
	order, err := w.Group("camera").Order()
	if err != nil || strings.Join(order, ",") != "face,det,seg" {
		t.Errorf("camera order %v, %v", order, err)
	}
	if g := w.Group("text"); g.Deadline != 150*time.Millisecond || g.Arrival != Poisson {
		t.Errorf("text = %+v", g)
	}
	for _, m := range w.Models {
		if m.Layers == nil {
			t.Errorf("%s not loaded", m.Name)
		}
	}
}
