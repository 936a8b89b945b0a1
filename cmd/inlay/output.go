package main

import "github.com/inlay-dev/inlay/app"

// output is one output file a command was asked to write: the flag that
// named it, the path, and the check of its format (nil: any).
type output struct {
	flag, path string
	format     func(path string) error
}

// checkOutputs fails, before any work, when an output file could not be
// written as asked (app.CheckOutputs).
func checkOutputs(outs ...output) error {
	as := make([]app.Output, len(outs))
	for i, o := range outs {
		as[i] = app.Output{Flag: o.flag, Path: o.path, Format: o.format}
	}
	return app.CheckOutputs(as...)
}
