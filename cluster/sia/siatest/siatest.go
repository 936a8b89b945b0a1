// Package siatest loads Sia's benchmark for tests from ../shared/sia
// beside the checkout (or $INLAY_SIA): a missing folder skips the test,
// unless INLAY_REQUIRE_ASSETS=1 (make test), when it fails it with one
// line saying how to get it.
package siatest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/sia"
	"github.com/inlay-dev/inlay/internal/assets"
)

// Dir is the benchmark's folder: $INLAY_SIA, else shared/sia beside the
// checkout that holds the working directory.
func Dir() string {
	if d := os.Getenv("INLAY_SIA"); d != "" {
		return d
	}
	root, err := assets.ModuleRoot()
	if err != nil {
		return sia.DefaultDir
	}
	return filepath.Join(root, sia.DefaultDir)
}

// Load loads the benchmark or skips (fails under make test).
func Load(t testing.TB) *sia.Bench {
	t.Helper()
	b, err := sia.Load(Dir())
	if err != nil {
		assets.Missing(t, err.Error())
	}
	return b
}

// PhillyJobs is the benchmark's cluster, its goodput models and the first
// n jobs of Philly's workload-1.csv on it as adaptive jobs (n ≤ 0 or over
// the workload's size: every job), their kind forced where force is not
// nil.
func PhillyJobs(t testing.TB, b *sia.Bench, n int, force *adapt.Kind) (*adapt.Cluster, map[string]*goodput.Model, []adapt.Job) {
	t.Helper()
	cl := adapt.FromSia(b.Cluster)
	models, err := adapt.Models(b, b.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	_, ws, err := b.Workloads("philly")
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 || n > len(ws[0]) {
		n = len(ws[0])
	}
	js, err := adapt.Jobs("workload-1.csv", ws[0][:n], models, cl, force, 1)
	if err != nil {
		t.Fatal(err)
	}
	return cl, models, js
}
