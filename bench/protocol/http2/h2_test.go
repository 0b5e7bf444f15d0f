package http2_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	_ "github.com/tlsbench/tlsbench/bench/protocol/http2"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

const testProfile = "ecdhe-ecdsa-aes128-gcm-sha256-p256"

// h2Server is golang.org/x/net/http2's server on loopback, serving the
// reference target's pattern: /1k, /1m, /bytes/N; it counts the requests
// it answered, their bodies' bytes and its connections.
type h2Server struct {
	addr                string
	ca                  *cipher.CA
	requests, bytes, cn atomic.Int64
	open, peak          atomic.Int64 // requests being answered: now, and the most at once
}

func body(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = target.Pattern[i%len(target.Pattern)]
	}
	return b
}

func serveH2(t testing.TB) *h2Server {
	t.Helper()
	p, _ := profiles.Builtin().Get(testProfile)
	srv := &h2Server{}
	bodies := map[int][]byte{}
	for _, n := range []int{1 << 10, 1 << 20, 100, 3000} {
		bodies[n] = body(n)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		size := map[string]int{"/1k": 1 << 10, "/1m": 1 << 20}[r.URL.Path]
		if n, ok := strings.CutPrefix(r.URL.Path, "/bytes/"); ok {
			size, _ = strconv.Atoi(n)
		}
		b, ok := bodies[size]
		if !ok || r.ProtoMajor != 2 && os.Getenv(benchServerEnv) != "1" || r.Host == "" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		srv.requests.Add(1)
		srv.bytes.Add(int64(len(b)))
		n := srv.open.Add(1)
		defer srv.open.Add(-1)
		for p := srv.peak.Load(); n > p && !srv.peak.CompareAndSwap(p, n); p = srv.peak.Load() {
		}
		w.Header().Set("Server", "h2test")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	})
	srv.ca = testdut.NewCA(t)
	leaf, err := srv.ca.Leaf(p.ServerCertKey(), []string{"localhost", "a.localhost", "b.localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Speaking("h2").ServerConfig(leaf)
	cfg.SessionTicketsDisabled = false // for the resumption test: the others offer no session
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, HTTP2: &http.HTTP2Config{PermitProhibitedCipherSuites: true},
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				srv.cn.Add(1)
			}
		}}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	srv.addr = ln.Addr().String()
	return srv
}

// args are the protocol arguments of a run against addr, with short
// deadlines.
func args(e vocab.Engine, addr string, roots *x509.CertPool) protocol.Args {
	p, _ := profiles.Builtin().Get(testProfile)
	req := httpreq.Defaults(e.DefaultPath())
	req.ReadTimeout = 2 * time.Second
	return protocol.Args{Request: req, Conn: tlsconn.Config{Profile: p.Speaking("h2"), Address: addr,
		Settings: tlsconn.Settings{ConnectTimeout: 2 * time.Second, HandshakeTimeout: 2 * time.Second},
		TLS:      &tls.Config{ServerName: "localhost", RootCAs: roots}}}
}

func build(t testing.TB, e vocab.Engine, a protocol.Args) protocol.Op {
	t.Helper()
	proto, err := protocol.Lookup("http/2")
	if err != nil {
		t.Fatal(err)
	}
	op, err := proto.Build(e, a)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// do runs n transactions on one worker of op, as the engine does, and
// closes it.
func do(t *testing.T, op engine.Op, n int) []metrics.Sample {
	t.Helper()
	w, err := op.NewWorker(0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]metrics.Sample, n)
	for i := range out {
		out[i].Start = time.Now()
		w.Do(context.Background(), &out[i])
		if out[i].Class != "" {
			t.Fatalf("transaction %d: %s: %v", i, out[i].Class, out[i].Err)
		}
	}
	if c, ok := w.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	return out
}

// TestCPS: a run of CPS over HTTP/2 against x/net/http2's server: one
// connection and one request per transaction, every body of its size, the
// server's request count equal to the transactions, every connection
// closed by the client's GOAWAY, the server's SETTINGS kept.
func TestCPS(t *testing.T) {
	srv := serveH2(t)
	a := args(vocab.EngineCPS, srv.addr, srv.ca.Pool())
	a.Request.ExpectSize = 1024
	op := build(t, vocab.EngineCPS, a)
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 2,
		Duration: 500 * time.Millisecond, Drain: 5 * time.Second}}, op)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Snapshot
	if s.AllErrors != 0 || s.AllOK == 0 {
		t.Fatalf("ok %d, errors %v %v", s.AllOK, s.Errors, s.Examples)
	}
	if got := srv.requests.Load(); got != s.AllOK || s.AllOpened != s.AllOK || srv.cn.Load() != s.AllOK {
		t.Errorf("server answered %d requests on %d connections; engine: %d transactions, %d opened", got,
			srv.cn.Load(), s.AllOK, s.AllOpened)
	}
	closes := op.(interface{ Closes() metrics.Closes }).Closes()
	if closes.ClientFirst+closes.ServerFirst != s.AllOK {
		t.Errorf("closes %+v for %d transactions", closes, s.AllOK)
	}
	info := op.(interface{ HTTP2() *metrics.HTTP2 }).HTTP2()
	if info == nil || info.ServerSettings["MAX_CONCURRENT_STREAMS"] == 0 || !info.SettingsAcked ||
		info.ClientSettings["ENABLE_PUSH"] != 0 || info.ClientSettings["INITIAL_WINDOW_SIZE"] != 1<<30-1 {
		t.Errorf("settings %+v", info)
	}
	if n := op.Negotiated(); n == nil || n.ALPN != "h2" {
		t.Errorf("negotiated %+v", n)
	}
	// One transaction's sample: phases, bytes, the Server header.
	ss := do(t, op, 1)
	x := ss[0]
	if !x.Opened || !x.Handshake || x.Payload != 1024 || x.BytesOut <= 24 || x.BytesIn <= 1024 ||
		x.WireIn <= x.BytesIn || x.Dur[vocab.PhaseTTFB] <= 0 || x.Dur[vocab.PhaseTransfer] < 0 ||
		x.RFCTTFB < x.Dur[vocab.PhaseConnect]+x.Dur[vocab.PhaseHandshake]+x.Dur[vocab.PhaseTTFB] ||
		x.RFCTTLB < x.RFCTTFB || x.Dur[vocab.PhaseTotal] < x.RFCTTLB {
		t.Errorf("sample %+v", x)
	}
}

// TestCPSRequestsPerConn: with 3 requests per connection, 9 transactions
// open 3 connections, each on its first transaction, and the objects drawn
// come back at their sizes.
func TestCPSRequestsPerConn(t *testing.T) {
	srv := serveH2(t)
	a := args(vocab.EngineCPS, srv.addr, srv.ca.Pool())
	a.RequestsPerConn = 3
	a.Request.Objects = []httpreq.Object{{Size: 100, Weight: 1}, {Size: 3000, Weight: 1}}
	ss := do(t, build(t, vocab.EngineCPS, a), 9)
	var bodies int64
	for i, s := range ss {
		if s.Opened != (i%3 == 0) || s.Object == 0 || s.Payload != a.Request.Objects[s.Object-1].Size {
			t.Errorf("transaction %d: opened %v, object %d, body %d", i, s.Opened, s.Object, s.Payload)
		}
		bodies += s.Payload
	}
	if srv.requests.Load() != 9 || srv.cn.Load() != 3 || srv.bytes.Load() != bodies {
		t.Errorf("server: %d requests on %d connections, %d bytes; want 9 on 3, %d", srv.requests.Load(),
			srv.cn.Load(), srv.bytes.Load(), bodies)
	}
}

// TestThroughput: S concurrent streams per connection, each stream a
// sample: with 8 requests per connection, 16 transactions of one worker
// open 2 connections and the server answers exactly 16 requests, every
// 1 MiB body verified against the pattern and counted.
func TestThroughput(t *testing.T) {
	for _, streams := range []int{1, 4} {
		t.Run(strconv.Itoa(streams), func(t *testing.T) {
			srv := serveH2(t)
			a := args(vocab.EngineThroughput, srv.addr, srv.ca.Pool())
			a.Streams, a.RequestsPerConn, a.VerifyBody = streams, 8, "pattern"
			op := build(t, vocab.EngineThroughput, a)
			ss := do(t, op, 16)
			var opened, payload, wire int64
			for i, s := range ss {
				if s.Opened {
					opened++
				}
				if s.Opened != (i%8 == 0) || s.Payload != 1<<20 || s.Dur[vocab.PhaseTTFB] <= 0 {
					t.Errorf("transaction %d: opened %v, body %d, ttfb %s", i, s.Opened, s.Payload,
						s.Dur[vocab.PhaseTTFB])
				}
				payload += s.Payload
				wire += s.WireIn
			}
			if srv.requests.Load() != 16 || srv.cn.Load() != 2 || srv.bytes.Load() != payload || opened != 2 {
				t.Errorf("server: %d requests on %d connections, %d bytes; engine: 16 on %d, %d bytes",
					srv.requests.Load(), srv.cn.Load(), srv.bytes.Load(), opened, payload)
			}
			if p := srv.peak.Load(); (streams == 1) != (p == 1) {
				t.Errorf("%d streams per connection, the server answered %d at once", streams, p)
			}
			if wire < payload || wire > payload+payload/20 {
				t.Errorf("wire bytes %d for %d of payload", wire, payload)
			}
		})
	}
}

// TestThroughputRun: a timed run of 2 connections × 4 streams, as the
// engine makes it: no error, the server answered exactly what the engine
// read (the streams left open when the workers stopped are drained); a
// body check that fails is body_mismatch.
func TestThroughputRun(t *testing.T) {
	srv := serveH2(t)
	a := args(vocab.EngineThroughput, srv.addr, srv.ca.Pool())
	a.Streams, a.VerifyBody = 4, "pattern"
	op := build(t, vocab.EngineThroughput, a)
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 2,
		Duration: 500 * time.Millisecond, Drain: 5 * time.Second}}, op)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Snapshot
	if s.AllErrors != 0 || s.AllOK == 0 || s.AllOpened != 2 {
		t.Fatalf("ok %d, errors %v %v, %d connections", s.AllOK, s.Errors, s.Examples, s.AllOpened)
	}
	// Exact: the streams open at the end are read to theirs (Drain), as
	// samples outside the window.
	if srv.requests.Load() != s.AllOK {
		t.Errorf("server answered %d requests, engine read %d", srv.requests.Load(), s.AllOK)
	}
	a.VerifyBody = "sha256:" + strings.Repeat("00", 32)
	x := metrics.Sample{Start: time.Now()}
	w, _ := build(t, vocab.EngineThroughput, a).NewWorker(0)
	w.Do(context.Background(), &x)
	if x.Class != vocab.ClassBodyMismatch || x.Payload != 1<<20 {
		t.Errorf("a wrong sha256: %s %v, body %d", x.Class, x.Err, x.Payload)
	}
}

// TestCPSResume: --resume works over HTTP/2 as tlsconn makes it: with a
// share of 1, every connection after the worker's first resumes its session
// (TLS 1.2 tickets), and every transaction still gets its response.
func TestCPSResume(t *testing.T) {
	srv := serveH2(t)
	a := args(vocab.EngineCPS, srv.addr, srv.ca.Pool())
	a.Conn.Resume = 1
	ss := do(t, build(t, vocab.EngineCPS, a), 4)
	for i, s := range ss {
		if s.Resumed != (i > 0) || s.Payload != 1024 {
			t.Errorf("transaction %d: resumed %v, body %d", i, s.Resumed, s.Payload)
		}
	}
}

// TestCPSServerNames: a list of server names (--sni-list) goes through
// tlsconn over HTTP/2 as over HTTP/1.1: one name per connection, in turn,
// each verified.
func TestCPSServerNames(t *testing.T) {
	srv := serveH2(t)
	a := args(vocab.EngineCPS, srv.addr, srv.ca.Pool())
	a.Conn.ServerNames = []string{"a.localhost", "b.localhost"}
	op := build(t, vocab.EngineCPS, a)
	do(t, op, 4)
	n := op.(interface{ Names() *metrics.Names }).Names()
	if srv.requests.Load() != 4 || n == nil || n.Count != 2 || n.ConnectionsMin != 2 || n.ConnectionsMax != 2 {
		t.Errorf("%d requests, names %+v", srv.requests.Load(), n)
	}
}

// TestCheck: HTTP/2's settings refused before any connection, each naming
// its field.
func TestCheck(t *testing.T) {
	p, _ := protocol.Lookup("http/2")
	for _, tc := range []struct {
		e    vocab.Engine
		a    protocol.Args
		want string
	}{
		{vocab.EngineThroughput, protocol.Args{Streams: -1}, "streams"},
		{vocab.EngineCPS, protocol.Args{Streams: 2}, "streams"},
		{vocab.EngineThroughput, protocol.Args{Pipeline: 2}, "pipeline"},
		{vocab.EngineCPS, protocol.Args{RequestsPerConn: -1}, "requests_per_conn"},
		{vocab.EngineThroughput, protocol.Args{VerifyBody: "md5:00"}, "verify_body"},
	} {
		fe, ok := p.Validate(tc.e, &tc.a).(*vocab.FieldError)
		if !ok || fe.Field != tc.want {
			t.Errorf("%s %+v: %v, want a %s error", tc.e, tc.a, p.Validate(tc.e, &tc.a), tc.want)
		}
	}
	if err := p.Validate(vocab.EngineThroughput, &protocol.Args{Streams: 8, VerifyBody: "pattern"}); err != nil {
		t.Errorf("streams 8, pattern: %v", err)
	}
}
