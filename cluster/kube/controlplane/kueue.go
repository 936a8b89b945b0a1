package controlplane

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Kueue (sigs.k8s.io/kueue) is an optional component: scripts/k8s.sh kueue
// (make fetch-kueue) builds its controller manager into BinDir as "kueue"
// and copies its CRDs into BinDir/kueue-crds. The kueue package installs
// the CRDs and starts it with StartComponent(ctx, "kueue").
//
// How it runs here, without a kubelet:
//   - Its admission webhooks are not registered with the API server (the
//     API server would have to reach a Service, which needs a cluster
//     network). The webhooks' work for batch/v1 Jobs is to create them
//     suspended; the replayer does that itself (replay.Config.Suspend).
//     The webhook server still starts, on loopback, with the API server's
//     serving certificate.
//   - With its internal certificate management off (that mode relies on a
//     kubelet mounting a Secret), Kueue v0.14 reads its metrics certificate
//     from the fixed path /etc/kueue/metrics/certs. The process is
//     therefore chrooted into Dir/kueue, a folder that holds that path (the
//     API server's serving certificate again), its configuration, its
//     kubeconfig and a copy of the binary, so nothing is written outside
//     the control plane's folder. Chroot needs root; any other user runs it
//     in a new user namespace mapped to itself.
//   - It authenticates with its own bearer token, as a member of
//     system:masters like the other components of the cluster.

// ErrNoKueue says that Kueue is not built.
var ErrNoKueue = errors.New("kueue is not built; run make fetch-kueue (scripts/k8s.sh kueue builds it and copies its CRDs into the cache)")

// KueueCRDs is the folder of Kueue's CRD manifests, or ErrNoKueue.
func (c *ControlPlane) KueueCRDs() (string, error) {
	dir := filepath.Join(c.bin, "kueue-crds")
	for _, p := range []string{filepath.Join(c.bin, "kueue"), dir} {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: %w", p, ErrNoKueue)
		}
	}
	return dir, nil
}

// KueueNamespace is where Kueue keeps its own objects.
const KueueNamespace = "kueue-system"

// kueueConfig is Kueue's Configuration (config.kueue.x-k8s.io/v1beta1):
// loopback ports, no leader election (one replica), no certificate
// management, batch/v1 Jobs only, and only the Jobs that name a queue.
const kueueConfig = `apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
namespace: %s
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: 127.0.0.1:%d
webhook:
  host: 127.0.0.1
  port: %d
  certDir: /webhook-certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
manageJobsWithoutQueueName: false
clientConnection:
  qps: 500
  burst: 1000
integrations:
  frameworks:
  - batch/job
`

// kueueCommand prepares Dir/kueue and returns the command that runs Kueue
// chrooted into it.
func (c *ControlPlane) kueueCommand(args []string) (*exec.Cmd, error) {
	if _, err := c.KueueCRDs(); err != nil {
		return nil, err
	}
	root := filepath.Join(c.Dir, "kueue")
	if err := os.RemoveAll(root); err != nil {
		return nil, err
	}
	for _, d := range []string{"etc/kueue/metrics/certs", "webhook-certs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"kueue-health", "kueue-metrics", "kueue-webhook"} {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		c.ports[name] = p
	}
	cfg := fmt.Sprintf(kueueConfig, KueueNamespace, c.ports["kueue-health"], c.ports["kueue-metrics"], c.ports["kueue-webhook"])
	files := []struct{ from, to string }{
		{filepath.Join(c.Dir, "pki", "kueue.kubeconfig"), "kubeconfig"},
		{c.pki.serverCert, "etc/kueue/metrics/certs/tls.crt"}, {c.pki.serverKey, "etc/kueue/metrics/certs/tls.key"},
		{c.pki.serverCert, "webhook-certs/tls.crt"}, {c.pki.serverKey, "webhook-certs/tls.key"},
		{filepath.Join(c.bin, "kueue"), "kueue"},
	}
	for _, f := range files {
		if err := linkOrCopy(f.from, filepath.Join(root, f.to)); err != nil {
			return nil, fmt.Errorf("controlplane: kueue: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "config.yaml"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	// Path and Dir are inside the root: exec.Command would look the
	// path up outside it.
	cmd := &exec.Cmd{Path: "/kueue", Args: append([]string{"/kueue"}, args...), Dir: "/", Env: []string{"GOMAXPROCS=2", "TMPDIR=/tmp"}}
	attr := &syscall.SysProcAttr{Setsid: true, Chroot: root}
	if os.Geteuid() != 0 {
		attr.Cloneflags = syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	cmd.SysProcAttr = attr
	return cmd, nil
}

// linkOrCopy hard-links from to to, or copies it when they are on
// different file systems.
func linkOrCopy(from, to string) error {
	if err := os.Link(from, to); err == nil {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
