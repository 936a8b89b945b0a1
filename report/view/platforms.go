package view

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/internal/textfmt"
)

// Platforms prints one row per preset: name, processors, description.
func Platforms(w io.Writer) error {
	t := &textfmt.Table{Header: []string{"NAME", "PROCESSORS", "DESCRIPTION"}}
	for _, name := range hw.Presets() {
		p, err := hw.Preset(name)
		if err != nil {
			return err
		}
		t.Add(name, strings.Join(p.Names(), ", "), p.Description)
	}
	_, err := t.WriteTo(w)
	return err
}

// Platform prints a platform: a table of processors, each processor's
// operator support, the memory domains and the links; asYAML prints it as
// YAML instead (a preset's embedded file, with its source citations).
func Platform(w io.Writer, p *hw.Platform, asYAML bool) error {
	if asYAML {
		if name, ok := strings.CutPrefix(p.Source, "preset:"); ok && name != "host" {
			src, err := hw.PresetSource(name)
			if err != nil {
				return err
			}
			_, err = w.Write(src)
			return err
		}
		return hw.Encode(w, p)
	}
	fmt.Fprintf(w, "%s: %s\n(source: %s; figures are starting points to calibrate)\n\n", p.Name, p.Description, p.Source)
	t := &textfmt.Table{Header: []string{"ID", "PROCESSOR", "KIND", "BACKENDS", "DTYPES (PEAK)", "MEM BW", "DISPATCH", "PER LAYER", "ON-CHIP", "CONCURRENCY", "DOMAIN"}}
	for i, pr := range p.Processors {
		var dts []string
		for _, d := range pr.DTypes {
			dts = append(dts, fmt.Sprintf("%s %s", d.DType, textfmt.SI(d.PeakGOPS*1e9, "OPS")))
		}
		t.Add(strconv.Itoa(i), pr.Name, pr.Kind, strings.Join(pr.Backends, ","), strings.Join(dts, ", "),
			textfmt.SI(pr.MemBandwidthGBs*1e9, "B/s"), dur(pr.DispatchOverhead), dur(pr.LayerOverhead),
			kib(pr.OnChipBytes), strconv.Itoa(pr.Concurrency), pr.Domain)
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	var fits []string
	for _, pr := range p.Processors {
		for _, d := range pr.DTypes {
			if f := d.Fit; f != nil {
				line := fmt.Sprintf("  %s %s: sustained %s, bandwidth %s, dispatch %s, per layer %s, conv %.3g, depthwise %.3g, matmul %.3g, elementwise %.3g, norm %.3g, data movement %.3g GB/s\n    fitted to %s",
					pr.Name, d.DType, textfmt.SI(f.SustainedGOPS*1e9, "OPS"), textfmt.SI(f.MemBandwidthGBs*1e9, "B/s"), dur(f.DispatchOverhead), dur(f.LayerOverhead),
					f.Compute["conv"], f.Compute["depthwise"], f.Compute["matmul"], f.Compute["elementwise"], f.Compute["norm"], f.MoveGBs, f.FittedTo)
				if f.HeldOut != "" {
					line += "\n    " + f.HeldOut
				}
				fits = append(fits, line)
			}
		}
	}
	if len(fits) > 0 {
		fmt.Fprintln(w, "\nfitted figures (replace the estimates above for these data types):")
		fmt.Fprintln(w, strings.Join(fits, "\n"))
	}
	fmt.Fprintln(w, "\noperator support:")
	for _, pr := range p.Processors {
		fmt.Fprintf(w, "  %s: %s\n", pr.Name, supportLine(pr))
	}
	fmt.Fprintln(w, "\nmemory domains:")
	for _, d := range p.Domains {
		var procs []string
		for _, pr := range p.Processors {
			if pr.Domain == d.Name {
				procs = append(procs, pr.Name)
			}
		}
		fmt.Fprintf(w, "  %s (%s): %s\n", d.Name, strings.Join(procs, ", "), d.Description)
	}
	if len(p.Links) == 0 {
		fmt.Fprintln(w, "\nlinks: none (all processors share memory without copies)")
		return nil
	}
	fmt.Fprintln(w, "\nlinks:")
	lt := &textfmt.Table{Header: []string{"FROM", "TO", "BANDWIDTH", "LATENCY", "CONTENDED"}, Indent: "  "}
	for _, l := range p.Links {
		shared := "no"
		if l.Shared {
			shared = "yes (one transfer at a time)"
		}
		lt.Add(l.From, l.To, textfmt.SI(l.BandwidthGBs*1e9, "B/s"), dur(l.Latency), shared)
	}
	_, err := lt.WriteTo(w)
	return err
}

func supportLine(pr *hw.Processor) string {
	s := pr.Support
	var parts []string
	if len(s.Ops) > 0 {
		parts = append(parts, "only "+strings.Join(s.Ops, " "))
	}
	if len(s.Unsupported) > 0 {
		parts = append(parts, "no "+strings.Join(s.Unsupported, " "))
	}
	if s.MaxRank > 0 {
		parts = append(parts, fmt.Sprintf("rank ≤ %d", s.MaxRank))
	}
	if len(s.RankByOp) > 0 {
		ops := slices.Sorted(maps.Keys(s.RankByOp))
		var rs []string
		for _, op := range ops {
			rs = append(rs, fmt.Sprintf("%s %d", op, s.RankByOp[op]))
		}
		parts = append(parts, "rank by operator: "+strings.Join(rs, ", "))
	}
	if s.MaxDim > 0 {
		parts = append(parts, fmt.Sprintf("dimensions ≤ %d", s.MaxDim))
	}
	if s.MaxConvKernel > 0 {
		parts = append(parts, fmt.Sprintf("conv kernel ≤ %d", s.MaxConvKernel))
	}
	if s.MaxPoolWindow > 0 {
		parts = append(parts, fmt.Sprintf("pool window ≤ %d", s.MaxPoolWindow))
	}
	if s.StaticShapesOnly {
		parts = append(parts, "static shapes only")
	}
	if len(s.TensorDTypes) > 0 {
		var ds []string
		for _, d := range s.TensorDTypes {
			ds = append(ds, d.String())
		}
		parts = append(parts, "tensors "+strings.Join(ds, "/"))
	}
	if len(parts) == 0 {
		return "every operator"
	}
	return strings.Join(parts, "; ")
}
