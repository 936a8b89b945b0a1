package scheduler

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
)

// TestSyncSteps runs each reconcile step through sync on the fake
// clientset: what it writes, when it looks again, what the Job then says;
// and, for the steps that reach a steady state, that a second sync over
// the Job as written writes nothing (a sync is idempotent).
func TestSyncSteps(t *testing.T) {
	runSyncCases(t, []syncCase{
		{
			name:   "invalid: the state annotation and the InlayInvalid condition say why",
			objs:   []runtime.Object{makeJob("a").obj()},
			state:  func(st *jobState) { st.invalid = `annotation inlay.dev/steps: "lots" is not a number` },
			writes: []string{"patch jobs/status"},
			steady: true,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if j.Annotations[jobspec.StateAnno] != jobspec.Invalid || !strings.Contains(j.Annotations[jobspec.ReasonAnno], "lots") {
					t.Errorf("annotations %v", j.Annotations)
				}
				if c := condition(j, InvalidCondition); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "InvalidAnnotation" {
					t.Errorf("condition %+v", c)
				}
			},
		},
		{
			name:   "finished: recorded once, with an event",
			objs:   []runtime.Object{makeJob("a").complete().obj()},
			state:  func(st *jobState) { st.done, st.rounds, st.preempt = true, 7, 2 },
			writes: []string{"patch jobs/status"},
			steady: true,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if j.Annotations[jobspec.StateAnno] != jobspec.Finished || j.Annotations[jobspec.ReasonAnno] != "completed" ||
					j.Annotations[jobspec.RoundsAnno] != "7" || j.Annotations[jobspec.PreemptionsAnno] != "2" || j.Annotations[jobspec.FinishedAtAnno] == "" {
					t.Errorf("annotations %v", j.Annotations)
				}
				if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Finished completed after 7 rounds, 2 preemptions") {
					t.Errorf("events %q", ev)
				}
			},
		},
		{
			name:   "queued: annotations and condition, nothing suspended",
			objs:   []runtime.Object{makeJob("a").obj(), makePod("a", "a-0").obj()},
			writes: []string{"patch jobs/status"},
			steady: true,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if j.Annotations[jobspec.StateAnno] != jobspec.Queued || j.Annotations[jobspec.QueuedAtAnno] == "" || suspended(j) {
					t.Errorf("annotations %v, suspended %v", j.Annotations, suspended(j))
				}
				if c := condition(j, ScheduledCondition); c == nil || c.Reason != "Queued" {
					t.Errorf("condition %+v", c)
				}
			},
		},
		{
			name:   "preempted: a Job with pods bound is suspended",
			objs:   []runtime.Object{makeJob("a").obj(), makePod("a", "a-0").on("n1").running().obj(), makeNode("n1", 2)},
			state:  func(st *jobState) { st.preempt, st.state = 1, jobspec.Running },
			writes: []string{"patch jobs", "patch jobs/status"},
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if !suspended(j) || j.Annotations[jobspec.StateAnno] != jobspec.Preempted {
					t.Errorf("suspended %v, annotations %v", suspended(j), j.Annotations)
				}
				if f.s.stats.Suspends != 1 {
					t.Errorf("%d suspends", f.s.stats.Suspends)
				}
			},
		},
		{
			name: "stopped while old pods terminate: looks again in a second",
			objs: []runtime.Object{makeJob("a").suspended().anno(jobspec.StateAnno, jobspec.Preempted).obj(),
				makePod("a", "a-0").on("n1").terminating().obj(), makeNode("n1", 2)},
			state:  func(st *jobState) { st.preempt, st.state = 1, jobspec.Preempted },
			writes: []string{"patch jobs/status"},
			again:  time.Second,
		},
		{
			name:   "a pod on a lost node is force-deleted",
			objs:   []runtime.Object{makeJob("a").suspended().obj(), makePod("a", "a-0").on("gone").terminating().obj()},
			writes: []string{"delete pods", "patch jobs/status"},
			again:  time.Second,
		},
		{
			name:   "misplaced: bound where the round does not want it, the Job is suspended",
			objs:   []runtime.Object{makeJob("a").obj(), makePod("a", "a-0").on("n2").running().obj(), makeNode("n1", 2), makeNode("n2", 2)},
			state:  func(st *jobState) { st.run, st.slots = true, []string{"n1"} },
			writes: []string{"patch jobs"},
			again:  200 * time.Millisecond,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if !suspended(j) {
					t.Error("not suspended")
				}
			},
		},
		{
			name:   "resume: a suspended Job the round runs, its old pods gone",
			objs:   []runtime.Object{makeJob("a").suspended().obj(), makeNode("n1", 2)},
			state:  func(st *jobState) { st.run, st.slots = true, []string{"n1"} },
			writes: []string{"patch jobs"},
			again:  time.Second,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if suspended(j) || f.s.stats.Resumes != 1 {
					t.Errorf("suspended %v, %d resumes", suspended(j), f.s.stats.Resumes)
				}
			},
		},
		{
			name:   "resume waits for the old pods",
			objs:   []runtime.Object{makeJob("a").suspended().obj(), makePod("a", "a-0").on("n1").terminating().obj(), makeNode("n1", 2)},
			state:  func(st *jobState) { st.run, st.slots = true, []string{"n1"} },
			writes: nil,
			again:  200 * time.Millisecond,
		},
		{
			name: "resume in place: a suspended Job whose whole gang is still bound on the round's slots",
			objs: []runtime.Object{makeJob("a").gang(2).suspended().obj(), makePod("a", "a-0").on("n1").obj(), makePod("a", "a-1").on("n2").obj(),
				makeNode("n1", 2), makeNode("n2", 2)},
			state:  func(st *jobState) { st.run, st.slots = true, []string{"n1", "n2"} },
			writes: []string{"patch jobs"},
			again:  time.Second,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if suspended(j) || f.s.stats.Resumes != 1 {
					t.Errorf("suspended %v, %d resumes", suspended(j), f.s.stats.Resumes)
				}
				if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "resumed in place") {
					t.Errorf("events %q", ev)
				}
			},
		},
		{
			name: "resume waits while only part of the gang is bound in place",
			objs: []runtime.Object{makeJob("a").gang(2).suspended().obj(), makePod("a", "a-0").on("n1").obj(), makePod("a", "a-1").obj(),
				makeNode("n1", 4)},
			state: func(st *jobState) { st.run, st.slots = true, []string{"n1", "n1"} },
			again: 200 * time.Millisecond,
		},
		{
			name: "resume waits while a pod of a gang bound in place terminates",
			objs: []runtime.Object{makeJob("a").gang(2).suspended().obj(), makePod("a", "a-0").on("n1").obj(),
				makePod("a", "a-1").on("n1").terminating().obj(), makePod("a", "a-2").on("n1").obj(), makeNode("n1", 6)},
			state: func(st *jobState) { st.run, st.slots = true, []string{"n1", "n1"} },
			again: 200 * time.Millisecond,
		},
		{
			name:  "bind waits for the Job controller's pods",
			objs:  []runtime.Object{makeJob("a").gang(2).obj(), makePod("a", "a-0").obj(), makeNode("n1", 4)},
			state: func(st *jobState) { st.run, st.slots = true, []string{"n1", "n1"} },
			again: time.Second,
		},
		{
			name: "bind: the whole gang on the round's slots, each Binding carrying the decision's time",
			objs: []runtime.Object{makeJob("a").gang(2).obj(), makePod("a", "a-1").obj(), makePod("a", "a-0").obj(),
				makeNode("n1", 2), makeNode("n2", 2)},
			state:  func(st *jobState) { st.run, st.slots, st.decidedAt = true, []string{"n1", "n2"}, time.Unix(100, 0) },
			writes: []string{"create pods/binding", "create pods/binding"},
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				for _, a := range f.before {
					if c, ok := a.(k8stesting.CreateAction); ok && a.GetSubresource() == "binding" {
						if b := c.GetObject().(*corev1.Binding); b.Annotations[DecidedAtAnno] != jobspec.FormatTime(time.Unix(100, 0)) {
							t.Errorf("binding %s annotations %v", b.Name, b.Annotations)
						}
					}
				}
				if _, ok := j.Annotations[DecidedAtAnno]; ok {
					t.Errorf("the Job was patched before its binding: %v", j.Annotations)
				}
				if got := bindings(f); !slices.Equal(got, []string{"a-0→n1", "a-1→n2"}) {
					t.Errorf("bindings %v", got)
				}
				if len(f.s.assumed) != 2 || f.s.stats.Binds != 2 {
					t.Errorf("%d assumed, %d binds", len(f.s.assumed), f.s.stats.Binds)
				}
			},
		},
		{
			name: "bind: no room beside another gang's pod, nothing is bound",
			objs: []runtime.Object{makeJob("a").obj(), makePod("a", "a-0").obj(), makePod("b", "b-0").on("n1").running().obj(),
				makeNode("n1", 2)},
			state: func(st *jobState) { st.run, st.slots = true, []string{"n1"} },
			again: 100 * time.Millisecond,
		},
		{
			name:   "running: the gang runs, its progress counts from now",
			objs:   []runtime.Object{makeJob("a").obj(), makePod("a", "a-0").on("n1").running().obj(), makeNode("n1", 2)},
			state:  func(st *jobState) { st.run, st.slots, st.rounds, st.spec.GPUs = true, []string{"n1"}, 3, 2 },
			writes: []string{"patch jobs/status"},
			steady: true,
			check: func(t *testing.T, f *reconcileFixture, j *batchv1.Job) {
				if j.Annotations[jobspec.StateAnno] != jobspec.Running || j.Annotations[jobspec.RoundsAnno] != "3" || j.Annotations[jobspec.StartedAtAnno] == "" {
					t.Errorf("annotations %v", j.Annotations)
				}
				if c := condition(j, ScheduledCondition); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "Allocated" {
					t.Errorf("condition %+v", c)
				}
				if st := f.s.st["default/a"]; st.since.IsZero() || st.started.IsZero() {
					t.Error("the run's start not recorded")
				}
			},
		},
		{
			name:  "a Job replaced by another of the same name is left alone",
			objs:  []runtime.Object{makeJob("a").obj()},
			state: func(st *jobState) { st.uid = "an-older-job" },
		},
	})
}

// syncCase is one reconcile step of Job default/a: the objects, the
// round's state, what the sync writes and when it looks again.
type syncCase struct {
	name   string
	objs   []runtime.Object
	state  func(*jobState)
	writes []string
	again  time.Duration
	// steady: a second sync over the written Job writes nothing.
	steady bool
	check  func(t *testing.T, f *reconcileFixture, j *batchv1.Job)
}

// runSyncCases syncs each case's Job once on the fake clientset and checks
// it.
func runSyncCases(t *testing.T, cases []syncCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newReconcileFixture(t, tc.objs...)
			if tc.state != nil {
				tc.state(f.s.st["default/a"])
			}
			again, err := f.s.sync(t.Context(), "default/a")
			if err != nil {
				t.Fatal(err)
			}
			if again != tc.again {
				t.Errorf("looks again after %v, want %v", again, tc.again)
			}
			if got := f.writes(); !slices.Equal(got, tc.writes) {
				t.Errorf("writes %q, want %q", got, tc.writes)
			}
			j := f.refresh(t, "default", "a")
			if tc.check != nil {
				tc.check(t, f, j)
			}
			if tc.steady {
				if _, err := f.s.sync(t.Context(), "default/a"); err != nil {
					t.Fatal(err)
				}
				if got := f.writes(); len(got) != 0 {
					t.Errorf("a second sync wrote %q", got)
				}
			}
		})
	}
}

// TestSyncGone: a Job deleted since the round, or never known, is no
// work.
func TestSyncGone(t *testing.T) {
	f := newReconcileFixture(t, makeJob("a").obj())
	if err := f.jobIx.Delete(makeJob("a").obj()); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"default/a", "default/unknown"} {
		if again, err := f.s.sync(t.Context(), key); err != nil || again != 0 || len(f.writes()) != 0 {
			t.Errorf("%s: again %v, err %v, writes %q", key, again, err, f.writes())
		}
	}
}

// TestFreeSlots: the round's slots less the ones the bound pods fill; a
// pod elsewhere is misplaced.
func TestFreeSlots(t *testing.T) {
	for _, tc := range []struct {
		name      string
		slots     []string
		bound     []*corev1.Pod
		free      []string
		misplaced bool
	}{
		{"none bound", []string{"n2", "n1", "n1"}, nil, []string{"n1", "n1", "n2"}, false},
		{"one of two on n1 bound", []string{"n1", "n1"}, []*corev1.Pod{makePod("a", "a-0").on("n1").obj()}, []string{"n1"}, false},
		{"all bound", []string{"n1"}, []*corev1.Pod{makePod("a", "a-0").on("n1").obj()}, nil, false},
		{"one elsewhere", []string{"n1"}, []*corev1.Pod{makePod("a", "a-0").on("n3").obj()}, []string{"n1"}, true},
		{"more on a node than the round put there", []string{"n1"}, []*corev1.Pod{makePod("a", "a-0").on("n1").obj(), makePod("a", "a-1").on("n1").obj()}, nil, true},
	} {
		free, mis := freeSlots(desired{slots: tc.slots}, tc.bound)
		if !slices.Equal(free, tc.free) || mis != tc.misplaced {
			t.Errorf("%s: free %v misplaced %v, want %v %v", tc.name, free, mis, tc.free, tc.misplaced)
		}
	}
}

func condition(j *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == typ {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// bindings lists the Bindings the fake clientset received before the
// last refresh, as pod→node.
func bindings(f *reconcileFixture) []string {
	var out []string
	for _, a := range f.before {
		if c, ok := a.(k8stesting.CreateAction); ok && a.GetSubresource() == "binding" {
			b := c.GetObject().(*corev1.Binding)
			out = append(out, b.Name+"→"+b.Target.Name)
		}
	}
	return out
}

// TestPublishBudget: once the publication budget is spent, a Job's state
// waits (nothing written; the sync looks again when a write is due) while
// a binding, which carries a decision, goes at once; one request carries
// a Job's annotations and its condition.
func TestPublishBudget(t *testing.T) {
	f := newReconcileFixture(t, makeJob("a").obj(), makeJob("b").obj(), makePod("b", "b-0").obj(), makeJob("c").obj(), makeNode("n1", 2))
	f.s.pubLimit = rate.NewLimiter(rate.Every(time.Hour), 1)
	f.s.pubBusy = f.s.pubLimit // one budget, before and after b's binding
	f.s.st["default/b"].run, f.s.st["default/b"].slots = true, []string{"n1"}
	for _, step := range []struct {
		job      string
		writes   []string
		waits    bool
		hasState bool
	}{
		{job: "a", writes: []string{"patch jobs/status"}, hasState: true},
		{job: "b", writes: []string{"create pods/binding"}},
		{job: "c", waits: true},
	} {
		again, err := f.s.sync(t.Context(), "default/"+step.job)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.writes(); !slices.Equal(got, step.writes) {
			t.Errorf("%s: writes %q, want %q", step.job, got, step.writes)
		}
		if waits := again > 30*time.Minute; waits != step.waits {
			t.Errorf("%s: looks again after %v", step.job, again)
		}
		j := f.refresh(t, "default", step.job)
		if has := j.Annotations[jobspec.StateAnno] == jobspec.Queued && condition(j, ScheduledCondition) != nil; has != step.hasState {
			t.Errorf("%s: annotations %v, conditions %+v", step.job, j.Annotations, j.Status.Conditions)
		}
	}
}

// TestPublishAnnotationsApart: where the API server drops annotations sent
// through jobs/status, they go in a patch of their own, then and for
// every Job after.
func TestPublishAnnotationsApart(t *testing.T) {
	f := newReconcileFixture(t, makeJob("a").obj(), makeJob("b").obj())
	f.cs.PrependReactor("patch", "jobs", func(act k8stesting.Action) (bool, runtime.Object, error) {
		if act.GetSubresource() != "status" {
			return false, nil, nil
		}
		// The condition is kept, the annotations dropped.
		p := act.(k8stesting.PatchAction)
		var body map[string]json.RawMessage
		if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
			return true, nil, err
		}
		delete(body, "metadata")
		patch, _ := json.Marshal(body)
		out, err := f.cs.Tracker().Get(jobsGVR, p.GetNamespace(), p.GetName())
		if err != nil {
			return true, nil, err
		}
		merged, err := strategicpatch.StrategicMergePatch(must(json.Marshal(out)), patch, &batchv1.Job{})
		if err != nil {
			return true, nil, err
		}
		j := &batchv1.Job{}
		if err := json.Unmarshal(merged, j); err != nil {
			return true, nil, err
		}
		return true, j, f.cs.Tracker().Update(jobsGVR, j, p.GetNamespace())
	})
	for _, name := range []string{"a", "b"} {
		if _, err := f.s.sync(t.Context(), "default/"+name); err != nil {
			t.Fatal(err)
		}
		want := []string{"patch jobs/status", "patch jobs"}
		if got := f.writes(); !slices.Equal(got, want) {
			t.Errorf("%s: writes %q, want %q", name, got, want)
		}
		j := f.refresh(t, "default", name)
		if j.Annotations[jobspec.StateAnno] != jobspec.Queued || condition(j, ScheduledCondition) == nil {
			t.Errorf("%s: annotations %v, conditions %+v", name, j.Annotations, j.Status.Conditions)
		}
	}
	if !f.s.metaNotViaStatus.Load() {
		t.Error("the scheduler did not remember that annotations go apart")
	}
}

var jobsGVR = batchv1.SchemeGroupVersion.WithResource("jobs")

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestPublishWhileBinding: within a second of a Binding, publications
// wait for the busy budget; after it, the full budget serves them.
func TestPublishWhileBinding(t *testing.T) {
	f := newReconcileFixture(t, makeJob("a").obj(), makePod("a", "a-0").obj(), makeJob("c").obj(), makeNode("n1", 2))
	f.s.pubBusy = rate.NewLimiter(rate.Every(time.Hour), 1)
	f.s.pubBusy.Allow() // its one write spent
	f.s.st["default/a"].run, f.s.st["default/a"].slots = true, []string{"n1"}
	if _, err := f.s.sync(t.Context(), "default/a"); err != nil || !slices.Equal(f.writes(), []string{"create pods/binding"}) {
		t.Fatalf("a: err %v, writes %q", err, f.writes())
	}
	f.refresh(t, "default", "a")
	again, err := f.s.sync(t.Context(), "default/c")
	if err != nil || again < 30*time.Minute || len(f.writes()) != 0 {
		t.Errorf("c while binding: again %v, err %v, writes %q", again, err, f.writes())
	}
	f.s.lastBind.Store(time.Now().Add(-2 * bindingBusy).UnixNano())
	again, err = f.s.sync(t.Context(), "default/c")
	if err != nil || again != 0 || !slices.Equal(f.writes(), []string{"patch jobs/status"}) {
		t.Errorf("c after binding: again %v, err %v, writes %q", again, err, f.writes())
	}
}
