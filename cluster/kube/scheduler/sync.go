package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	"golang.org/x/time/rate"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
)

// desired is a snapshot of a Job's state for a worker.
type desired struct {
	known, done, run bool
	invalid          string
	spec             jobspec.Spec
	uid              types.UID
	slots            []string
	gpu              string
	rounds, preempt  int
	est              float64
	queuedAt         time.Time
	finishedSeen     time.Time
	publish          bool
	state            string
	decidedAt        time.Time
	// pods and batchOn: an adaptive Job's parallelism and each slot
	// node's local batch size (0 and nil otherwise).
	pods    int
	batchOn map[string]string
}

func (s *Scheduler) snapshot(key string) desired {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st[key]
	if st == nil {
		return desired{}
	}
	d := desired{known: true, done: st.done, run: st.run, invalid: st.invalid, spec: st.spec, uid: st.uid,
		slots: append([]string(nil), st.slots...), rounds: st.rounds, preempt: st.preempt, est: st.est,
		queuedAt: st.queuedAt, finishedSeen: st.finishedSeen, state: st.state, decidedAt: st.decidedAt}
	if st.run && st.gpu >= 0 {
		d.gpu = s.cfg.Table.GPUs()[st.gpu]
	}
	if st.ad != nil && st.run {
		d.gpu, d.pods, d.batchOn = st.alloc, st.ad.pods, maps.Clone(st.ad.batchOn)
	}
	if s.publishDue(st, time.Now()) {
		d.publish = true
	}
	return d
}

func (s *Scheduler) work(ctx context.Context) bool {
	key, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(key)
	again, err := s.sync(ctx, key)
	switch {
	case err != nil:
		s.log.Warn("sync failed; retrying", "job", key, "err", err)
		s.queue.AddRateLimited(key)
	case again > 0:
		s.queue.Forget(key)
		s.queue.AddAfter(key, again)
	default:
		s.queue.Forget(key)
	}
	return true
}

// sync reconciles one Job toward its desired state, one step at a time:
// an invalid Job is marked so, a finished one recorded, a stopped one
// suspended; a running one is moved off nodes the round does not want,
// resumed, its gang bound, and its progress published. It returns a delay
// after which to look again (waiting for pods to appear or go), or an
// error to retry with back-off. Every step writes only what differs from
// the Job it read, so running it twice does no harm.
func (s *Scheduler) sync(ctx context.Context, key string) (time.Duration, error) {
	d := s.snapshot(key)
	if !d.known {
		return 0, nil
	}
	j, err := s.currentJob(key, d)
	if j == nil || err != nil {
		return 0, err
	}
	switch {
	case d.invalid != "":
		return s.syncInvalid(ctx, j, d)
	case d.done:
		return s.syncFinished(ctx, j, d)
	}
	pods := s.gangPods(j)
	if err := s.reapLost(ctx, pods.terminating); err != nil {
		return 0, err
	}
	if !d.run {
		return s.syncStopped(ctx, j, d, pods)
	}
	if again, done, err := s.syncParallelism(ctx, j, d, pods); done {
		return again, err
	}
	if again, done, err := s.syncMisplaced(ctx, j, d, pods); done {
		return again, err
	}
	if again, done, err := s.syncResume(ctx, j, d, pods); done {
		return again, err
	}
	if len(pods.bound) < jobspec.Gang(j) {
		return s.syncBind(ctx, key, j, d, pods)
	}
	if err := s.syncBatch(ctx, d, pods.bound); err != nil {
		return 0, err
	}
	return s.syncRunning(ctx, key, j, d, pods)
}

// currentJob reads the Job from the cache: nil when it is gone or was
// replaced by another of the same name since the round.
func (s *Scheduler) currentJob(key string, d desired) (*batchv1.Job, error) {
	ns, name := splitKey(key)
	j, err := s.jobs.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || j.UID != d.uid {
		return nil, err
	}
	return j, nil
}

// podSet is a Job's live pods by where they stand.
type podSet struct {
	bound, unbound, terminating []*corev1.Pod
}

// gangPods sorts a Job's live pods into bound, unbound and terminating.
func (s *Scheduler) gangPods(j *batchv1.Job) podSet {
	var ps podSet
	for _, p := range s.jobPods(j) {
		switch {
		case p.DeletionTimestamp != nil:
			ps.terminating = append(ps.terminating, p)
		case p.Spec.NodeName != "":
			ps.bound = append(ps.bound, p)
		default:
			ps.unbound = append(ps.unbound, p)
		}
	}
	return ps
}

func suspended(j *batchv1.Job) bool { return j.Spec.Suspend != nil && *j.Spec.Suspend }

// baseAnnotations are the annotations every live Job carries: when it was
// queued.
func baseAnnotations(j *batchv1.Job, d desired) map[string]string {
	base := map[string]string{}
	if j.Annotations[jobspec.QueuedAtAnno] == "" {
		base[jobspec.QueuedAtAnno] = jobspec.FormatTime(d.queuedAt)
	}
	return base
}

// syncInvalid marks a Job whose annotations do not parse: its state
// annotation and the InlayInvalid condition say why.
func (s *Scheduler) syncInvalid(ctx context.Context, j *batchv1.Job, d desired) (time.Duration, error) {
	_, again, err := s.publish(ctx, j, publication{
		annos: map[string]string{jobspec.StateAnno: jobspec.Invalid, jobspec.ReasonAnno: d.invalid},
		cond:  InvalidCondition, status: corev1.ConditionTrue, reason: "InvalidAnnotation", msg: "inlay cannot schedule this Job: " + d.invalid})
	return again, err
}

// syncFinished records a Job's end: its rounds and preemptions, when it
// finished, and the InlayScheduled condition, with a Finished event once
// they are written.
func (s *Scheduler) syncFinished(ctx context.Context, j *batchv1.Job, d desired) (time.Duration, error) {
	_, ok := jobspec.Done(j)
	reason := "completed"
	if !ok {
		reason = "failed"
	}
	fin := d.finishedSeen
	if fin.IsZero() {
		fin = time.Now()
	}
	a := map[string]string{jobspec.StateAnno: jobspec.Finished, jobspec.ReasonAnno: reason,
		jobspec.RoundsAnno: strconv.Itoa(d.rounds), jobspec.PreemptionsAnno: strconv.Itoa(d.preempt)}
	if j.Annotations[jobspec.FinishedAtAnno] == "" {
		a[jobspec.FinishedAtAnno] = jobspec.FormatTime(fin)
	}
	msg := fmt.Sprintf("%s after %d rounds, %d preemptions", reason, d.rounds, d.preempt)
	wrote, again, err := s.publish(ctx, j, publication{annos: a,
		cond: ScheduledCondition, status: corev1.ConditionFalse, reason: "Finished", msg: msg})
	if wrote && j.Annotations[jobspec.StateAnno] != jobspec.Finished {
		s.rec.Eventf(j, corev1.EventTypeNormal, "Finished", "%s", msg)
	}
	return again, err
}

// syncStopped holds a Job the round does not run: suspended while it has
// pods bound, queued or preempted in its annotations and condition. It
// looks again while old pods are terminating.
func (s *Scheduler) syncStopped(ctx context.Context, j *batchv1.Job, d desired, pods podSet) (time.Duration, error) {
	state := jobspec.Queued
	if d.state == jobspec.Running || d.state == jobspec.Preempted || d.preempt > 0 {
		state = jobspec.Preempted
	}
	if len(pods.bound) > 0 {
		if err := s.suspend(ctx, j, d); err != nil {
			return 0, err
		}
	}
	base := baseAnnotations(j, d)
	base[jobspec.StateAnno] = state
	base[jobspec.RoundsAnno] = strconv.Itoa(d.rounds)
	base[jobspec.PreemptionsAnno] = strconv.Itoa(d.preempt)
	base[jobspec.EstimateAnno] = fmtSteps(d.est)
	reason, msg := "Queued", "waiting for GPUs"
	if state == jobspec.Preempted {
		reason, msg = "Preempted", "preempted at a round boundary; waiting for GPUs"
	}
	_, again, err := s.publish(ctx, j, publication{annos: base,
		cond: ScheduledCondition, status: corev1.ConditionFalse, reason: reason, msg: msg})
	if err != nil {
		return 0, err
	}
	if len(pods.terminating) > 0 {
		again = time.Second
	}
	return again, nil
}

// freeSlots is the round's slots (one node a pod) that the Job's bound
// pods do not fill, and whether a bound pod sits on a node the round does
// not want.
func freeSlots(d desired, bound []*corev1.Pod) (free []string, misplaced bool) {
	want := map[string]int{}
	for _, n := range d.slots {
		want[n]++
	}
	for _, p := range bound {
		if want[p.Spec.NodeName] == 0 {
			misplaced = true
		}
		want[p.Spec.NodeName]--
	}
	for n, c := range want {
		for ; c > 0; c-- {
			free = append(free, n)
		}
	}
	sort.Strings(free)
	return free, misplaced
}

// syncMisplaced moves a Job whose pods are bound where this round does
// not want them: it suspends the Job (its pods go) and looks again soon.
// done is false when nothing was misplaced.
func (s *Scheduler) syncMisplaced(ctx context.Context, j *batchv1.Job, d desired, pods podSet) (again time.Duration, done bool, err error) {
	if _, misplaced := freeSlots(d, pods.bound); !misplaced {
		return 0, false, nil
	}
	if err := s.suspend(ctx, j, d); err != nil {
		return 0, true, err
	}
	return 200 * time.Millisecond, true, nil
}

// suspend suspends a Job that is not suspended yet, with the decision's
// time.
func (s *Scheduler) suspend(ctx context.Context, j *batchv1.Job, d desired) error {
	if suspended(j) {
		return nil
	}
	if err := s.setSuspend(ctx, j, true, d.decidedAt); err != nil {
		return err
	}
	s.count(func(st *Stats) { st.Suspends++ })
	return nil
}

// syncResume resumes a suspended Job the round runs, once its old pods
// are gone, or at once when its whole gang is still bound where the round
// runs it (its pods were not deleted: a Job whose node went NotReady and
// came back, or whose controller had not acted on the suspension yet), so
// that it runs in place. done is false when the Job is not suspended.
func (s *Scheduler) syncResume(ctx context.Context, j *batchv1.Job, d desired, pods podSet) (again time.Duration, done bool, err error) {
	if !suspended(j) {
		return 0, false, nil
	}
	inPlace := boundInPlace(d, pods, jobspec.Gang(j))
	if !inPlace && len(pods.bound)+len(pods.terminating) > 0 {
		return 200 * time.Millisecond, true, nil // the old pods are going
	}
	if err := s.setSuspend(ctx, j, false, d.decidedAt); err != nil {
		return 0, true, err
	}
	s.count(func(st *Stats) { st.Resumes++ })
	if inPlace {
		s.rec.Eventf(j, corev1.EventTypeNormal, "Resumed", "resumed in place on %s", d.gpu)
	} else {
		s.rec.Eventf(j, corev1.EventTypeNormal, "Resumed", "resumed on %s", d.gpu)
	}
	return time.Second, true, nil
}

// boundInPlace reports whether a Job's whole gang is bound, none of its
// pods terminating, on exactly the round's slots.
func boundInPlace(d desired, pods podSet, gang int) bool {
	if gang == 0 || len(pods.bound) != gang || len(pods.terminating) > 0 {
		return false
	}
	free, misplaced := freeSlots(d, pods.bound)
	return len(free) == 0 && !misplaced
}

// syncBind binds the gang's unbound pods (every pod still to complete: a
// pod that succeeded before a preemption is not created again) to the
// round's free slots, all or none: it waits while the Job controller
// creates them, reserves the slots (reserve), then sends the Bindings,
// which carry the decision's time onto the pods.
func (s *Scheduler) syncBind(ctx context.Context, key string, j *batchv1.Job, d desired, pods podSet) (time.Duration, error) {
	gang := jobspec.Gang(j)
	if len(pods.bound)+len(pods.unbound) < gang {
		return time.Second, nil // the Job controller is creating pods
	}
	free, _ := freeSlots(d, pods.bound)
	unbound := slices.Clone(pods.unbound)
	sort.Slice(unbound, func(a, b int) bool { return unbound[a].Name < unbound[b].Name })
	need := gang - len(pods.bound)
	if len(free) < need {
		return 0, fmt.Errorf("%d pods to bind, %d slots", need, len(free))
	}
	toBind := unbound[:need]
	if ok, again := s.reserve(key, d, toBind, free[:need]); !ok {
		return again, nil
	}
	return 0, s.bindAll(ctx, j, toBind, free[:need], d.decidedAt, d.batchOn)
}

// bindAll sends the Bindings of pods to nodes (pods[i] to nodes[i]), in
// order, each carrying the decision's time (DecidedAtAnno) when known and,
// for an adaptive Job, the local batch size of its node (batchOn); on
// a failure the pod stays assumed for bindGrace (its binding may have been
// made) and the rest are withdrawn.
func (s *Scheduler) bindAll(ctx context.Context, j *batchv1.Job, pods []*corev1.Pod, nodes []string, decided time.Time, batchOn map[string]string) error {
	for i, p := range pods {
		var annos map[string]string
		if !decided.IsZero() {
			annos = map[string]string{DecidedAtAnno: jobspec.FormatTime(decided)}
		}
		if b, ok := batchOn[nodes[i]]; ok {
			if annos == nil {
				annos = map[string]string{}
			}
			annos[jobspec.BatchSizeAnno] = b
		}
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Annotations: annos},
			Target: corev1.ObjectReference{Kind: "Node", Name: nodes[i]}}
		s.requests.Add(1)
		err := s.cs.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{})
		if apierrors.IsConflict(err) {
			// Bound already: it stays assumed until the informer shows
			// where, and the next sync moves the Job if that is not where
			// this round wants it.
			s.log.Info("pod bound already", "pod", p.Namespace+"/"+p.Name, "node", nodes[i], "err", err)
			continue
		}
		if err != nil {
			s.expire(p, bindGrace)
			s.unassume(pods[i+1:])
			s.rec.Eventf(j, corev1.EventTypeWarning, "BindFailed", "pod %s to %s: %v", p.Name, nodes[i], err)
			return err
		}
		s.lastBind.Store(time.Now().UnixNano())
		s.count(func(st *Stats) { st.Binds++ })
	}
	return nil // the pods' updates bring the Job back to sync
}

// syncRunning publishes a running Job: its progress counts from when its
// whole gang runs (not from the binding), and its annotations and the
// InlayScheduled condition say where it runs.
func (s *Scheduler) syncRunning(ctx context.Context, key string, j *batchv1.Job, d desired, pods podSet) (time.Duration, error) {
	if runningSince(pods.bound, jobspec.Gang(j)) {
		now := time.Now()
		s.mu.Lock()
		if st := s.st[key]; st != nil && st.run && st.since.IsZero() {
			st.since = now
			if st.started.IsZero() {
				st.started = now
			}
		}
		s.mu.Unlock()
	}
	base := baseAnnotations(j, d)
	base[jobspec.StateAnno] = jobspec.Running
	base[jobspec.AllocatedAnno] = d.gpu
	if j.Annotations[jobspec.StartedAtAnno] == "" {
		base[jobspec.StartedAtAnno] = jobspec.FormatTime(time.Now())
	}
	if d.publish || j.Annotations[jobspec.StateAnno] != jobspec.Running {
		base[jobspec.RoundsAnno] = strconv.Itoa(d.rounds)
		base[jobspec.PreemptionsAnno] = strconv.Itoa(d.preempt)
		base[jobspec.EstimateAnno] = fmtSteps(d.est)
	}
	_, again, err := s.publish(ctx, j, publication{annos: base,
		cond: ScheduledCondition, status: corev1.ConditionTrue, reason: "Allocated", msg: fmt.Sprintf("%d GPUs of %s", d.spec.GPUs, d.gpu)})
	return again, err
}

// runningSince reports whether the gang's pods are all bound and Running.
func runningSince(bound []*corev1.Pod, gang int) bool {
	if gang == 0 || len(bound) < gang {
		return false
	}
	for _, p := range bound {
		if p.Status.Phase != corev1.PodRunning {
			return false
		}
	}
	return true
}

func fmtSteps(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func (s *Scheduler) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

func splitKey(key string) (string, string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}

// jobPods lists a Job's live pods (terminal ones left out).
func (s *Scheduler) jobPods(j *batchv1.Job) []*corev1.Pod {
	objs, _ := s.podIx.ByIndex(podsByJob, j.Namespace+"/"+j.Name)
	var out []*corev1.Pod
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if jobspec.Live(p) && jobspec.OwnedBy(p, j.UID) {
			out = append(out, p)
		}
	}
	return out
}

// reapLost force-deletes terminating pods whose node is gone or NotReady:
// no kubelet will confirm their end, and the gang cannot restart before.
func (s *Scheduler) reapLost(ctx context.Context, pods []*corev1.Pod) error {
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		n, err := s.nodes.Get(p.Spec.NodeName)
		if err == nil && nodes.Ready(n) {
			continue
		}
		zero := int64(0)
		s.requests.Add(1)
		err = s.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// reserve decides, under mu, to bind pods to nodes (pods[i] to
// nodes[i]): only while the Job's desired state is still the one synced
// (a round since may have preempted it or given its nodes to another Job,
// and the worker would bind a gang that the round no longer wants), and
// only where all of them fit beside the pods bound there and those whose
// binding is in flight. The reserved pods count as bound until the
// informer shows them so (fits), or unassume withdraws them. It returns
// false, and when to look again, when the gang is not to be bound now.
func (s *Scheduler) reserve(key string, d desired, pods []*corev1.Pod, nodes []string) (bool, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.st[key]; st == nil || !st.run || st.uid != d.uid || !slices.Equal(st.slots, d.slots) {
		s.log.Debug("gang not bound: the round changed its mind", "job", key)
		return false, 0 // the round that changed it queued the Job again
	}
	for _, p := range pods {
		if s.stillAssumed(p.UID) {
			// Its binding is made or in flight, not yet seen.
			s.log.Debug("gang not bound: a pod's binding not seen yet", "job", key, "pod", p.Name)
			return false, 100 * time.Millisecond
		}
	}
	byNode := map[string][]*corev1.Pod{}
	var order []string
	for i, p := range pods {
		if byNode[nodes[i]] == nil {
			order = append(order, nodes[i])
		}
		byNode[nodes[i]] = append(byNode[nodes[i]], p)
	}
	for _, n := range order {
		if why := s.fits(n, byNode[n]); why != "" {
			s.log.Debug("gang not bound: no room", "job", key, "node", n, "why", why)
			return false, 100 * time.Millisecond // capacity frees as old pods end
		}
	}
	for i, p := range pods {
		s.assume(p.UID, assumedPod{ns: p.Namespace, name: p.Name, node: nodes[i], req: jobspec.PodRequests(&p.Spec)})
	}
	return true, 0
}

// assume records a pod as assumed on its node (under mu).
func (s *Scheduler) assume(uid types.UID, a assumedPod) {
	s.forget(uid)
	s.assumed[uid] = a
	if s.assumedOn == nil {
		s.assumedOn = map[string]map[types.UID]struct{}{}
	}
	on := s.assumedOn[a.node]
	if on == nil {
		on = map[types.UID]struct{}{}
		s.assumedOn[a.node] = on
	}
	on[uid] = struct{}{}
}

// forget drops a pod's assumption (under mu).
func (s *Scheduler) forget(uid types.UID) {
	a, ok := s.assumed[uid]
	if !ok {
		return
	}
	delete(s.assumed, uid)
	if on := s.assumedOn[a.node]; on != nil {
		delete(on, uid)
		if len(on) == 0 {
			delete(s.assumedOn, a.node)
		}
	}
}

// bindGrace is how long a pod whose Binding failed stays assumed: the
// binding may have been made all the same, and the informer shows it
// within that time if so.
const bindGrace = 10 * time.Second

// stillAssumed reports whether a pod is assumed and not yet seen bound,
// gone or expired; it forgets the assumption otherwise (under mu).
func (s *Scheduler) stillAssumed(uid types.UID) bool {
	a, ok := s.assumed[uid]
	if !ok {
		return false
	}
	p, err := s.pods.Pods(a.ns).Get(a.name)
	if err != nil || p.UID != uid || p.Spec.NodeName != "" || !jobspec.Live(p) || (!a.expires.IsZero() && time.Now().After(a.expires)) {
		// Seen bound (the informer counts it where it is), gone, or
		// its failed binding not made after all.
		s.forget(uid)
		return false
	}
	return true
}

// expire gives the assumption of a pod whose Binding failed a deadline.
func (s *Scheduler) expire(p *corev1.Pod, after time.Duration) {
	s.mu.Lock()
	if a, ok := s.assumed[p.UID]; ok {
		a.expires = time.Now().Add(after)
		s.assumed[p.UID] = a
	}
	s.mu.Unlock()
}

// unassume withdraws reservations whose Binding was not sent.
func (s *Scheduler) unassume(pods []*corev1.Pod) {
	s.mu.Lock()
	for _, p := range pods {
		s.forget(p.UID)
	}
	s.mu.Unlock()
}

// fits checks that pods fit on node beside the pods already there (bound
// in the informer's view, or assumed), and tolerate its taints; it returns
// why not, or "" (under mu: it forgets the assumptions that the informer
// has caught up with, or that expired).
func (s *Scheduler) fits(node string, pods []*corev1.Pod) string {
	n, err := s.nodes.Get(node)
	if err != nil {
		return "node gone"
	}
	if !nodes.Ready(n) || n.Spec.Unschedulable {
		return "node not ready"
	}
	for _, p := range pods {
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectPreferNoSchedule {
				continue
			}
			ok := false
			for _, tol := range p.Spec.Tolerations {
				if tol.ToleratesTaint(&t) {
					ok = true
				}
			}
			if !ok {
				return "taint " + t.Key
			}
		}
	}
	var used jobspec.Requests
	count := 0
	objs, _ := s.podIx.ByIndex(podsByNode, node)
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if !jobspec.Live(p) {
			continue
		}
		used.Add(jobspec.PodRequests(&p.Spec))
		count++
	}
	for uid := range s.assumedOn[node] {
		a := s.assumed[uid]
		if !s.stillAssumed(uid) {
			continue
		}
		used.Add(a.req)
		count++
	}
	for _, p := range pods {
		used.Add(jobspec.PodRequests(&p.Spec))
		count++
	}
	al := n.Status.Allocatable
	cpu, mem, podsQ := al[corev1.ResourceCPU], al[corev1.ResourceMemory], al[corev1.ResourcePods]
	switch {
	case used.GPUs > int64(nodes.GPUs(n)):
		return "GPUs"
	case used.MilliCPU > float64(cpu.MilliValue()):
		return "CPU"
	case used.Memory > mem.Value():
		return "memory"
	case int64(count) > podsQ.Value():
		return "pods"
	}
	return ""
}

// setSuspend suspends or resumes a Job, writing the time of the round that
// decided it (DecidedAtAnno) in the same patch when known.
func (s *Scheduler) setSuspend(ctx context.Context, j *batchv1.Job, v bool, decided time.Time) error {
	var a map[string]string
	if !decided.IsZero() {
		a = map[string]string{DecidedAtAnno: jobspec.FormatTime(decided)}
	}
	return s.patch(ctx, j, map[string]any{"suspend": v}, a)
}

// patch merges spec fields and annotations into a Job in one request.
func (s *Scheduler) patch(ctx context.Context, j *batchv1.Job, spec map[string]any, annos map[string]string) error {
	body := map[string]any{}
	if spec != nil {
		body["spec"] = spec
	}
	if annos != nil {
		body["metadata"] = map[string]any{"annotations": annos}
	}
	patch, _ := json.Marshal(body)
	s.requests.Add(1)
	_, err := s.cs.BatchV1().Jobs(j.Namespace).Patch(ctx, j.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// Conditions the scheduler writes on a Job's status, through the
// jobs/status subresource as a strategic merge by condition type: the Job
// controller's own conditions (Suspended, Complete, ...) stay as they are,
// and the Job controller keeps these, since it updates the status it read
// (an update over a status changed since fails, and it reads again).
const (
	// InvalidCondition is True on a Job whose inlay annotations do not
	// parse, with reason InvalidAnnotation and a message that names the
	// annotation and says what is wrong with it.
	InvalidCondition batchv1.JobConditionType = "InlayInvalid"
	// ScheduledCondition says whether the Job's gang holds GPUs: True
	// with reason Allocated while it runs (the message names the GPU
	// type), False with reason Queued or Preempted while it waits, and
	// Finished once it ended.
	ScheduledCondition batchv1.JobConditionType = "InlayScheduled"
)

// publication is what a sync publishes of a Job: its annotations (those
// that differ are written; their state annotation is recorded once
// written) and one condition.
type publication struct {
	annos       map[string]string
	cond        batchv1.JobConditionType
	status      corev1.ConditionStatus
	reason, msg string
}

// publish writes what differs of p in one request, within the
// publication budget (Config.PublishRate): the annotations, and the
// condition unless it already says the same (its transition time stays
// while its status does not change). wrote reports a write; again > 0
// that the budget is spent and nothing was written, to look again then.
func (s *Scheduler) publish(ctx context.Context, j *batchv1.Job, p publication) (wrote bool, again time.Duration, err error) {
	diff := map[string]string{}
	for k, v := range p.annos {
		if j.Annotations[k] != v {
			diff[k] = v
		}
	}
	c := conditionChange(j, p.cond, p.status, p.reason, p.msg)
	if len(diff) == 0 && c == nil {
		s.published(j, p.annos[jobspec.StateAnno])
		return false, 0, nil
	}
	r := s.publicationBudget().Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return false, d, nil
	}
	if c == nil {
		err = s.patch(ctx, j, nil, diff)
	} else {
		err = s.patchStatus(ctx, j, diff, c)
	}
	if err != nil {
		return false, 0, err
	}
	s.published(j, p.annos[jobspec.StateAnno])
	return true, 0, nil
}

// bindingBusy is how long after a Binding the scheduler counts as
// binding gangs, and publishes within its busy budget.
const bindingBusy = time.Second

// publicationBudget is the limiter a publication waits for: the busy
// budget while gangs are being bound, else the full one.
func (s *Scheduler) publicationBudget() *rate.Limiter {
	if time.Since(time.Unix(0, s.lastBind.Load())) < bindingBusy {
		return s.pubBusy
	}
	return s.pubLimit
}

// conditionChange is the condition to write on the Job, or nil when it
// already says the same.
func conditionChange(j *batchv1.Job, typ batchv1.JobConditionType, status corev1.ConditionStatus, reason, msg string) *batchv1.JobCondition {
	now := metav1.Now()
	c := batchv1.JobCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastProbeTime: now, LastTransitionTime: now}
	for _, o := range j.Status.Conditions {
		if o.Type != typ {
			continue
		}
		if o.Status == status && o.Reason == reason && o.Message == msg {
			return nil
		}
		if o.Status == status {
			c.LastTransitionTime = o.LastTransitionTime
		}
	}
	return &c
}

// patchStatus writes a condition through the jobs/status subresource as a
// strategic merge by condition type (the Job controller's own conditions
// stay, and it keeps these: it updates the status it read, and an update
// over a status changed since fails and reads again), with the annotations
// in the same request: the API server's Job status strategy resets only
// the spec. Should a server drop them, they go in a patch of their own,
// then and from then on.
func (s *Scheduler) patchStatus(ctx context.Context, j *batchv1.Job, annos map[string]string, c *batchv1.JobCondition) error {
	body := map[string]any{"status": map[string]any{"conditions": []batchv1.JobCondition{*c}}}
	together := len(annos) > 0 && !s.metaNotViaStatus.Load()
	if together {
		body["metadata"] = map[string]any{"annotations": annos}
	}
	patch, _ := json.Marshal(body)
	s.requests.Add(1)
	out, err := s.cs.BatchV1().Jobs(j.Namespace).Patch(ctx, j.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil || len(annos) == 0 {
		return err
	}
	if together {
		kept := out != nil
		for k, v := range annos {
			kept = kept && out.Annotations[k] == v
		}
		if kept {
			return nil
		}
		if !s.metaNotViaStatus.Swap(true) {
			s.log.Info("the API server drops annotations sent through jobs/status; they go apart from now on")
		}
	}
	return s.patch(ctx, j, nil, annos)
}

func (s *Scheduler) published(j *batchv1.Job, state string) {
	s.mu.Lock()
	if st := s.st[j.Namespace+"/"+j.Name]; st != nil {
		st.state = state
		st.lastPub = s.round
		st.lastPubAt = time.Now()
	}
	s.mu.Unlock()
}
