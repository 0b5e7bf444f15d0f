package cipher_test

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
)

// TestClientLeaf: a client certificate verifies against its CA for client
// authentication (not for a server), also once the CA has been written and
// loaded back (LoadCA of CertPEM and KeyPEM); LoadCA refuses a leaf.
func TestClientLeaf(t *testing.T) {
	p256 := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	ca, err := cipher.NewCA(p256, "client CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := cipher.LoadCA(ca.CertPEM(), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	for name, issuer := range map[string]*cipher.CA{"generated": ca, "loaded": loaded} {
		leaf, err := issuer.ClientLeaf(cipher.KeyType{Alg: "RSA", Bits: 2048}, "client", 24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if kt, _ := cipher.KeyTypeOf(leaf.Leaf.PublicKey); kt.String() != "RSA 2048" {
			t.Errorf("%s: leaf key %s", name, kt)
		}
		if !leaf.Leaf.NotAfter.Equal(ca.Cert.NotAfter) {
			t.Errorf("%s: leaf valid until %s, past its CA's %s", name, leaf.Leaf.NotAfter, ca.Cert.NotAfter)
		}
		opts := x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		if _, err := leaf.Leaf.Verify(opts); err != nil {
			t.Errorf("%s: client certificate does not verify for client auth: %v", name, err)
		}
		opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		if _, err := leaf.Leaf.Verify(opts); err == nil {
			t.Errorf("%s: client certificate verifies for a server", name)
		}
	}
	leaf, err := ca.ClientLeaf(p256, "client", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, _ := cipher.KeyPEM(leaf.PrivateKey)
	if _, err := cipher.LoadCA(cipher.ChainPEM(leaf)[:0:0], leafKey); err == nil {
		t.Error("LoadCA of no certificate succeeded")
	}
	if _, err := cipher.LoadCA(cipher.ChainPEM(leaf), leafKey); err == nil || !strings.Contains(err.Error(), "not a CA") {
		t.Errorf("LoadCA of a leaf: %v, want not a CA", err)
	}
	if _, err := cipher.LoadCA(ca.CertPEM(), leafKey); err == nil {
		t.Error("LoadCA with another key succeeded")
	}
}
