package runner_test

// Mutual TLS against the reference target: the run's client certificate is
// verified on every handshake (the target's count of verified client
// certificates equals the run's handshakes), and a certificate the target
// refuses, or none, fails the preflight with client_cert_refused.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

const mtlsProfile = "ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls"

// mtlsSpec is a short CPS run of profile against addr, verified with roots.
func mtlsSpec(profile, addr string, roots *x509.CertPool) *runner.Spec {
	s := runner.Defaults(vocab.EngineCPS)
	s.Profile, s.Target = profile, metrics.Target{Address: addr, ServerName: "localhost"}
	s.Roots, s.ConnectTimeout, s.HandshakeTimeout, s.ReadTimeout = roots, 2*time.Second, 2*time.Second, 2*time.Second
	s.Host, s.Path, s.UserAgent = "localhost", "/1k", "tlsbench/test"
	s.Concurrency, s.Duration, s.Warmup = 4, 700*time.Millisecond, 0
	return &s
}

// TestMTLSReferenceTarget: the target requires a client certificate of its
// client CA. The run with the mTLS profile, its certificate issued by that
// CA, has no error, and every handshake the target counted had a verified
// client certificate, as many as the run's transactions and its
// preflight's. Runs with a certificate of another CA (TLS 1.2: the alert
// is the handshake's) or with none (TLS 1.3: the alert comes on the first
// read; TLS 1.2: handshake_failure, after the server asked) fail their
// preflight with client_cert_refused, naming the alert.
func TestMTLSReferenceTarget(t *testing.T) {
	set := profiles.Builtin()
	mtls, _ := set.Get(mtlsProfile)
	tls13, _ := set.Get("tls13-aes128-gcm-x25519")
	tls12, _ := set.Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	clientCA, otherCA := testdut.NewCA(t), testdut.NewCA(t)
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{mtls, tls13, tls12}, ClientCAs: clientCA.Pool(),
		ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	l := tg.Listener(mtlsProfile)

	spec := mtlsSpec(mtlsProfile, l.Addr, tg.CA.Pool())
	spec.ClientCA = clientCA
	r, err := runner.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	st := l.Stats()
	t.Logf("run: %d transactions, %d errors; target: %d handshakes, %d client certificates verified",
		r.Whole.Transactions, r.Errors.Total, st.Handshakes, st.ClientCerts)
	if r.Errors.Total != 0 || r.Whole.Transactions == 0 || !r.Preflight.OK {
		t.Fatalf("errors %+v, %d transactions, preflight %+v: want a clean run", r.Errors, r.Whole.Transactions,
			r.Preflight)
	}
	if want := r.Whole.Transactions + r.Preflight.Transactions; st.ClientCerts != want || st.Handshakes != want {
		t.Errorf("target verified %d client certificates in %d handshakes, want both %d (whole run + preflight)",
			st.ClientCerts, st.Handshakes, want)
	}
	cc := r.Target.ClientCert
	if cc == nil || cc.Key != "ECDSA P-256" || cc.Source != "generated" || len(cc.SHA256) != 64 ||
		cc.Requested != st.Handshakes {
		t.Errorf("record's client certificate %+v, want a generated ECDSA P-256 one with its SHA-256, requested "+
			"in the %d handshakes", cc, st.Handshakes)
	}

	for _, tc := range []struct {
		name, profile string
		ca            *cipher.CA
		alert         string // crypto/tls's words in the error
	}{
		{"another CA, TLS 1.2", mtlsProfile, otherCA, "unknown certificate authority"},
		{"none, TLS 1.3", tls13.Name, nil, "certificate required"},
		// TLS 1.2 servers send handshake_failure: the run knows the server asked.
		{"none, TLS 1.2", tls12.Name, nil, "asked for a client certificate and the run has none: remote error: " +
			"tls: handshake failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := mtlsSpec(tc.profile, tg.Listener(tc.profile).Addr, tg.CA.Pool())
			spec.ClientCA = tc.ca
			begin := time.Now()
			r, err := runner.Run(context.Background(), spec)
			took := time.Since(begin)
			if err != nil {
				t.Fatal(err)
			}
			pf := r.Preflight
			t.Logf("preflight in %s: %+v", took.Round(time.Microsecond), pf)
			if pf.OK || pf.Class != vocab.ClassClientCertRefused || !strings.Contains(pf.Error, tc.alert) {
				t.Fatalf("preflight %+v, want failed with %s naming %q", pf, vocab.ClassClientCertRefused, tc.alert)
			}
			if took >= time.Second || pf.Transactions > engine.PreflightAttempts || r.Load.Attempts != 0 {
				t.Errorf("took %s, %d preflight transactions, %d load attempts: want under 1 s and no load", took,
					pf.Transactions, r.Load.Attempts)
			}
		})
	}
}

// TestMTLSNotAsked: a server that does not ask for a client certificate
// fails the preflight of a profile that requires one (a mismatch naming
// client_cert): the run would not measure mutual TLS. No load is sent.
func TestMTLSNotAsked(t *testing.T) {
	mtls, _ := profiles.Builtin().Get(mtlsProfile)
	tg := testdut.StartTarget(t, mtls) // no client CA: asks for no certificate
	spec := mtlsSpec(mtlsProfile, tg.Listeners[0].Addr, tg.CA.Pool())
	spec.ClientCA = testdut.NewCA(t)
	r, err := runner.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	pf := r.Preflight
	t.Logf("preflight %+v", pf)
	if pf.OK || pf.Class != vocab.ClassMismatch || !strings.Contains(pf.Error, "client_cert not asked for") {
		t.Fatalf("preflight %+v, want a client_cert mismatch", pf)
	}
	if r.Load.Attempts != 0 || tg.Listeners[0].Stats().Handshakes != pf.Handshakes {
		t.Errorf("%d load attempts, target saw %d handshakes: want the preflight's %d only", r.Load.Attempts,
			tg.Listeners[0].Stats().Handshakes, pf.Handshakes)
	}
	if cc := r.Target.ClientCert; cc == nil || cc.Requested != 0 {
		t.Errorf("record's client certificate %+v, want requested 0", cc)
	}
}

// TestMTLSSpecNeedsACertificate: a spec whose profile requires a client
// certificate and gives no way to get one is invalid, and a given
// certificate whose key is not the profile's type is refused before any
// connection.
func TestMTLSSpecNeedsACertificate(t *testing.T) {
	spec := mtlsSpec(mtlsProfile, "127.0.0.1:1", nil)
	err := spec.Validate()
	if err == nil || !strings.Contains(err.Error(), "requires a client certificate") {
		t.Errorf("Validate() = %v, want the profile's client certificate missing", err)
	}
	spec.ClientCA = testdut.NewCA(t)
	if err := spec.Validate(); err != nil {
		t.Errorf("with a CA: Validate() = %v", err)
	}
	// An RSA certificate for an ECDSA client_cert.
	ca := testdut.NewCA(t)
	leaf, err := ca.ClientLeaf(cipher.KeyType{Alg: "RSA", Bits: 2048}, "c", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := writeClientCert(t, leaf)
	spec = mtlsSpec(mtlsProfile, "127.0.0.1:1", nil)
	spec.ClientCertFile, spec.ClientKeyFile = certFile, keyFile
	_, err = runner.Run(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "requires client_cert ECDSA P-256, the given certificate's key is RSA 2048") {
		t.Errorf("Run with an RSA certificate: %v, want the key type refused", err)
	}
}
