package solver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoCBC says that no cbc binary was found.
var ErrNoCBC = errors.New("solver: COIN-OR CBC not found: install it with `apt-get install coinor-cbc` (or run `make fetch`), or set $INLAY_CBC to the cbc binary")

// Status is how a solve ended.
type Status int

const (
	// Optimal: the incumbent is proven optimal (within Options.RelGap).
	Optimal Status = iota
	// Stopped: CBC stopped early (time limit, interruption) with a feasible
	// incumbent; Bound says how far from optimal it may be.
	Stopped
	// NoSolution: CBC stopped early without a feasible solution.
	NoSolution
	// Infeasible: the model has no feasible solution.
	Infeasible
	// Unbounded: the objective is unbounded.
	Unbounded
)

func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Stopped:
		return "stopped"
	case NoSolution:
		return "no solution"
	case Infeasible:
		return "infeasible"
	case Unbounded:
		return "unbounded"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// HasSolution reports whether the status comes with feasible values.
func (s Status) HasSolution() bool { return s == Optimal || s == Stopped }

// Options configure one solve. The zero value runs CBC on one thread
// without a time limit.
type Options struct {
	// TimeLimit is the wall-clock limit; 0 means none.
	TimeLimit time.Duration
	// Threads is the number of CBC threads; 0 or 1 means one.
	Threads int
	// RelGap stops the search once the relative gap is at most this
	// (CBC's ratioGap); 0 asks for proven optimality.
	RelGap float64
	// Start is an initial solution (one value per variable) handed to CBC
	// as a MIP start; nil for none.
	Start []float64
	// Command is the cbc binary; empty means $INLAY_CBC, else "cbc" on $PATH.
	Command string
	// Log, when set, receives CBC's output as it runs.
	Log io.Writer
	// Relaxed solves the continuous relaxation (every variable taken as
	// continuous): its optimum bounds the MILP's (below for Minimize), in
	// far less time; Values are then not integral.
	Relaxed bool
	// Args are extra CBC options placed just before -solve (for instance
	// "-cuts", "off"); the rest of the command line is Solve's.
	Args []string
	// Grace is how long CBC may overrun its time limit (plus a little
	// slack) before it is killed; 0 means 10 s. CBC ignores both its time
	// limit and SIGINT while it solves the root LP or preprocesses, so
	// without a kill a large model can run minutes past its limit.
	// Cancelling the context kills CBC after at most InterruptGrace.
	Grace time.Duration
	// Interior solves a model without integer variables by the barrier
	// method, without presolve and without crossover: where the optimum is
	// not unique it returns a point in the relative interior of the optimal
	// face (near its analytic centre, as interior-point solvers such as
	// ECOS do) instead of a vertex, with small positive values where a
	// vertex has zeros. Ignored for models with integers.
	Interior bool
}

// InterruptGrace is how long Solve waits after a cancelled context's SIGINT
// before it kills CBC: long enough for branch and bound to write its
// incumbent (well under a second), short enough for Ctrl-C to feel prompt.
const InterruptGrace = 2 * time.Second

// Result is the outcome of a solve.
type Result struct {
	Status Status
	// Reason is CBC's own word for how it stopped ("optimal", "time limit",
	// "interrupted", ...).
	Reason string
	// Objective is the incumbent's objective (with Model.Offset); NaN
	// without a solution.
	Objective float64
	// Bound is the best proven bound on the objective, in the model's
	// sense (±Inf when CBC proved none).
	Bound float64
	// Gap is the relative gap between Objective and Bound (0 when optimal,
	// +Inf without a solution or a bound).
	Gap float64
	// Values holds one value per variable; nil without a solution.
	Values []float64
	// Wall is how long CBC ran.
	Wall time.Duration
	// Killed: CBC did not stop when asked and was killed; the result is
	// what its log and the start give.
	Killed bool
	// FromStart: CBC returned no solution and Values are Options.Start
	// (checked feasible), Objective its objective.
	FromStart bool
	// RootBound: Bound is only the root LP relaxation's (CBC stopped before
	// branch and bound improved on it, or never got to it).
	RootBound bool
	// Crashed holds the last lines of a first run that CBC crashed on (a
	// signal Solve did not send); the result is then from a second run
	// with its feasibility pump off. Empty when the first run stood.
	Crashed string
}

// Value returns v's value in the solution (0 without one).
func (r *Result) Value(v Var) float64 {
	if r.Values == nil {
		return 0
	}
	return r.Values[v]
}

// Command returns the cbc binary Solve would run, or ErrNoCBC.
func Command() (string, error) { return lookCommand("") }

func lookCommand(cmd string) (string, error) {
	if cmd == "" {
		cmd = os.Getenv("INLAY_CBC")
	}
	if cmd == "" {
		cmd = "cbc"
	}
	p, err := exec.LookPath(cmd)
	if err != nil {
		return "", ErrNoCBC
	}
	return p, nil
}

// Solve writes m to a temporary MPS file, runs CBC on it and reads back the
// result. See the package documentation for the contract.
func Solve(ctx context.Context, m *Model, opt Options) (*Result, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if opt.Start != nil && len(opt.Start) != m.NumVars() {
		return nil, fmt.Errorf("solver: start has %d values for %d variables", len(opt.Start), m.NumVars())
	}
	bin, err := lookCommand(opt.Command)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "inlay-cbc-*")
	if err != nil {
		return nil, fmt.Errorf("solver: %w", err)
	}
	defer os.RemoveAll(dir)

	mpsPath := filepath.Join(dir, "model.mps")
	write := m.WriteMPS
	if opt.Relaxed {
		relaxed := *m
		relaxed.integer = make([]bool, len(m.integer))
		write = relaxed.WriteMPS
	}
	if err := writeFile(mpsPath, write); err != nil {
		return nil, err
	}
	res, err := m.run(ctx, opt, bin, dir)
	var crash *crashError
	if errors.As(err, &crash) && m.NumIntegers() > 0 && !opt.Relaxed && ctx.Err() == nil {
		// CBC crashed: seen as an assertion in Clp during its feasibility
		// pump, on one of Sia's 1,500-row allocation programs. One more run
		// without the pump, the rest as asked.
		retry := opt
		retry.Args = append(append([]string(nil), opt.Args...), "-feas", "off")
		if res, err = m.run(ctx, retry, bin, dir); err == nil {
			res.Crashed = crash.last
		}
	}
	return res, err
}

// crashError: CBC died of a signal Solve did not send it.
type crashError struct {
	err  error
	last string // its last lines
}

func (e *crashError) Error() string { return fmt.Sprintf("solver: cbc: %v: %s", e.err, e.last) }
func (e *crashError) Unwrap() error { return e.err }

// run runs CBC once on dir's model.mps (and start.txt) and reads its
// solution back.
func (m *Model) run(ctx context.Context, opt Options, bin, dir string) (*Result, error) {
	mpsPath := filepath.Join(dir, "model.mps")
	solPath := filepath.Join(dir, "solution.txt")
	os.Remove(solPath)
	args := []string{mpsPath, "-timeMode", "elapsed"}
	if opt.TimeLimit > 0 {
		args = append(args, "-sec", strconv.FormatFloat(math.Max(opt.TimeLimit.Seconds(), 0.01), 'f', 3, 64))
	}
	if opt.Threads > 1 {
		args = append(args, "-threads", strconv.Itoa(opt.Threads))
	}
	if opt.RelGap > 0 {
		args = append(args, "-ratioGap", strconv.FormatFloat(opt.RelGap, 'g', -1, 64))
	}
	if opt.Start != nil && m.NumIntegers() > 0 && !opt.Relaxed {
		startPath := filepath.Join(dir, "start.txt")
		if err := writeFile(startPath, func(w io.Writer) error { return writeStart(w, m, opt.Start) }); err != nil {
			return nil, err
		}
		args = append(args, "-mipstart", startPath)
	}
	args = append(args, opt.Args...)
	if opt.Interior && (m.NumIntegers() == 0 || opt.Relaxed) {
		// -barrier solves and stops: a -solve after it would start the
		// simplex from the barrier's point and end at a vertex.
		args = append(args, "-presolve", "off", "-crossover", "off", "-barrier", "-solu", solPath)
	} else {
		args = append(args, "-solve", "-solu", solPath)
	}

	var out bytes.Buffer
	var sink io.Writer = &out
	if opt.Log != nil {
		sink = io.MultiWriter(&out, opt.Log)
	}
	cmd := command(bin, args)
	cmd.Dir = dir
	cmd.Stdout = sink
	cmd.Stderr = sink
	ownProcessGroup(cmd)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("solver: start %s: %w", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	grace := opt.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	// CBC checks its time limit between nodes; a long root LP can overrun
	// it, so a watchdog interrupts it a little after the limit and kills it
	// a grace period later.
	var overrun <-chan time.Time
	if opt.TimeLimit > 0 {
		t := time.NewTimer(opt.TimeLimit + max(2*time.Second, opt.TimeLimit/10))
		defer t.Stop()
		overrun = t.C
	}
	var kill <-chan time.Time
	interrupted := "" // why Solve interrupted CBC, if it did
	killed := false
	var waitErr error
wait:
	for {
		select {
		case waitErr = <-done:
			break wait
		case <-ctx.Done():
			// Ctrl-C: whatever the watchdog granted, CBC gets at most
			// InterruptGrace from now.
			if interrupted == "" || interrupted == "time limit" {
				if interrupted == "" {
					interrupt(cmd)
				}
				interrupted = "interrupted"
				kill = time.After(min(grace, InterruptGrace))
			}
			ctx = context.Background() // fire once
		case <-overrun:
			overrun = nil
			if interrupted == "" {
				interrupted = "time limit"
				interrupt(cmd)
				kill = time.After(grace)
			}
		case <-kill:
			killAll(cmd)
			killed = true
			kill = nil
		}
	}
	wall := time.Since(start)

	var res *Result
	if sol, err := os.ReadFile(solPath); err == nil && len(sol) > 0 {
		res, err = parseSolution(m, sol, out.Bytes(), !opt.Relaxed)
		if err != nil && !killed { // a killed CBC may leave half a file
			return nil, err
		}
	}
	if res == nil {
		if interrupted == "" {
			if waitErr != nil {
				var exit *exec.ExitError
				if errors.As(waitErr, &exit) && signaled(exit) {
					return nil, &crashError{err: waitErr, last: lastLines(out.Bytes(), 3)}
				}
				return nil, fmt.Errorf("solver: cbc: %v: %s", waitErr, lastLines(out.Bytes(), 3))
			}
			return nil, fmt.Errorf("solver: cbc wrote no solution: %s", lastLines(out.Bytes(), 3))
		}
		// Killed before it wrote anything: what the log proved stands.
		res = &Result{Status: NoSolution, Reason: interrupted, Objective: math.NaN(), Gap: math.Inf(1)}
		bound, root := logBound(out.Bytes())
		res.Bound, res.RootBound = m.fromCBC(bound), root
	}
	res.Wall, res.Killed = wall, killed
	if interrupted != "" && (res.Status == Stopped || res.Status == NoSolution) {
		res.Reason = interrupted // CBC itself says "iterations" after a SIGINT
	}
	startOK := opt.Start != nil && !opt.Relaxed && m.Check(opt.Start, 1e-6) == nil
	if res.Status == Infeasible {
		// CBC says "infeasible" for a model it never finished: preprocessing
		// cut short by the time limit returns nothing, which CBC reads as
		// infeasibility. Trust the claim only from a run that ended on its
		// own, inside its limit, against no feasible start.
		why := ""
		switch {
		case interrupted != "":
			why = interrupted
		case opt.TimeLimit > 0 && wall >= opt.TimeLimit*95/100:
			why = "time limit"
		case startOK:
			why = "unconfirmed infeasibility" // the start is feasible
		}
		if why != "" {
			res.Status, res.Reason = NoSolution, why
			bound, root := logBound(out.Bytes())
			res.Bound, res.RootBound = m.fromCBC(bound), root
		}
	}
	if res.Status == NoSolution && startOK {
		// CBC found nothing it could report, not even the start it was
		// given: the start is the incumbent.
		res.Status, res.FromStart = Stopped, true
		res.Values = append([]float64(nil), opt.Start...)
		res.Objective = m.Objective(res.Values)
		if m.sense == Maximize {
			res.Bound = math.Max(res.Bound, res.Objective)
		} else {
			res.Bound = math.Min(res.Bound, res.Objective)
		}
	}
	res.Gap = gap(res)
	return res, nil
}

// gap is the relative gap of a result (0 when optimal, +Inf without a
// solution or a finite bound).
func gap(r *Result) float64 {
	switch {
	case r.Status == Optimal:
		return 0
	case !r.Status.HasSolution() || math.IsInf(r.Bound, 0) || math.IsNaN(r.Bound):
		return math.Inf(1)
	}
	return math.Abs(r.Objective-r.Bound) / math.Max(math.Abs(r.Objective), 1e-9)
}

// fromCBC turns a bound in CBC's minimising sense into the model's.
func (m *Model) fromCBC(v float64) float64 {
	if m.sense == Maximize {
		return -v + m.Offset
	}
	return v + m.Offset
}

// logBound is the best bound in CBC's log, in CBC's minimising sense
// (-Inf when it proved none), and whether it is only the root LP
// relaxation's. "(best possible X)" carries full precision; the summary's
// "Lower bound:" line only three decimals.
func logBound(log []byte) (bound float64, root bool) {
	if v, ok := lastNumberAfter(log, "(best possible "); ok {
		return v, false
	}
	if v, ok := lastNumberAfter(log, "Lower bound:"); ok {
		return v, false
	}
	if v, ok := lastNumberAfter(log, "Continuous objective value is"); ok {
		return v, true
	}
	return math.Inf(-1), false
}

// command runs cbc with its standard output line-buffered where coreutils'
// stdbuf is at hand, so that a CBC killed before it finishes has still
// handed over every line it printed (its root LP bound above all); CBC
// fully buffers its output into a pipe.
func command(bin string, args []string) *exec.Cmd {
	if sb, err := exec.LookPath("stdbuf"); err == nil {
		return exec.Command(sb, append([]string{"-oL", "-eL", bin}, args...)...)
	}
	return exec.Command(bin, args...)
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("solver: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("solver: write %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("solver: %w", err)
	}
	return nil
}

// writeStart writes a MIP start in the layout of CBC's solution file.
func writeStart(w io.Writer, m *Model, x []float64) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("Stopped on iterations - objective value 0\n")
	var b []byte
	for j, v := range x {
		if m.integer[j] {
			v = math.Round(v)
		}
		b = strconv.AppendInt(b[:0], int64(j), 10)
		b = append(b, ' ')
		b = appendColName(b, j)
		b = append(b, ' ')
		b = appendNum(b, v)
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// parseSolution reads CBC's solution file (status line, then one line per
// nonzero column: index, name, value, reduced cost) and takes the best bound
// from its log.
func parseSolution(m *Model, sol, log []byte, roundIntegers bool) (*Result, error) {
	head, body, _ := bytes.Cut(sol, []byte("\n"))
	line := strings.TrimSpace(string(head))
	res := &Result{Objective: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1)}
	status, objText, ok := strings.Cut(line, " - objective value ")
	if !ok {
		return nil, fmt.Errorf("solver: cbc solution: unreadable status line %q", line)
	}
	cbcObj, err := strconv.ParseFloat(strings.TrimSpace(objText), 64)
	if err != nil {
		return nil, fmt.Errorf("solver: cbc solution: objective %q: %v", objText, err)
	}
	lower := strings.ToLower(status)
	switch {
	case strings.HasPrefix(lower, "optimal"):
		res.Status, res.Reason = Optimal, "optimal"
	case strings.Contains(lower, "infeasible"):
		res.Status, res.Reason = Infeasible, "infeasible"
	case strings.Contains(lower, "unbounded"):
		res.Status, res.Reason = Unbounded, "unbounded"
	case strings.HasPrefix(lower, "stopped"):
		res.Status = Stopped
		if strings.Contains(lower, "no integer solution") {
			res.Status = NoSolution
		}
		res.Reason = stopReason(lower)
	default:
		return nil, fmt.Errorf("solver: cbc solution: unknown status %q", status)
	}
	if res.Status.HasSolution() {
		res.Values = make([]float64, m.NumVars())
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) > 0 && f[0] == "**" { // CBC marks values outside their bounds
				f = f[1:]
			}
			if len(f) < 3 || len(f[1]) < 2 || f[1][0] != 'C' {
				continue
			}
			j, err := strconv.Atoi(f[1][1:])
			if err != nil || j < 0 || j >= m.NumVars() {
				return nil, fmt.Errorf("solver: cbc solution: unknown column %q", f[1])
			}
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				return nil, fmt.Errorf("solver: cbc solution: column %s: value %q: %v", f[1], f[2], err)
			}
			if roundIntegers && m.integer[j] {
				v = math.Round(v)
			}
			res.Values[j] = v
		}
		res.Objective = m.fromCBC(cbcObj)
	}
	// The bound, in CBC's (minimising) sense.
	bound := math.Inf(-1)
	switch {
	case res.Status == Optimal:
		bound = cbcObj
	case res.Status == Infeasible:
		bound = math.Inf(1)
	default:
		bound, res.RootBound = logBound(log)
		if res.Status.HasSolution() && bound > cbcObj {
			bound = cbcObj
		}
	}
	res.Bound = m.fromCBC(bound)
	res.Gap = gap(res)
	return res, nil
}

func stopReason(status string) string {
	switch {
	case strings.Contains(status, "ctrl-c"):
		return "interrupted"
	case strings.Contains(status, "time"):
		return "time limit"
	case strings.Contains(status, "gap"):
		return "gap"
	case strings.Contains(status, "iterations"):
		return "iterations"
	case strings.Contains(status, "difficulties"):
		return "numerical difficulties"
	}
	return strings.TrimPrefix(status, "stopped on ")
}

// lastNumberAfter finds the last line of log starting with key (after
// spaces) and parses the number that follows it.
func lastNumberAfter(log []byte, key string) (float64, bool) {
	k := []byte(key)
	for rest := log; ; {
		i := bytes.LastIndex(rest, k)
		if i < 0 {
			return 0, false
		}
		tail := rest[i+len(k):]
		if nl := bytes.IndexByte(tail, '\n'); nl >= 0 {
			tail = tail[:nl]
		}
		f := strings.Fields(string(tail))
		if len(f) > 0 {
			if v, err := strconv.ParseFloat(strings.TrimRight(f[0], "),"), 64); err == nil {
				return v, true
			}
		}
		rest = rest[:i]
	}
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
