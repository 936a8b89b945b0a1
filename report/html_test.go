package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

const tinySVG = `<?xml version="1.0"?>
<!-- a comment -->
<svg width="10pt" height="10pt" viewBox="0 0 10 10" xmlns="http://www.w3.org/2000/svg"><text x="1" y="5">cpu &amp; gpu</text></svg>
`

func TestHTMLGolden(t *testing.T) {
	s := sampleSummary()
	s.Groups[0].Name = "camera <front>" // must be escaped
	var buf bytes.Buffer
	if err := HTML(&buf, s, []byte(tinySVG)); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.html", buf.Bytes())
}

func TestHTMLEmbedsGantt(t *testing.T) {
	var svg bytes.Buffer
	if err := GanttSVG(&svg, "schedule", sampleProcs, sampleSpans(), [2]time.Duration{0, 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := HTML(&page, sampleSummary(), svg.Bytes()); err != nil {
		t.Fatal(err)
	}
	out := page.String()
	if strings.Contains(out, "<?xml") {
		t.Error("page keeps the SVG's XML prolog")
	}
	if !strings.Contains(out, "<svg width=") || !strings.HasSuffix(strings.TrimSpace(out), "</html>") {
		t.Error("page does not embed the SVG inline")
	}
	for _, ref := range []string{"src=", "href=\"http", "<link", "<script"} {
		if strings.Contains(out, ref) {
			t.Errorf("page refers to something outside itself: %q", ref)
		}
	}
}

func TestHTMLWithoutChart(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, Summary{Platform: "host"}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Schedule") || strings.Contains(buf.String(), "<svg") {
		t.Errorf("page without chart has a chart section:\n%s", buf.String())
	}
}

func TestHTMLRejectsNonSVG(t *testing.T) {
	tests := []struct {
		name, chart, want string
	}{
		{"not xml", "<svg><g></svg>", "not well-formed"},
		{"html", "<html><body></body></html>", `root element is "html"`},
		{"text", "hello", `root element is ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := HTML(&bytes.Buffer{}, Summary{}, []byte(tt.chart))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
