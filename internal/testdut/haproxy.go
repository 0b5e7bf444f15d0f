package testdut

// HAProxy: a real HAProxy terminating TLS for the engines' integration
// tests: TLS 1.2-only frontends configured as in the reference study, the
// stats socket's counters, and a per-request log that ties every request to
// its TLS connection.

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/cipher"
)

// haProxyBin is the HAProxy binary (Debian's package).
const haProxyBin = "/usr/sbin/haproxy"

// HAProxyCounter is the per-frontend `show stat` field compared with the engines'
// res.Snapshot.Handshakes. HAProxy increments ssl_sess once per completed
// server-side TLS handshake (ssl_reused_sess counts resumptions apart; with
// no cache and no tickets there are none). The alternatives count
// connections, not handshakes: CumSslConns (`show info`, global) and
// conn_tot grow at accept, so the readiness probes, the refused handshakes
// of the failure cases and the other frontends' traffic all land in them;
// ssl_failed_handshake counts a probe that connects and closes as a failed
// handshake, and HAProxy may process that close after the baseline is read.
// A probe never completes a handshake, so ssl_sess is exact; deltas against
// a baseline taken just before each run make it independent of anything
// earlier on the same frontend.
const HAProxyCounter = "ssl_sess"

// Frontend is one HAProxy frontend: a TLS 1.2-only listener (no session
// cache, no tickets) with its own certificate, cipher list and ECDHE groups.
type Frontend struct {
	Name    string // proxy name in haproxy.cfg and in `show stat`
	Cert    string // PEM file: chain, then PKCS #8 key
	Ciphers string // OpenSSL cipher list
	Curves  string // OpenSSL group list; empty leaves HAProxy's default
	// Backend, if set, is the host:port of a plain-HTTP server that the
	// frontend forwards every request to, over kept-alive server
	// connections shared by all clients (http-reuse always), logging each
	// request (see Requests): the study's "client TLS, server plaintext".
	// If empty, the frontend answers every request itself with a
	// 1024-byte body.
	Backend string
	// Backends, if set (instead of Backend), are plain-HTTP servers the
	// frontend balances its requests over, round robin (a pool of
	// backends, bench/target.StartBackends): each request goes to the
	// next server, over its own server connection (no reuse).
	Backends []string
	// Tickets turns TLS session tickets on (resumption; HAProxy's session
	// cache stays off): ssl_reused_sess then counts the resumptions.
	Tickets bool
	// ALPN, if set, is the bind's alpn list, e.g. "h2,http/1.1".
	ALPN string
}

// HAProxy is a running HAProxy.
type HAProxy struct {
	*Process
	sock  string            // admin stats socket
	addrs map[string]string // frontend name → 127.0.0.1:port
	log   string            // file with HAProxy's output
	stats string            // 127.0.0.1:port of the HTTP stats listener
}

// RequireHAProxy skips the test when HAProxy is not installed, or fails it
// in CI, where it must be.
func RequireHAProxy(t testing.TB) {
	t.Helper()
	_, err := os.Stat(haProxyBin)
	require(t, "HAProxy", err)
}

// Seed is one of the reference study's three profiles: the frontend that
// serves it as in the study and what a client must negotiate there.
type Seed struct {
	Profile  string
	Frontend Frontend
	Want     metrics.Negotiated
}

// Seeds returns the study's three rows, with certificates issued by ca into
// dir. Their frontends answer requests themselves; set Backend to forward.
func Seeds(t testing.TB, ca *cipher.CA, dir string) []Seed {
	t.Helper()
	ecdsaCert := Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	rsaCert := Leaf(t, ca, dir, cipher.KeyType{Alg: "RSA", Bits: 2048})
	seed := func(profile string, fe Frontend, suite, group, certKey string) Seed {
		return Seed{Profile: profile, Frontend: fe, Want: metrics.Negotiated{Version: "TLS1.2", CipherSuite: suite,
			OpenSSL: fe.Ciphers, Group: group, CertKey: certKey, SuitePinned: true}}
	}
	return []Seed{
		// Study row 1: P-256 ECDSA certificate, ECDHE on secp384r1 only; the
		// client offers P-384 and P-256 (for the certificate) and must get
		// P-384.
		seed("ecdhe-ecdsa-aes128-sha256-p384",
			Frontend{Name: "p384", Cert: ecdsaCert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curves: "secp384r1"},
			"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "P-384", "ECDSA P-256"),
		// Study row 2: the same certificate and suite, ECDHE on prime256v1.
		seed("ecdhe-ecdsa-aes128-sha256-p256",
			Frontend{Name: "p256", Cert: ecdsaCert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curves: "prime256v1"},
			"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "P-256", "ECDSA P-256"),
		// Study row 3: RSA 2048 certificate, RSA key exchange (no group).
		seed("rsa2048-aes128-gcm-sha256", Frontend{Name: "rsa2048", Cert: rsaCert, Ciphers: "AES128-GCM-SHA256"},
			"TLS_RSA_WITH_AES_128_GCM_SHA256", "none", "RSA 2048"),
	}
}

// StartHAProxy is LaunchHAProxy for a test: it fails the test on error and
// stops HAProxy when the test ends.
func StartHAProxy(t testing.TB, dir string, fes []Frontend) *HAProxy {
	t.Helper()
	h, err := LaunchHAProxy(dir, fes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// LaunchHAProxy writes haproxy.cfg for fes into dir, starts HAProxy in the
// foreground and waits until every frontend accepts and the stats socket
// answers; the caller closes it. A free port can be taken by another process
// before HAProxy binds it; that is retried, twice at most.
func LaunchHAProxy(dir string, fes []Frontend) (*HAProxy, error) {
	for attempt := 1; ; attempt++ {
		h, err := launchHAProxy(dir, fes)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "cannot bind socket") {
			return h, err
		}
	}
}

// requestLog starts the log-format of a forwarding frontend's request lines:
// frontend name, the TLS connection's client random (unique per full
// handshake), the response status (-1 if none).
const requestLog = "tlsbench-request"

// launchHAProxy is one attempt of LaunchHAProxy, on new free ports, its
// output in dir/haproxy.log. It returns an error if HAProxy exits or is not
// ready within startTimeout.
func launchHAProxy(dir string, fes []Frontend) (*HAProxy, error) {
	h := &HAProxy{
		sock:  filepath.Join(dir, "admin.sock"),
		addrs: map[string]string{},
		log:   filepath.Join(dir, "haproxy.log"),
	}
	body := filepath.Join(dir, "1k.bin")
	if err := os.WriteFile(body, bytes.Repeat([]byte("0123456789abcdef"), 1024/16), 0o600); err != nil {
		return nil, err
	}
	ports, err := FreePorts(len(fes) + 1)
	if err != nil {
		return nil, err
	}
	for i, fe := range fes {
		h.addrs[fe.Name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i]))
	}
	h.stats = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[len(fes)]))
	cfg := h.config(fes, body)
	cfgFile := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	logFile, err := os.Create(h.log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	h.Process = &Process{Name: "HAProxy", Cmd: exec.Command(haProxyBin, "-f", cfgFile, "-db"), logf: h.log}
	h.Cmd.Stdout = logFile
	h.Cmd.Stderr = logFile
	if err := h.start(); err != nil {
		return nil, err
	}
	if err := h.waitReady(cfg); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// config is haproxy.cfg: the admin socket, the stats frontend, and each
// frontend, serving body itself or forwarding to its backend.
func (h *HAProxy) config(fes []Frontend, body string) string {
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
	// The HTTP stats listener, a frontend of its own: the stats page
	// (/stats, /stats;csv) and the Prometheus exporter (/metrics).
	fmt.Fprintf(&cfg, `
frontend stats
    bind %s
    http-request use-service prometheus-exporter if { path /metrics }
    stats enable
    stats uri /stats
    stats refresh 0
`, h.stats)
	for _, fe := range fes {
		writeFrontend(&cfg, fe, h.addrs[fe.Name], body)
	}
	return cfg.String()
}

// writeFrontend writes fe's section, bound to addr: it serves body, or
// forwards to fe.Backend and logs each request.
func writeFrontend(cfg *strings.Builder, fe Frontend, addr, body string) {
	bind := fmt.Sprintf("bind %s ssl crt %s ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2 no-tls-tickets ciphers %s",
		addr, fe.Cert, fe.Ciphers)
	if fe.Tickets {
		bind = strings.Replace(bind, " no-tls-tickets", "", 1)
	}
	if fe.Curves != "" {
		bind += " curves " + fe.Curves
	}
	if fe.ALPN != "" {
		bind += " alpn " + fe.ALPN
	}
	if len(fe.Backends) > 0 {
		writePool(cfg, fe, bind)
		return
	}
	if fe.Backend == "" {
		fmt.Fprintf(cfg, `
frontend %s
    %s
    http-request return status 200 content-type application/octet-stream file %s
`, fe.Name, bind, body)
		return
	}
	writeLogged(cfg, fe.Name, bind, "plain")
	fmt.Fprintf(cfg, `    option http-keep-alive
    http-reuse always
    server plain %s
`, fe.Backend)
}

// writeLogged writes a frontend that forwards every request to its backend
// name-suffix and logs each (requestLog), and the backend's first line.
// HAProxy logs a request when it ends; -db keeps stdout, the log file, open.
func writeLogged(cfg *strings.Builder, name, bind, suffix string) {
	fmt.Fprintf(cfg, `
frontend %[1]s
    %[2]s
    log stdout format raw local0
    option dontlognull
    log-format "%[3]s %%f %%[ssl_fc_client_random,hex] %%ST"
    default_backend %[1]s-%[4]s

backend %[1]s-%[4]s
`, name, bind, requestLog, suffix)
}

// waitReady waits until every frontend accepts a TCP connection and the
// stats socket answers, within startTimeout. The probes count in some
// HAProxy counters (see HAProxyCounter).
func (h *HAProxy) waitReady(cfg string) error {
	if err := h.waitListening(context.Background(), append(slices.Collect(maps.Values(h.addrs)), h.stats)); err != nil {
		return fmt.Errorf("%w; config:\n%s", err, cfg)
	}
	for deadline := time.Now().Add(startTimeout); ; time.Sleep(20 * time.Millisecond) {
		_, err := h.command("show info")
		switch {
		case err == nil:
			return nil
		case h.Alive() != nil:
			return h.Alive()
		case time.Now().After(deadline):
			return fmt.Errorf("HAProxy's stats socket does not answer after %s: %v", startTimeout, err)
		}
	}
}

// StatsCSV is the URL of HAProxy's stats page as CSV (every frontend's
// counters), served by a frontend of its own ("stats").
func (h *HAProxy) StatsCSV() string { return "http://" + h.stats + "/stats;csv" }

// MetricsURL is the URL of HAProxy's Prometheus exporter (its text
// exposition), on the stats frontend.
func (h *HAProxy) MetricsURL() string { return "http://" + h.stats + "/metrics" }

// Addr returns the host:port of the named frontend.
func (h *HAProxy) Addr(frontend string) string { return h.addrs[frontend] }

// command sends one command to the stats socket and returns the answer.
func (h *HAProxy) command(cmd string) (string, error) {
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

// Info reads a numeric field of `show info` (e.g. DroppedLogs).
func (h *HAProxy) Info(t testing.TB, field string) int64 {
	t.Helper()
	out, err := h.command("show info")
	if err != nil {
		t.Fatalf("show info: %v", err)
	}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatalf("show info: %s: %v", field, err)
			}
			return n
		}
	}
	t.Fatalf("show info has no %s", field)
	return 0
}

// Counter reads a numeric field of a frontend's `show stat` line.
func (h *HAProxy) Counter(t testing.TB, frontend, field string) int64 {
	t.Helper()
	out, err := h.command("show stat")
	if err != nil {
		t.Fatalf("show stat: %v", err)
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# "))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("show stat: %v in %q", err, out)
	}
	col := slices.Index(rows[0], field)
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

// CounterDelta polls a frontend counter until it has grown by want since
// base, or 3s have passed, and returns its growth. HAProxy updates its
// counters after the bytes that let the client finish are sent, so a
// client-side count can be ahead for a moment; it is never behind.
func (h *HAProxy) CounterDelta(t testing.TB, frontend, field string, base, want int64) int64 {
	t.Helper()
	var got int64
	poll(func() bool {
		got = h.Counter(t, frontend, field) - base
		return got >= want
	})
	return got
}

// poll calls done every 10 ms until it returns true or 3s have passed.
func poll(done func() bool) {
	for deadline := time.Now().Add(3 * time.Second); !done() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

// Requests reads the request log of a forwarding frontend (one with a
// Backend): the number of requests answered with status 200 on each TLS
// connection, keyed by the connection's client random, and the number of
// the others (aborted, or any other status). Like the counters, the log is
// written after the client could finish; Requests polls until at least
// want requests answered with 200 are logged, or 3s have passed.
func (h *HAProxy) Requests(t testing.TB, frontend string, want int64) (ok map[string]int64, other int64) {
	t.Helper()
	poll(func() bool {
		var n int64
		ok, other, n = h.requests(t, frontend)
		return n >= want
	})
	return ok, other
}

// requests parses the request log once; n is the number of 200 responses.
func (h *HAProxy) requests(t testing.TB, frontend string) (ok map[string]int64, other, n int64) {
	t.Helper()
	data, err := os.ReadFile(h.log)
	if err != nil {
		t.Fatal(err)
	}
	ok = map[string]int64{}
	lines := strings.Split(string(data), "\n")
	for _, line := range lines[:len(lines)-1] { // the last, without its newline, is still being written
		fields := strings.Fields(line)
		if len(fields) != 4 || fields[0] != requestLog || fields[1] != frontend {
			continue
		}
		if fields[3] == "200" {
			ok[fields[2]]++
			n++
		} else {
			other++
		}
	}
	return ok, other, n
}
