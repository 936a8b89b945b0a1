package inlayadapt

import (
	"context"
	"errors"
	"testing"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
)

// rigid is an 8-GPU rigid job of 1,000 steps running speed[t] samples a
// second per GPU of type t.
func rigid(id int, speed []float64) adapt.Job { return rigidSteps(id, 1000, speed) }

func rigidSteps(id int, steps float64, speed []float64) adapt.Job {
	return rigidJob(id, 8, steps, 30, speed)
}

// rigidJob is a rigid job of gpus GPUs and steps steps whose restart
// takes restart seconds.
func rigidJob(id, gpus int, steps, restart float64, speed []float64) adapt.Job {
	runs := make([]bool, len(speed))
	for t := range runs {
		runs[t] = true
	}
	m := goodput.NewPlanned("m", float64(gpus), steps, runs, restart, func(a goodput.Alloc) float64 {
		r := 0.0
		for _, p := range a {
			r += speed[p.Type] * float64(p.GPUs)
		}
		return r
	})
	return adapt.Job{ID: id, Model: m, GPUs: gpus, Batch: float64(gpus), Kind: adapt.Rigid}
}

// TestUpgradeIdleFastGPUs: job a runs 20× faster on the fast type, job b
// 100×, so by comparative advantage the greedy puts a on the slow type;
// the fast type has room for both, and with Upgrade a moves there.
func TestUpgradeIdleFastGPUs(t *testing.T) {
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "slow", PerNode: 8, Nodes: 1}, {Name: "fast", PerNode: 8, Nodes: 2}}}
	js := []adapt.Job{rigid(0, []float64{1, 20}), rigid(1, []float64{1, 100})}
	for _, up := range []bool{false, true} {
		s := &adapt.State{Cluster: c, Round: 60}
		for i := range js {
			s.Jobs = append(s.Jobs, adapt.View{Job: &js[i], LastType: -1, Know: goodput.Knowledge{Agnostic: -1}})
		}
		p := New()
		p.Upgrade = up
		p.ValuePow = 1 // the full comparative advantage, which puts a on the slow type
		ds, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		want := 0 // the slow type, without Upgrade
		if up {
			want = 1
		}
		if a := ds[0].Alloc; len(a) != 1 || a[0].Type != want || a[0].GPUs != 8 {
			t.Errorf("upgrade=%v: job a on %v, want 8 GPUs of type %d", up, a, want)
		}
		if a := ds[1].Alloc; len(a) != 1 || a[0].Type != 1 {
			t.Errorf("upgrade=%v: job b on %v, want the fast type", up, a)
		}
	}
}

// TestShortJobReachesFastType: one server of each type; job a is short and
// runs 20× faster on the fast type, job b ten times longer and 100×
// faster. The full comparative advantage (ValuePow 1) gives the fast
// server to b and leaves a on the slow one; the default weighs types by
// the square root of their value, and the short job gets the fast server.
func TestShortJobReachesFastType(t *testing.T) {
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "slow", PerNode: 8, Nodes: 1}, {Name: "fast", PerNode: 8, Nodes: 1}}}
	js := []adapt.Job{rigidSteps(0, 100, []float64{1, 20}), rigidSteps(1, 1000, []float64{1, 100})}
	for _, vp := range []float64{1, New().ValuePow} {
		s := &adapt.State{Cluster: c, Round: 60}
		for i := range js {
			s.Jobs = append(s.Jobs, adapt.View{Job: &js[i], LastType: -1, Know: goodput.Knowledge{Agnostic: -1}})
		}
		p := New()
		p.ValuePow = vp
		ds, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		wantA := 1 // the fast type
		if vp == 1 {
			wantA = 0
		}
		if a := ds[0].Alloc; len(a) != 1 || a[0].Type != wantA || a[0].GPUs != 8 {
			t.Errorf("ValuePow %g: short job on %v, want 8 GPUs of type %d", vp, a, wantA)
		}
		if a := ds[1].Alloc; len(a) != 1 || a[0].Type != 1-wantA {
			t.Errorf("ValuePow %g: long job on %v, want type %d", vp, a, 1-wantA)
		}
	}
}

// TestHoldEndsPingPong: two rigid jobs each need all 16 GPUs and restart
// in two rounds. Without a hold the waiting one ages past the running one
// every round and takes its GPUs before it gets past its restart, so
// neither ever progresses; with the default hold (which Restore leaves to
// rigid jobs) both finish, one after the other.
func TestHoldEndsPingPong(t *testing.T) {
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "gpu", PerNode: 8, Nodes: 2}}}
	js := []adapt.Job{rigidJob(0, 16, 1000, 120, []float64{1}), rigidJob(1, 16, 1000, 120, []float64{1})}
	for _, tc := range []struct {
		name          string
		hold, restore float64
		stuck         bool
	}{{"neither", 0, 0, true}, {"hold", New().Hold, 0, false}, {"default", New().Hold, New().Restore, false}} {
		p := New()
		p.Hold, p.Restore = tc.hold, tc.restore
		r, err := adapt.Simulate(context.Background(), adapt.Config{Cluster: c, Round: 60, MaxHours: 20}, js, p)
		if tc.stuck {
			if !errors.Is(err, adapt.ErrStuck) {
				t.Errorf("%s: %v, want the jobs stuck", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.RestartsPerJob > 1 {
			t.Errorf("%s: %.1f restarts a job, want at most one", tc.name, r.RestartsPerJob)
		}
	}
}

// elastic is a scale-gpus job of batch 8 and steps steps, one step a
// second per GPU, whose restart takes restart seconds.
func elastic(id int, steps, restart float64) adapt.Job {
	m := goodput.NewPlanned("m", 8, steps, []bool{true}, restart, func(a goodput.Alloc) float64 { return 8 * float64(a.GPUs()) })
	return adapt.Job{ID: id, Model: m, GPUs: 8, Batch: 8, Kind: adapt.ScaleGPUs}
}

// TestRestoreKeepsMediumJob: a medium job (about 4,000 s left, an 80 s
// restart) runs on one server, a short one (a few minutes) on the other,
// and a second short job arrives. The greedy alone takes GPUs from the
// medium job for the newcomer (its rate, 1 / remaining time, is far
// higher), which costs the medium job two restarts and slower progress;
// the newcomer saves less by starting now than by waiting for the running
// short job to finish, so with Restore the medium job keeps its server.
func TestRestoreKeepsMediumJob(t *testing.T) {
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "gpu", PerNode: 8, Nodes: 2}}}
	js := []adapt.Job{elastic(0, 32000, 80), elastic(1, 2400, 25), elastic(2, 2400, 25)}
	js[2].Arrival = 600
	for _, restore := range []float64{0, New().Restore} {
		p := New()
		p.Restore = restore
		s := &adapt.State{Cluster: c, Round: 60, Now: 600}
		s.Jobs = []adapt.View{
			{Job: &js[0], Progress: 2000, Alloc: goodput.Alloc{{Type: 0, GPUs: 8, Nodes: 1}}, LastType: 0, Know: goodput.Knowledge{Agnostic: -1}, Ran: 600},
			{Job: &js[1], Progress: 1600, Alloc: goodput.Alloc{{Type: 0, GPUs: 8, Nodes: 1}}, LastType: 0, Know: goodput.Knowledge{Agnostic: -1}, Ran: 600},
			{Job: &js[2], LastType: -1, Know: goodput.Knowledge{Agnostic: -1}},
		}
		// A round at 0 with the two running jobs, so that at 600 s their
		// allocations are past any hold.
		s0 := &adapt.State{Cluster: c, Round: 60, Jobs: s.Jobs[:2]}
		if _, err := p.Allocate(context.Background(), s0); err != nil {
			t.Fatal(err)
		}
		ds, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		kept := adapt.SameCounts(ds[0].Alloc, s.Jobs[0].Alloc)
		t.Logf("restore %g: medium %v, short %v, newcomer %v", restore, ds[0].Alloc, ds[1].Alloc, ds[2].Alloc)
		if restore == 0 && kept {
			t.Errorf("without Restore the medium job keeps %v; the scenario no longer shows the greedy restarting it", ds[0].Alloc)
		}
		if restore > 0 && !kept {
			t.Errorf("with Restore the medium job gets %v, want its 8 GPUs kept", ds[0].Alloc)
		}
	}
}

// TestTimeKeepsStickyPlan: with Sticky and Time, a running job (the
// shorter, so the start pass comes to it first) keeps its GPUs and the
// start pass gives the waiting job the rest. The start pass
// once overwrote the kept plan without handing its GPUs back, so eight of
// the sixteen GPUs were lost for the round and the waiting job got none.
func TestTimeKeepsStickyPlan(t *testing.T) {
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "gpu", PerNode: 8, Nodes: 2}}}
	js := []adapt.Job{rigidSteps(0, 100, []float64{1}), rigid(1, []float64{1})}
	s := &adapt.State{Cluster: c, Round: 60, Now: 600}
	s.Jobs = []adapt.View{
		{Job: &js[0], Alloc: goodput.Alloc{{Type: 0, GPUs: 8}}, LastType: 0, Know: goodput.Knowledge{Agnostic: -1}},
		{Job: &js[1], LastType: -1, Know: goodput.Knowledge{Agnostic: -1}},
	}
	p := New()
	p.Sticky, p.Time = true, true
	ds, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	for j, d := range ds {
		if n := d.Alloc.GPUs(); n != 8 {
			t.Errorf("job %d: %d GPUs (%v), want 8", j, n, d.Alloc)
		}
	}
}

// TestShareLearnsScalingAcrossJobs: a job of model m that has run on
// several GPUs of type 1 shows m's synchronisation there; with Share a new
// job of m estimates with it (and keeps it after the first job leaves),
// a job of another model does not, and without Share nothing is shared.
func TestShareLearnsScalingAcrossJobs(t *testing.T) {
	m := rigid(0, []float64{1, 2}).Model
	other := rigid(0, []float64{1, 2}).Model
	other.Name = "other"
	state := func(views ...adapt.View) *adapt.State { return &adapt.State{Jobs: views} }
	ran := adapt.View{Job: &adapt.Job{ID: 1, Model: m}, Know: goodput.Knowledge{Multi: 1 << 1, Agnostic: -1}}
	fresh := adapt.View{Job: &adapt.Job{ID: 2, Model: m}, Know: goodput.Knowledge{Agnostic: -1}}
	stranger := adapt.View{Job: &adapt.Job{ID: 3, Model: other}, Know: goodput.Knowledge{Agnostic: -1}}
	for _, share := range []bool{true, false} {
		p := &Policy{Share: share}
		p.learn(state(ran, fresh, stranger))
		want := uint64(0)
		if share {
			want = 1 << 1
		}
		if got := p.know(&fresh).Multi; got != want {
			t.Errorf("share %v: the new job knows types %b, want %b", share, got, want)
		}
		p.learn(state(fresh)) // the first job has finished
		if got := p.know(&fresh).Multi; got != want {
			t.Errorf("share %v, later: the new job knows types %b, want %b", share, got, want)
		}
		if got := p.know(&stranger).Multi; got != 0 {
			t.Errorf("share %v: another model's job knows types %b, want none", share, got)
		}
	}
}
