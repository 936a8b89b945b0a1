//go:build unix

package solver_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/solver"
)

// fakeCBC writes a shell script that stands in for cbc: it prints log,
// then runs body with $SOLU set to the solution file Solve asked for and
// $FEAS to the value of its -feas option.
func fakeCBC(t *testing.T, log, body string) string {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	path := filepath.Join(t.TempDir(), "cbc")
	script := "#!/bin/sh\nSOLU=\nFEAS=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -solu ] && SOLU=$2; [ \"$1\" = -feas ] && FEAS=$2; shift; done\n" +
		"printf '%s\\n' '" + log + "'\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeModel: minimise x + y over integers with x + y ≥ 3; the start
// (2, 2) is feasible at 4.
func fakeModel() (*solver.Model, []float64) {
	m := solver.NewModel(solver.Minimize)
	x := m.AddIntVar(0, 10, 1)
	y := m.AddIntVar(0, 10, 1)
	m.AddRow(3, solver.Inf, term{x, 1}, term{y, 1})
	return m, []float64{2, 2}
}

// A CBC stuck in its root LP ignores SIGINT: cancelling still returns
// promptly, with the start as the incumbent and the root bound it logged.
func TestSolveCancelKillsStuckCBC(t *testing.T) {
	cbc := fakeCBC(t, "Continuous objective value is 2.5 - 0.01 seconds", "trap '' INT\nexec sleep 60")
	m, start := fakeModel()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	res, err := solver.Solve(ctx, m, solver.Options{Command: cbc, Start: start, Grace: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 300*time.Millisecond+solver.InterruptGrace+5*time.Second {
		t.Errorf("returned after %v", took)
	}
	if res.Status != solver.Stopped || !res.FromStart || !res.Killed || res.Reason != "interrupted" {
		t.Fatalf("status %v (%s), from start %v, killed %v: want the start, interrupted and killed", res.Status, res.Reason, res.FromStart, res.Killed)
	}
	if res.Objective != 4 || res.Bound != 2.5 || !res.RootBound || math.Abs(res.Gap-1.5/4) > 1e-12 {
		t.Errorf("objective %g bound %g (root %v) gap %g: want 4, the root bound 2.5, gap 0.375", res.Objective, res.Bound, res.RootBound, res.Gap)
	}
}

// Past its time limit a stuck CBC is killed after the grace period; without
// a start nothing but the bound comes back, and without a logged bound not
// even that.
func TestSolveTimeLimitKillsStuckCBC(t *testing.T) {
	for _, c := range []struct {
		name, log string
		bound     float64
	}{
		{"root bound", "Continuous objective value is 2.5 - 0.01 seconds", 2.5},
		{"no bound", "Coin0008I INLAY read with 0 errors", math.Inf(-1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			cbc := fakeCBC(t, c.log, "trap '' INT\nexec sleep 60")
			m, _ := fakeModel()
			res, err := solver.Solve(context.Background(), m, solver.Options{Command: cbc, TimeLimit: 100 * time.Millisecond, Grace: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != solver.NoSolution || res.Reason != "time limit" || !res.Killed || res.Bound != c.bound || !math.IsInf(res.Gap, 1) {
				t.Errorf("got %v (%s) killed %v bound %g gap %g: want no solution on the time limit, killed, bound %g", res.Status, res.Reason, res.Killed, res.Bound, res.Gap, c.bound)
			}
		})
	}
}

// "Infeasible" from a CBC that ran out of time, or that a feasible start
// refutes, is no proof; from one that finished in time it is.
func TestSolveDistrustsInfeasibleClaims(t *testing.T) {
	infeasible := "printf 'Infeasible - objective value 0\\n' > \"$SOLU\""
	for _, c := range []struct {
		name      string
		body      string
		limit     time.Duration
		withStart bool
		want      solver.Status
		reason    string
	}{
		{"in time", infeasible, 0, false, solver.Infeasible, "infeasible"},
		{"after the limit", "sleep 0.5\n" + infeasible, 200 * time.Millisecond, false, solver.NoSolution, "time limit"},
		{"after the limit, with a start", "sleep 0.5\n" + infeasible, 200 * time.Millisecond, true, solver.Stopped, "time limit"},
		{"refuted by the start", infeasible, 0, true, solver.Stopped, "unconfirmed infeasibility"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cbc := fakeCBC(t, "Result - Problem proven infeasible", c.body)
			m, start := fakeModel()
			opt := solver.Options{Command: cbc, TimeLimit: c.limit}
			if c.withStart {
				opt.Start = start
			}
			res, err := solver.Solve(context.Background(), m, opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.want || res.Reason != c.reason {
				t.Fatalf("got %v (%s), want %v (%s)", res.Status, res.Reason, c.want, c.reason)
			}
			if c.withStart && (!res.FromStart || res.Objective != 4 || res.Values[0] != 2) {
				t.Errorf("from start %v, objective %g, values %v: want the start", res.FromStart, res.Objective, res.Values)
			}
		})
	}
}

// A CBC that crashes (here: aborts unless its feasibility pump is off, as
// CBC 2.10's did on one of Sia's programs) is run once more without the
// pump, and the result says so; one that crashes again is an error.
func TestSolveRetriesACrashedCBC(t *testing.T) {
	optimal := "printf 'Optimal - objective value 3\\n      0 C0 1 1\\n      1 C1 2 1\\n' > \"$SOLU\""
	m, _ := fakeModel()
	cbc := fakeCBC(t, "Cbc0038I Pass  25: suminf.    1.27609 (4)", "[ \"$FEAS\" = off ] || kill -ABRT $$\n"+optimal)
	res, err := solver.Solve(context.Background(), m, solver.Options{Command: cbc})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Optimal || res.Objective != 3 || res.Values[1] != 2 || !strings.Contains(res.Crashed, "Pass  25") {
		t.Errorf("status %v objective %g values %v crashed %q: want the second run's optimum and the first run's last line", res.Status, res.Objective, res.Values, res.Crashed)
	}
	always := fakeCBC(t, "Cbc0038I Pass  25", "kill -ABRT $$")
	if _, err := solver.Solve(context.Background(), m, solver.Options{Command: always}); err == nil || !strings.Contains(err.Error(), "signal") {
		t.Errorf("err %v: want the second crash's signal", err)
	}
	res, err = solver.Solve(context.Background(), m, solver.Options{Command: fakeCBC(t, "", optimal)})
	if err != nil || res.Crashed != "" {
		t.Errorf("err %v crashed %q: a clean run says nothing", err, res.Crashed)
	}
}
