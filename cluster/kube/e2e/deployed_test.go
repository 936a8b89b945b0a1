package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cluster/kube/manifests"
	"github.com/inlay-dev/inlay/cluster/kube/replay"
	"github.com/inlay-dev/inlay/internal/syncbuf"
)

// TestDeployedScheduler runs the scheduler as a cluster runs it: the
// manifests applied server-side (setup; again here, which must change
// nothing), the inlay-scheduler binary built from cmd/inlay-scheduler and
// started with the Deployment's own arguments under the ServiceAccount's
// token, so that the RBAC that ships is the RBAC tested: a verb the
// ClusterRole lacks fails the test (a forbidden request in the
// scheduler's log, or a job that never finishes).
func TestDeployedScheduler(t *testing.T) {
	e := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if err := manifests.Apply(ctx, e.cs, false); err != nil {
		t.Fatalf("applying the manifests a second time: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "inlay-scheduler")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/inlay-dev/inlay/cmd/inlay-scheduler")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/inlay-scheduler: %v\n%s", err, out)
	}
	d, err := manifests.Deployment()
	if err != nil {
		t.Fatal(err)
	}
	const run, speedup = "deployed", 1500.0
	cleanRuns(t, e.cs, run)
	args := append([]string(nil), d.Spec.Template.Spec.Containers[0].Args...)
	// The Deployment's arguments, with the test's kubeconfig (the
	// ServiceAccount's token, as in the pod), queue, time compression and
	// a lease of its own.
	args = append(args, "--kubeconfig", saKubeconfig(t, ctx, e), "--queue", run, "--speedup", "1500", "--lease-namespace", "inlay-system")
	proc := exec.CommandContext(ctx, bin, args...)
	var logs syncbuf.Buffer // the process writes it while the test reads it
	proc.Stderr = &logs
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = proc.Process.Signal(os.Interrupt)
		_ = proc.Wait()
		if t.Failed() {
			t.Logf("scheduler log:\n%s", logs.String())
		}
	}()
	jobs := trace(t, e, 20, 40, 20, 3)
	res, err := replay.Run(ctx, replay.Config{Client: e.cs, Jobs: jobs, Table: e.table, Cluster: e.plat, Speedup: speedup,
		Namespace: "default", Queue: run, Run: run, Policy: "gavel", Timeout: 5 * time.Minute, Progress: progress(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unfinished != 0 {
		t.Errorf("%d of %d jobs unfinished under the deployed scheduler", res.Unfinished, len(jobs))
	}
	account(t, e.cs, "default", run, jobs)
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "forbidden") || strings.Contains(line, "Forbidden") {
			t.Errorf("the ServiceAccount lacks a permission: %s", line)
		}
	}
}
