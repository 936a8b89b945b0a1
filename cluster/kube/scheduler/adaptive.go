package scheduler

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inlay-dev/inlay/cluster/adapt"
	"github.com/inlay-dev/inlay/cluster/goodput"
	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
)

// Adaptive runs an adaptive policy (package adapt, the policies of
// cluster/policy/adaptreg) in place of Config.Policy and Config.Table.
// Each round is the simulator's step (adapt.Mechanism.Decide: the policy's
// decisions, checked and placed on servers); the scheduler carries a
// decision out on the Job: a new GPU count suspends it, patches its
// parallelism and completions (an Indexed Job, one GPU a pod) and resumes
// it; its pods are bound to the servers the mechanism chose, of one GPU
// type or several (a mixed-type gang), each Binding carrying the pod's
// share of the batch size (jobspec.BatchSizeAnno) onto the pod. A batch
// size that changes while the job keeps its pods is patched onto them.
//
// Between rounds the scheduler advances each job as the simulator does
// (adapt.Run.Advance: goodput, with the restart delay after a change) over
// the virtual time its gang ran; the Job's completion, not this estimate,
// finishes it, and the progress a stopped workload reports
// (jobspec.ProgressAnno) replaces the estimate.
type Adaptive struct {
	Policy adapt.Policy
	// Models are the jobs' models by name (inlay.dev/model).
	Models map[string]*goodput.Model
	// Types are the GPU types, in the order of the models' fits; a node's
	// type is read as for the throughput table (nodes.GPUType).
	Types []string
	Mixed bool
	Split goodput.Split
}

// adaptJob is a Job's state under an adaptive policy (under mu).
type adaptJob struct {
	spec jobspec.AdaptSpec
	job  adapt.Job
	run  *adapt.Run
	// last is the decision of the round that runs now, ok when it runs.
	last   adapt.Decision
	lastOK bool
	// pods is the parallelism the round wants; batchOn each slot node's
	// local batch size.
	pods    int
	batchOn map[string]string
}

// adaptView is the cluster an adaptive policy sees: the usable nodes of
// each type (sorted by name), one server each.
type adaptView struct {
	cluster *adapt.Cluster
	names   [][]string
	sig     string
}

// parseAdaptive reads a new Job's adaptive spec (under mu).
func (s *Scheduler) parseAdaptive(st *jobState, j *batchv1.Job) error {
	a := s.cfg.Adaptive
	spec, err := jobspec.ParseAdaptive(j, slices.Sorted(maps.Keys(a.Models)))
	if err != nil {
		return err
	}
	m := a.Models[spec.Model]
	batch := spec.Batch
	if batch == 0 {
		batch = m.Eff.M0
	}
	st.ad = &adaptJob{spec: spec, job: adapt.Job{ID: st.id, Name: st.key, Model: m, Arrival: s.virtual(st.queuedAt),
		GPUs: spec.GPUs, Batch: batch, Kind: spec.Kind}}
	st.ad.run = adapt.NewRun(&st.ad.job)
	if p, err := strconv.ParseFloat(j.Annotations[jobspec.ProgressAnno], 64); err == nil && p > 0 {
		st.ad.run.Progress = p
	}
	st.spec = jobspec.Spec{Pods: spec.GPUs, PerPod: 1, GPUs: spec.GPUs}
	st.added = true
	return nil
}

// adaptClusterView reads the usable nodes of the policy's GPU types
// (under mu). Nodes with GPUs held by pods the policy does not account
// for are left out: the mechanism's servers are whole.
func (s *Scheduler) adaptClusterView() *adaptView {
	a := s.cfg.Adaptive
	list, _ := s.nodes.List(labels.Everything())
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	v := &adaptView{cluster: &adapt.Cluster{}, names: make([][]string, len(a.Types))}
	per := make([]int, len(a.Types))
	var sig strings.Builder
	for _, n := range list {
		if !s.usable(n) || s.foreignGPUs(n.Name) > 0 {
			continue
		}
		t := slices.Index(a.Types, nodes.GPUType(n, a.Types))
		g := nodes.GPUs(n)
		if t < 0 || g <= 0 {
			continue
		}
		v.names[t] = append(v.names[t], n.Name)
		per[t] = max(per[t], g)
		fmt.Fprintf(&sig, "%s/%d/%d;", n.Name, t, g)
	}
	for t, name := range a.Types {
		v.cluster.Types = append(v.cluster.Types, adapt.Type{Name: name, PerNode: max(per[t], 1), Nodes: len(v.names[t])})
	}
	v.sig = sig.String()
	return v
}

// doAdaptRound accounts the round that ended and plans the next one under
// the adaptive policy (under mu).
func (s *Scheduler) doAdaptRound(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.timeRound(time.Now())
	a := s.cfg.Adaptive
	vnow := s.virtual(now)
	s.round++
	s.adaptAccount(vnow)
	v := s.adaptClusterView()
	if s.amech == nil {
		s.amech = &adapt.Mechanism{Round: s.cfg.Sched.Round, Mixed: a.Mixed, Split: a.Split, Policy: a.Policy}
	}
	if s.aview != nil && s.aview.sig != v.sig {
		// Servers are numbered anew: every job's placement is void.
		s.stats.Rebuilds++
		s.log.Info("cluster changed; placements read anew", "gpus", v.cluster.Total())
		for _, st := range s.st {
			if st.ad != nil {
				st.ad.run.Stop()
			}
		}
	}
	s.aview, s.amech.Cluster = v, v.cluster
	s.syncJobs(now)
	s.lastPlanV = vnow
	var active []*jobState
	for _, st := range s.sortedStates() {
		if st.added && !st.done && st.invalid == "" && st.ad != nil {
			active = append(active, st)
		}
	}
	if len(active) == 0 {
		s.idle = true
		return nil
	}
	s.idle = false
	runs := make([]*adapt.Run, len(active))
	for i, st := range active {
		runs[i] = st.ad.run
	}
	t0 := time.Now()
	ds, _, err := s.amech.Decide(ctx, vnow, runs)
	dt := time.Since(t0)
	s.stats.Rounds++
	s.stats.PolicyTime += dt
	s.stats.PolicyMax = max(s.stats.PolicyMax, dt)
	s.stats.MaxActive = max(s.stats.MaxActive, len(active))
	if err != nil {
		return err
	}
	s.running = 0
	for i, st := range active {
		s.adaptAssign(st, ds[i], now)
	}
	return nil
}

// adaptAccount advances every job that ran in the round that ended, as the
// simulator does, over the virtual time its gang ran (under mu).
func (s *Scheduler) adaptAccount(vnow float64) {
	for _, st := range s.sortedStates() {
		ad := st.ad
		if ad == nil || !st.added {
			continue
		}
		j, _ := s.jobs.Jobs(st.ns).Get(st.name)
		if !ad.lastOK {
			if j != nil && !st.run {
				if p, err := strconv.ParseFloat(j.Annotations[jobspec.ProgressAnno], 64); err == nil && p >= 0 {
					ad.run.Progress = p // a stopped job's checkpoint is the truth
				}
			}
			continue
		}
		from, to := s.lastPlanV, vnow
		if !st.finishedSeen.IsZero() {
			to = math.Min(to, s.virtual(st.finishedSeen))
		}
		if st.since.IsZero() {
			from = to // its gang never ran: the delay is still ahead
		} else {
			from = math.Max(from, s.virtual(st.since))
		}
		ad.run.Advance(from, math.Max(from, to), ad.last, s.cfg.Adaptive.Split)
		if ad.run.Done && !st.done {
			// Only the Job's completion finishes it.
			ad.run.Unfinish(1e-6)
		}
	}
}

// adaptAssign turns a job's decision into its desired state (under mu).
func (s *Scheduler) adaptAssign(st *jobState, d adapt.Decision, now time.Time) {
	ad := st.ad
	wasRunning := st.run
	if len(d.Alloc) == 0 {
		ad.run.Stop()
		ad.lastOK = false
		if wasRunning {
			st.preempt++
			s.stats.Preemptions++
			st.decidedAt = now
			s.event(st, corev1.EventTypeNormal, "Preempted", "round %d: preempted by policy %s", s.round, s.cfg.Adaptive.Policy.Name())
			s.queue.Add(st.key)
		}
		st.run, st.slots, st.since, ad.pods, ad.batchOn = false, nil, time.Time{}, 0, nil
		return
	}
	batch := ad.job.Batch
	if ad.job.Kind == adapt.Adaptive {
		batch = d.Batch
	}
	share := ad.job.Model.LocalBatches(d.Alloc, batch, goodput.Truth, s.cfg.Adaptive.Split)
	byType := map[int]string{}
	for i, p := range d.Alloc {
		byType[p.Type] = strconv.FormatFloat(share[i], 'f', -1, 64)
	}
	var slots []string
	batchOn := map[string]string{}
	for k, n := range ad.run.Placed() {
		name := s.aview.names[k[0]][k[1]]
		batchOn[name] = byType[k[0]]
		for range n {
			slots = append(slots, name)
		}
	}
	sort.Strings(slots)
	changed := ad.run.Changes(d)
	desc := describeAlloc(d.Alloc, s.cfg.Adaptive.Types)
	switch {
	case wasRunning && changed:
		st.preempt++
		s.stats.Preemptions++
		s.event(st, corev1.EventTypeNormal, "Moved", "round %d: now %s on %s, batch size %g", s.round, desc, strings.Join(uniq(slots), ","), batch)
		st.since, st.decidedAt = time.Time{}, now
	case !wasRunning:
		s.event(st, corev1.EventTypeNormal, "Allocated", "round %d: %s on %s, batch size %g", s.round, desc, strings.Join(uniq(slots), ","), batch)
		st.since, st.decidedAt = time.Time{}, now
	}
	sameBatch := maps.Equal(batchOn, ad.batchOn)
	ad.last, ad.lastOK = d, true
	ad.pods, ad.batchOn, st.alloc = len(slots), batchOn, desc
	st.run, st.slots, st.gpu = true, slots, -1
	st.rounds++
	s.running++
	if changed || !wasRunning || !sameBatch || s.publishDue(st, now) {
		s.queue.Add(st.key)
	}
}

// describeAlloc names an allocation: "4×a100", "8×rtx+2×t4".
func describeAlloc(a goodput.Alloc, types []string) string {
	parts := make([]string, len(a))
	for i, p := range a {
		parts[i] = fmt.Sprintf("%d×%s", p.GPUs, types[p.Type])
	}
	return strings.Join(parts, "+")
}

// parallelism is a Job's spec.parallelism (1 when unset).
func parallelism(j *batchv1.Job) int {
	if j.Spec.Parallelism == nil {
		return 1
	}
	return int(*j.Spec.Parallelism)
}

// syncParallelism gives an adaptive Job the round's GPU count: it
// suspends the Job, waits for its pods to go, and patches parallelism and
// completions together (an Indexed Job may change both while suspended);
// syncResume then resumes it. done is false when the count is right.
func (s *Scheduler) syncParallelism(ctx context.Context, j *batchv1.Job, d desired, pods podSet) (again time.Duration, done bool, err error) {
	if d.pods == 0 || parallelism(j) == d.pods {
		return 0, false, nil
	}
	if !suspended(j) {
		return 200 * time.Millisecond, true, s.suspend(ctx, j, d)
	}
	if len(pods.bound)+len(pods.unbound)+len(pods.terminating) > 0 {
		return 200 * time.Millisecond, true, nil // the old pods are going
	}
	if err := s.patch(ctx, j, map[string]any{"parallelism": d.pods, "completions": d.pods}, nil); err != nil {
		return 0, true, err
	}
	s.rec.Eventf(j, corev1.EventTypeNormal, "Resized", "parallelism %d → %d", parallelism(j), d.pods)
	return 200 * time.Millisecond, true, nil
}

// syncBatch writes the round's batch size on the bound pods that carry
// another (the job kept its pods; a restarted one gets it with its
// Binding).
func (s *Scheduler) syncBatch(ctx context.Context, d desired, bound []*corev1.Pod) error {
	for _, p := range bound {
		want, ok := d.batchOn[p.Spec.NodeName]
		if !ok || p.Annotations[jobspec.BatchSizeAnno] == want {
			continue
		}
		s.requests.Add(1)
		body := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, jobspec.BatchSizeAnno, want)
		if _, err := s.cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// batchSettled reports whether every bound pod of an adaptive job carries
// its node's batch size of the round (under mu).
func (s *Scheduler) batchSettled(st *jobState) bool {
	objs, _ := s.podIx.ByIndex(podsByJob, st.key)
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if p.Spec.NodeName == "" || !jobspec.Live(p) || p.DeletionTimestamp != nil || !jobspec.OwnedBy(p, st.uid) {
			continue
		}
		if b, ok := st.ad.batchOn[p.Spec.NodeName]; ok && p.Annotations[jobspec.BatchSizeAnno] != b {
			return false
		}
	}
	return true
}
