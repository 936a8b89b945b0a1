package view

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/internal/textfmt"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// DemoScenario prints what the demo's scenario is.
func DemoScenario(out io.Writer, d *app.Demo) {
	w := d.Workload
	src := "real ONNX models"
	if !d.Real {
		src = "zoo stand-ins; make fetch fetches the real models"
	}
	fmt.Fprintf(out, "inlay demo: %d models in %d groups on %s (%s)\n", len(w.Models), len(w.Groups), d.Platform.Name, src)
	fmt.Fprintf(out, "precision: %s allowed (workload.yaml's precision: list; int8 for these float models only because the demo allows it)\n", workload.PrecisionYAML(w.Precision))
	for _, g := range w.Groups {
		fmt.Fprintf(out, "  %-7s %5.1f Hz, deadline %.1f ms: %s\n", g.Name, g.RateHz(), msOf(g.Deadline), strings.Join(g.Models, ", "))
	}
	fmt.Fprintln(out)
}

// DemoTable prints the planners side by side, with a reason beside every
// rate of 0, and the bound below.
func DemoTable(out io.Writer, d *app.Demo) error {
	w, rows := d.Workload, d.Rows
	base := map[string]float64{}
	header := []string{"planner", "rate scale", "camera Hz", "voice Hz", "vs bestmap", "vs single:npu", "subgraphs", "search s"}
	for _, r := range rows {
		base[r.Name] = r.Scale
		if r.Scale <= 0 && len(header) == 8 {
			header = append(header, "why 0")
		}
	}
	t := textfmt.Table{Header: header}
	for _, r := range rows {
		cells := []string{r.Name, fmt.Sprintf("%.3f", r.Scale), hz(w, "camera", r.Scale), hz(w, "voice", r.Scale),
			times(r.Scale, base["bestmap"]), times(r.Scale, base["single:npu"]), fmt.Sprint(r.Subgraphs), fmt.Sprintf("%.1f", r.Seconds)}
		if len(header) > 8 {
			cells = append(cells, r.WhyZero)
		}
		t.Add(cells...)
	}
	if _, err := t.WriteTo(out); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nrate scale: the largest factor on every group's rate at which 99%% of requests meet their deadline (simulated)\n")
	if d.Bound.Proven() {
		fmt.Fprintf(out, "upper bound (no plan can beat it): %.3f — %s\n", d.Bound.Scale, d.Bound.Why)
	} else {
		fmt.Fprintf(out, "estimated bound: %.3f — %s\n", d.Bound.Scale, d.Bound.Why)
	}
	return nil
}

// demoFileNames are the files demoFiles renders, in the order written.
var demoFileNames = []string{"gantt.svg", "gantt.png", "trace.json", "report.txt", "report.html"}

// DemoFiles writes the best plan's schedule (res, at the scale sust) into
// the demo's folder: a Gantt chart (SVG, PNG), a Chrome trace, the text
// report and an HTML page; it returns the text report.
func DemoFiles(d *app.Demo, sust sim.Sustained, res *sim.Result) ([]byte, error) {
	files, err := demoFiles(d, sust, res)
	if err != nil {
		return nil, err
	}
	for _, fn := range demoFileNames {
		if err := os.WriteFile(filepath.Join(d.Dir, fn), files[fn], 0o644); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	return files["report.txt"], nil
}

// demoFiles renders the files of demoFileNames.
func demoFiles(d *app.Demo, sust sim.Sustained, res *sim.Result) (map[string][]byte, error) {
	name, pl := d.Rows[d.Best].Name, d.Platform
	window := app.GanttWindow(d.Workload, res)
	title := fmt.Sprintf("inlay demo on %s, %s plan at rate scale %.3g", pl.Name, name, sust.Scale)
	var svg, png, trace, txt, html bytes.Buffer
	if err := report.Gantt(&svg, report.SVG, title, res.Lanes, res.Spans, [2]time.Duration{0, window}); err != nil {
		return nil, err
	}
	if err := report.Gantt(&png, report.PNG, title, res.Lanes, res.Spans, [2]time.Duration{0, window}); err != nil {
		return nil, err
	}
	if err := report.ChromeTrace(&trace, report.Rows(res.Lanes, res.Spans), res.Spans); err != nil {
		return nil, err
	}
	s := report.Summary{Workload: "workload.yaml", Platform: pl.Name, Planner: name, Source: "simulation",
		Scale: sust.Scale, Bound: d.Bound.Scale, BoundWhy: d.Bound.Why}
	SimRows(&s, pl, res, nil)
	if err := report.Text(&txt, s); err != nil {
		return nil, err
	}
	if err := report.HTML(&html, s, svg.Bytes()); err != nil {
		return nil, err
	}
	return map[string][]byte{"gantt.svg": svg.Bytes(), "gantt.png": png.Bytes(), "trace.json": trace.Bytes(), "report.txt": txt.Bytes(), "report.html": html.Bytes()}, nil
}

// DemoBest prints the best plan's report (its report.txt) and what the
// demo wrote into dir.
func DemoBest(out io.Writer, name, dir string, txt []byte) error {
	fmt.Fprintf(out, "\nbest plan: %s — schedule at its max rate:\n\n", name)
	if _, err := out.Write(txt); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nwrote %s/: workload.yaml, plan-*.yaml, gantt.svg, gantt.png, trace.json (Perfetto), report.txt, report.html\n", dir)
	return nil
}

func hz(w *workload.Workload, group string, scale float64) string {
	g := w.Group(group)
	if g == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", g.RateHz()*scale)
}

func times(x, base float64) string {
	if base <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x/base)
}
