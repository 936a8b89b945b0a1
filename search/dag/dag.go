// Package dag reads plain task graphs, the kind the scheduling literature
// uses to compare list schedulers, and schedules them to minimise makespan:
//
//	{"processors": ["P1", "P2"],
//	 "tasks": [{"name": "a", "cost": [14, 16]}, {"name": "b", "cost": [13, 19]}],
//	 "edges": [{"from": "a", "to": "b", "cost": 18}]}
//
// A task's cost lists its run time on each processor, in the processors'
// order (any one time unit); an edge's cost is paid only when its two
// tasks run on different processors. Parse rejects, with one line naming
// the file and the task or edge: unknown fields, duplicate or empty task
// names, cost lists of the wrong length, negative or non-finite costs,
// edges naming unknown tasks, duplicate edges, self-loops and cycles.
package dag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inlay-dev/inlay/internal/errline"
	"github.com/inlay-dev/inlay/internal/loadfile"
	"github.com/inlay-dev/inlay/search/heft"
	"github.com/inlay-dev/inlay/search/inlay"
	"github.com/inlay-dev/inlay/search/milp"
	"github.com/inlay-dev/inlay/solver"
)

// Graph is a plain task graph.
type Graph struct {
	Processors []string `json:"processors"`
	Tasks      []Task   `json:"tasks"`
	Edges      []Edge   `json:"edges"`
}

// Task is one task with its cost on each processor.
type Task struct {
	Name string    `json:"name"`
	Cost []float64 `json:"cost"`
}

// Edge is a precedence with its communication cost.
type Edge struct {
	From string  `json:"from"`
	To   string  `json:"to"`
	Cost float64 `json:"cost"`
}

// Load reads and checks a task graph file.
func Load(path string) (*Graph, error) {
	return loadfile.Read("dag", path, func(file string, data []byte) (*Graph, error) { return Parse(data, file) })
}

// Parse decodes and checks a task graph; name labels errors.
func Parse(data []byte, name string) (*Graph, error) {
	var g Graph
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("dag: %s: %s", name, errline.JSON(data, err))
	}
	if dec.More() {
		return nil, fmt.Errorf("dag: %s: data after the graph object", name)
	}
	if err := g.check(); err != nil {
		return nil, fmt.Errorf("dag: %s: %w", name, err)
	}
	return &g, nil
}

func (g *Graph) check() error {
	if len(g.Processors) == 0 {
		return errors.New("no processors")
	}
	seenProc := map[string]bool{}
	for i, p := range g.Processors {
		if p == "" {
			return fmt.Errorf("processor %d: empty name", i)
		}
		if seenProc[p] {
			return fmt.Errorf("processor %q listed twice", p)
		}
		seenProc[p] = true
	}
	if len(g.Tasks) == 0 {
		return errors.New("no tasks")
	}
	index := map[string]int{}
	for i, t := range g.Tasks {
		if t.Name == "" {
			return fmt.Errorf("task %d: empty name", i)
		}
		if _, dup := index[t.Name]; dup {
			return fmt.Errorf("task %q listed twice", t.Name)
		}
		index[t.Name] = i
		if len(t.Cost) != len(g.Processors) {
			return fmt.Errorf("task %q: cost has %d entries, want %d (one per processor)", t.Name, len(t.Cost), len(g.Processors))
		}
		for j, c := range t.Cost {
			if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
				return fmt.Errorf("task %q: cost on %q is %v, want a finite number ≥ 0", t.Name, g.Processors[j], c)
			}
		}
	}
	seenEdge := map[[2]int]bool{}
	for i, e := range g.Edges {
		where := fmt.Sprintf("edge %d (%q -> %q)", i, e.From, e.To)
		a, ok := index[e.From]
		if !ok {
			return fmt.Errorf("%s: unknown task %q", where, e.From)
		}
		b, ok := index[e.To]
		if !ok {
			return fmt.Errorf("%s: unknown task %q", where, e.To)
		}
		if a == b {
			return fmt.Errorf("%s: a task cannot wait for itself", where)
		}
		if seenEdge[[2]int{a, b}] {
			return fmt.Errorf("%s: listed twice", where)
		}
		seenEdge[[2]int{a, b}] = true
		if e.Cost < 0 || math.IsNaN(e.Cost) || math.IsInf(e.Cost, 0) {
			return fmt.Errorf("%s: cost %v, want a finite number ≥ 0", where, e.Cost)
		}
	}
	if c := g.cycle(index); c != "" {
		return fmt.Errorf("cycle %s", c)
	}
	return nil
}

// cycle returns one cycle as `"a" -> "b" -> "a"` (names quoted, so that a
// line break in one stays escaped), or "" when there is none.
func (g *Graph) cycle(index map[string]int) string {
	succ := make([][]int, len(g.Tasks))
	for _, e := range g.Edges {
		succ[index[e.From]] = append(succ[index[e.From]], index[e.To])
	}
	state := make([]int, len(g.Tasks)) // 0 unseen, 1 on path, 2 done
	var path []int
	var found []int
	var visit func(t int) bool
	visit = func(t int) bool {
		state[t] = 1
		path = append(path, t)
		for _, s := range succ[t] {
			if state[s] == 1 {
				for k, p := range path {
					if p == s {
						found = append(append([]int{}, path[k:]...), s)
					}
				}
				return true
			}
			if state[s] == 0 && visit(s) {
				return true
			}
		}
		path = path[:len(path)-1]
		state[t] = 2
		return false
	}
	for t := range g.Tasks {
		if state[t] == 0 && visit(t) {
			break
		}
	}
	names := make([]string, len(found))
	for i, t := range found {
		names[i] = strconv.Quote(g.Tasks[t].Name)
	}
	return strings.Join(names, " -> ")
}

// Result is a schedule of a task graph.
type Result struct {
	Planner  string       `json:"planner"`
	Makespan float64      `json:"makespan"`
	Tasks    []TaskResult `json:"tasks"`
	// Proof is what the exact planner proved; nil for the heuristics.
	Proof *Proof `json:"proof,omitempty"`
}

// Proof is the MILP's account of a schedule.
type Proof struct {
	// Status is "optimal" when the makespan is proven optimal, else how
	// the solver stopped.
	Status string `json:"status"`
	// Bound is a proven lower bound on every schedule's makespan.
	Bound float64 `json:"bound"`
	// Gap is (makespan − bound) / makespan.
	Gap float64 `json:"gap"`
	// Seconds is the solver's wall-clock time.
	Seconds float64 `json:"seconds"`
}

// TaskResult is one task's place.
type TaskResult struct {
	Name      string  `json:"name"`
	Processor string  `json:"processor"`
	Start     float64 `json:"start"`
	Finish    float64 `json:"finish"`
	// Rank is the task's priority as the planner computed it (HEFT: the
	// upward rank).
	Rank float64 `json:"rank"`
}

// Problem converts the graph into a heft.Problem (tasks and edges in file
// order).
func (g *Graph) Problem() *heft.Problem {
	index := map[string]int{}
	for i, t := range g.Tasks {
		index[t.Name] = i
	}
	pb := &heft.Problem{Procs: len(g.Processors)}
	for _, t := range g.Tasks {
		pb.Cost = append(pb.Cost, append([]float64{}, t.Cost...))
	}
	for _, e := range g.Edges {
		pb.Edges = append(pb.Edges, heft.Edge{From: index[e.From], To: index[e.To]})
	}
	pb.Comm = func(e, p, q int) float64 { return g.Edges[e].Cost }
	return pb
}

// result is the planner's schedule s of the graph, tasks in file order.
func (g *Graph) result(planner string, s *heft.Schedule) *Result {
	r := &Result{Planner: planner, Makespan: s.Makespan}
	for i, t := range g.Tasks {
		sl := s.Slots[i]
		r.Tasks = append(r.Tasks, TaskResult{Name: t.Name, Processor: g.Processors[sl.Proc], Start: sl.Start, Finish: sl.Finish, Rank: s.Rank[i]})
	}
	return r
}

// HEFT schedules the graph with HEFT with insertion (see heft.Run). Tasks
// in the result are in file order.
func HEFT(g *Graph) (*Result, error) {
	s, err := heft.Run(g.Problem())
	if err != nil {
		return nil, fmt.Errorf("dag: %w", err)
	}
	return g.result("heft", s), nil
}

// Inlay schedules the graph with inlay's search (inlay.ScheduleDAG, seed
// 1): HEFT, then a local search over priorities and processors; never a
// longer makespan than HEFT. Tasks in the result are in file order; Rank is
// the priority the search settled on.
func Inlay(g *Graph) (*Result, error) {
	s, err := inlay.ScheduleDAG(g.Problem(), inlay.DAGOptions{Seed: 1})
	if err != nil {
		return nil, fmt.Errorf("dag: %w", err)
	}
	return g.result("inlay", s), nil
}

// MILP schedules the graph exactly (milp.ScheduleDAG), starting from
// inlay's schedule, within the budget (0: 60 s); cancelling ctx returns the
// best schedule found so far. The result's Proof carries the proven bound.
func MILP(ctx context.Context, g *Graph, budget time.Duration) (*Result, error) {
	pb := g.Problem()
	start, err := inlay.ScheduleDAG(pb, inlay.DAGOptions{Seed: 1})
	if err != nil {
		return nil, fmt.Errorf("dag: %w", err)
	}
	s, proof, err := milp.ScheduleDAG(ctx, pb, milp.DAGOptions{TimeLimit: budget, Start: start})
	if err != nil {
		return nil, fmt.Errorf("dag: %w", err)
	}
	r := g.result("milp", s)
	gap := 0.0
	if proof.Status != solver.Optimal && s.Makespan > 0 {
		gap = math.Max(0, (s.Makespan-proof.Bound)/s.Makespan)
	}
	r.Proof = &Proof{Status: proof.Status.String(), Bound: proof.Bound, Gap: gap, Seconds: proof.Wall.Seconds()}
	if proof.Status == solver.Optimal {
		r.Proof.Bound = s.Makespan
	}
	return r, nil
}

// Planner schedules a task graph within a budget (ignored by the
// heuristics).
type Planner func(ctx context.Context, g *Graph, budget time.Duration) (*Result, error)

// Planners lists the task-graph planners by name.
func Planners() map[string]Planner {
	heuristic := func(f func(*Graph) (*Result, error)) Planner {
		return func(_ context.Context, g *Graph, _ time.Duration) (*Result, error) { return f(g) }
	}
	return map[string]Planner{"heft": heuristic(HEFT), "inlay": heuristic(Inlay), "milp": MILP}
}
