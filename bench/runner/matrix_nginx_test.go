package runner_test

// RFC 9411's key matrix (the built-in profiles of issue 29) against nginx
// (OpenSSL): every profile negotiates exactly what it names, and a chain
// with an intermediate CA is verified through it.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// matrixRow is one profile of the matrix and how nginx is set up for it.
type matrixRow struct {
	profile string
	key     cipher.KeyType
	ciphers string // ssl_ciphers
	curve   string // ssl_ecdh_curve; "": nginx's default (RSA key exchange uses none)
	chain   bool   // served through an intermediate CA
	want    metrics.Negotiated
}

var matrixRows = []matrixRow{
	{"ecdhe-ecdsa-aes256-gcm-sha384-p384", cipher.KeyType{Alg: "ECDSA", Curve: "P-384"},
		"ECDHE-ECDSA-AES256-GCM-SHA384", "secp384r1", false,
		metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
			OpenSSL: "ECDHE-ECDSA-AES256-GCM-SHA384", Group: "P-384", CertKey: "ECDSA P-384", SuitePinned: true}},
	{"ecdhe-ecdsa-aes256-gcm-sha384-p521", cipher.KeyType{Alg: "ECDSA", Curve: "P-521"},
		"ECDHE-ECDSA-AES256-GCM-SHA384", "secp521r1", false,
		metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
			OpenSSL: "ECDHE-ECDSA-AES256-GCM-SHA384", Group: "P-521", CertKey: "ECDSA P-521", SuitePinned: true}},
	{"ecdhe-rsa-aes256-gcm-sha384-p256", cipher.KeyType{Alg: "RSA", Bits: 4096},
		"ECDHE-RSA-AES256-GCM-SHA384", "prime256v1", false,
		metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
			OpenSSL: "ECDHE-RSA-AES256-GCM-SHA384", Group: "P-256", CertKey: "RSA 4096", SuitePinned: true}},
	{"rsa4096-aes256-gcm-sha384", cipher.KeyType{Alg: "RSA", Bits: 4096}, "AES256-GCM-SHA384", "", false,
		metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_RSA_WITH_AES_256_GCM_SHA384",
			OpenSSL: "AES256-GCM-SHA384", Group: "none", CertKey: "RSA 4096", SuitePinned: true}},
	{"ecdhe-ecdsa-aes128-gcm-sha256-p256-chain", cipher.KeyType{Alg: "ECDSA", Curve: "P-256"},
		"ECDHE-ECDSA-AES128-GCM-SHA256", "prime256v1", true,
		metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
			OpenSSL: "ECDHE-ECDSA-AES128-GCM-SHA256", Group: "P-256", CertKey: "ECDSA P-256", SuitePinned: true}},
}

// writeChain writes c (its chain, then its key) as one PEM file, mode
// 0600, as nginx reads it.
func writeChain(t *testing.T, file string, c [][]byte, key any) string {
	t.Helper()
	keyPEM, err := cipher.KeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	chain := cipher.ChainPEM(tls.Certificate{Certificate: c})
	if err := os.WriteFile(file, append(chain, keyPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// matrixSpec is a short, light CPS run of profile against addr.
func matrixSpec(profile, addr string, ca *cipher.CA) *runner.Spec {
	s := runner.Defaults(vocab.EngineCPS)
	s.Profile, s.Target = profile, metrics.Target{Address: addr, ServerName: "localhost"}
	s.Roots, s.ConnectTimeout, s.HandshakeTimeout, s.ReadTimeout = ca.Pool(), 2*time.Second, 5*time.Second, 2*time.Second
	s.Host, s.Path, s.UserAgent, s.ExpectSize = "localhost", "/1k", "tlsbench/test", 1024
	s.Concurrency, s.Duration, s.Warmup = 2, 600*time.Millisecond, 200*time.Millisecond
	return &s
}

// TestMatrixNginx: each profile of the matrix against an nginx server
// configured for it: the record says every handshake negotiated the
// profile's version, suite, group and certificate key, with no error, and
// holds the offer (profile_spec).
func TestMatrixNginx(t *testing.T) {
	testdut.RequireNginx(t)
	dir := t.TempDir()
	root, err := cipher.NewRootCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "matrix test root", time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	inter, err := root.Intermediate(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "matrix test intermediate", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testdut.NginxConfig{Dir: dir}
	for i, row := range matrixRows {
		issuer := root
		if row.chain {
			issuer = inter
		}
		leaf, err := issuer.Leaf(row.key, []string{"localhost", "127.0.0.1"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		file := writeChain(t, filepath.Join(dir, "cert"+string(rune('a'+i))+".pem"), leaf.Certificate, leaf.PrivateKey)
		cfg.Servers = append(cfg.Servers, testdut.NginxServer{Cert: file, Ciphers: row.ciphers, Curve: row.curve})
	}
	n := testdut.StartNginxT(t, cfg)
	tp := runner.Defaults(vocab.EngineThroughput) // the throughput engine's preflight names it too
	s := matrixSpec(matrixRows[0].profile, n.Addrs[0], root)
	tp.Profile, tp.Target, tp.Roots, tp.Host, tp.Path = s.Profile, s.Target, s.Roots, s.Host, s.Path
	if pf, err := runner.Preflight(context.Background(), &tp); err != nil || !pf.OK || !strings.HasPrefix(pf.Server, "nginx/") {
		t.Errorf("throughput preflight %+v (%v): want OK with nginx's Server header", pf, err)
	}
	for i, row := range matrixRows {
		t.Run(row.profile, func(t *testing.T) {
			r, err := runner.Run(context.Background(), matrixSpec(row.profile, n.Addrs[i], root))
			if err != nil {
				t.Fatal(err)
			}
			if !r.Preflight.OK || r.Transactions == 0 || r.Errors.Total != 0 || r.Whole.Errors != 0 {
				t.Fatalf("preflight %+v, %d transactions, errors %+v (whole run %d)", r.Preflight, r.Transactions,
					r.Errors, r.Whole.Errors)
			}
			if r.Negotiated != row.want {
				t.Errorf("negotiated %+v, want %+v", r.Negotiated, row.want)
			}
			// The device names its software in its Server header: recorded.
			if !strings.HasPrefix(r.Preflight.Server, "nginx/") {
				t.Errorf("preflight server %q, want nginx's Server header", r.Preflight.Server)
			}
			// The offer is in the record: the profile as resolved.
			var spec struct {
				CipherSuites []string `json:"cipher_suites"`
				Groups       []string `json:"groups"`
				MinVersion   string   `json:"min_version"`
				MaxVersion   string   `json:"max_version"`
			}
			if err := json.Unmarshal(r.ProfileSpec, &spec); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(spec.CipherSuites, []string{row.ciphers}) || len(spec.Groups) != 1 ||
				spec.MinVersion != "TLS1.2" || spec.MaxVersion != "TLS1.2" {
				t.Errorf("profile_spec %s: want the offer of %s alone, TLS 1.2 only", r.ProfileSpec, row.ciphers)
			}
			t.Logf("%d transactions, %s", r.Transactions, r.Negotiated.GroupOrKey())
		})
	}
}

// TestChainNginx: nginx serving the chain profile's leaf with its
// intermediate CA passes (its depth, 3, is checked on every connection);
// the same leaf served without it fails the preflight with the certificate
// class, and nothing is sent; a leaf issued by the root fails the profile's
// depth, with the mismatch class, even with verification off.
func TestChainNginx(t *testing.T) {
	testdut.RequireNginx(t)
	dir := t.TempDir()
	p256 := cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}
	root, err := cipher.NewRootCA(p256, "chain test root", time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	inter, err := root.Intermediate(p256, "chain test intermediate", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := inter.Leaf(p256, []string{"localhost", "127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := root.Leaf(p256, []string{"localhost", "127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	full := writeChain(t, filepath.Join(dir, "full.pem"), leaf.Certificate[:2], leaf.PrivateKey) // leaf, intermediate
	bare := writeChain(t, filepath.Join(dir, "bare.pem"), leaf.Certificate[:1], leaf.PrivateKey) // leaf alone
	flat := writeChain(t, filepath.Join(dir, "flat.pem"), direct.Certificate, direct.PrivateKey) // leaf, root
	cfg := testdut.NginxConfig{Dir: dir}
	for _, f := range []string{full, bare, flat} {
		cfg.Servers = append(cfg.Servers, testdut.NginxServer{Cert: f, Ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256",
			Curve: "prime256v1"})
	}
	n := testdut.StartNginxT(t, cfg)
	const profile = "ecdhe-ecdsa-aes128-gcm-sha256-p256-chain"

	r, err := runner.Run(context.Background(), matrixSpec(profile, n.Addrs[0], root))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Preflight.OK || r.Transactions == 0 || r.Errors.Total != 0 {
		t.Fatalf("leaf and intermediate: preflight %+v, %d transactions, errors %+v", r.Preflight, r.Transactions, r.Errors)
	}

	failed := func(desc, addr string, insecure bool, want vocab.Class) {
		t.Helper()
		spec := matrixSpec(profile, addr, root)
		spec.Target.InsecureSkipVerify = insecure
		r, err := runner.Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if r.Preflight.OK || r.Preflight.Class != want || r.Transactions != 0 {
			t.Errorf("%s: preflight %+v, %d transactions; want the preflight failed with %s and no load",
				desc, r.Preflight, r.Transactions, want)
		}
		t.Logf("%s: %s", desc, r.Failed())
	}
	failed("leaf without its intermediate", n.Addrs[1], false, vocab.ClassCertificate)
	failed("leaf issued by the root, verification off", n.Addrs[2], true, vocab.ClassMismatch)
}
