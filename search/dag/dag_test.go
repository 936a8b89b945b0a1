package dag

import (
	"context"
	"os"
	"strings"
	"testing"
)

// topcuoglu is the 10-task, 3-processor example of Topcuoglu et al. 2002
// (HEFT makespan 80), kept as an example file.
var topcuoglu = mustRead("../../examples/topcuoglu-dag.json")

func mustRead(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// mustParse is the graph of a JSON text that must parse; name labels
// errors.
func mustParse(t *testing.T, text, name string) *Graph {
	t.Helper()
	g, err := Parse([]byte(text), name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestTopcuoglu(t *testing.T) {
	r, err := HEFT(mustParse(t, topcuoglu, "t.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Makespan != 80 {
		t.Errorf("makespan %v, want 80", r.Makespan)
	}
	want := map[string]string{"n1": "P3", "n2": "P1", "n3": "P3", "n4": "P2", "n5": "P3", "n6": "P2", "n7": "P3", "n8": "P1", "n9": "P2", "n10": "P2"}
	for _, tr := range r.Tasks {
		if tr.Processor != want[tr.Name] {
			t.Errorf("%s on %s, want %s", tr.Name, tr.Processor, want[tr.Name])
		}
	}
	if last := r.Tasks[9]; last.Start != 73 || last.Finish != 80 {
		t.Errorf("n10 runs %v-%v, want 73-80", last.Start, last.Finish)
	}
}

func TestSmall(t *testing.T) {
	tests := []struct {
		name, json string
		makespan   float64
		procs      string
	}{
		{"one task picks the faster processor", `{"processors": ["A", "B"], "tasks": [{"name": "x", "cost": [5, 3]}]}`, 3, "B"},
		{"fork on two processors", `{"processors": ["A", "B"], "tasks": [{"name": "a", "cost": [1, 1]}, {"name": "b", "cost": [4, 4]}, {"name": "c", "cost": [4, 4]}],
			"edges": [{"from": "a", "to": "b", "cost": 1}, {"from": "a", "to": "c", "cost": 1}]}`, 6, "A,A,B"},
		{"expensive edge keeps chain together", `{"processors": ["A", "B"], "tasks": [{"name": "a", "cost": [1, 2]}, {"name": "b", "cost": [3, 1]}],
			"edges": [{"from": "a", "to": "b", "cost": 10}]}`, 4, "A,A"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := HEFT(mustParse(t, tc.json, "s.json"))
			if err != nil {
				t.Fatal(err)
			}
			var procs []string
			for _, tr := range r.Tasks {
				procs = append(procs, tr.Processor)
			}
			if r.Makespan != tc.makespan || strings.Join(procs, ",") != tc.procs {
				t.Errorf("makespan %v on %v, want %v on %s", r.Makespan, procs, tc.makespan, tc.procs)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const procs = `"processors": ["A", "B"], `
	tests := []struct{ name, json, want string }{
		{"syntax", "{\n \"processors\": [,]}", "d.json: line 2: invalid character"},
		{"type", `{"processors": "A"}`, "line 1: processors: want []string"},
		{"unknown field", `{"procs": []}`, `unknown field "procs"`},
		{"no processors", `{"tasks": [{"name": "a", "cost": []}]}`, "no processors"},
		{"no tasks", `{` + procs + `"tasks": []}`, "no tasks"},
		{"wrong cost length", `{` + procs + `"tasks": [{"name": "a", "cost": [1]}]}`, `task "a": cost has 1 entries, want 2`},
		{"negative cost", `{` + procs + `"tasks": [{"name": "a", "cost": [1, -2]}]}`, `task "a": cost on "B" is -2`},
		{"duplicate task", `{` + procs + `"tasks": [{"name": "a", "cost": [1, 2]}, {"name": "a", "cost": [1, 2]}]}`, `task "a" listed twice`},
		{"empty name", `{` + procs + `"tasks": [{"name": "", "cost": [1, 2]}]}`, `task 0: empty name`},
		{"unknown task", `{` + procs + `"tasks": [{"name": "a", "cost": [1, 2]}], "edges": [{"from": "a", "to": "z"}]}`, `edge 0 ("a" -> "z"): unknown task "z"`},
		{"self loop", `{` + procs + `"tasks": [{"name": "a", "cost": [1, 2]}], "edges": [{"from": "a", "to": "a"}]}`, `edge 0 ("a" -> "a"): a task cannot wait for itself`},
		{"negative edge", `{` + procs + `"tasks": [{"name": "a", "cost": [1, 2]}, {"name": "b", "cost": [1, 2]}], "edges": [{"from": "a", "to": "b", "cost": -1}]}`, `edge 0 ("a" -> "b"): cost -1`},
		{"cycle", `{` + procs + `"tasks": [{"name": "a", "cost": [1, 2]}, {"name": "b", "cost": [1, 2]}, {"name": "c", "cost": [1, 2]}],
			"edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}, {"from": "c", "to": "b"}]}`, `cycle "b" -> "c" -> "b"`},
		{"trailing data", `{` + procs + `"tasks": [{"name": "a", "cost": [1, 2]}]} {}`, "data after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.json), "d.json")
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dag: d.json: ") {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func FuzzDAGParse(f *testing.F) {
	f.Add([]byte(topcuoglu))
	f.Add([]byte(`{"processors": ["A"], "tasks": [{"name": "a", "cost": [1]}, {"name": "b", "cost": [0]}], "edges": [{"from": "a", "to": "b", "cost": 3}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse(data, "f.json")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			return
		}
		if len(g.Tasks) > 200 {
			return // keep each input cheap
		}
		r, err := HEFT(g)
		if err != nil {
			t.Fatalf("valid graph not scheduled: %v", err)
		}
		index := map[string]int{}
		for i, tr := range r.Tasks {
			index[tr.Name] = i
			if tr.Finish < tr.Start || tr.Finish > r.Makespan {
				t.Errorf("task %s runs %v-%v, makespan %v", tr.Name, tr.Start, tr.Finish, r.Makespan)
			}
		}
		for _, e := range g.Edges {
			a, b := r.Tasks[index[e.From]], r.Tasks[index[e.To]]
			c := 0.0
			if a.Processor != b.Processor {
				c = e.Cost
			}
			if b.Start < a.Finish+c {
				t.Errorf("edge %s -> %s: %v starts before %v+%v", e.From, e.To, b.Start, a.Finish, c)
			}
		}
	})
}

func TestInlayPlanner(t *testing.T) {
	g := mustParse(t, topcuoglu, "t.json")
	r, err := Planners()["inlay"](context.Background(), g, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Planner != "inlay" || r.Makespan > 73 || len(r.Tasks) != len(g.Tasks) {
		t.Fatalf("inlay: planner %q makespan %v, %d tasks; want inlay, ≤ 73 (HEFT 80), %d", r.Planner, r.Makespan, len(r.Tasks), len(g.Tasks))
	}
}
