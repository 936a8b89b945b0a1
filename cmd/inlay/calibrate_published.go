package main

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/report/progress"
	"github.com/inlay-dev/inlay/report/view"
)

// publishedFlags are inlay calibrate --published's.
type publishedFlags struct {
	file, output, platform string
	evals                  int
	prior                  float64
}

func runCalibratePublished(out io.Writer, f *publishedFlags) error {
	in := app.PublishedInput{File: f.file, Platform: f.platform, Evals: f.evals, Prior: f.prior}
	var bar *progressbar.ProgressBar // a single fit's, from its first step
	if progress.IsTerminal(os.Stderr) {
		in.Progress = func(done, total int) {
			if bar == nil {
				bar = progress.New(total, "fitting")
			}
			bar.ChangeMax(total)
			_ = bar.Set(done)
		}
	}
	r, err := app.CalibratePublished(in)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	for i, df := range r.Devices {
		if i > 0 {
			fmt.Fprintln(out)
		}
		view.PublishedDevice(out, df)
		pl, err := hw.Preset(df.Preset)
		if err != nil {
			return err
		}
		if err := view.Published(out, f.file, pl, r.Rows, df.Fit); err != nil {
			return err
		}
		path, err := app.WriteDevice(df, f.output, f.file)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", path)
	}
	if r.Devices != nil {
		return nil
	}
	if err := view.Published(out, f.file, r.Platform, r.Rows, r.Fit); err != nil {
		return err
	}
	output := r.PublishedOutput(f.output)
	if err := r.WritePublished(output, f.file); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nwrote %s (use it with --platform %s)\n", output, output)
	return nil
}
