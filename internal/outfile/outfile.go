// Package outfile writes the files that the commands' output flags name
// (--gantt, --cdf, --plot, --trace, --per-job, -o): it creates the file,
// lets a renderer write it, and closes it.
package outfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Write creates path and writes it with write; the first error wins.
func Write(path string, write func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Picture writes a .svg or .png file with draw, which is given the
// format ("svg" or "png"); another extension is an error, and nothing is
// created.
func Picture(path string, draw func(w io.Writer, format string) error) error {
	format, err := PictureFormat(path)
	if err != nil {
		return err
	}
	return Write(path, func(w io.Writer) error { return draw(w, format) })
}

// PictureFormat is the picture format ("svg" or "png") a file's
// extension asks for.
func PictureFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return "svg", nil
	case ".png":
		return "png", nil
	}
	return "", fmt.Errorf("%s: want a .svg or .png file", path)
}
