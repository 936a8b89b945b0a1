package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// GanttFormat is a Gantt chart's file type.
type GanttFormat string

// The Gantt chart file types, named by a file's extension.
const (
	SVG GanttFormat = "svg"
	PNG GanttFormat = "png"
)

// GanttFormatOf is the chart type a file name asks for: .svg or .png
// (any case); anything else is an error naming the file.
func GanttFormatOf(path string) (GanttFormat, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return SVG, nil
	case ".png":
		return PNG, nil
	}
	return "", fmt.Errorf("report: %s: want a .svg or .png file", path)
}

// Gantt is the one way the commands draw a schedule: every lane (procs,
// then the other processors the spans ran on, such as links; see Rows) as
// GanttSVG or GanttPNG draws it, in format f.
func Gantt(w io.Writer, f GanttFormat, title string, procs []string, spans []Span, window [2]time.Duration) error {
	rows := Rows(procs, spans)
	switch f {
	case SVG:
		return GanttSVG(w, title, rows, spans, window)
	case PNG:
		return GanttPNG(w, title, rows, spans, window)
	}
	return fmt.Errorf("report: unknown Gantt format %q", f)
}

// GanttPeriods is how many periods of the slowest group a Gantt chart
// shows by default: few enough that bars stay legible.
const GanttPeriods = 3

// GanttWindow is the default end of a chart's window: GanttPeriods periods
// of the slowest group (the longest of periods) at rate scale, or end (the
// whole run) when that is shorter or the scale is not positive.
func GanttWindow(periods []time.Duration, scale float64, end time.Duration) time.Duration {
	var longest time.Duration
	for _, p := range periods {
		longest = max(longest, p)
	}
	var window time.Duration
	if scale > 0 {
		window = time.Duration(GanttPeriods * float64(longest) / scale)
	}
	if window <= 0 || window > end {
		window = end
	}
	return window
}
