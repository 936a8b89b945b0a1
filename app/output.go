package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/report"
)

// Output is one output file a command was asked to write: the flag that
// named it, the path, and the check of its format (nil: any).
type Output struct {
	Flag, Path string
	Format     func(path string) error
}

// Output formats, checked by the file's extension.
var (
	PlanFormat  = func(p string) error { _, err := plan.FormatOf(p); return err }
	GanttFormat = func(p string) error { _, err := report.GanttFormatOf(p); return err }
	HTMLFormat  = func(p string) error {
		if e := strings.ToLower(filepath.Ext(p)); e != ".html" && e != ".htm" {
			return fmt.Errorf("%s: want an .html file", p)
		}
		return nil
	}
	TraceFormat = func(p string) error {
		if strings.ToLower(filepath.Ext(p)) != ".json" {
			return fmt.Errorf("%s: want a .json file (Chrome trace events)", p)
		}
		return nil
	}
)

// CheckOutputs fails, before any planning, simulation or run, when an
// output file could not be written as asked: an extension its format does
// not have, a folder that does not exist, or a folder in the file's place.
// Outputs with an empty path were not asked for.
func CheckOutputs(outs ...Output) error {
	for _, o := range outs {
		if o.Path == "" {
			continue
		}
		if o.Format != nil {
			if err := o.Format(o.Path); err != nil {
				return fmt.Errorf("%s: %w", o.Flag, err)
			}
		}
		dir := filepath.Dir(o.Path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s %s: folder %s does not exist", o.Flag, o.Path, dir)
		}
		if fi, err := os.Stat(o.Path); err == nil && fi.IsDir() {
			return fmt.Errorf("%s %s: is a folder", o.Flag, o.Path)
		}
	}
	return nil
}
