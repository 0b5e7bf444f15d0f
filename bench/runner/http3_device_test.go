package runner_test

// HTTP/3 against a real device nobody here wrote: Caddy (quic-go) serving
// HTTP/1.1, HTTP/2 and HTTP/3 on one port; and nginx, which offers no
// HTTP/3, refused at the preflight.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// h3Profile is the TLS 1.3 profile of these tests: X25519, a P-256 ECDSA
// certificate.
const h3Profile = "tls13-aes128-gcm-x25519"

// protoSpec is a short cps run of h3Profile over protocol against addr:
// 200 ms of warm-up, 500 ms measured, 2 connections at once.
func protoSpec(protocol, addr string, ca *cipher.CA) *runner.Spec {
	s := deviceSpec(vocab.EngineCPS, h3Profile, addr, ca, devcount.Source{})
	s.Protocol, s.Device = protocol, nil
	s.Concurrency, s.Duration, s.Warmup = 2, 500*time.Millisecond, 200*time.Millisecond
	return s
}

// TestCaddyProtocols: cps and throughput of one TLS 1.3 profile over
// HTTP/1.1, HTTP/2 and HTTP/3 against one Caddy: each run's requests,
// preflight included, equal what Caddy's own access log counts for that
// protocol, exactly (4 streams a connection over HTTP/2 and HTTP/3's
// throughput), and nothing over the others; the protocol's ALPN negotiated.
func TestCaddyProtocols(t *testing.T) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	c := testdut.StartCaddyT(t, testdut.CaddyConfig{Dir: dir, Cert: cert, Curves: []string{"x25519"}})
	var table []string
	for _, tc := range []struct {
		engine                vocab.Engine
		protocol, proto, alpn string
	}{
		{vocab.EngineCPS, "http/1.1", "HTTP/1.0", ""}, // one request a connection
		{vocab.EngineCPS, "http/2", "HTTP/2.0", "h2"},
		{vocab.EngineCPS, "http/3", "HTTP/3.0", "h3"},
		{vocab.EngineThroughput, "http/1.1", "HTTP/1.1", ""}, // keep-alive
		{vocab.EngineThroughput, "http/2", "HTTP/2.0", "h2"},
		{vocab.EngineThroughput, "http/3", "HTTP/3.0", "h3"},
	} {
		t.Run(string(tc.engine)+"/"+tc.protocol, func(t *testing.T) {
			before := c.Requests(t, 0)
			spec := protoSpec(tc.protocol, c.Addr, ca)
			if spec.Engine = tc.engine; tc.engine == vocab.EngineThroughput && tc.alpn != "" {
				spec.Streams = 4 // each connection's streams open at the end are read too
			}
			r, err := runner.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Preflight.OK || r.Errors.Total != 0 || r.Whole.Transactions == 0 || r.Negotiated.ALPN != tc.alpn {
				t.Fatalf("preflight %+v, errors %+v, %d transactions, alpn %q; want %q", r.Preflight, r.Errors,
					r.Whole.Transactions, r.Negotiated.ALPN, tc.alpn)
			}
			want := r.Whole.Transactions + r.Preflight.Requests
			var total int64
			for _, n := range before {
				total += n
			}
			got := c.Requests(t, total+want)
			key := tc.proto + " 200"
			for k, n := range got {
				if d := n - before[k]; k != key && d != 0 || k == key && d != want {
					t.Errorf("caddy logged %d more %q, tlsbench made %d %s requests", d, k, want, tc.proto)
				}
			}
			if got[key] == before[key] {
				t.Errorf("caddy logged no %q: %v", key, got)
			}
			table = append(table, fmt.Sprintf("%-10s %-8s %6d requests (caddy: %d)", tc.engine, tc.protocol, want,
				got[key]-before[key]))
		})
	}
	t.Log("caddy, " + h3Profile + ":\n" + strings.Join(table, "\n"))
}

// TestNginxNoHTTP3: nginx, serving the same TLS 1.3 profile over TCP with
// no UDP listener, fails an HTTP/3 run's preflight at once (nothing
// listens on its UDP port), before any load, and logs no request.
func TestNginxNoHTTP3(t *testing.T) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	accessLog := filepath.Join(dir, "access.log")
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: dir, Servers: []testdut.NginxServer{{Cert: cert,
		Ciphers: "DEFAULT", Protocols: "TLSv1.3", Extra: []string{"access_log " + accessLog + ";"}}}})
	spec := protoSpec("http/3", n.Addrs[0], ca)
	spec.Duration = 10 * time.Second
	begin := time.Now()
	r, err := runner.Run(context.Background(), spec)
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	pf := r.Preflight
	if pf == nil || pf.OK || !strings.Contains(pf.Answer(), "UDP") {
		t.Fatalf("preflight %+v (%q), want failed: nothing on UDP", pf, pf.Answer())
	}
	if r.Load.Attempts != 0 || r.Whole.Transactions+r.Whole.Errors != 0 || r.Failed() == "" || took > 3*time.Second {
		t.Errorf("load attempts %d, whole run %+v, failed %q, %s: want no load after the preflight",
			r.Load.Attempts, r.Whole, r.Failed(), took)
	}
	t.Logf("preflight: %s: %s (%s)", pf.Class, pf.Answer(), took.Round(time.Millisecond))
	time.Sleep(100 * time.Millisecond)
	if data, err := os.ReadFile(accessLog); err == nil && len(data) > 0 {
		t.Errorf("nginx logged requests: %s", data)
	}
}

// TestTargetHTTP3: cps and throughput (4 streams) over HTTP/3 against the
// reference target: its QUIC handshakes equal the client's, preflight
// included, exactly; its HTTP/3 requests equal the transactions, exactly
// (throughput's streams open at the end are read: engine.Drainer);
// nothing over TCP.
func TestTargetHTTP3(t *testing.T) {
	tg := testdut.StartTargetWith(t, target.Config{}, h3Profile)
	l := tg.Listener(h3Profile)
	for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
		t.Run(string(e), func(t *testing.T) {
			before := l.Stats()
			spec := protoSpec("http/3", l.Addr, tg.CA)
			if spec.Engine = e; e == vocab.EngineThroughput {
				spec.Streams = 4
			}
			r, err := runner.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			st := l.Stats()
			hs, rq := st.QUIC.Handshakes-before.QUIC.Handshakes, st.ByProtocol["http/3"]-before.ByProtocol["http/3"]
			wantHS, wantRq := r.Handshakes+r.Preflight.Handshakes, r.Whole.Transactions+r.Preflight.Requests
			if !r.Preflight.OK || r.Errors.Total != 0 || hs != wantHS || rq != wantRq ||
				st.Handshakes-before.Handshakes != hs || st.Requests-before.Requests != rq {
				t.Errorf("target: %d QUIC handshakes, %d HTTP/3 requests (%+v); tlsbench: %d handshakes, %d requests; "+
					"preflight %+v, errors %+v", hs, rq, st, wantHS, wantRq, r.Preflight, r.Errors)
			}
			t.Logf("target: %d QUIC handshakes, %d HTTP/3 requests; tlsbench: %d, %d", hs, rq, wantHS, wantRq)
		})
	}
}
