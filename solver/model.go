package solver

import (
	"fmt"
	"math"
)

// Inf is an infinite bound.
var Inf = math.Inf(1)

// Sense is the direction of the objective.
type Sense int

const (
	// Minimize the objective.
	Minimize Sense = iota
	// Maximize the objective.
	Maximize
)

// Var names a variable of one Model (its index, in order of creation).
type Var int

// Row names a row of one Model (its index, in order of creation).
type Row int

// Term is one coefficient of a row.
type Term struct {
	Var  Var
	Coef float64
}

// Model is a linear program, mixed-integer when some variables are integer.
// The zero value is not usable; call NewModel. A Model is not safe for
// concurrent mutation; Solve only reads it.
type Model struct {
	sense Sense
	// Offset is a constant added to the objective.
	Offset float64

	lo, hi, obj []float64
	integer     []bool
	names       []string // optional, for error messages

	rowLo, rowHi []float64
	rowStart     []int // rowStart[r]..rowStart[r+1] index termVar/termCoef
	termVar      []int32
	termCoef     []float64
}

// NewModel returns an empty model with the given objective sense.
func NewModel(sense Sense) *Model { return &Model{sense: sense, rowStart: []int{0}} }

// Clone returns a deep copy of m, which can be mutated (SetBounds, AddRow)
// or solved while m is.
func (m *Model) Clone() *Model {
	c := *m
	c.lo, c.hi, c.obj = append([]float64(nil), m.lo...), append([]float64(nil), m.hi...), append([]float64(nil), m.obj...)
	c.integer = append([]bool(nil), m.integer...)
	if m.names != nil {
		c.names = append([]string(nil), m.names...)
	}
	c.rowLo, c.rowHi = append([]float64(nil), m.rowLo...), append([]float64(nil), m.rowHi...)
	c.rowStart = append([]int(nil), m.rowStart...)
	c.termVar, c.termCoef = append([]int32(nil), m.termVar...), append([]float64(nil), m.termCoef...)
	return &c
}

// Sense returns the model's objective sense.
func (m *Model) Sense() Sense { return m.sense }

// AddVar adds a continuous variable lo ≤ x ≤ hi (either may be infinite)
// with objective coefficient obj.
func (m *Model) AddVar(lo, hi, obj float64) Var { return m.add(lo, hi, obj, false) }

// AddIntVar adds an integer variable lo ≤ x ≤ hi.
func (m *Model) AddIntVar(lo, hi, obj float64) Var { return m.add(lo, hi, obj, true) }

// AddBinary adds a 0/1 variable.
func (m *Model) AddBinary(obj float64) Var { return m.add(0, 1, obj, true) }

func (m *Model) add(lo, hi, obj float64, integer bool) Var {
	m.lo = append(m.lo, lo)
	m.hi = append(m.hi, hi)
	m.obj = append(m.obj, obj)
	m.integer = append(m.integer, integer)
	if m.names != nil {
		m.names = append(m.names, "")
	}
	return Var(len(m.lo) - 1)
}

// SetName gives v a name used in Validate's and Check's messages.
func (m *Model) SetName(v Var, name string) {
	if m.names == nil {
		m.names = make([]string, len(m.lo))
	}
	m.names[v] = name
}

// Name returns v's name, or "x<index>" when it has none.
func (m *Model) Name(v Var) string {
	if m.names != nil && m.names[v] != "" {
		return m.names[v]
	}
	return fmt.Sprintf("x%d", v)
}

// SetObj sets v's objective coefficient.
func (m *Model) SetObj(v Var, c float64) { m.obj[v] = c }

// SetBounds sets v's bounds.
func (m *Model) SetBounds(v Var, lo, hi float64) { m.lo[v], m.hi[v] = lo, hi }

// Bounds returns v's bounds.
func (m *Model) Bounds(v Var) (lo, hi float64) { return m.lo[v], m.hi[v] }

// Obj returns v's objective coefficient.
func (m *Model) Obj(v Var) float64 { return m.obj[v] }

// IsInteger reports whether v is integer.
func (m *Model) IsInteger(v Var) bool { return m.integer[v] }

// AddRow adds the constraint lo ≤ Σ coef·x ≤ hi (lo = -Inf or hi = Inf for a
// one-sided row; lo = hi for an equality). Terms naming the same variable
// twice are summed. It panics on a term naming a variable that
// does not exist (a programming error).
func (m *Model) AddRow(lo, hi float64, terms ...Term) Row {
	for _, t := range terms {
		if t.Var < 0 || int(t.Var) >= len(m.lo) {
			panic(fmt.Sprintf("solver: row %d: no variable %d", len(m.rowLo), t.Var))
		}
		m.termVar = append(m.termVar, int32(t.Var))
		m.termCoef = append(m.termCoef, t.Coef)
	}
	m.rowLo = append(m.rowLo, lo)
	m.rowHi = append(m.rowHi, hi)
	m.rowStart = append(m.rowStart, len(m.termVar))
	return Row(len(m.rowLo) - 1)
}

// NumVars returns the number of variables.
func (m *Model) NumVars() int { return len(m.lo) }

// NumRows returns the number of rows.
func (m *Model) NumRows() int { return len(m.rowLo) }

// NumNonzeros returns the number of row terms.
func (m *Model) NumNonzeros() int { return len(m.termVar) }

// NumIntegers returns the number of integer variables.
func (m *Model) NumIntegers() int {
	n := 0
	for _, b := range m.integer {
		if b {
			n++
		}
	}
	return n
}

// Validate reports the first malformed bound or coefficient (NaN, lo > hi,
// an infinite coefficient).
func (m *Model) Validate() error {
	for i := range m.lo {
		lo, hi := m.lo[i], m.hi[i]
		if math.IsNaN(lo) || math.IsNaN(hi) || lo > hi || math.IsInf(lo, 1) || math.IsInf(hi, -1) {
			return fmt.Errorf("solver: variable %s: bad bounds [%g, %g]", m.Name(Var(i)), lo, hi)
		}
		if math.IsNaN(m.obj[i]) || math.IsInf(m.obj[i], 0) {
			return fmt.Errorf("solver: variable %s: bad objective coefficient %g", m.Name(Var(i)), m.obj[i])
		}
	}
	for r := range m.rowLo {
		lo, hi := m.rowLo[r], m.rowHi[r]
		if math.IsNaN(lo) || math.IsNaN(hi) || lo > hi || math.IsInf(lo, 1) || math.IsInf(hi, -1) {
			return fmt.Errorf("solver: row %d: bad bounds [%g, %g]", r, lo, hi)
		}
		for k := m.rowStart[r]; k < m.rowStart[r+1]; k++ {
			if c := m.termCoef[k]; math.IsNaN(c) || math.IsInf(c, 0) {
				return fmt.Errorf("solver: row %d: bad coefficient %g on %s", r, c, m.Name(Var(m.termVar[k])))
			}
		}
	}
	return nil
}

// Objective evaluates the objective (with Offset) at x.
func (m *Model) Objective(x []float64) float64 {
	s := m.Offset
	for i, c := range m.obj {
		s += c * x[i]
	}
	return s
}

// Check reports the first bound, integrality or row of the model that x
// violates by more than tol (absolute), or nil when x is feasible.
func (m *Model) Check(x []float64, tol float64) error {
	if len(x) != len(m.lo) {
		return fmt.Errorf("solver: %d values for %d variables", len(x), len(m.lo))
	}
	for i, v := range x {
		if v < m.lo[i]-tol || v > m.hi[i]+tol {
			return fmt.Errorf("solver: %s = %g outside [%g, %g]", m.Name(Var(i)), v, m.lo[i], m.hi[i])
		}
		if m.integer[i] && math.Abs(v-math.Round(v)) > tol {
			return fmt.Errorf("solver: %s = %g is not integer", m.Name(Var(i)), v)
		}
	}
	for r := range m.rowLo {
		s := 0.0
		for k := m.rowStart[r]; k < m.rowStart[r+1]; k++ {
			s += m.termCoef[k] * x[m.termVar[k]]
		}
		if s < m.rowLo[r]-tol || s > m.rowHi[r]+tol {
			return fmt.Errorf("solver: row %d = %g outside [%g, %g]", r, s, m.rowLo[r], m.rowHi[r])
		}
	}
	return nil
}
