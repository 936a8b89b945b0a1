// Package controlplane starts a real, local Kubernetes control plane on the
// loopback interface: etcd, kube-apiserver, kube-controller-manager, KWOK
// (fake nodes that heartbeat and run pods through Stage documents) and,
// optionally, the default kube-scheduler. Every start gets a fresh folder
// with its own certificates, bearer tokens and etcd data directory; nothing
// is faked but the kubelets.
//
// The binaries are built by scripts/k8s.sh (make fetch) into the cache
// ($INLAY_CACHE/k8s/bin); Binaries finds them and says how to build them
// when they are missing. The processes run in their own session so that
// `inlay cluster up` can return while they keep running; Stop (or
// StopDir, for `inlay cluster down`) ends them by the process IDs written
// to the folder.
package controlplane

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inlay-dev/inlay/internal/assets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Names of the binaries scripts/k8s.sh builds.
var binaryNames = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// ErrMissing says that the control plane's binaries are not built yet.
var ErrMissing = errors.New("the local Kubernetes control plane is not built; run make fetch (scripts/k8s.sh builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok into the cache)")

// BinDir is where scripts/k8s.sh puts the binaries: $INLAY_K8S_BIN, else
// the cache's k8s/bin.
func BinDir() string {
	if d := os.Getenv("INLAY_K8S_BIN"); d != "" {
		return d
	}
	return filepath.Join(assets.Dir(), "k8s", "bin")
}

// Binaries checks that every binary is present in dir (BinDir when empty).
func Binaries(dir string) (string, error) {
	if dir == "" {
		dir = BinDir()
	}
	for _, b := range binaryNames {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return dir, fmt.Errorf("%s: %w", filepath.Join(dir, b), ErrMissing)
		}
	}
	return dir, nil
}

// Options configures a control plane.
type Options struct {
	// Dir is the control plane's folder (certificates, etcd data, logs,
	// kubeconfig); it must not hold a running control plane. Empty: a new
	// temporary folder.
	Dir string
	// Bin is the folder of the binaries (BinDir when empty).
	Bin string
	// KubeScheduler also starts the default kube-scheduler.
	KubeScheduler bool
	// NodeMonitorGracePeriod is how long the node lifecycle controller
	// waits for a heartbeat before it marks a node NotReady (default 20 s;
	// Kubernetes' default is 50 s).
	NodeMonitorGracePeriod time.Duration
	// NodeLeaseDuration is the node leases' duration KWOK keeps (default
	// 40 s); KWOK renews each a fraction of it, so at a thousand nodes a
	// longer lease (with a longer grace) cuts the API server's steady
	// load from the heartbeats.
	NodeLeaseDuration time.Duration
	// NoNodeLifecycle turns the controller manager's node-lifecycle
	// controller off, as kube-scheduler's scheduler_perf does: nodes made
	// as plain API objects (no kubelet, no lease) then stay Ready.
	NoNodeLifecycle bool
	// Detach keeps the processes running after this process exits (inlay
	// cluster up); otherwise they are killed when it dies, so that a test
	// that panics or times out leaves nothing behind.
	Detach bool
	// Timeout bounds the start (default 3 minutes: a loaded machine starts
	// the API server slowly).
	Timeout time.Duration
}

// ControlPlane is a running local control plane.
type ControlPlane struct {
	Dir string
	// Kubeconfig is Dir/kubeconfig: the admin's credentials.
	Kubeconfig string
	// Config is the admin's client configuration.
	Config *rest.Config
	// Server is the API server's URL.
	Server string

	opts  Options
	bin   string
	pki   *pki
	ports map[string]int
	procs map[string]*exec.Cmd
	order []string
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts etcd, the API server, the controller manager and KWOK (and
// the default scheduler when asked), and returns once the API server is
// ready and the controller manager has created the default service account.
// The ports are picked free just before, so another process can take one
// first; a start that fails so ("address already in use" in a component's
// log) is tried again with new ports, at most startTries times in all.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	for try := 1; ; try++ {
		c, err := startOnce(ctx, opts)
		if err == nil || try == startTries || ctx.Err() != nil || !strings.Contains(err.Error(), "address already in use") {
			return c, err
		}
	}
}

// startTries bounds Start's tries when a port was taken.
const startTries = 3

func startOnce(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	bin, err := Binaries(opts.Bin)
	if err != nil {
		return nil, err
	}
	if opts.Timeout == 0 {
		opts.Timeout = 3 * time.Minute
	}
	if opts.NodeLeaseDuration <= 0 {
		opts.NodeLeaseDuration = 40 * time.Second
	}
	if opts.NodeMonitorGracePeriod == 0 {
		opts.NodeMonitorGracePeriod = 20 * time.Second
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "inlay-k8s-"); err != nil {
			return nil, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if alive(dir) {
		return nil, fmt.Errorf("%s: a control plane is running there (inlay cluster down --dir %s)", dir, dir)
	}
	for _, sub := range []string{"etcd", "logs", "pki"} {
		_ = os.RemoveAll(filepath.Join(dir, sub))
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	_ = os.Remove(filepath.Join(dir, "pids"))
	p, err := newPKI(filepath.Join(dir, "pki"))
	if err != nil {
		return nil, fmt.Errorf("controlplane: certificates: %w", err)
	}
	c := &ControlPlane{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), opts: opts, bin: bin, pki: p, ports: map[string]int{}, procs: map[string]*exec.Cmd{}}
	for _, name := range []string{"etcd", "etcd-peer", "apiserver", "controller-manager", "scheduler", "kwok"} {
		if c.ports[name], err = freePort(); err != nil {
			return nil, err
		}
	}
	c.Server = fmt.Sprintf("https://127.0.0.1:%d", c.ports["apiserver"])
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if err := c.writeKubeconfigs(); err != nil {
		return nil, err
	}
	if err := c.StartComponent(ctx, "etcd"); err != nil {
		return nil, err
	}
	if err := c.StartComponent(ctx, "kube-apiserver"); err != nil {
		return nil, err
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return nil, err
	}
	if err := writeStages(filepath.Join(dir, "kwok.yaml")); err != nil {
		return nil, err
	}
	comps := []string{"kube-controller-manager", "kwok"}
	if opts.KubeScheduler {
		comps = append(comps, "kube-scheduler")
	}
	for _, name := range comps {
		if err := c.StartComponent(ctx, name); err != nil {
			return nil, err
		}
	}
	if err := c.waitServiceAccount(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// kubeconfig builds a client configuration for user's token.
func (c *ControlPlane) kubeconfig(user string) ([]byte, error) {
	ca, err := os.ReadFile(c.pki.caCert)
	if err != nil {
		return nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["inlay"] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: c.pki.tokens[user]}
	cfg.Contexts["inlay"] = &clientcmdapi.Context{Cluster: "inlay", AuthInfo: user}
	cfg.CurrentContext = "inlay"
	return clientcmd.Write(*cfg)
}

func (c *ControlPlane) writeKubeconfigs() error {
	for _, u := range tokenUsers {
		data, err := c.kubeconfig(u.name)
		if err != nil {
			return err
		}
		path := filepath.Join(c.Dir, "pki", u.name+".kubeconfig")
		if u.name == "admin" {
			path = c.Kubeconfig
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// controllers is the controller manager's --controllers.
func (c *ControlPlane) controllers() string {
	if c.opts.NoNodeLifecycle {
		return "*,-node-lifecycle-controller"
	}
	return "*"
}

// args returns a component's command line.
func (c *ControlPlane) args(name string) []string {
	pk := func(u string) string { return filepath.Join(c.Dir, "pki", u+".kubeconfig") }
	switch name {
	case "etcd":
		client := fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd"])
		peer := fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd-peer"])
		return []string{"--name=inlay", "--data-dir=" + filepath.Join(c.Dir, "etcd"),
			"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=inlay=" + peer, "--unsafe-no-fsync", "--log-level=warn",
			"--quota-backend-bytes=8589934592"}
	case "kube-apiserver":
		return []string{
			fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", c.ports["etcd"]),
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			fmt.Sprintf("--secure-port=%d", c.ports["apiserver"]),
			"--tls-cert-file=" + c.pki.serverCert, "--tls-private-key-file=" + c.pki.serverKey,
			"--client-ca-file=" + c.pki.caCert, "--token-auth-file=" + c.pki.tokenFile,
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + c.pki.saPub, "--service-account-signing-key-file=" + c.pki.saKey,
			"--authorization-mode=RBAC", "--service-cluster-ip-range=10.96.0.0/16",
			"--max-requests-inflight=1600", "--max-mutating-requests-inflight=800",
			"--enable-priority-and-fairness=false", "--profiling=false", "--v=0",
		}
	case "kube-controller-manager":
		return []string{"--kubeconfig=" + pk("kube-controller-manager"),
			"--authentication-kubeconfig=" + pk("kube-controller-manager"), "--authorization-kubeconfig=" + pk("kube-controller-manager"),
			"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", c.ports["controller-manager"]),
			"--leader-elect=false", "--service-account-private-key-file=" + c.pki.saKey, "--root-ca-file=" + c.pki.caCert,
			"--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-job-syncs=20", "--concurrent-gc-syncs=40",
			"--node-monitor-grace-period=" + c.opts.NodeMonitorGracePeriod.String(), "--node-monitor-period=2s",
			"--profiling=false", "--v=0", "--controllers=" + c.controllers()}
	case "kube-scheduler":
		return []string{"--kubeconfig=" + pk("kube-scheduler"),
			"--authentication-kubeconfig=" + pk("kube-scheduler"), "--authorization-kubeconfig=" + pk("kube-scheduler"),
			"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", c.ports["scheduler"]),
			"--leader-elect=false", "--kube-api-qps=1000", "--kube-api-burst=2000", "--profiling=false", "--v=0"}
	case "kueue":
		// Paths inside the folder the process is chrooted into (kueueCommand).
		return []string{"--config=/config.yaml", "--kubeconfig=/kubeconfig",
			"--feature-gates=VisibilityOnDemand=false", "--zap-log-level=info"}
	case "kwok":
		return []string{"--kubeconfig=" + pk("kwok"), "--config=" + filepath.Join(c.Dir, "kwok.yaml"),
			"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=" + KWOKAnnotation + "=fake",
			fmt.Sprintf("--node-lease-duration-seconds=%d", int(c.opts.NodeLeaseDuration.Seconds())), "--cidr=10.240.0.1/12", "--node-ip=10.239.0.1", "--v=WARN",
			fmt.Sprintf("--server-address=127.0.0.1:%d", c.ports["kwok"])}
	}
	return nil
}

var getOpts = metav1.GetOptions{}

// KWOKAnnotation marks the nodes that KWOK manages (value "fake").
const KWOKAnnotation = "kwok.x-k8s.io/node"

// StartComponent starts one component (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok, and kueue once its CRDs
// are installed: see kueue.go) and waits until it serves; the fault tests stop and restart the API server with it.
func (c *ControlPlane) StartComponent(ctx context.Context, name string) error {
	if cmd := c.procs[name]; cmd != nil {
		return fmt.Errorf("controlplane: %s is running", name)
	}
	args := c.args(name)
	if args == nil {
		return fmt.Errorf("controlplane: unknown component %q", name)
	}
	logf, err := os.OpenFile(filepath.Join(c.Dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if name == "kueue" {
		if cmd, err = c.kueueCommand(args); err != nil {
			logf.Close()
			return err
		}
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if !c.opts.Detach {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if cmd.Env == nil {
		cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("controlplane: start %s: %w", name, err)
	}
	logf.Close()
	c.procs[name] = cmd
	c.order = append(c.order, name)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := c.writePids(); err != nil {
		return err
	}
	ready := func() bool { return true }
	switch name {
	case "etcd":
		url := fmt.Sprintf("http://127.0.0.1:%d/health", c.ports["etcd"])
		ready = func() bool { return httpOK(http.DefaultClient, url, "") }
	case "kube-apiserver":
		hc, err := c.httpClient()
		if err != nil {
			return err
		}
		ready = func() bool { return httpOK(hc, c.Server+"/readyz", c.pki.tokens["admin"]) }
	case "kwok":
		url := fmt.Sprintf("http://127.0.0.1:%d/healthz", c.ports["kwok"])
		ready = func() bool { return httpOK(http.DefaultClient, url, "") }
	case "kueue":
		url := fmt.Sprintf("http://127.0.0.1:%d/readyz", c.ports["kueue-health"])
		ready = func() bool { return httpOK(http.DefaultClient, url, "") }
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !ready() {
		select {
		case err := <-exited:
			c.forget(name)
			return fmt.Errorf("controlplane: %s exited at start (%v); its log: %s%s", name, err, filepath.Join(c.Dir, "logs", name+".log"), logTail(filepath.Join(c.Dir, "logs", name+".log")))
		case <-ctx.Done():
			return fmt.Errorf("controlplane: %s not ready: %w; its log: %s%s", name, ctx.Err(), filepath.Join(c.Dir, "logs", name+".log"), logTail(filepath.Join(c.Dir, "logs", name+".log")))
		case <-tick.C:
		}
	}
	// A process that fails right after start (a bad flag) is reported here.
	select {
	case err := <-exited:
		c.forget(name)
		return fmt.Errorf("controlplane: %s exited (%v); its log: %s%s", name, err, filepath.Join(c.Dir, "logs", name+".log"), logTail(filepath.Join(c.Dir, "logs", name+".log")))
	case <-time.After(200 * time.Millisecond):
	}
	return nil
}

// StopComponent stops one component (SIGTERM, then SIGKILL after 10 s).
func (c *ControlPlane) StopComponent(name string) {
	cmd := c.procs[name]
	if cmd == nil {
		return
	}
	stopPid(cmd.Process.Pid)
	c.forget(name)
}

// forget drops a component that has stopped from the records.
func (c *ControlPlane) forget(name string) {
	for i, n := range c.order {
		if n == name {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	delete(c.procs, name)
	_ = c.writePids()
}

// Stop stops every component, the last started first. The folder stays
// (logs); callers that made a temporary one remove it.
func (c *ControlPlane) Stop() {
	for i := len(c.order) - 1; i >= 0; i-- {
		c.StopComponent(c.order[i])
	}
	_ = os.Remove(filepath.Join(c.Dir, "pids"))
}

// Client returns an admin clientset with the given rate limits.
func (c *ControlPlane) Client(qps float32, burst int) (*kubernetes.Clientset, error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = qps, burst
	return kubernetes.NewForConfig(cfg)
}

// KubeconfigFor writes a kubeconfig for a bearer token (a service account's)
// into the control plane's folder and returns its path.
func (c *ControlPlane) KubeconfigFor(name, token string) (string, error) {
	ca, err := os.ReadFile(c.pki.caCert)
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["inlay"] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["inlay"] = &clientcmdapi.Context{Cluster: "inlay", AuthInfo: name}
	cfg.CurrentContext = "inlay"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.Dir, name+".kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

func (c *ControlPlane) httpClient() (*http.Client, error) {
	ca, err := os.ReadFile(c.pki.caCert)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}, nil
}

func httpOK(hc *http.Client, url, token string) bool {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitServiceAccount waits for the controller manager's service-account
// controller to create default/default (pods cannot be created before).
func (c *ControlPlane) waitServiceAccount(ctx context.Context) error {
	cs, err := c.Client(50, 100)
	if err != nil {
		return err
	}
	for {
		if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", getOpts); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("controlplane: the controller manager did not create the default service account: %w; its log: %s%s", ctx.Err(), filepath.Join(c.Dir, "logs", "kube-controller-manager.log"), logTail(filepath.Join(c.Dir, "logs", "kube-controller-manager.log")))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// writePids records the running components for StopDir.
func (c *ControlPlane) writePids() error {
	var b strings.Builder
	for _, n := range c.order {
		fmt.Fprintf(&b, "%s %d\n", n, c.procs[n].Process.Pid)
	}
	return os.WriteFile(filepath.Join(c.Dir, "pids"), []byte(b.String()), 0o600)
}

func readPids(dir string) ([][2]string, error) {
	f, err := os.Open(filepath.Join(dir, "pids"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n, p, ok := strings.Cut(strings.TrimSpace(sc.Text()), " "); ok {
			out = append(out, [2]string{n, p})
		}
	}
	return out, sc.Err()
}

// alive reports whether dir's pid file names a live process.
func alive(dir string) bool {
	pids, err := readPids(dir)
	if err != nil {
		return false
	}
	for _, p := range pids {
		if pid, err := strconv.Atoi(p[1]); err == nil && syscall.Kill(pid, 0) == nil {
			return true
		}
	}
	return false
}

// StopDir stops the control plane whose folder is dir (inlay cluster down):
// the components it records, the last started first.
func StopDir(dir string) error {
	pids, err := readPids(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: no control plane recorded here (no pids file)", dir)
	}
	if err != nil {
		return err
	}
	for i := len(pids) - 1; i >= 0; i-- {
		pid, err := strconv.Atoi(pids[i][1])
		if err != nil {
			return fmt.Errorf("%s: line %d: bad process ID %q", filepath.Join(dir, "pids"), i+1, pids[i][1])
		}
		stopPid(pid)
	}
	return os.Remove(filepath.Join(dir, "pids"))
}

// stopPid sends SIGTERM and waits up to 10 s, then SIGKILL.
func stopPid(pid int) {
	if syscall.Kill(pid, syscall.SIGTERM) != nil {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// logTail returns the last lines of a log, indented, for error messages.
func logTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "\n    " + strings.Join(lines, "\n    ")
}

// ForTest starts a control plane in a fresh temporary folder for a test and
// stops it when the test ends. Without the binaries it skips the test, or
// fails it under INLAY_REQUIRE_ASSETS=1 (make test), naming the command
// that builds them. Its logs are printed when the test fails.
func ForTest(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	SkipUnlessEnabled(t)
	if _, err := Binaries(opts.Bin); err != nil {
		assets.Missing(t, err.Error())
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	c, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			for _, n := range binaryNames {
				if tail := logTail(filepath.Join(c.Dir, "logs", n+".log")); tail != "" {
					t.Logf("%s log:%s", n, tail)
				}
			}
		}
	})
	return c
}

// SkipUnlessEnabled skips a control-plane test unless INLAY_KUBE_TESTS=1
// (make e2e sets it; the binaries come from make fetch-k8s).
func SkipUnlessEnabled(t testing.TB) {
	t.Helper()
	if os.Getenv("INLAY_KUBE_TESTS") != "1" {
		t.Skip("control-plane test: runs under make e2e (INLAY_KUBE_TESTS=1, binaries from make fetch-k8s)")
	}
}

// CPUTimes is the CPU time (user and system) each running component has
// used so far, read from /proc (Linux; an error elsewhere). Benchmarks take
// differences to charge a phase's work to the components.
func (c *ControlPlane) CPUTimes() (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for name, cmd := range c.procs {
		if cmd.Process == nil {
			continue
		}
		t, err := ProcessCPUTime(cmd.Process.Pid)
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// PeakBytes is component name's peak resident memory so far (VmHWM in
// /proc/PID/status; Linux).
func (c *ControlPlane) PeakBytes(name string) (int64, error) {
	cmd := c.procs[name]
	if cmd == nil || cmd.Process == nil {
		return 0, fmt.Errorf("controlplane: %s is not running", name)
	}
	return ProcessPeakBytes(cmd.Process.Pid)
}

// ProcessPeakBytes is a process's peak resident memory (VmHWM in
// /proc/PID/status; Linux).
func ProcessPeakBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("controlplane: /proc/%d/status: VmHWM %q", pid, v)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("controlplane: /proc/%d/status: no VmHWM", pid)
}

// ProcessCPUTime is the CPU time (user and system) a process has used so
// far, read from /proc/PID/stat (Linux; an error elsewhere).
func ProcessCPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name (which may hold spaces, in
	// parentheses): utime and stime are the 12th and 13th, in ticks.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("controlplane: /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("controlplane: /proc/%d/stat: %d fields", pid, len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("controlplane: /proc/%d/stat: bad times", pid)
	}
	return time.Duration(u+st) * time.Second / clockTicks, nil
}

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times (100 on
// every architecture Go supports).
const clockTicks = 100
