package target_test

import (
	"bytes"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// presented dials the listener of profile and returns what it presents, the
// chain verified against tg's CA by the profile's own client configuration.
func presented(t *testing.T, tg *target.Target, p *profiles.Profile) tls.ConnectionState {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	cfg := p.ClientConfig(&tls.Config{ServerName: "localhost", RootCAs: tg.CA.Pool()})
	c, err := tls.DialWithDialer(d, "tcp", tg.Listener(p.Name).Addr, cfg)
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	defer c.Close()
	cs := c.ConnectionState()
	if err := p.Verify(cs); err != nil {
		t.Errorf("%s: %v", p.Name, err)
	}
	return cs
}

// TestServeChain: the chain profile is served through an intermediate CA
// (leaf, intermediate, root), the others by the root directly; the root
// allows just the intermediates needed.
func TestServeChain(t *testing.T) {
	set := profiles.Builtin()
	chain, err := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256-chain")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	tg := startTarget(t, []*profiles.Profile{plain, chain}, nil)
	if got := tg.CA.Cert.MaxPathLen; got != 1 {
		t.Errorf("root's path length %d, want 1 (one intermediate for depth 3)", got)
	}
	cs := presented(t, tg, chain)
	certs := cs.PeerCertificates
	if len(certs) != 3 || !certs[1].IsCA || !bytes.Equal(certs[2].Raw, tg.CA.Cert.Raw) {
		t.Fatalf("chain profile presents %d certificates, want leaf, intermediate CA, root", len(certs))
	}
	if err := certs[0].CheckSignatureFrom(certs[1]); err != nil {
		t.Errorf("the leaf is not issued by the intermediate: %v", err)
	}
	if got := profiles.ChainDepth(certs); got != 3 {
		t.Errorf("ChainDepth %d, want 3", got)
	}
	if got := profiles.ChainDepth(presented(t, tg, plain).PeerCertificates); got != 2 {
		t.Errorf("plain profile: ChainDepth %d, want 2", got)
	}

	// A target without chains keeps a root that issues leaves only.
	flat := startTarget(t, []*profiles.Profile{plain}, nil)
	if got := flat.CA.Cert.MaxPathLen; got != 0 || !flat.CA.Cert.MaxPathLenZero {
		t.Errorf("root's path length %d without chain profiles, want 0", got)
	}

	// A given certificate must have the depth the profile expects.
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "given", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	given, err := ca.Leaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, err = target.Start(target.Config{Profiles: []*profiles.Profile{chain}, Cert: &given})
	if err == nil || !strings.Contains(err.Error(), "expects a chain of depth 3, the given certificate's is 2") {
		t.Errorf("a depth-2 certificate for the chain profile: %v, want a refusal", err)
	}
}

// TestRepeatedTargetsShareLeafKeys: targets started one after another in a
// process serve their RSA 4096 leaves with one key, generated once (each
// target's CA and certificates are still its own).
func TestRepeatedTargetsShareLeafKeys(t *testing.T) {
	p, err := profiles.Builtin().Get("rsa4096-aes256-gcm-sha384")
	if err != nil {
		t.Fatal(err)
	}
	a := startTarget(t, []*profiles.Profile{p}, nil)
	b := startTarget(t, []*profiles.Profile{p}, nil)
	la, lb := presented(t, a, p).PeerCertificates[0], presented(t, b, p).PeerCertificates[0]
	if !bytes.Equal(la.RawSubjectPublicKeyInfo, lb.RawSubjectPublicKeyInfo) {
		t.Error("two targets generated two RSA 4096 leaf keys")
	}
	if bytes.Equal(la.Raw, lb.Raw) || bytes.Equal(a.CA.Cert.RawSubjectPublicKeyInfo, b.CA.Cert.RawSubjectPublicKeyInfo) {
		t.Error("two targets share a certificate or a CA key")
	}
}
