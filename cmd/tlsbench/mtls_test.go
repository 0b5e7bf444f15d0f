package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

const mtlsProfileName = "ecdhe-ecdsa-aes128-gcm-sha256-p256-mtls"

// writeCertFiles writes a certificate's chain and key as two PEM files in
// dir, named after base.
func writeCertFiles(t *testing.T, dir, base string, c tls.Certificate) (certFile, keyFile string) {
	t.Helper()
	key, err := cipher.KeyPEM(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, base+".pem"), filepath.Join(dir, base+".key")
	if err := os.WriteFile(certFile, cipher.ChainPEM(c), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestMTLSBadInput: client-certificate mistakes exit 2 with one line naming
// the problem, before any connection (the URL's port is closed).
func TestMTLSBadInput(t *testing.T) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	p256 := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	ecLeaf, err := ca.ClientLeaf(p256, "c", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rsaLeaf, err := ca.ClientLeaf(cipher.KeyType{Alg: "RSA", Bits: 2048}, "c", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ecCert, ecKey := writeCertFiles(t, dir, "ec", ecLeaf)
	rsaCert, rsaKey := writeCertFiles(t, dir, "rsa", rsaLeaf)
	caCert := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caCert, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.key")
	const url = "https://127.0.0.1:1/"
	mtls := []string{"cps", "--profile", mtlsProfileName}
	with := func(args ...string) []string { return append(append([]string{}, mtls...), args...) }
	for _, tc := range []badCase{
		{with("--cert", ecCert, "--key", missing, url), "--cert/--key: open " + missing + ": no such file"},
		{with("--cert", ecCert, url), "--cert and --key go together"},
		{with("--cert", ecCert, "--key", rsaKey, url), "does not match public key"},
		{with("--cert", rsaCert, "--key", rsaKey, url), "requires client_cert ECDSA P-256, the given certificate's " +
			"key is RSA 2048"},
		{with(url), "profile " + mtlsProfileName + " requires a client certificate: give --cert and --key, or " +
			"--client-ca and --client-ca-key, or --client-ca-out"},
		{with("--client-ca", caCert, url), "--client-ca and --client-ca-key go together"},
		{with("--client-ca", ecCert, "--client-ca-key", ecKey, url), "--client-ca " + ecCert + ": the certificate"},
		{with("--client-ca", caCert, "--client-ca-key", missing, url), "--client-ca-key: open " + missing},
		{with("--client-ca-key-out", filepath.Join(dir, "k"), url), "--client-ca-key-out writes the key of the CA " +
			"of --client-ca-out"},
		{with("--client-ca-out", filepath.Join(dir, "no", "ca.pem"), url), "--client-ca-out"},
		{with("--cert", ecCert, "--key", ecKey, "--client-ca-out", filepath.Join(dir, "o.pem"), url),
			"--cert gives the client certificate"},
		{[]string{"cps", "--client-ca-out", filepath.Join(dir, "o.pem"), url}, "requires none: give --cert and --key"},
		{[]string{"serve", "--client-auth", "always"}, `bad --client-auth "always"`},
		{[]string{"serve", "--client-auth", "require"}, "--client-auth require verifies client certificates: give " +
			"--client-ca"},
		{[]string{"serve", "--client-ca-key-out", filepath.Join(dir, "k")}, "--client-ca-key-out writes the key"},
	} {
		code, stderr, timedOut := invokeBounded(t, 10*time.Second, tc.args...)
		switch {
		case timedOut:
			t.Errorf("%q: still running after 10 s", tc.args)
		case code != exitBadUsage:
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, exitBadUsage, stderr)
		case strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want):
			t.Errorf("%q: stderr %q, want one line naming %q", tc.args, stderr, tc.want)
		}
	}
}

// TestMTLSWritesTheCA: a run against the in-process target writes the CA
// it generated (0644) and, asked, its key (0600, even over a file that was
// 0644), before the load; a second run reuses them (--client-ca,
// --client-ca-key) and its client certificate is verified by the target.
// serve writes its generated client CA the same way.
func TestMTLSWritesTheCA(t *testing.T) {
	dir := t.TempDir()
	caOut, keyOut := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.key")
	if err := os.WriteFile(keyOut, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	short := []string{"-q", "-d", "300ms", "--warmup", "0", "-c", "2", "--profile", mtlsProfileName}
	ctx := context.Background()
	code, _, stderr := invoke(t, ctx, append([]string{"cps", "--client-ca-out", caOut, "--client-ca-key-out", keyOut},
		short...)...)
	if code != exitOK {
		t.Fatalf("cps --client-ca-out: exit %d: %s", code, stderr)
	}
	checkMode(t, caOut, 0o644)
	checkMode(t, keyOut, 0o600)
	cert, _ := os.ReadFile(caOut)
	key, _ := os.ReadFile(keyOut)
	if _, err := cipher.LoadCA(cert, key); err != nil {
		t.Fatalf("the CA written does not load: %v", err)
	}
	record := filepath.Join(dir, "r.json")
	code, _, stderr = invoke(t, ctx, append([]string{"cps", "--client-ca", caOut, "--client-ca-key", keyOut,
		"--json", record}, short...)...)
	if code != exitOK {
		t.Fatalf("cps --client-ca: exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(record)
	schematest.Valid(t, schemas.Run, "the record", data)
	var r metrics.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	cc := r.Target.ClientCert
	if cc == nil || cc.Source != "ca_file" || cc.Requested != r.Whole.Transactions+r.Preflight.Transactions ||
		r.Errors.Total != 0 {
		t.Errorf("record: client certificate %+v, %d transactions + %d preflight, %d errors: want one from "+
			"--client-ca, requested in every transaction", cc, r.Whole.Transactions, r.Preflight.Transactions,
			r.Errors.Total)
	}

	sdir := t.TempDir()
	sca, skey := filepath.Join(sdir, "client-ca.pem"), filepath.Join(sdir, "client-ca.key")
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	code, _, stderr = invoke(t, sctx, "serve", "--port", "0", "--profile", mtlsProfileName, "--client-auth", "require",
		"--client-ca-out", sca, "--client-ca-key-out", skey)
	if code != exitOK {
		t.Fatalf("serve: exit %d: %s", code, stderr)
	}
	checkMode(t, sca, 0o644)
	checkMode(t, skey, 0o600)
}

func checkMode(t *testing.T, file string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != want {
		t.Errorf("%s: mode %#o, want %#o", file, got, want)
	}
}
