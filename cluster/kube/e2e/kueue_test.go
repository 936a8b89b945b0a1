package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cluster/kube/kueue"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/kube/replay"
	"github.com/inlay-dev/inlay/internal/assets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// TestReplayKueue (INLAY_E2E_KUEUE=1, make e2e-kube) replays TestReplay's
// trace through Kueue: the Jobs are created suspended in a LocalQueue,
// Kueue admits each by quota to the first GPU type (ResourceFlavor) with
// room for all its pods and resumes it with that type's node selector, and
// the default kube-scheduler places the pods. Every job must finish once,
// and every Job must have been admitted by Kueue (a finished Workload, and
// the flavor's node selector on its pods); the JCT is logged beside the
// simulator's gavel on the same trace (docs/results/cluster-kubernetes.md).
func TestReplayKueue(t *testing.T) {
	if os.Getenv("INLAY_E2E_KUEUE") != "1" {
		t.Skip("runs under make e2e-kube (INLAY_E2E_KUEUE=1)")
	}
	e := setup(t)
	if _, err := e.cp.KueueCRDs(); err != nil {
		assets.Missing(t, err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := kueue.Install(ctx, e.cp); err != nil {
		t.Fatal(err)
	}
	if err := kueue.Queues(ctx, e.cp.Config, e.plat, "default", "kueue"); err != nil {
		t.Fatal(err)
	}
	// Kueue runs every admitted job to its end with no time sharing, so
	// it may take longer than gavel: four times the simulator's makespan.
	// On the lockstep clock the replayer holds the clock while an admitted
	// Job's pods are on their way (as for the default scheduler alone);
	// Kueue's own admission time, a suspended Job waiting to be resumed,
	// counts as queueing.
	res, _, jobs := externalReplay(t, e, "kueue200", "kueue", 4, func(c *replay.Config) {
		c.Queue, c.Labels, c.Suspend = "kueue", map[string]string{kueue.QueueLabel: "kueue"}, true
	})
	if res.Unfinished != 0 {
		t.Errorf("%d jobs unfinished", res.Unfinished)
	}
	account(t, e.cs, "default", "kueue200", jobs)

	// Kueue admitted them: one finished Workload per Job, and the pods of
	// each carry the node selector of the flavor it was admitted to.
	dyn, err := dynamic.NewForConfig(e.cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	wls, err := dyn.Resource(schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta1", Resource: "workloads"}).Namespace("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	finished := 0
	flavors := map[string]int{}
	for _, w := range wls.Items {
		if !strings.HasPrefix(w.GetName(), "job-kueue200-") {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Finished" && m["status"] == "True" {
				finished++
			}
		}
		psa, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
		for _, a := range psa {
			m, _ := a.(map[string]any)
			fl, _, _ := unstructured.NestedStringMap(m, "flavors")
			flavors[fl["nvidia.com/gpu"]]++
		}
	}
	if finished != len(jobs) {
		t.Errorf("%d finished Kueue Workloads for run kueue200, want %d", finished, len(jobs))
	}
	pods, err := e.cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: replay.RunLabel + "=kueue200"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeSelector[nodes.TypeLabel] == "" {
			t.Errorf("pod %s: no %s node selector (not admitted through a flavor)", p.Name, nodes.TypeLabel)
			break
		}
	}
	t.Logf("kueue: admissions by flavor %v", flavors)
}
