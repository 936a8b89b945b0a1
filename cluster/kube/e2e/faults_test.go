package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/cluster/kube/jobspec"
	"github.com/inlay-dev/inlay/cluster/kube/manifests"
	"github.com/inlay-dev/inlay/cluster/kube/nodes"
	"github.com/inlay-dev/inlay/cluster/kube/replay"
	"github.com/inlay-dev/inlay/cluster/kube/scheduler"
	"github.com/inlay-dev/inlay/cluster/sim"
	"github.com/inlay-dev/inlay/cluster/throughput"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// childEnv, set to 1, makes the test binary a scheduler process
// (TestMain calls schedulerChild), configured by the childEnv_* variables.
const (
	childEnv        = "INLAY_E2E_SCHEDULER_CHILD"
	childKubeconfig = childEnv + "_KUBECONFIG"
	childQueue      = childEnv + "_QUEUE"
	childSpeedup    = childEnv + "_SPEEDUP"
	childID         = childEnv + "_ID"
	// stallFor is how long the child holds each Binding and each Job
	// suspension once told to stall (SIGUSR1).
	stallFor = 5 * time.Second
)

// schedulerChild runs inlay's scheduler as a process of its own, as
// `inlay-scheduler run --leader-elect` does: policy gavel on the queue
// named, leader election on inlay-system/inlay-QUEUE, the kubeconfig
// given (the scheduler's service account). SIGTERM stops it gracefully.
// After SIGUSR1 every Binding and every Job suspension waits stallFor
// before it is sent, as on a slow control plane, so that a SIGKILL then
// lands in the middle of a gang's bindings or of a round's suspensions.
func schedulerChild() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "scheduler process:", err)
		return 2
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(childKubeconfig))
	if err != nil {
		return fail(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	var armed atomic.Bool
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &stall{rt: rt, armed: &armed} })
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fail(err)
	}
	table, err := throughput.Gavel()
	if err != nil {
		return fail(err)
	}
	speedup, err := strconv.ParseFloat(os.Getenv(childSpeedup), 64)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", childSpeedup, err))
	}
	s, err := newScheduler(cs, table, "gavel", os.Getenv(childQueue), speedup, os.Getenv(childID), nil, slog.LevelInfo)
	if err != nil {
		return fail(err)
	}
	usr := make(chan os.Signal, 1)
	signal.Notify(usr, syscall.SIGUSR1)
	go func() {
		for range usr {
			armed.Store(true)
			fmt.Fprintln(os.Stderr, "scheduler process: stalling bindings and suspensions from now on")
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := s.Run(ctx); err != nil {
		return fail(err)
	}
	return 0
}

// stall holds Bindings and suspending Job patches for stallFor once armed.
type stall struct {
	rt    http.RoundTripper
	armed *atomic.Bool
}

func (s *stall) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.armed.Load() && slowed(r) {
		t := time.NewTimer(stallFor)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return s.rt.RoundTrip(r)
}

func slowed(r *http.Request) bool {
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/binding"):
		return true
	case r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/jobs/") && r.GetBody != nil:
		b, err := r.GetBody()
		if err != nil {
			return false
		}
		defer b.Close()
		data, _ := io.ReadAll(b)
		return bytes.Contains(data, []byte(`"suspend":true`))
	}
	return false
}

// schedProc is a scheduler process started by the test.
type schedProc struct {
	id, log string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error
}

func startSchedulerProc(t *testing.T, kubeconfig, queue string, speedup float64, id string) *schedProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"=1", childKubeconfig+"="+kubeconfig, childQueue+"="+queue,
		childSpeedup+"="+strconv.FormatFloat(speedup, 'g', -1, 64), childID+"="+id)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	p := &schedProc{id: id, log: f.Name(), cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("%s's log ends:\n%s", id, p.tail(40))
		}
	})
	return p
}

// signal sends sig to the process (nothing once it has exited).
func (p *schedProc) signal(sig os.Signal) {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// stop ends the process with SIGTERM and returns how it exited.
func (p *schedProc) stop() error {
	p.signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(time.Minute):
		p.signal(syscall.SIGKILL)
		<-p.exited
		return errors.New("still running a minute after SIGTERM")
	}
}

func (p *schedProc) tail(n int) string {
	data, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// watcher follows pods, nodes and Jobs through informers and checks at
// every pod event (each resource's watch is one ordered stream, so within
// a watch these are the states the API server went through; an overcommit
// is confirmed with the API server, see confirm) that no node holds more
// GPUs, CPU or memory than it has (counting its bound pods that have not
// ended, terminating ones too, as a kubelet would), that no pod changes
// its node, and that no Job has more pods bound than its gang. It also
// follows half-bound gangs: a Job with pods bound beside pods still
// unbound (neither going).
type watcher struct {
	nodes, jobs cache.Indexer

	mu       sync.Mutex
	pods     map[types.UID]*corev1.Pod
	node     map[types.UID]string
	faults   []string
	nFaults  int
	events   int
	half     map[string]time.Time // namespace/Job → half-bound since
	episodes int
	longest  time.Duration
	longJob  string
	ended    map[string][]time.Time // namespace/Job → when its half-bound episodes ended
	// onHalf, when set, is called (under mu) when a binding leaves a
	// gang of several pods half-bound.
	onHalf func(job string)
	// cs, when set, is asked to confirm an overcommit the informers show
	// (see checkNode); unconfirmed counts those it did not, notes says
	// what they were.
	cs          kubernetes.Interface
	ctx         context.Context
	confirming  map[string]bool
	pending     sync.WaitGroup
	unconfirmed int
	notes       []string
}

func newWatcher(nodes, jobs cache.Indexer) *watcher {
	return &watcher{nodes: nodes, jobs: jobs, pods: map[types.UID]*corev1.Pod{}, node: map[types.UID]string{},
		half: map[string]time.Time{}, ended: map[string][]time.Time{}, confirming: map[string]bool{}}
}

func watch(t *testing.T, ctx context.Context, cs kubernetes.Interface) *watcher {
	t.Helper()
	fac := informers.NewSharedInformerFactory(cs, 0)
	podInf, nodeInf, jobInf := fac.Core().V1().Pods().Informer(), fac.Core().V1().Nodes(), fac.Batch().V1().Jobs()
	w := newWatcher(nodeInf.Informer().GetIndexer(), jobInf.Informer().GetIndexer())
	w.cs, w.ctx = cs, ctx
	pod := func(o any) *corev1.Pod {
		if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		p, _ := o.(*corev1.Pod)
		return p
	}
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.pod(nil, pod(o), false) },
		UpdateFunc: func(o, n any) { w.pod(pod(o), pod(n), false) },
		DeleteFunc: func(o any) { w.pod(nil, pod(o), true) },
	}); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	fac.Start(wctx.Done())
	for typ, ok := range fac.WaitForCacheSync(wctx.Done()) {
		if !ok {
			t.Fatalf("watcher: %v cache did not sync", typ)
		}
	}
	return w
}

func (w *watcher) fault(format string, a ...any) {
	w.nFaults++
	if len(w.faults) < 20 {
		w.faults = append(w.faults, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, a...))
	}
}

func (w *watcher) pod(old, p *corev1.Pod, deleted bool) {
	if p == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	if deleted {
		delete(w.pods, p.UID)
	} else {
		if n, ok := w.node[p.UID]; ok && p.Spec.NodeName != n {
			w.fault("pod %s/%s bound to %s, then %q", p.Namespace, p.Name, n, p.Spec.NodeName)
		}
		if _, ok := w.node[p.UID]; !ok && p.Spec.NodeName != "" {
			w.node[p.UID] = p.Spec.NodeName
		}
		w.pods[p.UID] = p
	}
	if p.Spec.NodeName != "" {
		w.checkNode(p.Spec.NodeName)
	}
	job := jobspec.ControllerKey(p)
	if job == "" {
		return
	}
	bound, unbound := w.gang(job)
	if o, ok, _ := w.jobs.GetByKey(job); ok && o.(*batchv1.Job).Spec.Parallelism != nil && bound > int(*o.(*batchv1.Job).Spec.Parallelism) {
		w.fault("Job %s: %d pods bound, parallelism %d", job, bound, *o.(*batchv1.Job).Spec.Parallelism)
	}
	since, was := w.half[job]
	switch now := bound > 0 && unbound > 0; {
	case now && !was:
		w.half[job] = time.Now()
		w.episodes++
		if old != nil && old.Spec.NodeName == "" && p.Spec.NodeName != "" && w.onHalf != nil {
			w.onHalf(job)
		}
	case !now && was:
		delete(w.half, job)
		w.ended[job] = append(w.ended[job], time.Now())
		if d := time.Since(since); d > w.longest {
			w.longest, w.longJob = d, job
		}
	}
}

// gang counts a Job's pods that are neither ended nor going: bound and
// unbound (under mu).
func (w *watcher) gang(job string) (bound, unbound int) {
	for _, q := range w.pods {
		if jobspec.ControllerKey(q) != job || q.DeletionTimestamp != nil || !jobspec.Live(q) {
			continue
		}
		if q.Spec.NodeName != "" {
			bound++
		} else {
			unbound++
		}
	}
	return bound, unbound
}

// checkNode compares a node's bound pods with what it has (under mu).
func (w *watcher) checkNode(name string) {
	o, ok, _ := w.nodes.GetByKey(name)
	if !ok {
		return // deleted: nothing to hold the pods to
	}
	n := o.(*corev1.Node)
	var on []*corev1.Pod
	for _, q := range w.pods {
		if q.Spec.NodeName == name {
			on = append(on, q)
		}
	}
	if used, names := load(on); over(n, used) {
		msg := fmt.Sprintf("node %s overcommitted: %d GPUs of %d, %.0f mCPU of %d, %d B of %d, by %s", name, used.GPUs, nodes.GPUs(n),
			used.MilliCPU, n.Status.Allocatable.Cpu().MilliValue(), used.Memory, n.Status.Allocatable.Memory().Value(), strings.Join(names, ","))
		if w.cs == nil {
			w.fault("%s", msg)
			return
		}
		if !w.confirming[name] {
			w.confirming[name] = true
			w.pending.Add(1)
			go w.confirm(n, msg)
		}
	}
}

// load sums the requests of the pods that have not ended (terminating
// ones too, as a kubelet counts them) and names them, sorted.
func load(pods []*corev1.Pod) (jobspec.Requests, []string) {
	var used jobspec.Requests
	var names []string
	for _, q := range pods {
		if !jobspec.Live(q) {
			continue
		}
		used.Add(jobspec.PodRequests(&q.Spec))
		going := ""
		if q.DeletionTimestamp != nil {
			going = ", going"
		}
		names = append(names, fmt.Sprintf("%s (%s%s, rv %s)", q.Name, q.Status.Phase, going, q.ResourceVersion))
	}
	sort.Strings(names)
	return used, names
}

// over reports whether used exceeds what node n has.
func over(n *corev1.Node, used jobspec.Requests) bool {
	al := n.Status.Allocatable
	return used.GPUs > int64(nodes.GPUs(n)) || used.MilliCPU > float64(al.Cpu().MilliValue()) || used.Memory > al.Memory().Value()
}

// confirm asks the API server for the pods bound to node n when the
// informers show it overcommitted. The informers' view is the API
// server's history only within one watch: after the API server's outage
// they list again, and until the list is through, a pod deleted in the
// meantime can still sit beside the one that took its place. An
// overcommit the API server's own list shows is a fault; one it does not
// is counted and noted.
func (w *watcher) confirm(n *corev1.Node, msg string) {
	defer w.pending.Done()
	ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
	defer cancel()
	list, err := w.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name})
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.confirming, n.Name)
	if err != nil {
		w.fault("%s (not confirmed: %v)", msg, err)
		return
	}
	on := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		on[i] = &list.Items[i]
	}
	used, names := load(on)
	if over(n, used) {
		w.fault("%s; the API server lists %s", msg, strings.Join(names, ","))
		return
	}
	w.unconfirmed++
	if len(w.notes) < 5 {
		w.notes = append(w.notes, fmt.Sprintf("%s %s; the API server lists %s", time.Now().Format("15:04:05.000"), msg, strings.Join(names, ",")))
	}
}

// halfBound lists the run's Jobs whose gang is half-bound now, read from
// the API server.
func halfBound(ctx context.Context, cs kubernetes.Interface, run string) ([]string, error) {
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: replay.RunLabel + "=" + run})
	if err != nil {
		return nil, err
	}
	b, u := map[string]int{}, map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || !jobspec.Live(p) {
			continue
		}
		if p.Spec.NodeName != "" {
			b[jobspec.ControllerKey(p)]++
		} else {
			u[jobspec.ControllerKey(p)]++
		}
	}
	var out []string
	for j, n := range b {
		if n > 0 && u[j] > 0 {
			out = append(out, fmt.Sprintf("%s (%d bound, %d not)", j, n, u[j]))
		}
	}
	sort.Strings(out)
	return out, nil
}

// TestFaults replays jobs while the scheduler (a process of its own, under
// its service account) is killed with SIGKILL in the middle of a gang's
// bindings and a new process started, a node running a job is made
// NotReady and another deleted, and the API server is stopped for 30 s. Every job
// finishes exactly once, with no pod left; a watch checks throughout that
// no node is overcommitted, no pod is bound twice and no Job has more pods
// bound than its gang, and at the end that no gang is half-bound; the
// scheduler's conditions stand beside the Job controller's on every Job.
func TestFaults(t *testing.T) {
	e := setup(t)
	cleanRuns(t, e.cs, "chaos")
	// A loaded machine's API server takes minutes to catch up after the
	// outage (every informer lists again).
	ctx, cancel := context.WithTimeout(context.Background(), 13*time.Minute)
	defer cancel()
	speedup := 300.0
	jobs := trace(t, e, 30, 200, 10, 3)
	w := watch(t, ctx, e.cs)
	kc := saKubeconfig(t, ctx, e)
	// The scheduler, a process of its own, is killed with SIGKILL right
	// after it bound the first pod of a gang of several, its other
	// bindings and the round's suspensions held back (stalled from the
	// start); another process then waits for the killed one's lease to
	// expire and rebuilds the state from the API server.
	p1 := startSchedulerProc(t, kc, "chaos", speedup, "sched-1")
	waitLeader(t, ctx, e.cs, "inlay-chaos", "sched-1")
	p1.signal(syscall.SIGUSR1)
	killed := make(chan string, 1)
	w.mu.Lock()
	w.onHalf = func(job string) {
		p1.signal(syscall.SIGKILL)
		w.onHalf = nil
		killed <- job
	}
	w.mu.Unlock()
	resCh := make(chan *sim.Result, 1)
	errCh := make(chan error, 1)
	go func() {
		res, err := replay.Run(ctx, replay.Config{Client: e.cs, Jobs: jobs, Table: e.table, Cluster: e.plat, Speedup: speedup,
			Namespace: "default", Queue: "chaos", Run: "chaos", Timeout: 12 * time.Minute, Progress: progress(t)})
		resCh <- res
		errCh <- err
	}()
	var first string
	select {
	case first = <-killed:
	case <-time.After(4 * time.Minute):
		t.Fatal("no gang of several pods was bound within 4 minutes")
	}
	<-p1.exited
	killedAt := time.Now()
	half, err := halfBound(ctx, e.cs, "chaos")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scheduler process killed (%v) when %s was half-bound; half-bound gangs after: %v", p1.err, first, half)
	if len(half) == 0 {
		t.Error("the kill left no gang half-bound (its bindings were not held back)")
	}
	p2 := startSchedulerProc(t, kc, "chaos", speedup, "sched-2")
	lead := waitLeader(t, ctx, e.cs, "inlay-chaos", "sched-2")
	t.Logf("the new scheduler process took the lease %.1f s after the kill", lead.Sub(killedAt).Seconds())
	// Wait until two nodes run jobs, then make one NotReady and delete
	// the other.
	var victim, deleted string
	for deleted == "" {
		time.Sleep(200 * time.Millisecond)
		pods, err := e.cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: replay.RunLabel + "=chaos"})
		if err != nil {
			continue
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
				if victim == "" {
					victim = p.Spec.NodeName
				} else if p.Spec.NodeName != victim {
					deleted = p.Spec.NodeName
					break
				}
			}
		}
		if ctx.Err() != nil {
			t.Fatal("no two nodes ran jobs")
		}
	}
	t.Logf("node %s: NotReady (KWOK stops managing it)", victim)
	notReady(t, ctx, e.cs, victim)
	t.Logf("node %s: deleted", deleted)
	gone, err := e.cs.CoreV1().Nodes().Get(ctx, deleted, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.cs.CoreV1().Nodes().Delete(ctx, deleted, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	// The API server away for 30 s.
	t.Log("API server stopped for 30 s")
	e.cp.StopComponent("kube-apiserver")
	time.Sleep(30 * time.Second)
	if err := e.cp.StartComponent(ctx, "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	t.Log("API server back")
	res, err := <-resCh, <-errCh
	if err == nil {
		finishedConditions(t, ctx, e.cs, "chaos")
	}
	if err := p2.stop(); err != nil {
		t.Errorf("restarted scheduler process: %v", err)
	}
	// Give the nodes back for the other tests.
	ready(t, e.cs, victim)
	gone.ResourceVersion, gone.UID, gone.Status = "", "", corev1.NodeStatus{Capacity: gone.Status.Capacity, Allocatable: gone.Status.Allocatable}
	if _, err := e.cs.CoreV1().Nodes().Create(context.Background(), gone, metav1.CreateOptions{}); err != nil {
		t.Logf("re-create %s: %v", deleted, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Unfinished != 0 {
		t.Errorf("%d jobs unfinished after the faults", res.Unfinished)
	}
	account(t, e.cs, "default", "chaos", jobs)
	w.pending.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, note := range w.notes {
		t.Logf("the informers showed an overcommit the API server did not: %s", note)
	}
	if w.unconfirmed > len(w.notes) {
		t.Logf("and %d more such", w.unconfirmed-len(w.notes))
	}
	for _, f := range w.faults {
		t.Error(f)
	}
	if w.nFaults > len(w.faults) {
		t.Errorf("and %d more faults", w.nFaults-len(w.faults))
	}
	for j, since := range w.half {
		t.Errorf("Job %s: half-bound since %s, at the end", j, since.Format("15:04:05"))
	}
	for _, h := range half {
		j, _, _ := strings.Cut(h, " ")
		for _, at := range w.ended[j] {
			if at.After(killedAt) {
				t.Logf("%s: no longer half-bound %.1f s after the kill", j, at.Sub(killedAt).Seconds())
				break
			}
		}
	}
	t.Logf("watch: %d pod events checked, %d half-bound episodes, the longest %.1f s (%s)", w.events, w.episodes, w.longest.Seconds(), w.longJob)
}

// saKubeconfig writes a kubeconfig with a token of the scheduler's
// service account and returns its path.
func saKubeconfig(t *testing.T, ctx context.Context, e *env) string {
	t.Helper()
	tok, err := manifests.Token(ctx, e.cs)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := e.cp.KubeconfigFor("inlay-scheduler", tok)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// waitLeader waits until id holds the lease inlay-system/name and returns
// when it was seen.
func waitLeader(t *testing.T, ctx context.Context, cs kubernetes.Interface, name, id string) time.Time {
	t.Helper()
	for {
		l, err := cs.CoordinationV1().Leases("inlay-system").Get(ctx, name, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == id {
			return time.Now()
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never took the lease %s", id, name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// finishedConditions checks that every Job of the run carries the Job
// controller's Complete condition and, beside it, the scheduler's
// InlayScheduled=False with reason Finished (it may take the scheduler a
// moment to see the last completions).
func finishedConditions(t *testing.T, ctx context.Context, cs kubernetes.Interface, run string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		list, err := cs.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{LabelSelector: replay.RunLabel + "=" + run})
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for i := range list.Items {
			j := &list.Items[i]
			c, ok := cond(j, scheduler.ScheduledCondition)
			if done, _ := jobspec.Done(j); !done || !ok || c.Status != corev1.ConditionFalse || c.Reason != "Finished" {
				missing = append(missing, fmt.Sprintf("%s %v", j.Name, conditions(j)))
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("Jobs without Complete and InlayScheduled=False/Finished side by side: %s", strings.Join(missing, "; "))
			return
		}
		time.Sleep(time.Second)
	}
}

func cond(j *batchv1.Job, typ batchv1.JobConditionType) (batchv1.JobCondition, bool) {
	for _, c := range j.Status.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return batchv1.JobCondition{}, false
}

// conditions lists a Job's conditions as type=status/reason.
func conditions(j *batchv1.Job) []string {
	var out []string
	for _, c := range j.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return out
}

// suspendedKeeps suspends a Job, waits for the Job controller's
// Suspended=True condition (a status update of its own after the
// scheduler's condition), and checks that the scheduler's condition typ
// survived it.
func suspendedKeeps(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string, typ batchv1.JobConditionType) {
	t.Helper()
	if _, err := cs.BatchV1().Jobs("default").Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		j, err := cs.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := cond(j, batchv1.JobSuspended); ok && c.Status == corev1.ConditionTrue {
			if _, ok := cond(j, typ); !ok {
				t.Errorf("%s: the Job controller's update dropped %s: %v", name, typ, conditions(j))
			}
			t.Logf("%s: conditions after the Job controller's update: %v", name, conditions(j))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no Suspended condition from the Job controller: %v", name, conditions(j))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestWatcher (no control plane): the watch that TestFaults relies on
// reports an overcommitted node, a pod that changes its node and a Job
// with more pods bound than its gang, and follows half-bound gangs.
func TestWatcher(t *testing.T) {
	nodeIx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	jobIx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	gpus := resource.MustParse("2")
	if err := nodeIx.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
		jobspec.GPUResource: gpus, corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi")}}}); err != nil {
		t.Fatal(err)
	}
	two := int32(2)
	if err := jobIx.Add(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "j"}, Spec: batchv1.JobSpec{Parallelism: &two}}); err != nil {
		t.Fatal(err)
	}
	yes := true
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name),
				OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "j", Controller: &yes}}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{jobspec.GPUResource: resource.MustParse("1")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		}
	}
	w := newWatcher(nodeIx, jobIx)
	var halves []string
	w.onHalf = func(job string) { halves = append(halves, job) }
	a, b := pod("a", ""), pod("b", "")
	w.pod(nil, a, false)
	w.pod(nil, b, false)
	a1 := pod("a", "n1")
	w.pod(a, a1, false)
	if len(halves) != 1 || len(w.half) != 1 {
		t.Fatalf("one of two pods bound: onHalf %v, half-bound %v", halves, w.half)
	}
	w.pod(b, pod("b", "n1"), false)
	if len(w.half) != 0 || w.episodes != 1 || len(w.ended["default/j"]) != 1 {
		t.Fatalf("gang bound: half-bound %v, %d episodes", w.half, w.episodes)
	}
	if w.nFaults != 0 {
		t.Fatalf("faults on a gang that fits: %v", w.faults)
	}
	w.pod(nil, pod("c", "n1"), false) // a third GPU on a node of two, a third pod of a gang of two
	w.pod(a1, pod("a", "n2"), false)  // a pod that moves
	want := []string{"overcommitted", "parallelism 2", "bound to n1, then"}
	if len(w.faults) < len(want) {
		t.Fatalf("faults %v, want %d of them", w.faults, len(want))
	}
	for _, f := range want {
		found := false
		for _, g := range w.faults {
			found = found || strings.Contains(g, f)
		}
		if !found {
			t.Errorf("no fault says %q: %v", f, w.faults)
		}
	}
}
