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
// neither ever progresses; with the default hold both finish, one after
// the other.
func TestHoldEndsPingPong(t *testing.T) {
	c := &adapt.Cluster{Types: []adapt.Type{{Name: "gpu", PerNode: 8, Nodes: 2}}}
	js := []adapt.Job{rigidJob(0, 16, 1000, 120, []float64{1}), rigidJob(1, 16, 1000, 120, []float64{1})}
	for _, hold := range []float64{0, New().Hold} {
		p := New()
		p.Hold = hold
		r, err := adapt.Simulate(context.Background(), adapt.Config{Cluster: c, Round: 60, MaxHours: 20}, js, p)
		if hold == 0 {
			if !errors.Is(err, adapt.ErrStuck) {
				t.Errorf("without a hold: %v, want the jobs stuck", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("hold %g: %v", hold, err)
		}
		if r.RestartsPerJob > 1 {
			t.Errorf("hold %g: %.1f restarts a job, want at most one", hold, r.RestartsPerJob)
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
