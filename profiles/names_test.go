package profiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
)

// namesCA is a CA and a leaf it issued for hosts.
func namesCA(t *testing.T, hosts ...string) (*cipher.CA, []*x509.Certificate) {
	t.Helper()
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "names CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Leaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, hosts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca, []*x509.Certificate{leaf.Leaf}
}

// TestClientConfigsPerName: each name's configuration sends and verifies
// its own name; one leaf accepted for a name is not thereby accepted for
// another (the cache is keyed by the pair); a trusted leaf for another name
// fails with an x509.HostnameError alone, an untrusted one with the chain's
// error first.
func TestClientConfigsPerName(t *testing.T) {
	p, err := Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	ca, leafA := namesCA(t, "a.test")
	_, foreign := namesCA(t, "b.test")
	cfgs := p.ClientConfigs(&tls.Config{RootCAs: ca.Pool()}, []string{"a.test", "b.test"})
	if len(cfgs) != 2 || cfgs[0].ServerName != "a.test" || cfgs[1].ServerName != "b.test" {
		t.Fatalf("configs' names %q, %q; want a.test, b.test", cfgs[0].ServerName, cfgs[1].ServerName)
	}
	cs := func(certs []*x509.Certificate) tls.ConnectionState {
		return tls.ConnectionState{Version: tls.VersionTLS12, CipherSuite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
			PeerCertificates: certs}
	}
	for range 2 { // the second time from the cache
		if err := cfgs[0].VerifyConnection(cs(leafA)); err != nil {
			t.Fatalf("a.test's leaf for a.test: %v", err)
		}
		var hne x509.HostnameError
		if err := cfgs[1].VerifyConnection(cs(leafA)); !errors.As(err, &hne) {
			t.Errorf("a.test's leaf for b.test: %v, want an x509.HostnameError", err)
		}
	}
	var uae x509.UnknownAuthorityError
	var hne x509.HostnameError
	if err := cfgs[0].VerifyConnection(cs(foreign)); !errors.As(err, &uae) || errors.As(err, &hne) {
		t.Errorf("an untrusted leaf for b.test, verified for a.test: %v, want the chain's error", err)
	}
	insecure := p.ClientConfigs(&tls.Config{InsecureSkipVerify: true}, []string{"a.test"})
	if err := insecure[0].VerifyConnection(cs(foreign)); err != nil {
		t.Errorf("InsecureSkipVerify: %v, want nothing verified", err)
	}
}

// TestChainCacheOnce: with many names and one leaf, the chain is verified
// once (the roots removed after the first name, the others still pass: the
// chain came from the cache) and each name against the leaf; the pairs kept
// are bounded, and past the bound a name is still verified.
func TestChainCacheOnce(t *testing.T) {
	names := make([]string, 300)
	for i := range names {
		names[i] = fmt.Sprintf("www%d.test", i+1)
	}
	ca, leaf := namesCA(t, names...)
	c := newChainCache(ca.Pool(), len(names))
	c.max = 200
	if err := c.verify(leaf, names[0]); err != nil {
		t.Fatal(err)
	}
	c.roots = x509.NewCertPool() // an empty pool: a chain verified again fails
	for _, name := range names {
		if err := c.verify(leaf, name); err != nil {
			t.Fatalf("%s: %v (the chain was verified again?)", name, err)
		}
	}
	if len(c.leaves) != 1 || c.pairs != c.max {
		t.Errorf("%d leaves, %d pairs kept; want 1 and the bound %d", len(c.leaves), c.pairs, c.max)
	}
	var hne x509.HostnameError
	if err := c.verify(leaf, "other.test"); !errors.As(err, &hne) {
		t.Errorf("a name the leaf lacks, past the bound: %v, want an x509.HostnameError", err)
	}
}

// BenchmarkVerifyNames is the verification of a handshake (VerifyConnection)
// with one name, and with 1,000 names taken in turn, one leaf valid for
// all (a wildcard): from the cache, both cost the same.
func BenchmarkVerifyNames(b *testing.B) {
	p, err := Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		b.Fatal(err)
	}
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "names CA", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	leaf, err := ca.Leaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, []string{"*.tlsbench.test"}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	cs := tls.ConnectionState{Version: tls.VersionTLS12, CipherSuite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
		PeerCertificates: []*x509.Certificate{leaf.Leaf}}
	for _, n := range []int{1, 1000} {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("www%d.tlsbench.test", i+1)
		}
		cfgs := p.ClientConfigs(&tls.Config{RootCAs: ca.Pool()}, names)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := cfgs[i%n].VerifyConnection(cs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestChainCacheWrongName: a trusted leaf refused for a name keeps its
// verified chain (the name's next try checks the name only, still refused),
// and the leaves kept are bounded too.
func TestChainCacheWrongName(t *testing.T) {
	ca, leaf := namesCA(t, "a.test")
	c := newChainCache(ca.Pool(), 1)
	var hne x509.HostnameError
	if err := c.verify(leaf, "b.test"); !errors.As(err, &hne) {
		t.Fatalf("b.test: %v, want an x509.HostnameError", err)
	}
	c.roots = x509.NewCertPool()
	for _, name := range []string{"b.test", "a.test"} {
		err := c.verify(leaf, name)
		if (name == "a.test") != (err == nil) {
			t.Errorf("%s from the cached chain: %v", name, err)
		}
	}
	c = newChainCache(ca.Pool(), 1)
	c.max = 2
	for i := range 4 {
		other, err := ca.Leaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, []string{fmt.Sprintf("x%d.test", i)},
			time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.verify([]*x509.Certificate{other.Leaf}, "y.test"); !errors.As(err, &hne) {
			t.Fatalf("x%d.test's leaf for y.test: %v", i, err)
		}
	}
	if len(c.leaves) != c.max || c.pairs != 0 {
		t.Errorf("%d leaves, %d pairs kept; want the bound %d, none", len(c.leaves), c.pairs, c.max)
	}
}
