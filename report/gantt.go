package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"time"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart geometry, in pixels at ganttDPI. The SVG has the same size in CSS
// pixels (its width and height are given in points, 0.75 px each).
const (
	ganttDPI      = 96
	ganttWidthPx  = 1400
	ganttHeadPx   = 120 // title, time axis and margins
	ganttRowPx    = 60  // one processor row
	legendLinePx  = 22  // one legend entry
	legendPadPx   = 16  // gap between the plot and the legend
	minBarWidthPx = 1   // spans shorter than this still show as a hairline
)

// px converts pixels at ganttDPI to vg lengths (points).
func px(n float64) vg.Length { return vg.Length(n * 72 / ganttDPI) }

// paletteSize is the number of model colours before they repeat.
const paletteSize = 16

// modelColour is model i's colour (models numbered in name order): Tableau
// 20 without its reds, so that the red of late spans stands out.
func modelColour(i int) color.RGBA {
	palette := [paletteSize]color.RGBA{
		{0x4e, 0x79, 0xa7, 0xff}, // blue
		{0xf2, 0x8e, 0x2b, 0xff}, // orange
		{0x59, 0xa1, 0x4f, 0xff}, // green
		{0xb0, 0x7a, 0xa1, 0xff}, // purple
		{0x76, 0xb7, 0xb2, 0xff}, // teal
		{0xed, 0xc9, 0x48, 0xff}, // yellow
		{0x9c, 0x75, 0x5f, 0xff}, // brown
		{0xff, 0x9d, 0xa7, 0xff}, // pink
		{0xba, 0xb0, 0xac, 0xff}, // grey
		{0xa0, 0xcb, 0xe8, 0xff}, // light blue
		{0xff, 0xbe, 0x7d, 0xff}, // light orange
		{0x8c, 0xd1, 0x7d, 0xff}, // light green
		{0xd4, 0xa6, 0xc8, 0xff}, // light purple
		{0x49, 0x98, 0x94, 0xff}, // dark teal
		{0xb6, 0x99, 0x2d, 0xff}, // olive
		{0x79, 0x70, 0x6e, 0xff}, // dark grey
	}
	return palette[i%paletteSize]
}

var (
	lateColor      = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	separatorColor = color.RGBA{0xff, 0xff, 0xff, 0xff}
	bandColor      = color.RGBA{0xf3, 0xf4, 0xf6, 0xff}
	rowLineColor   = color.RGBA{0xd0, 0xd4, 0xda, 0xff}
	gridColor      = color.RGBA{0xe2, 0xe5, 0xe9, 0xff}
)

// GanttSVG draws the spans as a Gantt chart in SVG: one row per processor,
// in the order of procs from the top, one bar per span coloured by model,
// late spans outlined and hatched in red, time in milliseconds on the X axis.
//
// Only the part of each span inside window is drawn; a zero window means
// from the earliest start to the latest end of the spans. The chart is 1400
// px wide and 120+60·len(procs) px high (more when the legend needs it).
// Every span's processor must be in procs.
func GanttSVG(w io.Writer, title string, procs []string, spans []Span, window [2]time.Duration) error {
	g, err := newGantt(title, procs, spans, window)
	if err != nil {
		return err
	}
	c := vgsvg.NewWith(vgsvg.UseWH(px(float64(g.widthPx)), px(float64(g.heightPx))))
	g.draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("report: gantt svg: %w", err)
	}
	// The text is measured with Liberation Sans, which is metric-compatible
	// with Arial and Helvetica: name them as fallbacks for viewers without it.
	out := bytes.ReplaceAll(buf.Bytes(),
		[]byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("report: gantt svg: %w", err)
	}
	return nil
}

// GanttPNG draws the same chart as GanttSVG as a PNG image.
func GanttPNG(w io.Writer, title string, procs []string, spans []Span, window [2]time.Duration) error {
	g, err := newGantt(title, procs, spans, window)
	if err != nil {
		return err
	}
	c := vgimg.NewWith(
		vgimg.UseWH(px(float64(g.widthPx)), px(float64(g.heightPx))),
		vgimg.UseDPI(ganttDPI),
	)
	g.draw(draw.New(c))
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
		return fmt.Errorf("report: gantt png: %w", err)
	}
	return nil
}

// gantt is a chart ready to draw.
type gantt struct {
	title             string
	procs             []string
	spans             []laidSpan // clipped to the window
	lanes             []int
	models            []string
	colour            map[string]color.Color
	anyLate           bool
	anyStretched      bool
	from, to          time.Duration
	widthPx, heightPx int
}

func newGantt(title string, procs []string, spans []Span, window [2]time.Duration) (*gantt, error) {
	from, to := window[0], window[1]
	if from == 0 && to == 0 {
		from, to = extent(spans)
		// End the axis on a labelled tick.
		step := time.Duration(tickStep(ms(from), ms(to)) * float64(time.Millisecond))
		if step > 0 && to%step != 0 {
			to += step - to%step
		}
	} else if to <= from {
		return nil, fmt.Errorf("report: gantt window [%v, %v] is empty", from, to)
	}
	var inside []Span
	for _, s := range spans {
		if !inWindow(s, from, to) {
			continue
		}
		s.Start = max(s.Start, from)
		s.End = min(s.End, to)
		inside = append(inside, s)
	}
	// Check every span, not only those in the window, so that a mistake
	// does not hide behind the window.
	if _, _, err := layout(procs, spans); err != nil {
		return nil, err
	}
	laid, lanes, err := layout(procs, inside)
	if err != nil {
		return nil, err
	}
	g := &gantt{
		title:  title,
		procs:  procs,
		spans:  laid,
		lanes:  lanes,
		models: models(inside),
		colour: make(map[string]color.Color),
		from:   from,
		to:     to,
	}
	for i, m := range g.models {
		g.colour[m] = modelColour(i)
	}
	for _, s := range inside {
		g.anyLate = g.anyLate || s.Late
		g.anyStretched = g.anyStretched || s.Stretched()
	}
	entries := len(g.models)
	if g.anyLate {
		entries++
	}
	if g.anyStretched {
		entries++
	}
	g.widthPx = ganttWidthPx
	g.heightPx = max(ganttHeadPx+ganttRowPx*len(procs), ganttHeadPx+legendLinePx*entries)
	return g, nil
}

// inWindow reports whether any of the span shows in [from, to]: it overlaps
// the window, or it is an instant inside it.
func inWindow(s Span, from, to time.Duration) bool {
	if s.Start == s.End {
		return from <= s.Start && s.Start <= to
	}
	return s.Start < to && s.End > from
}

// extent is the interval the spans cover; [0, 1ms] when there are none.
func extent(spans []Span) (from, to time.Duration) {
	if len(spans) == 0 {
		return 0, time.Millisecond
	}
	from, to = spans[0].Start, spans[0].End
	for _, s := range spans[1:] {
		from = min(from, s.Start)
		to = max(to, s.End)
	}
	if to <= from {
		to = from + time.Millisecond
	}
	return from, to
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sans is Liberation Sans (metric-compatible with Arial) at size pixels.
func sans(sizePx float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: px(sizePx)}
}

func textStyle(sizePx float64) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    sans(sizePx),
		Handler: plot.DefaultTextHandler,
	}
}

func (g *gantt) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())

	legend := g.legend()
	legendW := legend.width
	plotC := draw.Crop(c, 0, -(legendW + px(legendPadPx)), 0, 0)
	plotC = draw.Crop(plotC, px(8), 0, px(6), -px(8))

	p := plot.New()
	p.BackgroundColor = nil
	p.Title.Text = g.title
	p.Title.TextStyle.Font = sans(17)
	p.Title.TextStyle.Font.Weight = xfont.WeightBold
	p.Title.Padding = px(12)
	p.X.Label.Text = "time (ms)"
	p.X.Label.TextStyle.Font = sans(13)
	p.X.Tick.Label.Font = sans(12)
	p.X.Tick.Marker = timeTicks{}
	p.X.Min, p.X.Max = ms(g.from), ms(g.to)
	p.X.Padding = 0
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.procs))-0.5
	p.Y.Padding = 0
	p.Y.Tick.Label.Font = sans(13)
	ticks := make([]plot.Tick, len(g.procs))
	for i, name := range g.procs {
		ticks[i] = plot.Tick{Value: g.rowY(i), Label: name}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Width = 0

	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = gridColor
	grid.Vertical.Width = px(1)
	p.Add(bands{g}, grid, bars{g})
	p.Draw(plotC)

	data := p.DataCanvas(plotC)
	legC := c
	legC.Min.X = c.Max.X - legendW
	legC.Max.Y = data.Max.Y
	legend.Draw(legC)
}

// rowY is the data Y of processor i's row centre: the first processor on top.
func (g *gantt) rowY(i int) float64 { return float64(len(g.procs) - 1 - i) }

// bands shades every other row and draws the lines between rows.
type bands struct{ g *gantt }

func (b bands) Plot(c draw.Canvas, plt *plot.Plot) {
	_, trY := plt.Transforms(&c)
	for i := range b.g.procs {
		y := b.g.rowY(i)
		if i%2 == 1 {
			top, bottom := trY(y+0.5), trY(y-0.5)
			c.FillPolygon(bandColor, rect(c.Min.X, bottom, c.Max.X, top))
		}
		if i > 0 {
			c.StrokeLine2(draw.LineStyle{Color: rowLineColor, Width: px(1)}, c.Min.X, trY(y+0.5), c.Max.X, trY(y+0.5))
		}
	}
}

// bars draws one bar per span.
type bars struct{ g *gantt }

func (b bars) Plot(c draw.Canvas, plt *plot.Plot) {
	g := b.g
	trX, trY := plt.Transforms(&c)
	const fill = 0.72 // share of a row's height the bars take
	labelStyle := textStyle(11)
	labelStyle.XAlign = draw.XCenter
	labelStyle.YAlign = draw.YCenter
	labelH := labelStyle.FontExtents().Height

	for _, s := range g.spans {
		lanes := float64(g.lanes[s.proc])
		laneH := fill / lanes
		top := g.rowY(s.proc) + fill/2 - float64(s.lane)*laneH
		y1, y0 := trY(top), trY(top-laneH)
		if lanes > 1 { // a little air between lanes
			y1 -= px(1)
		}
		x0, x1 := trX(ms(s.Start)), trX(ms(s.End))
		if x1-x0 < px(minBarWidthPx) {
			x1 = x0 + px(minBarWidthPx)
		}
		pts := rect(x0, y0, x1, y1)
		col := g.colour[s.Model]
		c.FillPolygon(col, pts)
		if s.Late {
			hatch(c, x0, y0, x1, y1, draw.LineStyle{Color: lateColor, Width: px(1.2)})
			c.StrokeLines(draw.LineStyle{Color: lateColor, Width: px(2)}, closed(pts))
		} else if x1-x0 > px(3) {
			c.StrokeLines(draw.LineStyle{Color: separatorColor, Width: px(0.75)}, closed(pts))
		}
		if s.Stretched() {
			// The share of the box that contention added: a strip along
			// its bottom from where the uncontended run would have ended.
			xs := x0 + (x1-x0)*vg.Length(1/s.Stretch)
			stretchMark(c, xs, x1, y0, y1)
		}
		name := s.Name()
		if name == "" || y1-y0 < labelH+px(2) {
			continue
		}
		if labelStyle.Width(name)+px(8) > x1-x0 {
			continue
		}
		labelStyle.Color = ink(col)
		c.FillText(labelStyle, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, name)
	}
}

// ink is black or white, whichever reads better on bg.
func ink(bg color.Color) color.Color {
	r, g, b, _ := bg.RGBA()
	lum := 0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)
	if lum > 0.6*0xffff {
		return color.Black
	}
	return color.White
}

func rect(x0, y0, x1, y1 vg.Length) []vg.Point {
	return []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

func closed(pts []vg.Point) []vg.Point { return append(append([]vg.Point(nil), pts...), pts[0]) }

// hatch draws 45° lines across the rectangle, clipped to it.
func hatch(c draw.Canvas, x0, y0, x1, y1 vg.Length, sty draw.LineStyle) {
	h := y1 - y0
	step := px(6)
	for t := x0 - h; t < x1; t += step {
		// The line runs from (t, y0) to (t+h, y1); keep u in [0, h] with
		// x0 ≤ t+u ≤ x1.
		lo, hi := max(0, x0-t), min(h, x1-t)
		if lo >= hi {
			continue
		}
		c.StrokeLine2(sty, t+lo, y0+lo, t+hi, y0+hi)
	}
}

// legend lists the models with their colours, and the late marking.
type legendBox struct {
	entries []legendEntry
	style   text.Style
	width   vg.Length
}

type legendEntry struct {
	name            string
	col             color.Color
	late, stretched bool
}

func (g *gantt) legend() *legendBox {
	l := &legendBox{style: textStyle(13)}
	for _, m := range g.models {
		name := m
		if name == "" {
			name = "(no model)"
		}
		l.entries = append(l.entries, legendEntry{name: name, col: g.colour[m]})
	}
	if g.anyLate {
		l.entries = append(l.entries, legendEntry{name: "late", col: color.White, late: true})
	}
	if g.anyStretched {
		l.entries = append(l.entries, legendEntry{name: "stretched by contention", col: color.White, stretched: true})
	}
	for _, e := range l.entries {
		l.width = max(l.width, l.style.Width(e.name))
	}
	if len(l.entries) > 0 {
		l.width += px(22 + 8 + 10) // swatch, gap, right margin
	}
	return l
}

// Draw lists the entries from the top of c down.
func (l *legendBox) Draw(c draw.Canvas) {
	sty := l.style
	sty.YAlign = draw.YCenter
	line := px(legendLinePx)
	y := c.Max.Y - line/2
	for _, e := range l.entries {
		x0 := c.Min.X
		pts := rect(x0, y-px(7), x0+px(22), y+px(7))
		c.FillPolygon(e.col, pts)
		if e.late {
			hatch(c, x0, y-px(7), x0+px(22), y+px(7), draw.LineStyle{Color: lateColor, Width: px(1.2)})
			c.StrokeLines(draw.LineStyle{Color: lateColor, Width: px(2)}, closed(pts))
		}
		if e.stretched {
			c.StrokeLines(draw.LineStyle{Color: separatorColor, Width: px(0.75)}, closed(pts))
			stretchMark(c, x0+px(8), x0+px(22), y-px(7), y+px(7))
		}
		c.FillText(sty, vg.Point{X: x0 + px(30), Y: y}, e.name)
		y -= line
	}
}

// tickStep is the labelled-tick step for [lo, hi]: 1, 2 or 5 times a power
// of ten, giving at most about a dozen labels.
func tickStep(lo, hi float64) float64 {
	const target = 12
	raw := (hi - lo) / target
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	return step
}

// timeTicks marks the time axis with about a dozen labelled ticks at round
// steps (1, 2 or 5 times a power of ten milliseconds), and four minor ticks
// between labels.
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	step := tickStep(lo, hi)
	minor := step / 5
	prec := max(0, -int(math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	for i := math.Ceil(lo / minor); ; i++ {
		v := i * minor
		if v > hi+minor*1e-9 {
			break
		}
		t := plot.Tick{Value: min(max(v, lo), hi)}
		if k := math.Round(v / step); math.Abs(v-k*step) < minor*1e-6 {
			t.Label = strconv.FormatFloat(k*step, 'f', prec, 64)
			// The decimal label is the value; k*step may be off by an ulp.
			if exact, err := strconv.ParseFloat(t.Label, 64); err == nil {
				t.Value = min(max(exact, lo), hi)
			}
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// stretchColor marks the part of a box that contention added.
var stretchColor = color.RGBA{R: 0x30, G: 0x30, B: 0x30, A: 0xff}

// stretchMark draws the contention mark over [xs, x1] of a box spanning
// y0..y1: a dark strip along its bottom quarter.
func stretchMark(c draw.Canvas, xs, x1, y0, y1 vg.Length) {
	if x1-xs < px(1) {
		xs = x1 - px(1)
	}
	h := (y1 - y0) / 4
	c.FillPolygon(stretchColor, rect(xs, y0, x1, y0+h))
}
