package view

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/inlay-dev/inlay/app"
	"github.com/inlay-dev/inlay/hw"
	"github.com/inlay-dev/inlay/plan"
	"github.com/inlay-dev/inlay/report"
	"github.com/inlay-dev/inlay/sim"
	"github.com/inlay-dev/inlay/workload"
)

// WriteFile creates the file at path and writes it with write.
func WriteFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return fh.Close()
}

// GanttFile draws res's schedule (report.Gantt) from 0 to window into
// the file at path, in the format its extension names.
func GanttFile(path, title string, res *sim.Result, window time.Duration) error {
	format, err := report.GanttFormatOf(path)
	if err != nil {
		return err
	}
	return WriteFile(path, func(fw io.Writer) error {
		return report.Gantt(fw, format, title, res.Lanes, res.Spans, [2]time.Duration{0, window})
	})
}

// TraceFile writes spans as a Chrome trace to the file at path.
func TraceFile(path string, lanes []string, spans []report.Span) error {
	return WriteFile(path, func(fw io.Writer) error {
		return report.ChromeTrace(fw, report.Rows(lanes, spans), spans)
	})
}

// PlanFiles writes the Gantt chart (gantt) and the trace (trace) of a
// plan's simulated schedule ("": not asked for).
func PlanFiles(gantt, trace string, w *workload.Workload, planner, platform string, res *sim.Result) error {
	if gantt == "" && trace == "" {
		return nil
	}
	if res == nil || res.Spans == nil {
		return errors.New("plan: the simulation recorded no schedule to draw")
	}
	if gantt != "" {
		title := fmt.Sprintf("%s on %s, %s: rate scale %.3g", filepath.Base(w.Path), platform, planner, res.Scale)
		if err := GanttFile(gantt, title, res, app.GanttWindow(w, res)); err != nil {
			return err
		}
	}
	if trace != "" {
		return TraceFile(trace, res.Lanes, res.Spans)
	}
	return nil
}

// SimulationFiles writes the Gantt chart (gantt) and the trace (trace) of
// a simulation ("": not asked for) from 0 to window (0: the chart's
// default window, and ten times that for the trace).
func SimulationFiles(gantt, trace string, window time.Duration, w *workload.Workload, pl *hw.Platform, p *plan.Plan, res *sim.Result) error {
	traceWindow := window
	if window <= 0 {
		window = app.GanttWindow(w, res)
		traceWindow = 10 * window
	}
	if gantt != "" {
		planner := p.Planner
		if planner == "" {
			planner = "plan"
		}
		title := fmt.Sprintf("%s on %s at rate scale %.3g", planner, pl.Name, res.Scale)
		if err := GanttFile(gantt, title, res, window); err != nil {
			return err
		}
	}
	if trace == "" {
		return nil
	}
	var spans []report.Span
	for _, sp := range res.Spans {
		if sp.Start < traceWindow {
			spans = append(spans, sp)
		}
	}
	return TraceFile(trace, res.Lanes, spans)
}
