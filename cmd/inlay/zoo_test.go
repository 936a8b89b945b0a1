package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/zoo"
)

func TestZooList(t *testing.T) {
	var out bytes.Buffer
	if err := zooList(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 1+len(zoo.Names()) {
		t.Fatalf("%d lines, want a header and %d rows:\n%s", len(lines), len(zoo.Names()), out.String())
	}
	col := strings.Index(lines[0], "PARAMS")
	for i, name := range zoo.Names() {
		row := lines[i+1]
		if !strings.HasPrefix(row, name+" ") {
			t.Errorf("row %d %q does not start with %s", i, row, name)
		}
		if col < 0 || len(row) <= col || row[col-1] != ' ' {
			t.Errorf("row %q is not aligned with the header", row)
		}
	}
	if !strings.Contains(out.String(), "25.6 M") || !strings.Contains(out.String(), "4.09 GMAC") {
		t.Errorf("resnet50's 25.6M params and 4.09G MACs missing:\n%s", out.String())
	}
}

func TestZooExport(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "m.onnx")
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"zoo", "export", "mobilenet_v2", "-o", file, "--seed", "5"})
	if err := root.Execute(); err != nil {
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
		root := newRootCmd()
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(c.args)
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line containing %q", c.args, err, c.want)
		}
	}
}
