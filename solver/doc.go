// Package solver states linear and mixed-integer linear programs in Go and
// solves them with COIN-OR CBC, run as a subprocess on an MPS file (no cgo).
//
// A Model holds variables (bounds, integrality, objective coefficient) and
// rows (a sparse list of terms between a lower and an upper bound). It knows
// nothing about what the variables mean: the device MILP planner
// (search/milp) and the cluster policies both build on it.
//
//	m := solver.NewModel(solver.Maximize)
//	x := m.AddIntVar(0, solver.Inf, 5)
//	y := m.AddIntVar(0, solver.Inf, 4)
//	m.AddRow(-solver.Inf, 24, solver.Term{x, 6}, solver.Term{y, 4})
//	res, err := solver.Solve(ctx, m, solver.Options{TimeLimit: 10 * time.Second})
//
// Contract of Solve:
//   - The time limit is wall-clock (CBC's -timeMode elapsed); CBC is asked to
//     stop at it and is interrupted shortly after if it overruns.
//   - Cancelling the context interrupts CBC the way Ctrl-C does (SIGINT): it
//     stops and reports its incumbent, which Solve returns with
//     Status Stopped (or NoSolution when it had none) and Reason
//     "interrupted". CBC ignores SIGINT (and its own time limit) while it
//     solves the root LP or preprocesses, so Solve kills it
//     InterruptGrace after a cancellation, and Options.Grace after an
//     overrun time limit; a killed CBC's result is its log's bound (CBC is
//     run line-buffered through stdbuf where there is one, so the root LP's
//     bound is read as soon as CBC prints it; RootBound says so) and the
//     start as incumbent (FromStart).
//   - Whenever CBC reports no solution and Options.Start is feasible (by
//     Model.Check), the start is returned as the incumbent, Status Stopped.
//   - Infeasible is a proof only from a run that ended on its own inside its
//     time limit and against no feasible start: CBC reports "infeasible" for
//     a model whose preprocessing the time limit cut short, and such a claim
//     becomes NoSolution with Reason "time limit" (or "interrupted", or
//     "unconfirmed infeasibility").
//   - Solve returns an error only when CBC could not be run or its output
//     not read; an infeasible model is a Result, not an error.
//   - Options.Start, when given, is handed to CBC as a MIP start (-mipstart);
//     CBC repairs or ignores a start it finds infeasible.
//   - Objective and Bound are in the model's own sense: for Minimize, Bound is
//     a proven lower bound on every feasible objective; for Maximize, a proven
//     upper bound. Gap is |Objective−Bound| / max(|Objective|, 1e-9), 0 when
//     Status is Optimal.
//   - Values are read from CBC's solution file, which prints about eight
//     significant digits; integer variables are rounded to the nearest
//     integer.
//
// Writing the file is linear in the number of nonzeros (a counting sort from
// rows to columns); BenchmarkWriteMPS writes a 10,000-variable,
// 100,000-nonzero model (4.7 MB) in about 30 ms. Without a cbc binary Solve returns ErrNoCBC, whose message
// says how to install it.
package solver
