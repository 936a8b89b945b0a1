package solver_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/solver"
	"github.com/inlay-dev/inlay/solver/solvertest"
)

type term = solver.Term

func TestSolveKnownOptima(t *testing.T) {
	solvertest.RequireCBC(t)
	inf := solver.Inf
	cases := []struct {
		name   string
		build  func() *solver.Model
		status solver.Status
		obj    float64
		values []float64 // nil: not checked
	}{
		{
			name: "integer knapsack, max 5x+4y",
			build: func() *solver.Model {
				m := solver.NewModel(solver.Maximize)
				x, y := m.AddIntVar(0, inf, 5), m.AddIntVar(0, inf, 4)
				m.AddRow(-inf, 24, term{x, 6}, term{y, 4})
				m.AddRow(-inf, 6, term{x, 1}, term{y, 2})
				return m
			},
			status: solver.Optimal, obj: 20, values: []float64{4, 0},
		},
		{
			name: "continuous LP, max 3x+2y",
			build: func() *solver.Model {
				m := solver.NewModel(solver.Maximize)
				x, y := m.AddVar(0, 3, 3), m.AddVar(0, inf, 2)
				m.AddRow(-inf, 4, term{x, 1}, term{y, 1})
				m.AddRow(-inf, 6, term{x, 1}, term{y, 3})
				return m
			},
			status: solver.Optimal, obj: 11, values: []float64{3, 1},
		},
		{
			name: "free variable, negative bound, ranged and equality rows, offset",
			build: func() *solver.Model {
				m := solver.NewModel(solver.Minimize)
				m.Offset = 10
				x := m.AddVar(-inf, inf, 1)
				y := m.AddIntVar(-2, 5, 2)
				z := m.AddVar(0, inf, 0)  // no rows, no cost
				w := m.AddVar(-inf, 7, 0) // upper bound only
				m.AddRow(1, 3, term{x, 1}, term{y, 1})
				m.AddRow(-1, inf, term{x, 1})
				m.AddRow(2, 2, term{w, 1}, term{x, 0})    // a zero coefficient is harmless
				m.AddRow(-inf, 9, term{w, 1}, term{w, 2}) // so is a variable named twice (3w ≤ 9)
				_ = z
				return m
			},
			status: solver.Optimal, obj: 10 + 3 - 4, values: []float64{3, -2, 0, 2},
		},
		{
			name: "3x3 assignment",
			build: func() *solver.Model {
				cost := [3][3]float64{{4, 1, 3}, {2, 0, 5}, {3, 2, 2}}
				m := solver.NewModel(solver.Minimize)
				var x [3][3]solver.Var
				for i := range 3 {
					for j := range 3 {
						x[i][j] = m.AddBinary(cost[i][j])
					}
				}
				for i := range 3 {
					m.AddRow(1, 1, term{x[i][0], 1}, term{x[i][1], 1}, term{x[i][2], 1})
					m.AddRow(1, 1, term{x[0][i], 1}, term{x[1][i], 1}, term{x[2][i], 1})
				}
				return m
			},
			// 0→1 (1), 1→0 (2), 2→2 (2) = 5
			status: solver.Optimal, obj: 5, values: []float64{0, 1, 0, 1, 0, 0, 0, 0, 1},
		},
		{
			name: "integer infeasible",
			build: func() *solver.Model {
				m := solver.NewModel(solver.Minimize)
				x, y := m.AddIntVar(0, 2, 1), m.AddIntVar(0, 2, 1)
				m.AddRow(5, inf, term{x, 1}, term{y, 1})
				return m
			},
			status: solver.Infeasible,
		},
		{
			name: "LP infeasible",
			build: func() *solver.Model {
				m := solver.NewModel(solver.Maximize)
				x := m.AddVar(0, 1, 1)
				m.AddRow(2, inf, term{x, 1})
				return m
			},
			status: solver.Infeasible,
		},
		{
			name: "unbounded LP",
			build: func() *solver.Model {
				m := solver.NewModel(solver.Maximize)
				x, y := m.AddVar(0, inf, 1), m.AddVar(0, inf, 0)
				m.AddRow(-inf, 1, term{x, -1}, term{y, 1})
				return m
			},
			status: solver.Unbounded,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.build()
			res, err := solver.Solve(context.Background(), m, solver.Options{TimeLimit: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.status {
				t.Fatalf("status %v (%s), want %v", res.Status, res.Reason, c.status)
			}
			if !c.status.HasSolution() {
				if res.Values != nil {
					t.Errorf("values %v without a solution", res.Values)
				}
				return
			}
			if math.Abs(res.Objective-c.obj) > 1e-6 || math.Abs(res.Bound-c.obj) > 1e-6 || res.Gap != 0 {
				t.Errorf("objective %g bound %g gap %g, want %g, %g, 0", res.Objective, res.Bound, res.Gap, c.obj, c.obj)
			}
			if err := m.Check(res.Values, 1e-6); err != nil {
				t.Error(err)
			}
			if got := m.Objective(res.Values); math.Abs(got-c.obj) > 1e-6 {
				t.Errorf("objective of the values %g, want %g", got, c.obj)
			}
			if c.values != nil {
				for i, want := range c.values {
					if math.Abs(res.Values[i]-want) > 1e-6 {
						t.Errorf("values %v, want %v", res.Values, c.values)
						break
					}
				}
			}
		})
	}
}

// marketSplit is Cornuéjols and Dawande's market split problem as an
// optimisation: minimise the total deviation of rows·x from half their sum.
// A feasible solution is trivial, proving the optimum (usually 0 or 1) is
// very hard for branch and bound at m=4, n=30.
// marketSplit is a Cornuéjols–Dawande market split instance (rows
// equality constraints over cols binaries, with slacks): for 5 × 40 far
// beyond what branch and bound proves in seconds. start is feasible (every
// binary 0, the slacks taking up the rest), so a solve stopped early always
// has an incumbent, however slow the machine.
func marketSplit(rows, cols int, seed uint64) (m *solver.Model, start []float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	m = solver.NewModel(solver.Minimize)
	x := make([]solver.Var, cols)
	for j := range x {
		x[j] = m.AddBinary(0)
	}
	start = make([]float64, cols)
	for range rows {
		terms := make([]solver.Term, 0, cols+2)
		sum := 0.0
		for j := range cols {
			a := float64(r.IntN(100))
			sum += a
			terms = append(terms, solver.Term{Var: x[j], Coef: a})
		}
		plus, minus := m.AddVar(0, solver.Inf, 1), m.AddVar(0, solver.Inf, 1)
		terms = append(terms, solver.Term{Var: plus, Coef: -1}, solver.Term{Var: minus, Coef: 1})
		half := math.Floor(sum / 2)
		m.AddRow(half, half, terms...)
		start = append(start, 0, half)
	}
	return m, start
}

func TestSolveRelaxed(t *testing.T) {
	solvertest.RequireCBC(t)
	// max 5x+4y, 6x+4y ≤ 24, x+2y ≤ 6: integer optimum 20, LP optimum 21 at (3, 1.5).
	m := solver.NewModel(solver.Maximize)
	x, y := m.AddIntVar(0, solver.Inf, 5), m.AddIntVar(0, solver.Inf, 4)
	m.AddRow(-solver.Inf, 24, term{x, 6}, term{y, 4})
	m.AddRow(-solver.Inf, 6, term{x, 1}, term{y, 2})
	res, err := solver.Solve(context.Background(), m, solver.Options{Relaxed: true, TimeLimit: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Optimal || math.Abs(res.Objective-21) > 1e-6 || math.Abs(res.Value(y)-1.5) > 1e-6 {
		t.Fatalf("relaxation: %v objective %g y %g, want optimal 21 with y = 1.5", res.Status, res.Objective, res.Value(y))
	}
	if !m.IsInteger(x) {
		t.Error("Relaxed changed the model")
	}
}

// TestSolveStopsAtTimeLimitWithIncumbent: a solve that cannot finish
// stops at its time limit with an incumbent (CBC's, or the start when CBC
// had found none), whatever the machine's speed.
func TestSolveStopsAtTimeLimitWithIncumbent(t *testing.T) {
	solvertest.RequireCBC(t)
	m, start := marketSplit(5, 40, 1)
	if err := m.Check(start, 1e-9); err != nil {
		t.Fatalf("the start is not feasible: %v", err)
	}
	res, err := solver.Solve(context.Background(), m, solver.Options{TimeLimit: 2 * time.Second, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Stopped || res.Reason != "time limit" {
		t.Fatalf("status %v (%s), want stopped on the time limit (a market split instance of this size takes branch and bound hours)", res.Status, res.Reason)
	}
	checkIncumbent(t, m, res)
	if res.Objective > m.Objective(start)+1e-6 {
		t.Errorf("incumbent %g worse than the start's %g", res.Objective, m.Objective(start))
	}
	if res.Wall > 2*time.Second+solver.InterruptGrace+10*time.Second {
		t.Errorf("ran %v past a 2 s limit and its grace", res.Wall)
	}
}

// TestSolveCancelReturnsIncumbent: cancelling a solve returns the
// incumbent, interrupted.
func TestSolveCancelReturnsIncumbent(t *testing.T) {
	solvertest.RequireCBC(t)
	m, start := marketSplit(5, 40, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := solver.Solve(ctx, m, solver.Options{Start: start})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Stopped || res.Reason != "interrupted" {
		t.Fatalf("status %v (%s), want stopped, interrupted (a market split instance of this size takes branch and bound hours)", res.Status, res.Reason)
	}
	checkIncumbent(t, m, res)
	if res.Objective > m.Objective(start)+1e-6 {
		t.Errorf("incumbent %g worse than the start's %g", res.Objective, m.Objective(start))
	}
}

func checkIncumbent(t *testing.T, m *solver.Model, res *solver.Result) {
	t.Helper()
	if err := m.Check(res.Values, 1e-6); err != nil {
		t.Fatalf("incumbent infeasible: %v", err)
	}
	if got := m.Objective(res.Values); math.Abs(got-res.Objective) > 1e-5*math.Max(1, math.Abs(got)) {
		t.Errorf("objective %g, values give %g", res.Objective, got)
	}
	if !(res.Bound <= res.Objective+1e-9) || res.Bound < 0 {
		t.Errorf("bound %g, objective %g: want 0 ≤ bound ≤ objective", res.Bound, res.Objective)
	}
	if want := (res.Objective - res.Bound) / math.Max(res.Objective, 1e-9); math.Abs(res.Gap-want) > 1e-9 {
		t.Errorf("gap %g, want %g", res.Gap, want)
	}
}

func TestSolveUsesStart(t *testing.T) {
	solvertest.RequireCBC(t)
	// A 12-item assignment with a unique optimum on the diagonal; the start
	// is that optimum and CBC must report reading it.
	const n = 12
	m := solver.NewModel(solver.Minimize)
	x := make([][]solver.Var, n)
	start := make([]float64, 0, n*n)
	for i := range n {
		x[i] = make([]solver.Var, n)
		for j := range n {
			c := float64(1 + (i*7+j*3)%11)
			if i == j {
				c = 0
			}
			x[i][j] = m.AddBinary(c)
			start = append(start, map[bool]float64{true: 1, false: 0}[i == j])
		}
	}
	for i := range n {
		row, col := make([]solver.Term, n), make([]solver.Term, n)
		for j := range n {
			row[j] = solver.Term{Var: x[i][j], Coef: 1}
			col[j] = solver.Term{Var: x[j][i], Coef: 1}
		}
		m.AddRow(1, 1, row...)
		m.AddRow(1, 1, col...)
	}
	var log bytes.Buffer
	res, err := solver.Solve(context.Background(), m, solver.Options{Start: start, Log: &log, TimeLimit: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Optimal || res.Objective != 0 {
		t.Fatalf("status %v objective %g, want optimal 0", res.Status, res.Objective)
	}
	if !strings.Contains(strings.ToLower(log.String()), "mipstart") {
		t.Errorf("CBC's log does not mention the MIP start:\n%s", log.String())
	}
	if _, err := solver.Solve(context.Background(), m, solver.Options{Start: start[:3]}); err == nil {
		t.Error("a start of the wrong length was accepted")
	}
}

func TestSolveWithoutCBC(t *testing.T) {
	m := solver.NewModel(solver.Minimize)
	m.AddVar(0, 1, 1)
	_, err := solver.Solve(context.Background(), m, solver.Options{Command: "no-such-cbc-binary"})
	if !errors.Is(err, solver.ErrNoCBC) {
		t.Fatalf("err %v, want ErrNoCBC", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "coinor-cbc") {
		t.Errorf("message %q should be one line naming the package", msg)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		build func(m *solver.Model)
		want  string
	}{
		{"lo above hi", func(m *solver.Model) { m.AddVar(2, 1, 0) }, "bad bounds"},
		{"NaN objective", func(m *solver.Model) { m.AddVar(0, 1, math.NaN()) }, "objective"},
		{"infinite coefficient", func(m *solver.Model) {
			x := m.AddVar(0, 1, 0)
			m.AddRow(0, 1, solver.Term{Var: x, Coef: math.Inf(1)})
		}, "coefficient"},
		{"row lo above hi", func(m *solver.Model) {
			x := m.AddVar(0, 1, 0)
			m.AddRow(3, 1, solver.Term{Var: x, Coef: 1})
		}, "row 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := solver.NewModel(solver.Minimize)
			c.build(m)
			err := m.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one mentioning %q", err, c.want)
			}
			if _, err := solver.Solve(context.Background(), m, solver.Options{}); err == nil {
				t.Error("Solve accepted an invalid model")
			}
		})
	}
}

func TestWriteMPSShape(t *testing.T) {
	m := solver.NewModel(solver.Maximize)
	x := m.AddIntVar(0, solver.Inf, 5)
	y := m.AddVar(-1, 4, 0)
	m.AddRow(-solver.Inf, 24, solver.Term{Var: x, Coef: 6}, solver.Term{Var: y, Coef: 4})
	m.AddRow(1, 3, solver.Term{Var: y, Coef: 1})
	m.AddRow(-solver.Inf, solver.Inf, solver.Term{Var: y, Coef: 1}) // free: left out
	var b bytes.Buffer
	if err := m.WriteMPS(&b); err != nil {
		t.Fatal(err)
	}
	want := `NAME INLAY FREE
ROWS
 N  OBJ
 L  R0
 G  R1
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    C0 OBJ -5
    C0 R0 6
    MARKER                 'MARKER'                 'INTEND'
    C1 R0 4
    C1 R1 1
RHS
    RHS R0 24
    RHS R1 1
RANGES
    RNG R1 2
BOUNDS
 LO BND C0 0
 PL BND C0
 LO BND C1 -1
 UP BND C1 4
ENDATA
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// A clone writes the same MPS, and changing its bounds, objective or rows
// leaves the original as it was.
func TestCloneIsDeep(t *testing.T) {
	m := solver.NewModel(solver.Maximize)
	x := m.AddIntVar(0, solver.Inf, 5)
	y := m.AddVar(-1, 4, 0)
	m.SetName(y, "y")
	m.AddRow(-solver.Inf, 24, solver.Term{Var: x, Coef: 6}, solver.Term{Var: y, Coef: 4})
	var before, cloned bytes.Buffer
	if err := m.WriteMPS(&before); err != nil {
		t.Fatal(err)
	}
	c := m.Clone()
	if err := c.WriteMPS(&cloned); err != nil {
		t.Fatal(err)
	}
	if cloned.String() != before.String() {
		t.Fatalf("clone writes\n%s\nthe model\n%s", cloned.String(), before.String())
	}
	c.SetBounds(x, 1, 1)
	c.SetObj(y, 3)
	c.SetName(y, "z")
	c.AddRow(1, 3, solver.Term{Var: y, Coef: 1})
	z := c.AddBinary(1)
	c.AddRow(0, 1, solver.Term{Var: z, Coef: 1}, solver.Term{Var: x, Coef: 1})
	var after bytes.Buffer
	if err := m.WriteMPS(&after); err != nil {
		t.Fatal(err)
	}
	if after.String() != before.String() || m.Name(y) != "y" || m.NumVars() != 2 || m.NumRows() != 1 {
		t.Errorf("the model changed with its clone:\n%s\nwas\n%s", after.String(), before.String())
	}
	if lo, hi := c.Bounds(x); lo != 1 || hi != 1 || c.NumRows() != 3 || c.NumVars() != 3 {
		t.Errorf("clone: x in [%g, %g], %d rows, %d vars", lo, hi, c.NumRows(), c.NumVars())
	}
}

// BenchmarkWriteMPS writes a 10,000-variable model with 100,000 nonzeros.
func BenchmarkWriteMPS(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	m := solver.NewModel(solver.Minimize)
	const n = 10000
	for j := range n {
		if j%2 == 0 {
			m.AddBinary(r.Float64())
		} else {
			m.AddVar(0, solver.Inf, r.Float64())
		}
	}
	terms := make([]solver.Term, 20)
	for range 5000 {
		for k := range terms {
			terms[k] = solver.Term{Var: solver.Var(r.IntN(n)), Coef: r.Float64()}
		}
		m.AddRow(-solver.Inf, 1, terms...)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := m.WriteMPS(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// An LP whose optimum is a whole face: the simplex ends at a vertex of it,
// the interior mode near the face's centre, with the same objective.
func TestSolveInteriorLandsInsideTheOptimalFace(t *testing.T) {
	solvertest.RequireCBC(t)
	m := solver.NewModel(solver.Maximize)
	var v []solver.Var
	for i := 0; i < 4; i++ {
		v = append(v, m.AddVar(0, 1, 1))
	}
	m.AddRow(-solver.Inf, 1, term{v[0], 1}, term{v[1], 1})
	m.AddRow(-solver.Inf, 1, term{v[2], 1}, term{v[3], 1})
	for _, interior := range []bool{false, true} {
		res, err := solver.Solve(context.Background(), m, solver.Options{Interior: interior})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != solver.Optimal || math.Abs(res.Objective-2) > 1e-5 {
			t.Fatalf("interior %v: %v, objective %g; want optimal 2", interior, res.Status, res.Objective)
		}
		inside := true
		for _, x := range res.Values {
			inside = inside && x > 0.1 && x < 0.9
		}
		if inside != interior {
			t.Errorf("interior %v: values %v", interior, res.Values)
		}
	}
}
