// Package milp plans exactly: it states planning problems as mixed-integer
// linear programs and solves them with COIN-OR CBC through package solver.
//
// ScheduleDAG minimises a task graph's makespan (a disjunctive formulation
// per processor). Planner plans workloads: it minimises the maximum
// normalised load over the processors and shared links, which sets the max
// sustainable rate when deadlines do not bind, and proves a bound on it
// (see Planner). Both take a start solution (the inlay planner's) as a MIP
// start, treat the time limit as the search budget, and return their
// incumbent when interrupted.
package milp
