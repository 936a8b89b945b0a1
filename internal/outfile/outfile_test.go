package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestPicture(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{"a.SVG": "svg", "b.png": "png", "c.jpg": ""} {
		if f, err := PictureFormat(path); f != want || (err != nil) != (want == "") {
			t.Errorf("%s: %q %v", path, f, err)
		}
	}
	var got string
	p := filepath.Join(dir, "x.png")
	if err := Picture(p, func(w io.Writer, format string) error { got = format; _, err := w.Write([]byte("png")); return err }); err != nil || got != "png" {
		t.Fatalf("%v %q", err, got)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "png" {
		t.Errorf("%q %v", b, err)
	}
	if err := Picture(filepath.Join(dir, "y.jpg"), nil); err == nil {
		t.Error("jpg: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "y.jpg")); !os.IsNotExist(err) {
		t.Errorf("y.jpg created: %v", err)
	}
	boom := errors.New("boom")
	if err := Write(filepath.Join(dir, "z"), func(io.Writer) error { return boom }); err != boom {
		t.Errorf("got %v", err)
	}
	if err := Write(filepath.Join(dir, "no", "such"), func(io.Writer) error { return nil }); err == nil {
		t.Error("missing folder: no error")
	}
}
