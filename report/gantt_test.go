package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/color"
	"image/png"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"
)

func TestGanttSVGWellFormedAndLabelled(t *testing.T) {
	spans := sampleSpans()
	var buf bytes.Buffer
	if err := GanttSVG(&buf, "sample schedule", sampleProcs, spans, [2]time.Duration{0, 120 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, buf.Bytes())
	want := append([]string{"sample schedule", "time (ms)", "late"}, sampleProcs...)
	want = append(want, models(spans)...)
	for _, w := range want {
		if !texts[w] {
			t.Errorf("SVG has no text %q", w)
		}
	}
	if !bytes.Contains(buf.Bytes(), []byte("Arial")) {
		t.Error("SVG names no fallback font")
	}
}

// svgTexts parses the whole document with encoding/xml and returns the set
// of its <text> contents.
func svgTexts(t *testing.T, doc []byte) map[string]bool {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	texts := make(map[string]bool)
	var inText bool
	var root string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			inText = tok.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts[string(tok)] = true
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return texts
}

func TestGanttSVGEscapesNames(t *testing.T) {
	procs := []string{"cpu<0>", "gpu & co"}
	spans := []Span{
		{Processor: "cpu<0>", Model: `m"1"`, Start: 0, End: time.Millisecond},
		{Processor: "gpu & co", Model: "m<2>", Start: 0, End: time.Millisecond, Late: true},
	}
	var buf bytes.Buffer
	if err := GanttSVG(&buf, "a < b", procs, spans, [2]time.Duration{}); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, buf.Bytes())
	for _, w := range []string{"cpu<0>", "gpu & co", `m"1"`, "m<2>", "a < b"} {
		if !texts[w] {
			t.Errorf("SVG has no text %q (have %v)", w, texts)
		}
	}
}

func TestGanttPNGSize(t *testing.T) {
	many := make([]Span, 0, 14)
	for i := range 14 {
		many = append(many, Span{Processor: "cpu", Model: "model_" + string(rune('a'+i)), Start: time.Duration(i) * time.Millisecond, End: time.Duration(i+1) * time.Millisecond})
	}
	tests := []struct {
		name          string
		procs         []string
		spans         []Span
		wantW, wantH  int
		window        [2]time.Duration
		wantModelsMin int
	}{
		{"sample", sampleProcs, sampleSpans(), 1400, 120 + 60*5, [2]time.Duration{0, 100 * time.Millisecond}, 5},
		{"empty", []string{"cpu"}, nil, 1400, 120 + 60, [2]time.Duration{}, 0},
		{"tall legend", []string{"cpu"}, many, 1400, 120 + legendLinePx*14, [2]time.Duration{}, 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := GanttPNG(&buf, tt.name, tt.procs, tt.spans, tt.window); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&buf)
			if err != nil {
				t.Fatalf("PNG does not decode: %v", err)
			}
			if b := img.Bounds(); b.Dx() != tt.wantW || b.Dy() != tt.wantH {
				t.Errorf("PNG is %dx%d, want %dx%d", b.Dx(), b.Dy(), tt.wantW, tt.wantH)
			}
			// The chart is not blank: some pixel has a palette colour.
			found := false
			want := modelColour(0)
			for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y && !found && tt.wantModelsMin > 0; y++ {
				for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
					r, g, b, _ := img.At(x, y).RGBA()
					if uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(b>>8) == want.B {
						found = true
						break
					}
				}
			}
			if tt.wantModelsMin > 0 && !found {
				t.Error("no bar of the first model's colour in the PNG")
			}
		})
	}
}

func TestGanttDeterministic(t *testing.T) {
	spans := sampleSpans()
	var a, b bytes.Buffer
	if err := GanttSVG(&a, "t", sampleProcs, spans, [2]time.Duration{}); err != nil {
		t.Fatal(err)
	}
	shuffled := append([]Span(nil), spans...)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if err := GanttSVG(&b, "t", sampleProcs, shuffled, [2]time.Duration{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("SVG depends on the order of the spans")
	}
}

func TestGanttWindow(t *testing.T) {
	ms := time.Millisecond
	spans := []Span{
		{Processor: "cpu", Label: "before", Model: "m", Start: 0, End: 10 * ms},
		{Processor: "cpu", Label: "across", Model: "m", Start: 15 * ms, End: 25 * ms},
		{Processor: "cpu", Label: "after", Model: "m", Start: 30 * ms, End: 40 * ms},
	}
	g, err := newGantt("", []string{"cpu"}, spans, [2]time.Duration{10 * ms, 20 * ms})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.spans) != 1 || g.spans[0].Label != "across" || g.spans[0].Start != 15*ms || g.spans[0].End != 20*ms {
		t.Errorf("window kept %+v, want only 'across' clipped to [15ms, 20ms]", g.spans)
	}
	g, err = newGantt("", []string{"cpu"}, spans, [2]time.Duration{})
	if err != nil {
		t.Fatal(err)
	}
	if g.from != 0 || g.to != 40*ms || len(g.spans) != 3 {
		t.Errorf("zero window gave [%v, %v] with %d spans, want [0, 40ms] with 3", g.from, g.to, len(g.spans))
	}
	// A zero window ends on a labelled tick: 38.8 ms rounds up to 40 ms.
	spans[2].End = 38800 * time.Microsecond
	g, err = newGantt("", []string{"cpu"}, spans, [2]time.Duration{})
	if err != nil {
		t.Fatal(err)
	}
	if g.to != 40*ms || g.spans[2].End != 38800*time.Microsecond {
		t.Errorf("zero window ends at %v with last span ending %v, want 40ms and 38.8ms", g.to, g.spans[2].End)
	}
}

func BenchmarkGanttPNG(b *testing.B) {
	spans := manySpans(10000)
	for b.Loop() {
		if err := GanttPNG(io.Discard, "bench", sampleProcs, spans, [2]time.Duration{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGanttSVG(b *testing.B) {
	spans := manySpans(10000)
	for b.Loop() {
		if err := GanttSVG(io.Discard, "bench", sampleProcs, spans, [2]time.Duration{}); err != nil {
			b.Fatal(err)
		}
	}
}

// manySpans repeats the sample schedule until it has n spans.
func manySpans(n int) []Span {
	base := sampleSpans()
	var out []Span
	for shift := time.Duration(0); len(out) < n; shift += 250 * time.Millisecond {
		for _, s := range base {
			s.Start += shift
			s.End += shift
			out = append(out, s)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

func TestGanttErrors(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		procs  []string
		spans  []Span
		window [2]time.Duration
		want   string
	}{
		{"empty window", []string{"cpu"}, nil, [2]time.Duration{5 * ms, 5 * ms}, "window [5ms, 5ms] is empty"},
		{"reversed window", []string{"cpu"}, nil, [2]time.Duration{5 * ms, 1 * ms}, "is empty"},
		{"unknown processor outside the window", []string{"cpu"}, []Span{{Processor: "npu", Model: "m", Start: 50 * ms, End: 60 * ms}}, [2]time.Duration{0, ms}, `processor "npu"`},
		{"no processors", nil, nil, [2]time.Duration{}, "no processors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []func(io.Writer, string, []string, []Span, [2]time.Duration) error{GanttSVG, GanttPNG} {
				err := f(io.Discard, "", tt.procs, tt.spans, tt.window)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want one containing %q", err, tt.want)
				}
			}
		})
	}
}

func TestTimeTicks(t *testing.T) {
	tests := []struct {
		lo, hi     float64
		wantLabels []string
	}{
		{0, 120, []string{"0", "10", "20", "30", "40", "50", "60", "70", "80", "90", "100", "110", "120"}},
		{0, 1, []string{"0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"}},
		{13, 47, []string{"15", "20", "25", "30", "35", "40", "45"}},
		{2.5, 2.8, []string{"2.50", "2.55", "2.60", "2.65", "2.70", "2.75", "2.80"}},
		{0, 1000, []string{"0", "100", "200", "300", "400", "500", "600", "700", "800", "900", "1000"}},
	}
	for _, tt := range tests {
		var labels []string
		for _, tk := range (timeTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Value < tt.lo || tk.Value > tt.hi {
				t.Errorf("[%g, %g]: tick %g outside the range", tt.lo, tt.hi, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if strings.Join(labels, " ") != strings.Join(tt.wantLabels, " ") {
			t.Errorf("[%g, %g]: labels %v, want %v", tt.lo, tt.hi, labels, tt.wantLabels)
		}
	}
}

func TestInk(t *testing.T) {
	tests := []struct {
		name string
		bg   color.Color
		want color.Color
	}{
		{"white", color.White, color.Black},
		{"yellow", modelColour(5), color.Black},
		{"blue", modelColour(0), color.White},
		{"dark grey", modelColour(15), color.White},
	}
	for _, tt := range tests {
		if got := ink(tt.bg); got != tt.want {
			t.Errorf("ink(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
