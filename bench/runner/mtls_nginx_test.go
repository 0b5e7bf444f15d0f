package runner_test

// Mutual TLS against nginx with ssl_verify_client on: its access log says,
// for every request, whether the client certificate was verified
// ($ssl_client_verify) and which it was ($ssl_client_fingerprint).

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// writeClientCert writes a client certificate's chain and key as PEM
// files (the key 0600) and returns their names.
func writeClientCert(t *testing.T, c tls.Certificate) (certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	key, err := cipher.KeyPEM(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, cipher.ChainPEM(c), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// startMTLSNginx starts nginx requiring a client certificate of the CA
// trusted, logging each request's verification and client fingerprint.
func startMTLSNginx(t *testing.T, serverCA, trusted *cipher.CA) (addr, log string) {
	t.Helper()
	dir := t.TempDir()
	cert := testdut.Leaf(t, serverCA, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	clientCAs := filepath.Join(dir, "client-ca.pem")
	if err := os.WriteFile(clientCAs, trusted.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "mtls.log")
	n := testdut.StartNginxT(t, testdut.NginxConfig{
		Dir:  dir,
		HTTP: []string{"log_format mtls '$ssl_client_verify $ssl_client_fingerprint $status';"},
		Servers: []testdut.NginxServer{{
			Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256", Curve: "prime256v1",
			Extra: []string{"ssl_verify_client on;", "ssl_client_certificate " + clientCAs + ";",
				"access_log " + log + " mtls;"},
		}},
	})
	return n.Addrs[0], log
}

// logLines reads nginx's mtls log once it has settled (nginx writes a
// request's line once its response is sent).
func logLines(t *testing.T, file string) []string {
	t.Helper()
	var last []byte
	for i := 0; i < 20; i++ {
		data, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if i > 2 && len(data) == len(last) {
			break
		}
		last = data
		time.Sleep(20 * time.Millisecond)
	}
	if s := strings.TrimSpace(string(last)); s != "" {
		return strings.Split(s, "\n")
	}
	return nil
}

// TestMTLSNginxCounts: every request of a run with the mTLS profile (TLS
// 1.2) reaches nginx with its client certificate verified, the same one
// throughout: nginx's SUCCESS lines are exactly the run's transactions and
// its preflight's, with one fingerprint, the SHA-1 of the certificate given.
func TestMTLSNginxCounts(t *testing.T) {
	serverCA, clientCA := testdut.NewCA(t), testdut.NewCA(t)
	addr, log := startMTLSNginx(t, serverCA, clientCA)
	leaf, err := clientCA.ClientLeaf(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "tlsbench test client", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	spec := mtlsSpec(mtlsProfile, addr, serverCA.Pool())
	spec.ClientCertFile, spec.ClientKeyFile = writeClientCert(t, leaf)
	r, err := runner.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	lines := logLines(t, log)
	sum := sha1.Sum(leaf.Certificate[0])
	want := "SUCCESS " + hex.EncodeToString(sum[:]) + " 200"
	good := 0
	for _, l := range lines {
		if l == want {
			good++
		}
	}
	t.Logf("run: %d transactions + %d preflight, %d errors; nginx: %d lines, %d %q", r.Whole.Transactions,
		r.Preflight.Transactions, r.Errors.Total, len(lines), good, want)
	if r.Errors.Total != 0 || r.Whole.Transactions == 0 {
		t.Fatalf("errors %+v, %d transactions: want a clean run", r.Errors, r.Whole.Transactions)
	}
	if n := r.Whole.Transactions + r.Preflight.Transactions; int64(good) != n || len(lines) != good {
		t.Errorf("nginx logged %d lines, %d of them %q; the run made %d transactions with its preflight",
			len(lines), good, want, n)
	}
	if cc := r.Target.ClientCert; cc == nil || cc.Source != "file" || cc.Key != "ECDSA P-256" ||
		cc.Requested != int64(good) {
		t.Errorf("record's client certificate %+v, want the file's ECDSA P-256, requested %d times", cc, good)
	}
}

// TestMTLSNginxWrongCA: nginx trusts another client CA. nginx answers the
// refused certificate with HTTP 400 once the handshake is done, not with an
// alert (its verify callback accepts every certificate), so the preflight
// fails as a status error: within a second, no load sent, nginx seeing the
// preflight's requests only, each logged FAILED.
func TestMTLSNginxWrongCA(t *testing.T) {
	serverCA, trusted := testdut.NewCA(t), testdut.NewCA(t)
	addr, log := startMTLSNginx(t, serverCA, trusted)
	spec := mtlsSpec(mtlsProfile, addr, serverCA.Pool())
	spec.ClientCA = testdut.NewCA(t) // not the one nginx trusts
	begin := time.Now()
	r, err := runner.Run(context.Background(), spec)
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	pf := r.Preflight
	lines := logLines(t, log)
	t.Logf("returned in %s; preflight %+v; nginx logged %q", took.Round(time.Microsecond), pf, lines)
	if pf.OK || pf.Class != vocab.ClassStatus || !strings.Contains(pf.Error, "400") {
		t.Fatalf("preflight %+v, want failed with status 400", pf)
	}
	if took >= time.Second || r.Load.Attempts != 0 || r.Whole.Transactions+r.Whole.Errors != 0 {
		t.Errorf("took %s, %d load attempts, whole run %+v: want under a second, no load", took, r.Load.Attempts,
			r.Whole)
	}
	if int64(len(lines)) != pf.Transactions || pf.Transactions > engine.PreflightAttempts {
		t.Errorf("nginx logged %d requests, the preflight made %d", len(lines), pf.Transactions)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "FAILED:") || !strings.HasSuffix(l, " 400") {
			t.Errorf("nginx logged %q, want a FAILED verification answered 400", l)
		}
	}
}
