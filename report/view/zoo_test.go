package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/zoo"
)

func TestZooList(t *testing.T) {
	rows, err := app.Zoo()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Zoo(&out, rows); err != nil {
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
