package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/cost"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/profile"
)

// Published prints a fit to published latencies (profile.FitPublished) of
// pl to the rows of file: per data type the fitted figures, each model's
// prediction beside its published spread, the leave-one-model-out error,
// and the rows with CPU fallback apart.
func Published(out io.Writer, file string, pl *hw.Platform, rows []profile.Published, res *profile.PublishedFit) error {
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

// PublishedDevice prints the line that opens one device's fit to an AI Hub
// file (profile.FitDevices).
func PublishedDevice(out io.Writer, df profile.DeviceFit) {
	fmt.Fprintf(out, "== %s (%s): predicts runtime %s; %d rows fitted", df.Preset, df.Device, profile.PredictedRuntime, df.Fitted)
	if len(df.NotCovered) > 0 {
		fmt.Fprintf(out, "; not in the zoo: %s", strings.Join(df.NotCovered, ", "))
	}
	for _, r := range df.Outliers {
		fmt.Fprintf(out, "; left out as no NPU speed: %s %s %s %s ms (line %d)", r.Network, r.Precision, r.Runtime, ms3(r.Latency), r.Line)
	}
	fmt.Fprintln(out)
}
