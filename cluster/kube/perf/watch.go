package perf

import (
	"context"
	"maps"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	chw "github.com/inlay-dev/inlay/cluster/hw"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// watcher follows a run's pods through an informer: when each was
// created (as the creator sent it), when it was seen bound and where, and
// any change of node (a pod bound twice).
type watcher struct {
	mu      sync.Mutex
	created map[string]time.Time // pod name, or Job name in Jobs mode
	pods    map[string]*podSeen
	changed int      // pods whose node changed
	gone    []string // pods deleted during the run
	cond    *sync.Cond
	nBound  int
	stopCh  chan struct{}
	inf     cache.SharedIndexInformer
}

type podSeen struct {
	job   string // owning Job ("" for a bare pod)
	node  string
	bound time.Time
	gpus  int
}

func watchPods(ctx context.Context, cs kubernetes.Interface, ns string) (*watcher, error) {
	w := &watcher{created: map[string]time.Time{}, pods: map[string]*podSeen{}, stopCh: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	fac := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	w.inf = fac.Core().V1().Pods().Informer()
	_, err := w.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.see(o) },
		UpdateFunc: func(_, o any) { w.see(o) },
		DeleteFunc: func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			if p, ok := o.(*corev1.Pod); ok {
				w.mu.Lock()
				w.gone = append(w.gone, p.Name)
				w.mu.Unlock()
			}
		},
	})
	if err != nil {
		return nil, err
	}
	fac.Start(w.stopCh)
	if !cache.WaitForCacheSync(ctx.Done(), w.inf.HasSynced) {
		close(w.stopCh)
		return nil, ctx.Err()
	}
	return w, nil
}

func (w *watcher) stop() { close(w.stopCh) }

func (w *watcher) see(o any) {
	p, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	ps := w.pods[p.Name]
	if ps == nil {
		ps = &podSeen{gpus: int(jobspec.PodRequests(&p.Spec).GPUs)}
		for _, r := range p.OwnerReferences {
			if r.Kind == "Job" {
				ps.job = r.Name
			}
		}
		w.pods[p.Name] = ps
	}
	switch {
	case p.Spec.NodeName == "":
	case ps.node == "":
		ps.node, ps.bound = p.Spec.NodeName, now
		w.nBound++
		w.cond.Broadcast()
	case ps.node != p.Spec.NodeName:
		w.changed++
		ps.node = p.Spec.NodeName
	}
}

// sent records that the creation of pod (or Job) name was sent at t.
func (w *watcher) sent(name string, t time.Time) {
	w.mu.Lock()
	w.created[name] = t
	w.mu.Unlock()
}

// waitBound waits until n pods are bound or ctx ends.
func (w *watcher) waitBound(ctx context.Context, n int) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			w.mu.Lock()
			w.cond.Broadcast()
			w.mu.Unlock()
		case <-done:
		}
	}()
	defer close(done)
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.nBound < n && ctx.Err() == nil {
		w.cond.Wait()
	}
}

// boundOn counts the pods bound on the given nodes between from and to
// (zero: no end), and returns the first such binding's time.
func (w *watcher) boundOn(on map[string]bool, from, to time.Time) (n int, first time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ps := range w.pods {
		if ps.node == "" || !on[ps.node] || ps.bound.Before(from) || (!to.IsZero() && ps.bound.After(to)) {
			continue
		}
		n++
		if first.IsZero() || ps.bound.Before(first) {
			first = ps.bound
		}
	}
	return n, first
}

// boundAfter counts the pods bound after t, and returns the last such
// binding's time.
func (w *watcher) boundAfter(t time.Time) (n int, last time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ps := range w.pods {
		if ps.node == "" || !ps.bound.After(t) {
			continue
		}
		n++
		if ps.bound.After(last) {
			last = ps.bound
		}
	}
	return n, last
}

// figures computes a run's figures from what the watcher saw.
func (w *watcher) figures(cfg *Config, name string, plat *chw.Platform) *Run {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := &Run{Scheduler: name, Pods: cfg.Pods, BoundTwice: w.changed, Lost: len(w.gone)}
	var lat []float64
	var times []time.Time
	gpus := map[string]int{}
	perJob := map[string]int{}
	first := time.Time{}
	for _, t := range w.created {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	names := slices.Sorted(maps.Keys(w.pods))
	for _, n := range names {
		ps := w.pods[n]
		if ps.node == "" {
			continue
		}
		r.Bound++
		gpus[ps.node] += ps.gpus
		key := n
		if cfg.Jobs {
			key = ps.job
		}
		if ps.job != "" {
			perJob[ps.job]++
		}
		if c, ok := w.created[key]; ok {
			lat = append(lat, ps.bound.Sub(c).Seconds())
		}
		times = append(times, ps.bound)
	}
	for _, c := range perJob {
		if c > 1 {
			r.BoundTwice += c - 1 // a Job of one pod with several bound
		}
	}
	// A Job the Job controller made no pod for counts as pending.
	r.Pending = max(len(w.created)-r.Bound, 0)
	r.Overcommitted = overcommitted(plat, gpus)
	sort.Float64s(lat)
	r.P50BindSeconds, r.P99BindSeconds = quantile(lat, 0.5), quantile(lat, 0.99)
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	if n := len(times); n > 0 {
		r.WallSeconds = times[n-1].Sub(first).Seconds()
		lo, hi := int(0.1*float64(n)), int(math.Ceil(0.9*float64(n)))-1
		if span := times[hi].Sub(times[lo]).Seconds(); hi > lo && span > 0 {
			r.PodsPerSecond = float64(hi-lo) / span
		} else if r.WallSeconds > 0 {
			r.PodsPerSecond = float64(n) / r.WallSeconds
		}
	}
	return r
}
