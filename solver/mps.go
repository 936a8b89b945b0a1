package solver

import (
	"bufio"
	"io"
	"math"
	"strconv"
)

// colName and rowName are the names written to the MPS file: C<index> and
// R<index>, so the solution file maps back by index and user names never
// have to be escaped.
func appendColName(b []byte, j int) []byte { return strconv.AppendInt(append(b, 'C'), int64(j), 10) }
func appendRowName(b []byte, r int) []byte { return strconv.AppendInt(append(b, 'R'), int64(r), 10) }

func appendNum(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'g', -1, 64) }

// appendRowValue ends an entry line of the COLUMNS, RHS or RANGES section:
// the row's name, a space, the value and the newline.
func appendRowValue(b []byte, r int, v float64) []byte {
	b = appendRowName(b, r)
	b = append(b, ' ')
	b = appendNum(b, v)
	return append(b, '\n')
}

// WriteMPS writes the model in free MPS format (marked FREE on the NAME
// line, as CoinUtils reads it): the objective is
// always minimised (a Maximize model is written negated), columns are named
// C<index> and rows R<index>. Rows without finite bounds are left out, and so
// is Offset (Solve adds it back).
func (m *Model) WriteMPS(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	sign := 1.0
	if m.sense == Maximize {
		sign = -1
	}
	var b []byte
	b = append(b, "NAME INLAY FREE\nROWS\n N  OBJ\n"...)
	free := func(r int) bool { return math.IsInf(m.rowLo[r], -1) && math.IsInf(m.rowHi[r], 1) }
	for r := range m.rowLo {
		lo, hi := m.rowLo[r], m.rowHi[r]
		switch {
		case free(r):
			continue
		case lo == hi:
			b = append(b, " E  "...)
		case math.IsInf(lo, -1):
			b = append(b, " L  "...)
		default:
			b = append(b, " G  "...)
		}
		b = appendRowName(b, r)
		b = append(b, '\n')
		if len(b) > 1<<15 {
			bw.Write(b)
			b = b[:0]
		}
	}

	// Transpose the rows into columns (counting sort, O(nonzeros)).
	n := len(m.lo)
	colStart := make([]int, n+1)
	for _, v := range m.termVar {
		colStart[v+1]++
	}
	for j := 0; j < n; j++ {
		colStart[j+1] += colStart[j]
	}
	fill := append([]int(nil), colStart[:n]...)
	colRow := make([]int32, len(m.termVar))
	colCoef := make([]float64, len(m.termVar))
	for r := range m.rowLo {
		for k := m.rowStart[r]; k < m.rowStart[r+1]; k++ {
			j := m.termVar[k]
			colRow[fill[j]] = int32(r)
			colCoef[fill[j]] = m.termCoef[k]
			fill[j]++
		}
	}

	b = append(b, "COLUMNS\n"...)
	inInt := false
	for j := 0; j < n; j++ {
		if m.integer[j] != inInt {
			inInt = m.integer[j]
			if inInt {
				b = append(b, "    MARKER                 'MARKER'                 'INTORG'\n"...)
			} else {
				b = append(b, "    MARKER                 'MARKER'                 'INTEND'\n"...)
			}
		}
		wrote := false
		if c := m.obj[j]; c != 0 {
			b = append(b, "    "...)
			b = appendColName(b, j)
			b = append(b, " OBJ "...)
			b = appendNum(b, sign*c)
			b = append(b, '\n')
			wrote = true
		}
		for k := colStart[j]; k < colStart[j+1]; k++ {
			r := int(colRow[k])
			// A row naming the column twice: its entries are adjacent (rows
			// are filled in order); write their sum once.
			coef := colCoef[k]
			for k+1 < colStart[j+1] && int(colRow[k+1]) == r {
				k++
				coef += colCoef[k]
			}
			if free(r) || coef == 0 {
				continue
			}
			b = appendColName(append(b, "    "...), j)
			b = appendRowValue(append(b, ' '), r, coef)
			wrote = true
		}
		if !wrote { // a column must appear to exist
			b = append(b, "    "...)
			b = appendColName(b, j)
			b = append(b, " OBJ 0\n"...)
		}
		if len(b) > 1<<15 {
			bw.Write(b)
			b = b[:0]
		}
	}
	if inInt {
		b = append(b, "    MARKER                 'MARKER'                 'INTEND'\n"...)
	}

	b = append(b, "RHS\n"...)
	for r := range m.rowLo {
		lo, hi := m.rowLo[r], m.rowHi[r]
		rhs := lo
		if math.IsInf(lo, -1) {
			rhs = hi
		}
		if free(r) || rhs == 0 {
			continue
		}
		b = appendRowValue(append(b, "    RHS "...), r, rhs)
	}
	ranged := false
	for r := range m.rowLo {
		lo, hi := m.rowLo[r], m.rowHi[r]
		if math.IsInf(lo, -1) || math.IsInf(hi, 1) || lo == hi {
			continue
		}
		if !ranged {
			b = append(b, "RANGES\n"...)
			ranged = true
		}
		b = appendRowValue(append(b, "    RNG "...), r, hi-lo)
	}

	b = append(b, "BOUNDS\n"...)
	bound := func(kind string, j int, v float64, withValue bool) {
		b = append(b, ' ')
		b = append(b, kind...)
		b = append(b, " BND "...)
		b = appendColName(b, j)
		if withValue {
			b = append(b, ' ')
			b = appendNum(b, v)
		}
		b = append(b, '\n')
	}
	for j := 0; j < n; j++ {
		lo, hi := m.lo[j], m.hi[j]
		loInf, hiInf := math.IsInf(lo, -1), math.IsInf(hi, 1)
		switch {
		case lo == hi:
			bound("FX", j, lo, true)
		case loInf && hiInf:
			bound("FR", j, 0, false)
		case loInf:
			bound("MI", j, 0, false)
			bound("UP", j, hi, true)
		default:
			if lo != 0 || m.integer[j] {
				bound("LO", j, lo, true)
			}
			if hiInf {
				if m.integer[j] { // some readers give integers a default upper bound of 1
					bound("PL", j, 0, false)
				}
			} else {
				bound("UP", j, hi, true)
			}
		}
		if len(b) > 1<<15 {
			bw.Write(b)
			b = b[:0]
		}
	}
	b = append(b, "ENDATA\n"...)
	bw.Write(b)
	return bw.Flush()
}
