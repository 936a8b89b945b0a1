package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/hw"
)

func TestPlatformsList(t *testing.T) {
	out, err := runInlay(t, "platforms")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 1+len(hw.Presets()) {
		t.Fatalf("want a header and %d rows:\n%s", len(hw.Presets()), out)
	}
	col := strings.Index(lines[0], "PROCESSORS")
	for i, name := range hw.Presets() {
		if !strings.HasPrefix(lines[i+1], name+" ") || len(lines[i+1]) <= col || lines[i+1][col-1] != ' ' {
			t.Errorf("row %q is not %s aligned under the header", lines[i+1], name)
		}
	}
	if !strings.Contains(out, "cpu-prime, cpu-perf, cpu-eff, gpu, npu") {
		t.Errorf("phone's processors missing:\n%s", out)
	}
}

func TestPlatformsShow(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"platforms", "show", "phone"}, []string{"cpu-prime", "26.0 TOPS", "no LSTM GRU", "rank ≤ 4", "dram  npu", "8 MiB"}},
		{[]string{"platforms", "show", "jetson-orin"}, []string{"dla1", "only Conv", "conv kernel ≤ 32", "dram  dla"}},
		{[]string{"platforms", "show", "desktop"}, []string{"host  vram", "vram  host", "25.0 GB/s", "10 µs", "one transfer at a time"}},
		{[]string{"platforms", "show", "phone", "--yaml"}, []string{"# phone:", "starting point to calibrate", "peak_gops: 26000"}},
		{[]string{"platforms", "show", "host", "--yaml"}, []string{"name: host", "cores: ["}},
	}
	for _, tc := range tests {
		wantOutput(t, tc.args, tc.want...)
	}
}

func TestPlatformsShowFile(t *testing.T) {
	var b bytes.Buffer
	p, _ := hw.Preset("desktop")
	if err := hw.Encode(&b, p); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runInlay(t, "platforms", "show", path)
	if err != nil || !strings.Contains(out, "RTX 4070") {
		t.Errorf("show FILE: %v\n%s", err, out)
	}
	if err := os.WriteFile(path, []byte("name: x\nprocessors:\n  - name: a\n    kind: tpu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runInlay(t, "platforms", "show", path); err == nil || !strings.Contains(err.Error(), "mine.yaml:4: processors[0].kind") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := runInlay(t, "platforms", "show", "nowhere"); err == nil {
		t.Error("unknown platform accepted")
	}
}
