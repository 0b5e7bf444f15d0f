package cps_test

// Integration tests of the CPS engine against a real HAProxy terminating TLS:
// the seed profiles must negotiate exactly what they expect, HAProxy's own
// handshake counter must agree with the engine's, and a server that cannot
// serve a profile must yield only the right error class.

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench"
	"github.com/tlsbench/tlsbench/bench/cps"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

const haproxyBin = "/usr/sbin/haproxy"

// haproxyCounter is the per-frontend `show stat` field compared with the
// engine's res.Snapshot.Handshakes. HAProxy increments ssl_sess once per
// completed server-side TLS handshake (ssl_reused_sess counts resumptions
// apart; with no cache and no tickets there are none). The alternatives
// count connections, not handshakes: CumSslConns (`show info`, global) and
// conn_tot grow at accept, so the readiness probes, the refused handshakes
// of the failure cases and the other frontends' traffic all land in them;
// ssl_failed_handshake counts a probe that connects and closes as a failed
// handshake, and HAProxy may process that close after the baseline is read.
// A probe never completes a handshake, so ssl_sess is exact; deltas against
// a baseline taken just before each run make it independent of anything
// earlier on the same frontend.
const haproxyCounter = "ssl_sess"

// hpFrontend is one HAProxy frontend: a TLS 1.2-only listener (no session
// cache, no tickets) with its own certificate, cipher list and ECDHE groups,
// answering GET /1k itself with a 1024-byte body.
type hpFrontend struct {
	name    string // proxy name in haproxy.cfg and in `show stat`
	cert    string // PEM file: chain, then PKCS #8 key
	ciphers string // OpenSSL cipher list
	curves  string // OpenSSL group list; empty leaves HAProxy's default
}

// hpServer is a running HAProxy.
type hpServer struct {
	sock  string            // admin stats socket
	addrs map[string]string // frontend name → 127.0.0.1:port
	log   string            // file with HAProxy's output
}

// requireHAProxy skips the test when HAProxy is not installed, or fails it
// in CI, where it must be.
func requireHAProxy(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(haproxyBin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("HAProxy is required in CI: %v", err)
		}
		t.Skipf("HAProxy not installed: %v", err)
	}
}

// hpCA returns a new in-memory ECDSA P-256 CA.
func hpCA(t *testing.T) *cipher.CA {
	t.Helper()
	ca, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "tlsbench HAProxy test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// hpLeaf issues a leaf of key type kt for localhost and 127.0.0.1 and writes
// it as one PEM file (chain, then key), mode 0600, into dir.
func hpLeaf(t *testing.T, ca *cipher.CA, dir string, kt cipher.KeyType) string {
	t.Helper()
	leaf, err := ca.Leaf(kt, []string{"localhost", "127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key, err := cipher.KeyPEM(leaf.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, strings.ReplaceAll(kt.String(), " ", "-")+".pem")
	if err := os.WriteFile(file, append(cipher.ChainPEM(leaf), key...), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// hpFreePorts returns n distinct free loopback ports. They are held until
// all are chosen so that none is returned twice.
func hpFreePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// startHAProxy writes haproxy.cfg for fes into dir, starts HAProxy in the
// foreground, waits until every frontend accepts and the stats socket
// answers, and stops it when the test ends. A free port can be taken by
// another process before HAProxy binds it; that is retried, twice at most.
func startHAProxy(t *testing.T, dir string, fes []hpFrontend) *hpServer {
	t.Helper()
	for attempt := 1; ; attempt++ {
		h, err := launchHAProxy(t, dir, fes)
		if err == nil {
			return h
		}
		if attempt == 3 || !strings.Contains(err.Error(), "cannot bind socket") {
			t.Fatal(err)
		}
		t.Logf("attempt %d: %v", attempt, err)
	}
}

// launchHAProxy is one attempt of startHAProxy, on new free ports. It returns
// an error if HAProxy exits or is not ready within 10s.
func launchHAProxy(t *testing.T, dir string, fes []hpFrontend) (*hpServer, error) {
	t.Helper()
	h := &hpServer{sock: filepath.Join(dir, "admin.sock"), addrs: map[string]string{}, log: filepath.Join(dir, "haproxy.log")}
	body := filepath.Join(dir, "1k.bin")
	if err := os.WriteFile(body, bytes.Repeat([]byte("0123456789abcdef"), 1024/16), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, `global
    stats socket %s level admin
    tune.ssl.cachesize 0

defaults
    mode http
    timeout connect 5s
    timeout client 5s
    timeout server 5s
`, h.sock)
	for i, port := range hpFreePorts(t, len(fes)) {
		fe := fes[i]
		h.addrs[fe.name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		bind := fmt.Sprintf("bind %s ssl crt %s ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2 no-tls-tickets ciphers %s", h.addrs[fe.name], fe.cert, fe.ciphers)
		if fe.curves != "" {
			bind += " curves " + fe.curves
		}
		fmt.Fprintf(&cfg, `
frontend %s
    %s
    http-request return status 200 content-type application/octet-stream file %s
`, fe.name, bind, body)
	}
	cfgFile := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfgFile, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(h.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()

	cmd := exec.Command(haproxyBin, "-f", cfgFile, "-db")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	// Readiness: every frontend accepts a TCP connection and the stats socket
	// answers. The probes count in some HAProxy counters (see haproxyCounter).
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !h.ready() {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("HAProxy not ready after 10s; output:\n%s", h.output())
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("HAProxy exited: %v; config:\n%s\noutput:\n%s", waitErr, cfg.String(), h.output())
		case <-tick.C:
		}
	}
	return h, nil
}

// ready reports whether every frontend and the stats socket accept.
func (h *hpServer) ready() bool {
	for _, addr := range h.addrs {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return false
		}
		c.Close()
	}
	_, err := h.command("show info")
	return err == nil
}

func (h *hpServer) output() string {
	b, _ := os.ReadFile(h.log)
	return string(b)
}

// command sends one command to the stats socket and returns the answer.
func (h *hpServer) command(cmd string) (string, error) {
	c, err := net.DialTimeout("unix", h.sock, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// counter reads a numeric field of a frontend's `show stat` line.
func (h *hpServer) counter(t *testing.T, frontend, field string) int64 {
	t.Helper()
	out, err := h.command("show stat")
	if err != nil {
		t.Fatalf("show stat: %v", err)
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# "))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("show stat: %v in %q", err, out)
	}
	col := -1
	for i, name := range rows[0] {
		if name == field {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("show stat has no field %q: %v", field, rows[0])
	}
	for _, r := range rows[1:] {
		if len(r) > col && r[0] == frontend && r[1] == "FRONTEND" {
			n, err := strconv.ParseInt(r[col], 10, 64)
			if err != nil {
				t.Fatalf("show stat %s %s: %v", frontend, field, err)
			}
			return n
		}
	}
	t.Fatalf("show stat has no frontend %q", frontend)
	return 0
}

// counterDelta polls a frontend counter until it has grown by want since
// base, or 3s have passed, and returns its growth. HAProxy updates its
// counters after the bytes that let the client finish are sent, so a
// client-side count can be ahead for a moment; it is never behind.
func (h *hpServer) counterDelta(t *testing.T, frontend, field string, base, want int64) int64 {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		got := h.counter(t, frontend, field) - base
		if got >= want || time.Now().After(deadline) {
			return got
		}
		<-tick.C
	}
}

// measure runs profile name against frontend: a closed loop of 4 workers,
// no warm-up, for d. It checks that the run completed and that HAProxy's
// handshake counter grew by exactly the engine's count of completed
// handshakes (whole run).
func (h *hpServer) measure(t *testing.T, name, frontend string, ca *cipher.CA, d time.Duration) (*bench.Result, *cps.Op) {
	t.Helper()
	p, err := profiles.Builtin().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cps.Defaults()
	cfg.Profile = p
	cfg.Address = h.addrs[frontend]
	cfg.Host = "localhost"
	cfg.TLS = profiles.ClientOptions{ServerName: "localhost", RootCAs: ca.Pool()}
	cfg.ExpectSize = 1024
	op, err := cps.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := h.counter(t, frontend, haproxyCounter)
	res, err := bench.Run(context.Background(), bench.Config{Concurrency: 4, Duration: d, Drain: 10 * time.Second}, op)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Abandoned != 0 {
		t.Fatalf("run complete %v, abandoned %d; want complete, none abandoned", res.Complete, res.Abandoned)
	}
	snap := &res.Snapshot
	got := h.counterDelta(t, frontend, haproxyCounter, base, snap.Handshakes)
	if want := snap.Handshakes; got != want {
		t.Errorf("HAProxy %s grew by %d, engine completed %d handshakes", haproxyCounter, got, want)
	}
	t.Logf("transactions %d, errors %v, handshakes %d, HAProxy %s +%d", snap.AllOK, snap.Errors, snap.Handshakes, haproxyCounter, got)
	return res, op
}

// TestHAProxySeedProfiles runs the reference study's three profiles against
// HAProxy frontends configured as in the study.
func TestHAProxySeedProfiles(t *testing.T) {
	requireHAProxy(t)
	dir := t.TempDir()
	ca := hpCA(t)
	ecdsaCert := hpLeaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	rsaCert := hpLeaf(t, ca, dir, cipher.KeyType{Alg: "RSA", Bits: 2048})

	tests := []struct {
		profile string
		fe      hpFrontend
		want    metrics.Negotiated
	}{
		// Study row 1: P-256 ECDSA certificate, ECDHE on secp384r1 only; the
		// client offers P-384 and P-256 (for the certificate) and must get
		// P-384.
		{
			profile: "ecdhe-ecdsa-aes128-sha256-p384",
			fe:      hpFrontend{name: "p384", cert: ecdsaCert, ciphers: "ECDHE-ECDSA-AES128-SHA256", curves: "secp384r1"},
			want: metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
				OpenSSL: "ECDHE-ECDSA-AES128-SHA256", Group: "P-384", CertKey: "ECDSA P-256", SuitePinned: true},
		},
		// Study row 2: the same certificate and suite, ECDHE on prime256v1.
		{
			profile: "ecdhe-ecdsa-aes128-sha256-p256",
			fe:      hpFrontend{name: "p256", cert: ecdsaCert, ciphers: "ECDHE-ECDSA-AES128-SHA256", curves: "prime256v1"},
			want: metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
				OpenSSL: "ECDHE-ECDSA-AES128-SHA256", Group: "P-256", CertKey: "ECDSA P-256", SuitePinned: true},
		},
		// Study row 3: RSA 2048 certificate, RSA key exchange (no group).
		{
			profile: "rsa2048-aes128-gcm-sha256",
			fe:      hpFrontend{name: "rsa2048", cert: rsaCert, ciphers: "AES128-GCM-SHA256"},
			want: metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_RSA_WITH_AES_128_GCM_SHA256",
				OpenSSL: "AES128-GCM-SHA256", Group: "none", CertKey: "RSA 2048", SuitePinned: true},
		},
	}
	fes := make([]hpFrontend, len(tests))
	for i, tt := range tests {
		fes[i] = tt.fe
	}
	h := startHAProxy(t, dir, fes)

	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			t.Parallel() // each row has its own frontend and counters
			res, op := h.measure(t, tt.profile, tt.fe.name, ca, time.Second)
			snap := res.Snapshot

			if snap.AllErrors != 0 {
				t.Errorf("errors = %d %v (example %v), want none", snap.AllErrors, snap.Errors, snap.Examples)
			}
			if snap.AllOK <= 0 || snap.OK <= 0 {
				t.Errorf("transactions = %d (steady %d), want > 0", snap.AllOK, snap.OK)
			}
			// Every transaction is a full handshake that completed.
			if got, want := snap.Handshakes, snap.AllOK+snap.AllErrors; got != want {
				t.Errorf("client handshakes = %d, want %d (one per transaction)", got, want)
			}
			if got := op.Negotiated(); got == nil {
				t.Errorf("Negotiated() = nil, want %+v", tt.want)
			} else if *got != tt.want {
				t.Errorf("Negotiated() = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// TestHAProxyFailures runs profiles against frontends that cannot serve them
// as expected: every transaction must fail, in exactly one class.
func TestHAProxyFailures(t *testing.T) {
	requireHAProxy(t)
	dir := t.TempDir()
	ca := hpCA(t)
	ecdsaCert := hpLeaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})

	tests := []struct {
		name    string
		profile string
		fe      hpFrontend
		class   string
		// handshakes: whether every failed transaction completed its
		// handshake (true) or none did (false).
		handshakes bool
		example    []string // substrings of the class's example message
	}{
		// No suite in common: OpenSSL refuses the ClientHello with a
		// handshake_failure alert (40); no handshake completes.
		{
			name:    "suite",
			profile: "ecdhe-ecdsa-aes128-sha256-p256",
			fe:      hpFrontend{name: "aes256", cert: ecdsaCert, ciphers: "ECDHE-ECDSA-AES256-GCM-SHA384", curves: "prime256v1"},
			class:   "tls_alert:handshake_failure",
			example: []string{"handshake failure"},
		},
		// The server's ECDHE group is P-256 only; the p384 profile offers
		// P-384 and P-256, so the handshake completes on P-256 and the
		// profile check rejects it.
		{
			name:       "group",
			profile:    "ecdhe-ecdsa-aes128-sha256-p384",
			fe:         hpFrontend{name: "p256only", cert: ecdsaCert, ciphers: "ECDHE-ECDSA-AES128-SHA256", curves: "prime256v1"},
			class:      bench.ClassMismatch,
			handshakes: true,
			example:    []string{"negotiated group P-256", "expects P-384"},
		},
	}
	fes := make([]hpFrontend, len(tests))
	for i, tt := range tests {
		fes[i] = tt.fe
	}
	h := startHAProxy(t, dir, fes)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each row has its own frontend and counters
			res, op := h.measure(t, tt.profile, tt.fe.name, ca, 500*time.Millisecond)
			snap := res.Snapshot

			if snap.AllOK != 0 || snap.OK != 0 {
				t.Errorf("transactions = %d (steady %d), want 0", snap.AllOK, snap.OK)
			}
			if snap.AllErrors <= 0 {
				t.Fatalf("errors = %d, want > 0", snap.AllErrors)
			}
			// No warm-up: the steady window holds every transaction.
			if got, want := snap.Errors[tt.class], snap.AllErrors; got != want || len(snap.Errors) != 1 {
				t.Errorf("errors by class = %v, want only %s: %d", snap.Errors, tt.class, want)
			}
			for _, s := range tt.example {
				if got := snap.Examples[tt.class]; !strings.Contains(got, s) {
					t.Errorf("example of %s = %q, want it to contain %q", tt.class, got, s)
				}
			}
			if got := op.Negotiated(); got != nil {
				t.Errorf("Negotiated() = %+v, want nil (no verified connection)", *got)
			}
			wantHS := int64(0)
			if tt.handshakes {
				wantHS = snap.AllErrors
			}
			if got, want := snap.Handshakes, wantHS; got != want {
				t.Errorf("client handshakes = %d, want %d", got, want)
			}
		})
	}
}
