package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/profile"
)

// publishedFlags are inlay calibrate --published's.
type publishedFlags struct {
	file, output, platform string
	evals                  int
	prior                  float64
}

func runCalibratePublished(out io.Writer, f *publishedFlags) error {
	data, err := os.ReadFile(f.file)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if profile.IsAIHub(data) {
		return runCalibrateDevices(out, f, data)
	}
	rows, err := profile.ParsePublished(data, f.file)
	if err != nil {
		return err
	}
	name := f.platform
	if name == "" {
		name = "phone"
	}
	pl, err := hw.Resolve(name)
	if err != nil {
		return err
	}
	prior := f.prior
	if prior <= 0 {
		prior = -1 // none
	}
	bar := newBar(1, "fitting")
	res, err := profile.FitPublished(pl, rows, profile.PublishedOptions{MaxEvals: f.evals, Prior: prior, Source: filepath.Base(f.file),
		Progress: func(done, total int) {
			if bar != nil {
				bar.ChangeMax(total)
				_ = bar.Set(done)
			}
		}})
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	output := f.output
	if output == "" {
		output = pl.Name + "-calibrated.yaml"
	}
	if err := writePublishedReport(out, f.file, pl, rows, res); err != nil {
		return err
	}
	fh, err := os.Create(output)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	fmt.Fprintf(fh, "# %s with %s's figures fitted to %s by inlay calibrate --published\n", pl.Name, res.Processor, filepath.Base(f.file))
	fmt.Fprintf(fh, "# (fit: sustained_gops, mem_bandwidth_gbs, overheads, half_flops, on_chip_kib, the per-class compute fractions\n# and, for integer types, requant_gbs; every other figure is the preset's estimate, see its sources)\n")
	if err := hw.Encode(fh, res.Platform); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	fmt.Fprintf(out, "\nwrote %s (use it with --platform %s)\n", output, output)
	return nil
}

func ms3(d time.Duration) string { return fmt.Sprintf("%.3f", msOf(d)) }

func writePublishedReport(out io.Writer, file string, pl *hw.Platform, rows []profile.Published, res *profile.PublishedFit) error {
	fitted := 0
	for _, pf := range res.Fits {
		fitted += len(pf.Rows)
	}
	fmt.Fprintf(out, "fitted %s of %s to %s: %d rows fitted, %d with CPU fallback reported apart\n",
		res.Processor, pl.Name, file, fitted, len(res.Fallback))
	for _, pf := range res.Fits {
		f := pf.Fit
		fmt.Fprintf(out, "\n%s: sustained %s, bandwidth %.1f GB/s, dispatch %s, layer %s, half_flops %s, data movement %.3g GB/s\n", pf.DType,
			textfmt.SI(f.SustainedGOPS*1e9, "OPS"), f.MemBandwidthGBs, dur(f.DispatchOverhead), dur(f.LayerOverhead), textfmt.SI(f.HalfFLOPs, "FLOP"), f.MoveGBs)
		var cls []string
		for _, c := range cost.OpClasses {
			cls = append(cls, fmt.Sprintf("%s %.3g", c, f.Compute[string(c)]))
		}
		fmt.Fprintf(out, "  compute fraction per class: %s\n\n", strings.Join(cls, ", "))
		t := textfmt.Table{Header: []string{"MODEL", "ROWS", "MEASURED MS", "PUBLISHED SPREAD", "FITTED PREDICTION", "HELD-OUT PREDICTION", "ERROR"}}
		for _, m := range pf.Models {
			var fit time.Duration
			for _, r := range pf.Rows {
				if r.Row.Model == m.Model {
					fit = r.Fitted
				}
			}
			t.Add(m.Model, fmt.Sprint(m.Runtimes), ms3(m.Measured), ms3(m.Min)+"-"+ms3(m.Max), ms3(fit), ms3(m.Held), fmt.Sprintf("%.1f %%", 100*m.Error))
		}
		if _, err := t.WriteTo(out); err != nil {
			return err
		}
		fmt.Fprintf(out, "leave one model out, %s: median %.1f %%, worst %.1f %% (each model predicted by the fit to the others, against its runtimes' median); in-sample median %.1f %%\n",
			pf.DType, 100*pf.Median, 100*pf.Worst, 100*pf.FitMedian)
	}
	if len(res.Fallback) > 0 {
		fmt.Fprintf(out, "\nrows with layers on the CPU (not fitted; the model predicts the NPU alone):\n")
		t := textfmt.Table{Header: []string{"MODEL", "PRECISION", "RUNTIME", "CPU LAYERS", "MEASURED MS", "NPU-ONLY PREDICTION"}}
		for _, r := range res.Fallback {
			t.Add(r.Row.Model, r.Row.Precision.String(), r.Row.Runtime, fmt.Sprintf("%d of %d", r.Row.LayersCPU, r.Row.LayersTotal), ms3(r.Row.Latency), ms3(r.Fitted))
		}
		if _, err := t.WriteTo(out); err != nil {
			return err
		}
	}
	return nil
}

// runCalibrateDevices fits every device of an aihub-published.csv file
// (profile.FitDevices) and writes one calibrated platform per preset.
func runCalibrateDevices(out io.Writer, f *publishedFlags, data []byte) error {
	rows, err := profile.ParseAIHub(data, f.file)
	if err != nil {
		return err
	}
	var only []string
	if f.platform != "" {
		only = []string{f.platform}
	}
	prior := f.prior
	if prior <= 0 {
		prior = -1 // none
	}
	fits, err := profile.FitDevices(rows, profile.DevicesOptions{MaxEvals: f.evals, Prior: prior, Source: filepath.Base(f.file), Devices: only})
	if err != nil {
		return err
	}
	for i, df := range fits {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "== %s (%s): predicts runtime %s; %d rows fitted", df.Preset, df.Device, profile.PredictedRuntime, df.Fitted)
		if len(df.NotCovered) > 0 {
			fmt.Fprintf(out, "; not in the zoo: %s", strings.Join(df.NotCovered, ", "))
		}
		for _, r := range df.Outliers {
			fmt.Fprintf(out, "; left out as no NPU speed: %s %s %s %s ms (line %d)", r.Network, r.Precision, r.Runtime, ms3(r.Latency), r.Line)
		}
		fmt.Fprintln(out)
		pl, err := hw.Preset(df.Preset)
		if err != nil {
			return err
		}
		if err := writePublishedReport(out, f.file, pl, rows, df.Fit); err != nil {
			return err
		}
		output := df.Preset + "-calibrated.yaml"
		if f.output != "" {
			output = filepath.Join(f.output, output)
		}
		fh, err := os.Create(output)
		if err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
		fmt.Fprintf(fh, "# %s with %s's figures fitted to %s (%s, runtime %s) by inlay calibrate --published\n", df.Preset, df.Fit.Processor, filepath.Base(f.file), df.Device, profile.PredictedRuntime)
		if err := hw.Encode(fh, df.Fit.Platform); err != nil {
			fh.Close()
			return err
		}
		if err := fh.Close(); err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
		fmt.Fprintf(out, "wrote %s\n", output)
	}
	return nil
}
