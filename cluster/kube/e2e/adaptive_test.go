package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/kube/replay"
	"github.com/inlay-dev/inlay/cluster/kube/scheduler"
	"github.com/inlay-dev/inlay/cluster/kube/vclock"
	"github.com/inlay-dev/inlay/cluster/policy/adaptreg"
	"github.com/inlay-dev/inlay/cluster/sched"
	"github.com/inlay-dev/inlay/cluster/sia/siatest"
)

// siaTaint keeps the Sia cluster's nodes to the adaptive replay: only its
// pods tolerate it (the other tests' schedulers leave the nodes alone).
const siaTaint = "inlay.dev/sia"

// siaNodes creates Sia's 64-GPU cluster as KWOK nodes, labelled with
// their GPU type and tainted with siaTaint.
func siaNodes(t *testing.T, ctx context.Context, cs kubernetes.Interface, c *adapt.Cluster) {
	t.Helper()
	var names []string
	for _, typ := range c.Types {
		for i := range typ.Nodes {
			name := fmt.Sprintf("sia-%s-%d", typ.Name, i)
			names = append(names, name)
			res := corev1.ResourceList{
				nodes.GPUResource:     *resource.NewQuantity(int64(typ.PerNode), resource.DecimalSI),
				corev1.ResourceCPU:    resource.MustParse("64"),
				corev1.ResourceMemory: resource.MustParse("512Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			}
			n := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: name,
					Labels: map[string]string{"kubernetes.io/hostname": name, "type": "kwok", nodes.TypeLabel: typ.Name,
						"nvidia.com/gpu.count": strconv.Itoa(typ.PerNode)},
					Annotations: map[string]string{nodes.KWOKAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"}},
				Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: siaTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
				Status: corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()},
			}
			if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
	}
	for _, name := range names {
		for {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err == nil && nodes.Ready(n) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("node %s not Ready: %v", name, ctx.Err())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestAdaptiveReplay replays the first INLAY_E2E_ADAPT_JOBS jobs (default
// all 160; a 40-job prefix moved around the 10 % line from run to run, the
// whole workload did not) of Sia's Philly workload-1 on Sia's 64-GPU cluster (three GPU types,
// KWOK nodes) under inlay's scheduler running inlay's adaptive policy on
// the lockstep clock, and simulates the same jobs (adapt.Simulate): the
// decisions are the simulator's (adapt.Mechanism), carried out by
// suspending, resizing and resuming Indexed Jobs with each pod's batch
// size on its Binding; the replay's average JCT is within 10 % of the
// simulator's.
func TestAdaptiveReplay(t *testing.T) {
	e := setup(t)
	b := siatest.Load(t)
	n := 0 // every job of the workload
	if s := os.Getenv("INLAY_E2E_ADAPT_JOBS"); s != "" {
		fmt.Sscan(s, &n)
	}
	speedup := 300.0
	if s := os.Getenv("INLAY_E2E_ADAPT_SPEEDUP"); s != "" {
		fmt.Sscan(s, &speedup)
	}
	polName := "inlay"
	if s := os.Getenv("INLAY_E2E_ADAPT_POLICY"); s != "" {
		polName = s
	}
	mixed := os.Getenv("INLAY_E2E_ADAPT_MIXED") == "1"
	cl, models, jobs := siatest.PhillyJobs(t, b, n, nil)
	t0 := jobs[0].Arrival
	for i := range jobs {
		jobs[i].Arrival -= t0
	}
	fac, err := adaptreg.Lookup(polName)
	if err != nil {
		t.Fatal(err)
	}
	const round = 60.0
	split := goodput.Proportional
	sr, err := adapt.Simulate(context.Background(), adapt.Config{Cluster: cl, Round: round, Mixed: mixed, Split: split}, jobs, fac.New(adaptreg.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	run := "adaptive" + strconv.Itoa(n)
	cleanRuns(t, e.cs, run)
	limit := max(25*time.Minute, time.Duration(n)*12*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), limit+time.Minute)
	defer cancel()
	siaNodes(t, ctx, e.cs, cl)
	clock, err := vclock.New(speedup)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ty := range cl.Types {
		types = append(types, ty.Name)
	}
	level := slog.LevelWarn
	if v := os.Getenv("INLAY_E2E_LOG"); v != "" {
		_ = level.UnmarshalText([]byte(v))
	}
	s, err := scheduler.New(scheduler.Config{Client: e.cs, Queue: run, Sched: sched.Config{Round: round}, TolerateTaints: []string{siaTaint}, Clock: clock,
		Adaptive: &scheduler.Adaptive{Policy: fac.New(adaptreg.Options{}), Models: models, Types: types, Mixed: mixed, Split: split},
		Log:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(sctx) }()
	wall := time.Now()
	res, err := replay.RunAdaptive(ctx, replay.AdaptiveConfig{Client: e.cs, Jobs: jobs, Types: types, Split: split, Clock: clock,
		Namespace: "default", Queue: run, Run: run, Tolerate: siaTaint, Timeout: limit, Progress: progress(t)})
	elapsed := time.Since(wall)
	endReplay(t, stop, done, err)
	st := s.Stats()
	ratio := res.AvgJCT / sr.AvgJCT
	t.Logf("%s, %d Philly jobs (workload-1), mixed %v: avg JCT replay %.3f h, simulator %.3f h, ratio %.3f; restarts a job %.2f vs %.2f; wall %.0f s, clock held %.0f s (speedup %g); scheduler: %d rounds, %d binds, %d suspends, %d resumes",
		polName, len(jobs), mixed, res.AvgJCT, sr.AvgJCT, ratio, res.RestartsPerJob, sr.RestartsPerJob, elapsed.Seconds(), clock.Held().Seconds(), speedup, st.Rounds, st.Binds, st.Suspends, st.Resumes)
	if res.Unfinished != 0 {
		t.Errorf("%d jobs unfinished", res.Unfinished)
	}
	if math.Abs(ratio-1) > 0.10 {
		t.Errorf("replay's average JCT %.3f h is %.1f %% off the simulator's %.3f h (want within 10 %%)", res.AvgJCT, 100*(ratio-1), sr.AvgJCT)
	}
}
