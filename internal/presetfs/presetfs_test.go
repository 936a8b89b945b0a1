package presetfs

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestDir(t *testing.T) {
	d := Dir{FS: fstest.MapFS{
		"p/b.yaml": {Data: []byte("b")},
		"p/a.yaml": {Data: []byte("a")},
		"p/README": {Data: []byte("x")},
		"q/c.yaml": {Data: []byte("c")},
	}, Dir: "p", Pkg: "hw", What: "preset"}
	if got := strings.Join(d.Names(), ","); got != "a,b" {
		t.Errorf("Names = %s, want a,b", got)
	}
	if !d.Has("a") || d.Has("c") || d.Has("README") {
		t.Errorf("Has: a %v, c %v, README %v", d.Has("a"), d.Has("c"), d.Has("README"))
	}
	if data, err := d.Source("b"); err != nil || string(data) != "b" {
		t.Errorf("Source(b) = %q, %v", data, err)
	}
	_, err := d.Source("c")
	if err == nil || err.Error() != `hw: unknown preset "c" (presets: a, b)` {
		t.Errorf("Source(c) error = %v", err)
	}
	if got := d.Sources(); len(got) != 2 || string(got[0]) != "a" || string(got[1]) != "b" {
		t.Errorf("Sources = %q, want a, b", got)
	}
}
