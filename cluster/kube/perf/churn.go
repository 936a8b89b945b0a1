package perf

import (
	"context"
	"fmt"
	"sync"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// churner sets a share of the nodes NotReady, as the node-lifecycle
// controller does when heartbeats stop (the Ready condition False and the
// not-ready NoSchedule taint), and Ready again later.
type churner struct {
	cs       kubernetes.Interface
	w        *watcher
	names    []string
	on       map[string]bool
	done     chan error
	mu       sync.Mutex
	down, up time.Time
}

// pick chooses every k-th node so that share of them churn.
func (c *churner) pick(plat *chw.Platform, share float64) {
	n := max(1, int(share*float64(len(plat.Nodes))))
	step := max(1, len(plat.Nodes)/n)
	c.on = map[string]bool{}
	for i := 0; i < len(plat.Nodes) && len(c.names) < n; i += step {
		name := nodes.NodeName(plat.Nodes[i].Name)
		c.names = append(c.names, name)
		c.on[name] = true
	}
}

func (c *churner) enabled() bool { return len(c.names) > 0 }

// start takes the nodes down now and brings them back after d, in the
// background; wait returns when they are back.
func (c *churner) start(ctx context.Context, d time.Duration) {
	c.done = make(chan error, 1)
	go func() {
		if err := c.setAll(ctx, false); err != nil {
			c.done <- err
			return
		}
		c.mu.Lock()
		c.down = time.Now()
		c.mu.Unlock()
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		// Bring them back even when the run's time is up.
		err := c.setAll(context.WithoutCancel(ctx), true)
		c.mu.Lock()
		c.up = time.Now()
		c.mu.Unlock()
		c.done <- err
	}()
}

func (c *churner) wait(ctx context.Context) error {
	if c.done == nil {
		return nil
	}
	select {
	case err := <-c.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *churner) setAll(ctx context.Context, ready bool) error {
	return parallel(ctx, len(c.names), 16, func(i int) error { return setReady(ctx, c.cs, c.names[i], ready) }, nil)
}

// setReady sets a node's Ready condition and the not-ready taint.
func setReady(ctx context.Context, cs kubernetes.Interface, name string, ready bool) error {
	taint := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		status, reason := corev1.ConditionTrue, "Bench"
		if !ready {
			status, reason = corev1.ConditionFalse, "BenchChurn"
		}
		now := metav1.Now()
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i].Status, n.Status.Conditions[i].Reason = status, reason
				n.Status.Conditions[i].LastTransitionTime, n.Status.Conditions[i].LastHeartbeatTime = now, now
			}
		}
		n, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		var taints []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != taint.Key {
				taints = append(taints, t)
			}
		}
		if !ready {
			taints = append(taints, taint)
		}
		n.Spec.Taints = taints
		_, err = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s ready=%v: %w", name, ready, err)
	}
	return nil
}

// figures fills a run's churn figures: pods bound to the nodes while they
// were down (from a second after the last was marked, a grace for
// bindings decided before), the time from their return to the first pod
// bound on one of them, and the pods bound anywhere after their return
// and the time to the last of those.
func (c *churner) figures(r *Run) {
	if !c.enabled() || c.down.IsZero() {
		return
	}
	c.mu.Lock()
	down, up := c.down, c.up
	c.mu.Unlock()
	r.ChurnNodes = len(c.names)
	r.BoundToNotReady, _ = c.w.boundOn(c.on, down.Add(time.Second), up)
	r.ChurnRecoverySeconds = -1
	if up.IsZero() {
		return
	}
	if n, first := c.w.boundOn(c.on, up, time.Time{}); n > 0 {
		r.ChurnRecoverySeconds = first.Sub(up).Seconds()
	}
	var last time.Time
	if r.ChurnBoundAfter, last = c.w.boundAfter(up); r.ChurnBoundAfter > 0 {
		r.ChurnSettleSeconds = last.Sub(up).Seconds()
	}
}
