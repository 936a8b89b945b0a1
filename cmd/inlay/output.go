package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/report"
)

// output is one output file a command was asked to write: the flag that
// named it, the path, and the check of its format (nil: any).
type output struct {
	flag, path string
	format     func(path string) error
}

// Output formats, checked by the file's extension.
var (
	planFormat  = func(p string) error { _, err := plan.FormatOf(p); return err }
	ganttFormat = func(p string) error { _, err := report.GanttFormatOf(p); return err }
	htmlFormat  = func(p string) error {
		if e := strings.ToLower(filepath.Ext(p)); e != ".html" && e != ".htm" {
			return fmt.Errorf("%s: want an .html file", p)
		}
		return nil
	}
	traceFormat = func(p string) error {
		if strings.ToLower(filepath.Ext(p)) != ".json" {
			return fmt.Errorf("%s: want a .json file (Chrome trace events)", p)
		}
		return nil
	}
)

// checkOutputs fails, before any planning, simulation or run, when an
// output file could not be written as asked: an extension its format does
// not have, a folder that does not exist, or a folder in the file's place.
// Outputs with an empty path were not asked for.
func checkOutputs(outs ...output) error {
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if o.format != nil {
			if err := o.format(o.path); err != nil {
				return fmt.Errorf("%s: %w", o.flag, err)
			}
		}
		dir := filepath.Dir(o.path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s %s: folder %s does not exist", o.flag, o.path, dir)
		}
		if fi, err := os.Stat(o.path); err == nil && fi.IsDir() {
			return fmt.Errorf("%s %s: is a folder", o.flag, o.path)
		}
	}
	return nil
}
