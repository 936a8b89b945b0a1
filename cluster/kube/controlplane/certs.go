package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is what a fresh control plane trusts: a CA, the API server's serving
// certificate for the loopback address, the service-account signing key, and
// bearer tokens (one per component) in a static token file.
type pki struct {
	caCert, caKey         string // PEM files
	serverCert, serverKey string
	saKey, saPub          string
	tokenFile             string
	tokens                map[string]string // user → token
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

func newKey() (*ecdsa.PrivateKey, []byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(k)
	return k, der, err
}

// issue makes a key and a certificate for it from tmpl (given a serial
// number and ten years' validity from an hour ago), signed by parent's
// key signer, or by itself when parent is nil.
func issue(tmpl, parent *x509.Certificate, signer *ecdsa.PrivateKey) (key *ecdsa.PrivateKey, keyDER, certDER []byte, err error) {
	key, keyDER, err = newKey()
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(10*365*24*time.Hour)
	if parent == nil {
		parent, signer = tmpl, key
	}
	certDER, err = x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, nil, err
	}
	return key, keyDER, certDER, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// users of the static token file: name, groups. The components run as
// members of system:masters (they are the cluster itself); the inlay
// scheduler under test runs as a service account with its own role.
var tokenUsers = []struct{ name, groups string }{
	{"admin", "system:masters"},
	{"kube-controller-manager", "system:masters"},
	{"kube-scheduler", "system:masters"},
	{"kwok", "system:masters"},
	{"kueue", "system:masters"},
}

// newPKI writes the certificates, keys and token file into dir.
func newPKI(dir string) (*pki, error) {
	p := &pki{
		caCert: filepath.Join(dir, "ca.crt"), caKey: filepath.Join(dir, "ca.key"),
		serverCert: filepath.Join(dir, "apiserver.crt"), serverKey: filepath.Join(dir, "apiserver.key"),
		saKey: filepath.Join(dir, "sa.key"), saPub: filepath.Join(dir, "sa.pub"),
		tokenFile: filepath.Join(dir, "tokens.csv"), tokens: map[string]string{},
	}
	caKey, caDER, caCertDER, err := issue(&x509.Certificate{
		Subject:  pkix.Name{CommonName: "inlay-local-ca"},
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}, nil, nil)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caCertDER)
	_, srvDER, srvCertDER, err := issue(&x509.Certificate{
		Subject:  pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}, ca, caKey)
	if err != nil {
		return nil, err
	}
	saKey, saDER, err := newKey()
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	for _, w := range []struct {
		path, kind string
		der        []byte
	}{
		{p.caCert, "CERTIFICATE", caCertDER}, {p.caKey, "EC PRIVATE KEY", caDER},
		{p.serverCert, "CERTIFICATE", srvCertDER}, {p.serverKey, "EC PRIVATE KEY", srvDER},
		{p.saKey, "EC PRIVATE KEY", saDER}, {p.saPub, "PUBLIC KEY", saPubDER},
	} {
		if err := writePEM(w.path, w.kind, w.der); err != nil {
			return nil, err
		}
	}
	var csv []byte
	for i, u := range tokenUsers {
		t := randomToken()
		p.tokens[u.name] = t
		csv = fmt.Appendf(csv, "%s,%s,%d,\"%s\"\n", t, u.name, 1000+i, u.groups)
	}
	if err := os.WriteFile(p.tokenFile, csv, 0o600); err != nil {
		return nil, err
	}
	return p, nil
}
