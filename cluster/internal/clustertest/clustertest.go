// Package clustertest builds what the cluster wing's tests share: Gavel's
// 108-GPU cluster with Gavel's throughputs, traces from Gavel's generator,
// and the policy state of a trace's jobs.
package clustertest

import (
	"testing"

	"github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/job"
	"github.com/inlay-dev/inlay/cluster/policy"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/throughput"
)

// Gavel108 is the gavel-108 preset and Gavel's throughput table.
func Gavel108(t testing.TB) (*hw.Platform, *throughput.Table) {
	t.Helper()
	c, err := hw.Preset("gavel-108")
	if err != nil {
		t.Fatal(err)
	}
	return c, GavelTable(t)
}

// GavelTable is Gavel's throughput table.
func GavelTable(t testing.TB) *throughput.Table {
	t.Helper()
	tb, err := throughput.Gavel()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// Trace is a trace from Gavel's generator.
func Trace(t testing.TB, tb *throughput.Table, g job.GenConfig) []job.Job {
	t.Helper()
	jobs, err := job.Generate(g, tb)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// State is n jobs of Gavel's generator (multi-GPU ones when multi) active
// on gavel-108 at the last one's arrival, as a policy sees them mid-run:
// job i has (1 + i mod 4)/4 of its steps left and has been served
// (i mod 7) hours.
func State(t testing.TB, n int, multi bool) *policy.State {
	t.Helper()
	c, tb := Gavel108(t)
	jobs := Trace(t, tb, job.GenConfig{Jobs: n, Rate: 5.6, Seed: 1, MultiGPU: multi})
	pc, err := sched.ClusterView(c, tb)
	if err != nil {
		t.Fatal(err)
	}
	s := &policy.State{Now: jobs[n-1].Arrival, C: pc, Table: tb}
	for i, j := range jobs {
		row, _ := tb.Resolve(j.Type, j.GPUs)
		s.Jobs = append(s.Jobs, policy.Job{ID: i, Row: row, GPUs: j.GPUs, Weight: 1, Arrival: j.Arrival, Steps: j.Steps,
			Remaining: j.Steps * float64(1+i%4) / 4, Attained: float64(i % 7 * 3600), Last: -1})
	}
	return s
}

// GavelRows is Gavel's throughput table and a lookup of a job type's
// single-GPU row in it.
func GavelRows(t testing.TB) (*throughput.Table, func(typ string) throughput.ID) {
	t.Helper()
	tb := GavelTable(t)
	return tb, func(typ string) throughput.ID {
		t.Helper()
		id, err := tb.Resolve(typ, 1)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}
