package profiles_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

const chainName = "ecdhe-ecdsa-aes128-gcm-sha256-p256-chain"

// chainPKI is a root allowing one intermediate CA, the intermediate, and a
// P-256 leaf for localhost of each: a chain of depth 3 and one of depth 2.
type chainPKI struct {
	root, inter   *cipher.CA
	deep, shallow tls.Certificate // [leaf, intermediate, root]; [leaf, root]
	deepLeaf      *x509.Certificate
}

func newChainPKI(t *testing.T) *chainPKI {
	t.Helper()
	p256 := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	root, err := cipher.NewRootCA(p256, "chain root", time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	inter, err := root.Intermediate(p256, "chain intermediate", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	deep, err := inter.Leaf(p256, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	shallow, err := root.Leaf(p256, []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return &chainPKI{root: root, inter: inter, deep: deep, shallow: shallow, deepLeaf: deep.Leaf}
}

func TestChainDepth(t *testing.T) {
	k := newChainPKI(t)
	inter, root := k.inter.Cert, k.root.Cert
	tests := []struct {
		desc  string
		certs []*x509.Certificate
		want  int
	}{
		{"none", nil, 0},
		// The root alone is self-issued: its own root.
		{"self-signed", []*x509.Certificate{root}, 1},
		// A leaf issued by the root, sent with or without the root.
		{"leaf", []*x509.Certificate{k.shallow.Leaf}, 2},
		{"leaf, root", []*x509.Certificate{k.shallow.Leaf, root}, 2},
		// One intermediate CA, with or without the root.
		{"leaf, intermediate", []*x509.Certificate{k.deepLeaf, inter}, 3},
		{"leaf, intermediate, root", []*x509.Certificate{k.deepLeaf, inter, root}, 3},
		// The intermediate left out: the leaf looks issued by a root.
		{"leaf without its intermediate", []*x509.Certificate{k.deepLeaf}, 2},
	}
	for _, tt := range tests {
		if got := profiles.ChainDepth(tt.certs); got != tt.want {
			t.Errorf("%s: ChainDepth = %d, want %d", tt.desc, got, tt.want)
		}
	}
}

// TestChainDepthFields: the depth the reference target serves and the one
// every connection must present, from the built-in profiles and from
// documents that set one of them.
func TestChainDepthFields(t *testing.T) {
	for _, p := range profiles.Builtin().All() {
		wantServer, wantExpect := 2, 0
		if p.Name == chainName {
			wantServer, wantExpect = 3, 3
		}
		if got := p.ServerChainDepth(); got != wantServer {
			t.Errorf("%s: ServerChainDepth = %d, want %d", p.Name, got, wantServer)
		}
		if got := p.ExpectedChainDepth(); got != wantExpect {
			t.Errorf("%s: ExpectedChainDepth = %d, want %d", p.Name, got, wantExpect)
		}
	}
	const head = "name: x\nmin_version: TLS1.2\nmax_version: TLS1.2\ncipher_suites: [ECDHE-ECDSA-AES128-GCM-SHA256]\n" +
		"groups: [P-256]\n"
	tests := []struct {
		desc               string
		doc                string
		server, expect     int
		specServer, specEx int
	}{
		// expect alone: the reference target serves what is expected.
		{"expect only", head + "expect: {version: TLS1.2, chain_depth: 4}\n", 4, 4, 0, 4},
		// server alone: the device's own chain is not checked.
		{"server only", head + "expect: {version: TLS1.2}\nserver: {chain_depth: 5}\n", 5, 0, 5, 0},
		// Both, equal.
		{"both", head + "expect: {version: TLS1.2, chain_depth: 3}\nserver: {chain_depth: 3}\n", 3, 3, 3, 3},
		// Neither: leaf and root, nothing checked.
		{"neither", head + "expect: {version: TLS1.2}\n", 2, 0, 0, 0},
	}
	for _, tt := range tests {
		ps, err := profiles.Parse(tt.desc+".yaml", []byte(tt.doc))
		if err != nil {
			t.Errorf("%s: %v", tt.desc, err)
			continue
		}
		p := ps[0]
		if p.ServerChainDepth() != tt.server || p.ExpectedChainDepth() != tt.expect {
			t.Errorf("%s: ServerChainDepth %d, ExpectedChainDepth %d; want %d, %d", tt.desc,
				p.ServerChainDepth(), p.ExpectedChainDepth(), tt.server, tt.expect)
		}
		// The record's profile_spec (the profile as JSON) holds what was written.
		if p.Server.ChainDepth != tt.specServer || p.Expect.ChainDepth != tt.specEx {
			t.Errorf("%s: fields server %d, expect %d; want %d, %d", tt.desc, p.Server.ChainDepth,
				p.Expect.ChainDepth, tt.specServer, tt.specEx)
		}
	}
}

// TestVerifyChainDepth: the chain profile refuses a device that presents a
// leaf issued by the root, with the field, even when verification is off.
func TestVerifyChainDepth(t *testing.T) {
	k := newChainPKI(t)
	p := builtin(t, chainName)
	state := func(c tls.Certificate) tls.ConnectionState {
		var certs []*x509.Certificate
		for _, der := range c.Certificate {
			x, err := x509.ParseCertificate(der)
			if err != nil {
				t.Fatal(err)
			}
			certs = append(certs, x)
		}
		return tls.ConnectionState{Version: tls.VersionTLS12, CipherSuite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			CurveID: tls.CurveP256, PeerCertificates: certs}
	}
	checkVerify(t, "depth 3", p, p.Verify(state(k.deep)), "", "", "")
	checkVerify(t, "depth 2", p, p.Verify(state(k.shallow)), "chain_depth", "3", "2")
	insecure := p.ClientConfig(&tls.Config{InsecureSkipVerify: true}).VerifyConnection
	checkVerify(t, "depth 2, insecure", p, insecure(state(k.shallow)), "chain_depth", "3", "2")
	// A profile that does not ask for a depth takes either.
	plain := builtin(t, "ecdhe-ecdsa-aes128-gcm-sha256-p256")
	checkVerify(t, "no depth asked", plain, plain.Verify(state(k.shallow)), "", "", "")
}

// TestHandshakeIntermediate: a server that presents its intermediate CA
// passes the client's verification; the same leaf without it fails with a
// certificate verification error, also after the full chain was verified
// once (the verified chains are remembered by the whole chain, not the leaf).
func TestHandshakeIntermediate(t *testing.T) {
	k := newChainPKI(t)
	for _, name := range []string{chainName, "ecdhe-ecdsa-aes128-gcm-sha256-p256"} {
		t.Run(name, func(t *testing.T) {
			p := builtin(t, name)
			client := p.ClientConfig(&tls.Config{ServerName: "localhost", RootCAs: k.root.Pool()})
			r := handshake(t, client, p.ServerConfig(k.deep))
			if r.clientErr != nil || r.serverErr != nil {
				t.Fatalf("leaf and intermediate: client %v, server %v", r.clientErr, r.serverErr)
			}
			if err := p.Verify(r.client); err != nil {
				t.Errorf("Verify: %v", err)
			}
			if got := len(r.client.PeerCertificates); got != 3 {
				t.Errorf("the client saw %d certificates, want 3 (leaf, intermediate, root)", got)
			}
			// The same leaf, its intermediate left out (the root still sent).
			withoutInter := k.deep
			withoutInter.Certificate = [][]byte{k.deep.Certificate[0], k.deep.Certificate[2]}
			r = handshake(t, client, p.ServerConfig(withoutInter))
			var cve *tls.CertificateVerificationError
			if !errors.As(r.clientErr, &cve) {
				t.Fatalf("without the intermediate: client error %v, want a *tls.CertificateVerificationError", r.clientErr)
			}
			var uae x509.UnknownAuthorityError
			if !errors.As(r.clientErr, &uae) {
				t.Errorf("without the intermediate: %v, want an unknown authority", r.clientErr)
			}
		})
	}
}
