package controlplane

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"
)

// TestPKI: the API server's certificate is the CA's, for its names and
// addresses, and the CA signs itself.
func TestPKI(t *testing.T) {
	p, err := newPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) *x509.Certificate {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := pem.Decode(data)
		if b == nil {
			t.Fatalf("%s: no PEM block", path)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ca, srv := read(p.caCert), read(p.serverCert)
	if !ca.IsCA || ca.CheckSignatureFrom(ca) != nil {
		t.Errorf("CA: IsCA %v, self-signed: %v", ca.IsCA, ca.CheckSignatureFrom(ca))
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, name := range []string{"localhost", "kubernetes.default.svc", "127.0.0.1", "10.96.0.1"} {
		if _, err := srv.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("server certificate for %s: %v", name, err)
		}
	}
	if ca.SerialNumber.Cmp(srv.SerialNumber) == 0 {
		t.Error("the CA and the server certificate share a serial number")
	}
	if len(p.tokens) != len(tokenUsers) {
		t.Errorf("%d tokens, want %d", len(p.tokens), len(tokenUsers))
	}
}
