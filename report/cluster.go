package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The cluster-mode pictures: a Gantt chart of GPUs over time, the CDF of
// job completion times, and average JCT against input rate. Each is written
// as SVG or PNG (format "svg" or "png"); times are in hours.

// ClusterBar is a job holding one GPU for a while.
type ClusterBar struct {
	Row        int // index into the rows of the chart
	Start, End float64
	Job        int
	Shared     bool // the GPU is shared with another job (drawn lighter)
}

// Series is one named line.
type Series struct {
	Name string
	X, Y []float64
}

func checkFormat(format string) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("report: unknown picture format %q (svg, png)", format)
	}
	return nil
}

func save(p *plot.Plot, w io.Writer, wIn, hIn vg.Length, format string) error {
	wt, err := p.WriterTo(wIn, hIn, format)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

type clusterBars struct {
	bars []ClusterBar
	rows int
}

func (b clusterBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, bar := range b.bars {
		y := float64(b.rows - 1 - bar.Row)
		x0, x1 := trX(bar.Start), trX(bar.End)
		y0, y1 := trY(y-0.42), trY(y+0.42)
		col := modelColour(bar.Job)
		if bar.Shared {
			col = color.RGBA{uint8((int(col.R) + 255) / 2), uint8((int(col.G) + 255) / 2), uint8((int(col.B) + 255) / 2), 0xff}
		}
		c.FillPolygon(col, c.ClipPolygonXY(rect(x0, y0, x1, y1)))
	}
}

func (b clusterBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, bar := range b.bars {
		xmin, xmax = math.Min(xmin, bar.Start), math.Max(xmax, bar.End)
	}
	if len(b.bars) == 0 {
		xmin, xmax = 0, 1
	}
	return xmin, xmax, -0.5, float64(b.rows) - 0.5
}

type rowTicks []string

func (r rowTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	step := max(1, len(r)/40)
	for i := 0; i < len(r); i += step {
		out = append(out, plot.Tick{Value: float64(len(r) - 1 - i), Label: r[i]})
	}
	return out
}

// ClusterGantt draws one row per GPU (rows names them, top first) with a
// bar per job holding it, coloured by job, lighter when shared. from and to
// bound the X axis in hours (both 0: the bars' extent).
func ClusterGantt(w io.Writer, format, title string, rows []string, bars []ClusterBar, from, to float64) error {
	if err := checkFormat(format); err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("report: cluster gantt: no rows")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time (h)"
	p.Y.Tick.Marker = rowTicks(rows)
	var kept []ClusterBar
	for _, b := range bars {
		if b.Row < 0 || b.Row >= len(rows) {
			return fmt.Errorf("report: cluster gantt: bar row %d outside %d rows", b.Row, len(rows))
		}
		if to > from && (b.End < from || b.Start > to) {
			continue
		}
		if to > from {
			b.Start, b.End = math.Max(b.Start, from), math.Min(b.End, to)
		}
		kept = append(kept, b)
	}
	p.Add(clusterBars{bars: kept, rows: len(rows)})
	if to > from {
		p.X.Min, p.X.Max = from, to
	}
	h := vg.Length(2+0.09*float64(len(rows))) * vg.Inch
	return save(p, w, 14*vg.Inch, h, format)
}

var seriesColours = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

func lines(p *plot.Plot, series []Series, points bool) error {
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("report: series %q: %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		xy := make(plotter.XYs, len(s.X))
		for k := range s.X {
			xy[k] = plotter.XY{X: s.X[k], Y: s.Y[k]}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("report: series %q: %w", s.Name, err)
		}
		l.Color = seriesColours[i%len(seriesColours)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.Name, l)
		if points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return fmt.Errorf("report: series %q: %w", s.Name, err)
			}
			sc.Color = l.Color
			p.Add(sc)
		}
	}
	return nil
}

// titledPlot is a new plot with its title and axis labels, once the
// format is known to be one save writes.
func titledPlot(format, title, x, y string) (*plot.Plot, error) {
	if err := checkFormat(format); err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	return p, nil
}

// JCTCDF draws the empirical CDF of each series' JCTs (X holds the JCTs in
// hours; Y is ignored and may be empty), on a logarithmic time axis.
func JCTCDF(w io.Writer, format, title string, series []Series) error {
	p, err := titledPlot(format, title, "JCT (h)", "fraction of jobs")
	if err != nil {
		return err
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = false, false
	var cdfs []Series
	for _, s := range series {
		x := make([]float64, 0, len(s.X))
		for _, v := range s.X {
			x = append(x, math.Max(v, 1e-3))
		}
		sort.Float64s(x)
		y := make([]float64, len(x))
		for i := range x {
			y[i] = float64(i+1) / float64(len(x))
		}
		cdfs = append(cdfs, Series{Name: s.Name, X: x, Y: y})
	}
	if err := lines(p, cdfs, false); err != nil {
		return err
	}
	if p.X.Min == p.X.Max {
		// One JCT (or all equal): the plot would widen the axis by ±1,
		// below zero, where a log scale has no place. Widen it by 2× instead.
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	}
	return save(p, w, 8*vg.Inch, 5*vg.Inch, format)
}

// JCTvsRate draws average JCT (Y, hours) against input rate (X, jobs per
// hour), one line per policy.
func JCTvsRate(w io.Writer, format, title string, series []Series) error {
	p, err := titledPlot(format, title, "input rate (jobs/h)", "average JCT (h)")
	if err != nil {
		return err
	}
	p.Legend.Top, p.Legend.Left = true, true
	if err := lines(p, series, true); err != nil {
		return err
	}
	return save(p, w, 8*vg.Inch, 5*vg.Inch, format)
}
