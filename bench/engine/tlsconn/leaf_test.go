package tlsconn_test

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestLeafFingerprint: the client keeps the SHA-256 of the first observed
// connection's leaf certificate (DER), in lowercase hex, and the address it
// dials.
func TestLeafFingerprint(t *testing.T) {
	p, err := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var states []tls.ConnectionState
	var want []string
	for range 2 {
		leaf, err := ca.Leaf(p.ServerCertKey(), []string{"dut.test"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := x509.ParseCertificate(leaf.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, tls.ConnectionState{Version: tls.VersionTLS12, PeerCertificates: []*x509.Certificate{cert, ca.Cert}})
		sum := sha256.Sum256(leaf.Certificate[0])
		want = append(want, hex.EncodeToString(sum[:]))
	}
	c, err := tlsconn.NewEndpoint(tlsconn.Config{Settings: tlsconn.Settings{ConnectTimeout: time.Second, HandshakeTimeout: time.Second}, Profile: p, Address: "127.0.0.9:8443"})
	if err != nil {
		t.Fatal(err)
	}
	if c.LeafSHA256() != "" {
		t.Errorf("a fingerprint before any connection: %q", c.LeafSHA256())
	}
	c.Observe(&states[0])
	c.Observe(&states[1])
	if got := c.LeafSHA256(); got != want[0] {
		t.Errorf("fingerprint %q, want the first connection's %q", got, want[0])
	}
	if got := tlsconn.LeafFingerprint(&tls.ConnectionState{}); got != "" {
		t.Errorf("no certificate: %q", got)
	}
	if c.Address() != "127.0.0.9:8443" {
		t.Errorf("address %q", c.Address())
	}
}
