package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strconv"
)

// HTML writes one self-contained page: the summary's header and tables and,
// when svg is not empty, the chart (as written by GanttSVG) inline. The page
// loads nothing from elsewhere. svg must be an SVG document; it is embedded
// as it is, so pass only SVG this package wrote or that you trust.
func HTML(w io.Writer, s Summary, svg []byte) error {
	chart, err := inlineSVG(svg)
	if err != nil {
		return err
	}
	title := "inlay report"
	if s.Workload != "" {
		title += " — " + s.Workload
	}
	if s.Platform != "" {
		title += " on " + s.Platform
	}
	data := htmlPage{
		Title:  title,
		Header: s.header(),
		Chart:  chart,
	}
	if len(s.Groups) > 0 {
		data.Tables = append(data.Tables, htmlTableOf("Groups", s.groupTable()))
	}
	if len(s.Procs) > 0 {
		data.Tables = append(data.Tables, htmlTableOf("Processors", s.procTable()))
	}
	for _, t := range s.Tables {
		data.Tables = append(data.Tables, htmlTableOf(t.Caption, extraTable(t)))
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, data); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	return nil
}

type htmlPage struct {
	Title  string
	Header [][2]string
	Tables []htmlTable
	Chart  template.HTML
}

type htmlTable struct {
	Caption string
	Head    []htmlCell
	Rows    [][]htmlCell
}

type htmlCell struct {
	Text  string
	Right bool
}

// extraTable converts a caller's table, right-aligning numeric columns.
func extraTable(x Table) *table {
	t := &table{right: make([]bool, len(x.Header))}
	for c := range x.Header {
		numeric := len(x.Rows) > 0
		for _, r := range x.Rows {
			if c < len(r) && r[c] != "-" && r[c] != "" {
				if _, err := strconv.ParseFloat(r[c], 64); err != nil {
					numeric = false
				}
			}
		}
		t.right[c] = numeric
	}
	t.add(x.Header...)
	for _, r := range x.Rows {
		row := make([]string, len(x.Header))
		copy(row, r)
		t.add(row...)
	}
	return t
}

func htmlTableOf(caption string, t *table) htmlTable {
	cells := func(row []string) []htmlCell {
		out := make([]htmlCell, len(row))
		for i, c := range row {
			out[i] = htmlCell{Text: c, Right: t.right[i]}
		}
		return out
	}
	ht := htmlTable{Caption: caption, Head: cells(t.rows[0])}
	for _, r := range t.rows[1:] {
		ht.Rows = append(ht.Rows, cells(r))
	}
	return ht
}

// inlineSVG checks that svg is a well-formed document whose root is <svg>
// and returns it from the root element on (no XML prolog), ready to inline.
func inlineSVG(svg []byte) (template.HTML, error) {
	if len(bytes.TrimSpace(svg)) == 0 {
		return "", nil
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	root := ""
	var rootAt int64
	for {
		at := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("report: html: chart is not well-formed SVG: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root, rootAt = se.Name.Local, at
		}
	}
	if root != "svg" {
		return "", fmt.Errorf("report: html: chart's root element is %q, not svg", root)
	}
	return template.HTML(svg[rootAt:]), nil
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: 'Liberation Sans', Arial, Helvetica, sans-serif; margin: 2em; color: #1f2328; }
h1 { font-size: 1.4em; }
h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #d0d4da; text-align: left; white-space: nowrap; }
th { background: #f3f4f6; }
.num { text-align: right; }
table.header th { background: none; font-weight: normal; color: #59636e; }
.chart svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{- if .Header}}
<table class="header">
{{- range .Header}}
<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- range .Tables}}
<h2>{{.Caption}}</h2>
<table>
<tr>{{range .Head}}<th{{if .Right}} class="num"{{end}}>{{.Text}}</th>{{end}}</tr>
{{- range .Rows}}
<tr>{{range .}}<td{{if .Right}} class="num"{{end}}>{{.Text}}</td>{{end}}</tr>
{{- end}}
</table>
{{- end}}
{{- if .Chart}}
<h2>Schedule</h2>
<div class="chart">
{{.Chart}}
</div>
{{- end}}
</body>
</html>
`))
