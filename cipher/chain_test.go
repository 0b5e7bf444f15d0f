package cipher_test

import (
	"bytes"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
)

// TestIntermediateChain: a root that allows two intermediate CAs issues one,
// which issues another, whose leaves are served with the whole chain and
// verify only with the intermediates given.
func TestIntermediateChain(t *testing.T) {
	p256 := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	root, err := cipher.NewRootCA(p256, "chain test root", time.Hour, 2)
	if err != nil {
		t.Fatal(err)
	}
	inter1, err := root.Intermediate(p256, "chain test intermediate 1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	inter2, err := inter1.Intermediate(p256, "chain test intermediate 2", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The root's path length is used up.
	if _, err := inter2.Intermediate(p256, "one too many", time.Hour); err == nil ||
		!strings.Contains(err.Error(), "may not issue intermediate CAs") {
		t.Errorf("a third intermediate under a root allowing two: err %v, want a refusal", err)
	}
	for _, ca := range []*cipher.CA{inter1, inter2} {
		c := ca.Cert
		if !c.IsCA || c.KeyUsage&x509.KeyUsageCertSign == 0 {
			t.Errorf("%s: IsCA %v, KeyUsage %b: not a CA", c.Subject.CommonName, c.IsCA, c.KeyUsage)
		}
		if bytes.Equal(c.RawSubjectPublicKeyInfo, root.Cert.RawSubjectPublicKeyInfo) {
			t.Errorf("%s shares the root's key", c.Subject.CommonName)
		}
	}

	leaf, err := inter2.Leaf(p256, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{leaf.Leaf.Raw, inter2.Cert.Raw, inter1.Cert.Raw, root.Cert.Raw}
	if got := leaf.Certificate; len(got) != len(want) {
		t.Fatalf("chain of %d certificates, want %d (leaf, intermediate 2, intermediate 1, root)", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(leaf.Certificate[i], want[i]) {
			t.Errorf("chain[%d] is not the expected certificate", i)
		}
	}

	inters := x509.NewCertPool()
	for _, der := range leaf.Certificate[1:] {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		inters.AddCert(c)
	}
	opts := x509.VerifyOptions{DNSName: "localhost", Roots: root.Pool(), Intermediates: inters}
	chains, err := leaf.Leaf.Verify(opts)
	if err != nil {
		t.Fatalf("the served chain does not verify: %v", err)
	}
	if got := len(chains[0]); got != 4 {
		t.Errorf("verified chain of %d certificates, want 4", got)
	}
	// Without the intermediates, the leaf does not reach the root.
	opts.Intermediates = nil
	if _, err := leaf.Leaf.Verify(opts); err == nil {
		t.Error("the leaf verifies without its intermediates")
	}
}

// TestNewCAIssuesNoIntermediate: NewCA's root has path length 0.
func TestNewCAIssuesNoIntermediate(t *testing.T) {
	p256 := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	root := newCA(t, p256)
	if !root.Cert.MaxPathLenZero || root.Cert.MaxPathLen != 0 {
		t.Errorf("NewCA: MaxPathLen %d, zero %v; want path length 0", root.Cert.MaxPathLen, root.Cert.MaxPathLenZero)
	}
	if _, err := root.Intermediate(p256, "x", time.Hour); err == nil {
		t.Error("NewCA's root issued an intermediate CA")
	}
	if _, err := cipher.NewRootCA(p256, "x", time.Hour, -1); err == nil {
		t.Error("NewRootCA with -1 intermediates succeeded")
	}
	if _, err := cipher.NewRootCA(cipher.KeyType{Alg: "ECDSA"}, "x", time.Hour, 1); err == nil {
		t.Error("NewRootCA without a curve succeeded")
	}
}

// TestLeafKeyShared: leaves of one key type share the process's key, and
// sharing it trusts nothing more: each leaf verifies only against its own CA.
func TestLeafKeyShared(t *testing.T) {
	p384 := cipher.KeyType{Alg: "ECDSA", Curve: "P-384"}
	k1, err := cipher.LeafKey(p384)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := cipher.LeafKey(p384)
	if err != nil {
		t.Fatal(err)
	}
	if k1 != k2 {
		t.Error("LeafKey returned two keys for one key type")
	}
	if got, _ := cipher.KeyTypeOf(k1.Public()); got != p384 {
		t.Errorf("LeafKey(%v) is %v", p384, got)
	}
	if k3, err := cipher.LeafKey(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}); err != nil || k3 == k1 {
		t.Errorf("LeafKey(P-256) = the P-384 key or %v", err)
	}
	if _, err := cipher.LeafKey(cipher.KeyType{Alg: "RSA"}); err == nil {
		t.Error("LeafKey without a size succeeded")
	}

	p256 := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	a, b := newCA(t, p256), newCA(t, p256)
	leafA, err := a.Leaf(p384, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leafB, err := b.Leaf(p384, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(leafA.Leaf.RawSubjectPublicKeyInfo, leafB.Leaf.RawSubjectPublicKeyInfo) {
		t.Error("two leaves of one key type have different keys")
	}
	if _, err := leafA.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: b.Pool()}); err == nil {
		t.Error("a leaf of CA a verifies against CA b, which shares its leaf key")
	}
	if _, err := leafB.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: b.Pool()}); err != nil {
		t.Errorf("a leaf of CA b does not verify against CA b: %v", err)
	}
}
