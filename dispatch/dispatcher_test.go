package dispatch

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// twoModels: group 0 holds model "a" (priority 1: job 0 on proc 0 → transfer
// 1 on link 0 → job 2 on proc 1) and model "b" (priority 0: job 3 on proc 0).
func twoModels(shared bool) *Program {
	return &Program{
		Procs: []Proc{{Name: "p0", Concurrency: 1}, {Name: "p1", Concurrency: 1}},
		Links: []Link{{Name: "l0", Shared: shared}},
		Models: []Model{
			{Name: "a", Group: 0, Priority: 1, Jobs: []int{0, 1, 2}},
			{Name: "b", Group: 0, Priority: 0, Jobs: []int{3}},
		},
		Groups: []Group{{Name: "g", Models: []int{0, 1}, Period: 10 * ms, Deadline: 10 * ms, Jobs: []int{0, 1, 2, 3}}},
		Jobs: []Job{
			{Kind: Compute, Model: 0, Label: "a0", Proc: 0, Link: -1},
			{Kind: Transfer, Model: 0, Label: "a0→a1", Proc: -1, Link: 0, Deps: []int{0}},
			{Kind: Compute, Model: 0, Label: "a1", Proc: 1, Link: -1, Deps: []int{1}},
			{Kind: Compute, Model: 1, Label: "b0", Proc: 0, Link: -1},
		},
	}
}

func launches(r Ready) []string {
	var out []string
	for _, l := range r.Launches {
		out = append(out, fmt.Sprintf("r%d/j%d@p%d,l%d", l.Task.Request, l.Task.Job, l.Proc, l.Link))
	}
	return out
}

func TestDispatchOrder(t *testing.T) {
	d, err := New(twoModels(true), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Arrive(0, 0); err != nil {
		t.Fatal(err)
	}
	// b (priority 0) goes before a on p0.
	if got, want := launches(d.Ready(0)), []string{"r0/j3@p0,l-1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("launches %v, want %v", got, want)
	}
	// A second request arrives while b runs; nothing can start.
	if _, err := d.Arrive(0, 1*ms); err != nil {
		t.Fatal(err)
	}
	if got := launches(d.Ready(1 * ms)); len(got) != 0 {
		t.Fatalf("launches %v while p0 is busy", got)
	}
	must(t, d.Complete(Task{0, 3}, 2*ms))
	// Queue on p0: r0/a0 (prio 1), r1/b0 (prio 0), r1/a0 (prio 1): b of r1 wins.
	if got, want := launches(d.Ready(2*ms)), []string{"r1/j3@p0,l-1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("launches %v, want %v", got, want)
	}
	must(t, d.Complete(Task{1, 3}, 3*ms))
	// Then r0's a0 (earlier arrival than r1's a0).
	if got, want := launches(d.Ready(3*ms)), []string{"r0/j0@p0,l-1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("launches %v, want %v", got, want)
	}
	must(t, d.Complete(Task{0, 0}, 4*ms))
	if got, want := launches(d.Ready(4*ms)), []string{"r1/j0@p0,l-1", "r0/j1@p-1,l0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("launches %v, want %v", got, want)
	}
	must(t, d.Complete(Task{1, 0}, 5*ms))
	// The shared link is busy with r0's transfer: r1's waits.
	if got := launches(d.Ready(5 * ms)); len(got) != 0 {
		t.Fatalf("launches %v while the shared link is busy", got)
	}
	must(t, d.Complete(Task{0, 1}, 6*ms))
	if got, want := launches(d.Ready(6*ms)), []string{"r0/j2@p1,l-1", "r1/j1@p-1,l0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("launches %v, want %v", got, want)
	}
	must(t, d.Complete(Task{0, 2}, 7*ms))
	r := d.Ready(7 * ms)
	if want := []Finished{{Request: 0, Group: 0, Arrival: 0, Finish: 7 * ms}}; !reflect.DeepEqual(r.Finished, want) {
		t.Fatalf("finished %+v, want %+v", r.Finished, want)
	}
	must(t, d.Complete(Task{1, 1}, 20*ms))
	d.Ready(20 * ms)
	must(t, d.Complete(Task{1, 2}, 30*ms))
	r = d.Ready(30 * ms)
	if want := []Finished{{Request: 1, Group: 0, Arrival: 1 * ms, Finish: 30 * ms, Late: true}}; !reflect.DeepEqual(r.Finished, want) {
		t.Fatalf("finished %+v, want %+v", r.Finished, want)
	}
	if d.InFlight() != 0 {
		t.Errorf("in flight %d, want 0", d.InFlight())
	}
}

func TestUnsharedLinkRunsTransfersTogether(t *testing.T) {
	d, err := New(twoModels(false), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := d.Arrive(0, 0); err != nil {
			t.Fatal(err)
		}
	}
	d.Ready(0)
	must(t, d.Complete(Task{0, 3}, 1*ms))
	d.Ready(1 * ms) // r1/b0
	must(t, d.Complete(Task{1, 3}, 2*ms))
	d.Ready(2 * ms) // r0/a0
	must(t, d.Complete(Task{0, 0}, 3*ms))
	d.Ready(3 * ms) // r1/a0, r0 transfer
	must(t, d.Complete(Task{1, 0}, 4*ms))
	if got, want := launches(d.Ready(4*ms)), []string{"r1/j1@p-1,l0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("launches %v, want %v (unshared link is not contended)", got, want)
	}
}

func TestDropLate(t *testing.T) {
	d, err := New(twoModels(true), Config{Policy: DropLate})
	if err != nil {
		t.Fatal(err)
	}
	d.Arrive(0, 0)
	d.Arrive(0, 0)
	d.Ready(0) // r0/b0
	must(t, d.Complete(Task{0, 3}, 15*ms))
	r := d.Ready(15 * ms) // r1/b0 is past r1's deadline: r1 dropped; r0/a0 too.
	if len(r.Dropped) != 2 || r.Dropped[0].Request != 1 || r.Dropped[1].Request != 0 {
		t.Fatalf("dropped %+v, want requests 1 then 0", r.Dropped)
	}
	if !strings.Contains(r.Dropped[0].Reason, "deadline passed") {
		t.Errorf("reason %q", r.Dropped[0].Reason)
	}
	if len(r.Launches) != 0 || d.InFlight() != 0 {
		t.Errorf("launches %v, in flight %d after dropping everything", launches(r), d.InFlight())
	}
}

func TestCompleteErrors(t *testing.T) {
	d, err := New(twoModels(true), Config{})
	if err != nil {
		t.Fatal(err)
	}
	d.Arrive(0, 0)
	d.Ready(0)
	for _, tc := range []struct {
		task Task
		want string
	}{
		{Task{5, 0}, "unknown request"},
		{Task{0, 9}, "unknown job"},
		{Task{0, 0}, "not running"},
	} {
		if err := d.Complete(tc.task, ms); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Complete(%v) = %v, want error containing %q", tc.task, err, tc.want)
		}
	}
	if _, err := d.Arrive(3, ms); err == nil {
		t.Error("arrival for unknown group accepted")
	}
}

func TestTimeBackwardsPanics(t *testing.T) {
	d, _ := New(twoModels(true), Config{})
	d.Ready(5 * ms)
	defer func() {
		if recover() == nil {
			t.Error("no panic when time went backwards")
		}
	}()
	d.Ready(4 * ms)
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(p *Program)
		want string
	}{
		{"concurrency", func(p *Program) { p.Procs[0].Concurrency = 0 }, "concurrency 0"},
		{"period", func(p *Program) { p.Groups[0].Period = 0 }, "period"},
		{"deadline", func(p *Program) { p.Groups[0].Deadline = -1 }, "deadline"},
		{"proc", func(p *Program) { p.Jobs[0].Proc = 7 }, "processor 7 out of range"},
		{"link", func(p *Program) { p.Jobs[1].Link = 3 }, "link 3 out of range"},
		{"dep range", func(p *Program) { p.Jobs[2].Deps = []int{9} }, "dependency 9 out of range"},
		{"cycle", func(p *Program) { p.Jobs[0].Deps = []int{2} }, "cycle"},
		{"orphan job", func(p *Program) { p.Models[1].Jobs = nil }, "model 1 does not list it"},
		{"hand-off", func(p *Program) { p.Jobs[0].HandOff = p.Jobs[0].Duration + 1 }, "hand-off"},
		{"negative hand-off", func(p *Program) { p.Jobs[0].HandOff = -1 }, "outside [0, duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := twoModels(true)
			tc.edit(p)
			err := p.Validate()
			if err == nil || !errors.Is(err, ErrProgram) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want ErrProgram containing %q", err, tc.want)
			}
		})
	}
	if err := twoModels(true).Validate(); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
