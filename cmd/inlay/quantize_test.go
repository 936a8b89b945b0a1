package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/internal/assets"
	"github.com/inlay-dev/inlay/onnx"
)

// TestQuantizeCommand quantizes a zoo network dynamically (no calibration)
// and, with ONNX Runtime, statically; the files load with their quantized
// operators. Bad flags are one-line errors.
func TestQuantizeCommand(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		format string
		op     string
		ort    bool
	}{
		{"dynamic", "ConvInteger", false},
		{"qdq", "DequantizeLinear", true},
		{"qoperator", "QLinearConv", true},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			args := []string{"quantize", "squeezenet1_1", "--format", tt.format, "-o", filepath.Join(dir, tt.format+".onnx")}
			if tt.ort {
				args = append(args, "--ort-lib", assets.Require(t, assets.ORTLibrary()), "--samples", "1")
			}
			out, err := runInlay(t, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, "operators quantized") {
				t.Errorf("output %q", out)
			}
			m, err := onnx.Load(filepath.Join(dir, tt.format+".onnx"), onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, n := range m.Nodes {
				found = found || n.Op == tt.op
			}
			if !found {
				t.Errorf("no %s node in the %s model", tt.op, tt.format)
			}
		})
	}
	for _, bad := range [][]string{
		{"quantize", "squeezenet1_1", "--format", "int8", "-o", filepath.Join(dir, "x.onnx")},
		{"quantize", "squeezenet1_1"},
		{"quantize", "nosuchnet", "--format", "dynamic", "-o", filepath.Join(dir, "x.onnx")},
	} {
		if _, err := runInlay(t, bad...); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line", bad, err)
		}
	}
}
