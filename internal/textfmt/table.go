package textfmt

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Align is a column's alignment.
type Align uint8

const (
	// Auto right-aligns a column when every non-empty body cell looks like
	// a number (starts with a digit, or a sign or point and a digit); a
	// lone "-" counts as an empty cell.
	Auto Align = iota
	Left
	Right
)

// Table is a text table: a header row and body rows, written with columns
// separated by two spaces and padded to the widest cell. Rows shorter than
// the header are padded with empty cells.
type Table struct {
	Header []string
	Rows   [][]string
	// Align sets columns' alignment by index; missing entries are Auto.
	Align []Align
	// Indent is written before every line.
	Indent string
}

// Add appends a body row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// String renders the table.
func (t *Table) String() string {
	var b strings.Builder
	t.WriteTo(&b) //nolint:errcheck // strings.Builder does not fail
	return b.String()
}

// WriteTo writes the table to w, one line per row, header first (when it
// has one). Trailing spaces are trimmed.
func (t *Table) WriteTo(w io.Writer) (int64, error) {
	ncol := len(t.Header)
	for _, r := range t.Rows {
		if len(r) > ncol {
			ncol = len(r)
		}
	}
	width := make([]int, ncol)
	right := make([]bool, ncol)
	for c := 0; c < ncol; c++ {
		numeric, any := true, false
		for _, r := range t.Rows {
			if c < len(r) && r[c] != "" && r[c] != "-" {
				any = true
				numeric = numeric && looksNumeric(r[c])
			}
		}
		right[c] = any && numeric
		if c < len(t.Align) && t.Align[c] != Auto {
			right[c] = t.Align[c] == Right
		}
	}
	rows := t.Rows
	if len(t.Header) > 0 {
		rows = append([][]string{t.Header}, t.Rows...)
	}
	for _, r := range rows {
		for c, cell := range r {
			if n := utf8.RuneCountInString(cell); n > width[c] {
				width[c] = n
			}
		}
	}
	var total int64
	var line strings.Builder
	for _, r := range rows {
		line.Reset()
		line.WriteString(t.Indent)
		for c := 0; c < ncol; c++ {
			cell := ""
			if c < len(r) {
				cell = r[c]
			}
			pad := strings.Repeat(" ", width[c]-utf8.RuneCountInString(cell))
			if c > 0 {
				line.WriteString("  ")
			}
			if right[c] {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		n, err := io.WriteString(w, strings.TrimRight(line.String(), " ")+"\n")
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func looksNumeric(s string) bool {
	s = strings.TrimLeft(s, "+-")
	s = strings.TrimPrefix(s, ".")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}
