package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/inlay-dev/inlay/internal/textfmt"
)

// table is a small aligned text table: left-aligned text columns,
// right-aligned number columns, two spaces between columns, no trailing
// blanks. The first row is the header, if the table has one; every row has
// one cell per column. (internal/textfmt did not exist when this was
// written.)
type table struct {
	right []bool // per column: align right
	rows  [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	widths := make([]int, len(t.right))
	for _, row := range t.rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, row := range t.rows {
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// formatDuration writes d with three significant digits in the largest unit
// that keeps the number at least 1: "850 ns", "12.3 µs", "4.56 ms", "1.20 s".
// Zero is "0".
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	neg := d < 0
	if neg {
		d = -d
	}
	units := []struct {
		name string
		size time.Duration
	}{{"s", time.Second}, {"ms", time.Millisecond}, {"µs", time.Microsecond}, {"ns", time.Nanosecond}}
	s := ""
	for _, u := range units {
		if d >= u.size {
			s = textfmt.Sig3(float64(d)/float64(u.size)) + " " + u.name
			break
		}
	}
	if neg {
		s = "-" + s
	}
	return s
}

// formatPercent writes a ratio in [0, 1] as a percentage with one decimal.
func formatPercent(r float64) string {
	if math.IsNaN(r) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*r)
}
