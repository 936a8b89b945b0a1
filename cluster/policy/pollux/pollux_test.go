package pollux

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
)

// siaCluster is Sia's 64-GPU cluster: 6 servers of 4 T4s, 3 of 8 RTX
// 2080 Ti, 2 of 8 A100s.
func siaCluster() *adapt.Cluster {
	return &adapt.Cluster{Types: []adapt.Type{{Name: "t4", PerNode: 4, Nodes: 6}, {Name: "rtx", PerNode: 8, Nodes: 3}, {Name: "a100", PerNode: 8, Nodes: 2}}}
}

// job is an elastic job of steps steps running speed[t] samples a second
// per GPU of type t, restarting in 30 s.
func job(id int, kind adapt.Kind, gpus int, steps float64, speed []float64) adapt.Job {
	runs := make([]bool, len(speed))
	for t := range runs {
		runs[t] = true
	}
	m := goodput.NewPlanned("m", float64(gpus), steps, runs, 30, func(a goodput.Alloc) float64 {
		r := 0.0
		for _, p := range a {
			r += speed[p.Type] * float64(p.GPUs)
		}
		return r
	})
	return adapt.Job{ID: id, Model: m, GPUs: gpus, Batch: float64(gpus), Kind: kind}
}

// mixedJobs are n jobs, every rigidEvery-th rigid, the rest adaptive, of
// gpus(i) GPUs and 1,000 steps.
func mixedJobs(n, rigidEvery int, gpus func(i int) int) []adapt.Job {
	var js []adapt.Job
	for i := range n {
		kind := adapt.Adaptive
		if i%rigidEvery == 0 {
			kind = adapt.Rigid
		}
		js = append(js, job(i, kind, gpus(i), 1000, []float64{1, 2, 4}))
	}
	return js
}

func state(c *adapt.Cluster, js []adapt.Job) *adapt.State {
	s := &adapt.State{Cluster: c, Round: 60}
	for i := range js {
		s.Jobs = append(s.Jobs, adapt.View{Job: &js[i], LastType: -1, Know: goodput.Knowledge{Agnostic: -1}})
	}
	return s
}

// TestLayout: the artifact's virtual nodes of Sia's cluster are 16 of 4
// GPUs: a T4 server is one, an 8-GPU server two.
func TestLayout(t *testing.T) {
	v := layout(siaCluster())
	wantTyp := []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2}
	wantNode := []int{0, 1, 2, 3, 4, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10}
	if v.size != 4 || !reflect.DeepEqual(v.typ, wantTyp) || !reflect.DeepEqual(v.node, wantNode) {
		t.Errorf("layout: size %d, types %v, servers %v", v.size, v.typ, v.node)
	}
}

// TestRepairFeasible: whatever the search proposes, repair leaves a
// state the artifact accepts: no virtual node over its GPUs, no virtual
// node shared by two distributed jobs, no job over its cap or on more
// than 16 virtual nodes, a rigid job at its whole count or nothing.
func TestRepairFeasible(t *testing.T) {
	c := siaCluster()
	js := mixedJobs(12, 4, func(i int) int { return 4 + 4*(i%3) })
	s := state(c, js)
	p := New(1)
	e, _ := p.newSearch(s)
	rng := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		x := make([]int, e.J*e.V)
		for i := range x {
			if rng.IntN(3) == 0 {
				x[i] = rng.IntN(9)
			}
		}
		e.mutate(x)
		e.repair(x)
		used := make([]int, e.V)
		dist := make([]int, e.V)
		for j := range e.J {
			reps, nodes := 0, 0
			for i, n := range e.row(x, j) {
				if n < 0 {
					t.Fatalf("job %d: %d replicas on virtual node %d", j, n, i)
				}
				used[i] += n
				reps += n
				if n > 0 {
					nodes++
				}
			}
			for i, n := range e.row(x, j) {
				if n > 0 && nodes > 1 {
					dist[i]++
				}
			}
			if reps > e.maxRep[j] || nodes > 16 {
				t.Fatalf("job %d: %d replicas on %d virtual nodes, cap %d", j, reps, nodes, e.maxRep[j])
			}
			if js[j].Kind == adapt.Rigid && reps != 0 && reps != js[j].GPUs {
				t.Fatalf("rigid job %d: %d replicas, wants %d", j, reps, js[j].GPUs)
			}
		}
		for i := range e.V {
			if used[i] > e.v.size || dist[i] > 1 {
				t.Fatalf("virtual node %d: %d replicas, %d distributed jobs", i, used[i], dist[i])
			}
		}
	}
}

// TestMajorityDrops: the simulator runs a job on the type holding most of
// its replicas and drops the others; on a tie it keeps the faster type.
func TestMajorityDrops(t *testing.T) {
	c := siaCluster()
	js := []adapt.Job{job(0, adapt.Adaptive, 4, 1000, []float64{1, 2, 4})}
	e, _ := New(1).newSearch(state(c, js))
	r := make([]int, e.V)
	r[0], r[1], r[12] = 4, 4, 4 // 8 T4s on two servers, 4 A100s
	keep, kept := e.majority(0, r)
	if keep != 0 || kept[0] != 4 || kept[1] != 4 || kept[12] != 0 {
		t.Errorf("majority: type %d, kept %v; want the 8 T4s, the A100s dropped", keep, kept)
	}
	clear(r)
	r[0], r[12] = 4, 4 // a tie: the A100s are faster
	if keep, _ := e.majority(0, r); keep != 2 {
		t.Errorf("tie: type %d, want the A100s", keep)
	}
}

// TestRigidWholeCount: rigid jobs run their whole count on one type (the
// simulator's check refuses anything else) and all finish.
func TestRigidWholeCount(t *testing.T) {
	c := siaCluster()
	var js []adapt.Job
	for i := range 6 {
		j := job(i, adapt.Rigid, 4+4*(i%3), 3000, []float64{1, 2, 4})
		j.Arrival = float64(100 * i)
		js = append(js, j)
	}
	p := New(5)
	p.Population, p.Generations = 30, 20
	r, err := adapt.Simulate(context.Background(), adapt.Config{Cluster: c, Round: 60, MaxHours: 50}, js, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.AvgJCT <= 0 {
		t.Errorf("average JCT %g", r.AvgJCT)
	}
}

// TestSimulateDeterministic: a small workload finishes, and the same
// seed gives the same result.
func TestSimulateDeterministic(t *testing.T) {
	c := siaCluster()
	var js []adapt.Job
	for i := range 10 {
		j := job(i, adapt.Adaptive, 4, 2000+500*float64(i), []float64{1, 2, 4})
		j.Arrival = float64(300 * i)
		js = append(js, j)
	}
	run := func() *adapt.Result {
		p := New(3)
		p.Population, p.Generations = 30, 20
		r, err := adapt.Simulate(context.Background(), adapt.Config{Cluster: c, Round: 60, MaxHours: 50}, js, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(), run()
	if a.AvgJCT != b.AvgJCT || a.RestartsPerJob != b.RestartsPerJob {
		t.Errorf("same seed, different results: %.6f/%.3f against %.6f/%.3f", a.AvgJCT, a.RestartsPerJob, b.AvgJCT, b.RestartsPerJob)
	}
}

// TestExploresGradually: Pollux gives a job at most twice the GPUs it has
// run on (one before it has run). The job arrived 30 s before the first
// round (at age 0 Pollux's restart factor is 0 and a start is worth
// nothing).
func TestExploresGradually(t *testing.T) {
	c := siaCluster()
	js := []adapt.Job{job(0, adapt.Adaptive, 4, 100000, []float64{1, 2, 4})}
	s := state(c, js)
	s.Now = 30
	p := New(1)
	for round, want := range []int{1, 2, 4, 8} {
		ds, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		n := ds[0].Alloc.GPUs()
		if n == 0 || n > want {
			t.Fatalf("round %d: %d GPUs, want 1..%d", round, n, want)
		}
		s.Jobs[0].Alloc = ds[0].Alloc
		s.Jobs[0].LastType = ds[0].Alloc[0].Type
		s.Now += 60
	}
}

// BenchmarkAllocateQueue is one round with 100 jobs waiting on Sia's
// cluster (a rigid workload's queue).
func BenchmarkAllocateQueue(b *testing.B) {
	c := siaCluster()
	js := mixedJobs(100, 2, func(i int) int { return 1 << (i % 4) })
	s := state(c, js)
	s.Now = 600
	for b.Loop() {
		if _, err := New(1).Allocate(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
}
