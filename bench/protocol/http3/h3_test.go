package http3_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/protocol"
	_ "github.com/tlsbench/tlsbench/bench/protocol/http3"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

const testProfile = "tls13-aes128-gcm-x25519"

// h3Server is quic-go's HTTP/3 server on loopback, serving the reference
// target's pattern: /1k, /1m, /bytes/N; it counts the requests it
// answered, their bodies' bytes, its QUIC connections and its requests
// being answered at once (peak).
type h3Server struct {
	addr                string
	ca                  *cipher.CA
	requests, bytes, cn atomic.Int64
	open, peak          atomic.Int64
	handler             http.Handler
}

// connKey is the request context's key of its QUIC connection.
type connKey struct{}

// anyProto makes the server answer HTTP/1.1 and HTTP/2 too (the benchmark's
// TCP side).
var anyProto bool

func body(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = target.Pattern[i%len(target.Pattern)]
	}
	return b
}

// serveH3 starts the server; alpn is what it offers (nil: h3), h replaces
// its handler when set, tweak changes its TLS configuration. It takes
// 0-RTT data.
func serveH3(t testing.TB, alpn []string, h http.Handler, tweak ...func(*tls.Config)) *h3Server {
	t.Helper()
	p, _ := profiles.Builtin().Get(testProfile)
	srv := &h3Server{}
	bodies := map[int][]byte{}
	for _, n := range []int{1 << 10, 1 << 20, 100, 3000} {
		bodies[n] = body(n)
	}
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			size := map[string]int{"/1k": 1 << 10, "/1m": 1 << 20}[r.URL.Path]
			if n, ok := strings.CutPrefix(r.URL.Path, "/bytes/"); ok {
				size, _ = strconv.Atoi(n)
			}
			b, ok := bodies[size]
			if !ok || r.ProtoMajor != 3 && !anyProto || r.Host == "" {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			srv.requests.Add(1)
			srv.bytes.Add(int64(len(b)))
			n := srv.open.Add(1)
			defer srv.open.Add(-1)
			for p := srv.peak.Load(); n > p && !srv.peak.CompareAndSwap(p, n); p = srv.peak.Load() {
			}
			w.Header().Set("Server", "h3test")
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			_, _ = w.Write(b)
		})
	}
	srv.ca = testdut.NewCA(t)
	leaf, err := srv.ca.Leaf(p.ServerCertKey(), []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Speaking("h3").ServerConfig(leaf)
	cfg.SessionTicketsDisabled = false // for the resumption test: the others offer no session
	if alpn != nil {
		cfg.NextProtos = alpn
	}
	for _, f := range tweak {
		f(cfg)
	}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp}
	ln, err := tr.ListenEarly(cfg, &quic.Config{MaxIdleTimeout: 5 * time.Second, Allow0RTT: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.handler = h
	hs := &http3.Server{Handler: h, ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}}
	go func() {
		for {
			c, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			srv.cn.Add(1)
			go func() { _ = hs.ServeQUICConn(c) }()
		}
	}()
	t.Cleanup(func() { _ = hs.Close(); _ = ln.Close(); _ = tr.Close(); _ = udp.Close() })
	srv.addr = udp.LocalAddr().String()
	return srv
}

// args are the protocol arguments of a run against addr, with short
// deadlines.
func args(e vocab.Engine, addr string, roots *x509.CertPool) protocol.Args {
	p, _ := profiles.Builtin().Get(testProfile)
	req := httpreq.Defaults(e.DefaultPath())
	req.ReadTimeout = 2 * time.Second
	return protocol.Args{Request: req, Conn: tlsconn.Config{Profile: p.Speaking("h3"), Address: addr,
		Settings: tlsconn.Settings{ConnectTimeout: 2 * time.Second, HandshakeTimeout: 2 * time.Second},
		TLS:      &tls.Config{ServerName: "localhost", RootCAs: roots}}}
}

func build(t testing.TB, e vocab.Engine, a protocol.Args) protocol.Op {
	t.Helper()
	proto, err := protocol.Lookup("http/3")
	if err != nil {
		t.Fatal(err)
	}
	op, err := proto.Build(e, a)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// do runs n transactions on one worker of op, sequentially, and returns
// their samples.
func do(t testing.TB, op protocol.Op, n int) []metrics.Sample {
	t.Helper()
	w, err := op.NewWorker(0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if c, ok := w.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}()
	out := make([]metrics.Sample, n)
	for i := range out {
		out[i].Start = time.Now()
		w.Do(context.Background(), &out[i])
	}
	return out
}

// TestCPS: each transaction is a new QUIC connection (the server counts
// as many as samples), its handshake verified and timed, no connect phase,
// one GET whose body has the exact size; RequestsPerConn 3 makes three
// requests per connection; the run's QUIC account counts every connection
// and its packets.
func TestCPS(t *testing.T) {
	srv := serveH3(t, nil, nil)
	for _, per := range []int{0, 3} {
		a := args(vocab.EngineCPS, srv.addr, srv.ca.Pool())
		a.Request.Path, a.Request.ExpectSize, a.RequestsPerConn = "/bytes/3000", 3000, per
		op := build(t, vocab.EngineCPS, a)
		cn0, rq0, b0 := srv.cn.Load(), srv.requests.Load(), srv.bytes.Load()
		ss := do(t, op, 6)
		opened := 0
		for i, s := range ss {
			if s.Class != "" || s.Payload != 3000 || s.Dur[vocab.PhaseConnect] != 0 || s.Dur[vocab.PhaseTTFB] <= 0 {
				t.Fatalf("per %d, sample %d: class %q (%v), payload %d, connect %v, ttfb %v", per, i, s.Class, s.Err,
					s.Payload, s.Dur[vocab.PhaseConnect], s.Dur[vocab.PhaseTTFB])
			}
			if s.Opened {
				opened++
				if !s.Handshake || s.Dur[vocab.PhaseHandshake] <= 0 || s.WireIn <= 3000 {
					t.Errorf("per %d, sample %d: handshake %v %v, wire in %d", per, i, s.Handshake,
						s.Dur[vocab.PhaseHandshake], s.WireIn)
				}
			}
		}
		want := 6 / max(per, 1)
		if opened != want || srv.cn.Load()-cn0 != int64(want) || srv.requests.Load()-rq0 != 6 ||
			srv.bytes.Load()-b0 != 6*3000 {
			t.Errorf("per %d: %d samples opened, server: %d connections, %d requests, %d bytes; want %d, 6, 18000",
				per, opened, srv.cn.Load()-cn0, srv.requests.Load()-rq0, srv.bytes.Load()-b0, want)
		}
		q := op.(interface{ QUIC() *metrics.QUIC }).QUIC()
		if q.Connections != int64(want) || q.PacketsSent == 0 || q.Version != "v1" || q.Sockets != "per_connection" {
			t.Errorf("per %d: quic %+v", per, q)
		}
		if n := op.Negotiated(); n == nil || n.ALPN != "h3" || n.Version != "TLS1.3" || n.Group != "X25519" {
			t.Errorf("negotiated %+v", n)
		}
		if now, _ := op.(interface{ OpenConns() (int64, int64) }).OpenConns(); now != 0 {
			t.Errorf("per %d: %d connections open after the worker closed", per, now)
		}
	}
}

// TestClientConnectionID: a connection's UDP socket being its own, the
// client's connection ID is empty (RFC 9000 §5.1): its Initial's source
// connection ID has length 0. A silent port takes the Initial.
func TestClientConnectionID(t *testing.T) {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = udp.Close() })
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, 2048)
		if n, _, err := udp.ReadFromUDP(b); err == nil {
			got <- b[:n]
		}
		close(got)
	}()
	a := args(vocab.EngineCPS, udp.LocalAddr().String(), nil)
	a.Conn.HandshakeTimeout = 300 * time.Millisecond
	if s := do(t, build(t, vocab.EngineCPS, a), 1)[0]; s.Class != vocab.ClassQUICHandshakeTimeout {
		t.Errorf("class %q (%v), want the handshake's timeout", s.Class, s.Err)
	}
	p := <-got
	if len(p) < 7 || p[0]&0x80 == 0 || len(p) < 7+int(p[5]) {
		t.Fatalf("not a long header packet: % x", p[:min(len(p), 16)])
	}
	if n := p[6+int(p[5])]; n != 0 {
		t.Errorf("the client's Initial has a source connection ID of %d bytes, want 0", n)
	}
}

// TestThroughput: Streams concurrent request streams on one connection
// (the server sees S at once), each sample one response of exact size, its
// wire bytes counted from the connection's UDP payload; RequestsPerConn
// makes new connections; the body check sees a corrupt byte.
func TestThroughput(t *testing.T) {
	srv := serveH3(t, nil, nil)
	for _, streams := range []int{1, 4} {
		a := args(vocab.EngineThroughput, srv.addr, srv.ca.Pool())
		a.Request.Path, a.Request.ExpectSize, a.Streams, a.VerifyBody = "/1m", 1<<20, streams, "pattern"
		op := build(t, vocab.EngineThroughput, a)
		cn0, rq0 := srv.cn.Load(), srv.requests.Load()
		srv.peak.Store(0)
		w, err := op.NewWorker(0)
		if err != nil {
			t.Fatal(err)
		}
		var wire int64
		for i := range 20 {
			s := metrics.Sample{Start: time.Now()}
			w.Do(context.Background(), &s)
			if s.Class != "" || s.Payload != 1<<20 || s.Opened != (i == 0) {
				t.Fatalf("streams %d, sample %d: class %q (%v), payload %d, opened %v", streams, i, s.Class, s.Err,
					s.Payload, s.Opened)
			}
			wire += s.WireIn
		}
		// The streams still open when the worker is to run no more are
		// read to the end (engine.Drainer), each a sample: the server
		// answered exactly the samples.
		d, ok := w.(engine.Drainer)
		if !ok {
			t.Fatal("the throughput worker is no engine.Drainer")
		}
		n := 20
		for s := (metrics.Sample{Start: time.Now()}); d.Drain(context.Background(), &s); n++ {
			if s.Class != "" || s.Payload != 1<<20 {
				t.Fatalf("streams %d, drained sample %d: class %q (%v), payload %d", streams, n, s.Class, s.Err, s.Payload)
			}
			wire += s.WireIn
			s = metrics.Sample{Start: time.Now()}
		}
		_ = w.(interface{ Close() error }).Close()
		if got := srv.requests.Load() - rq0; got != int64(n) || n != 20+streams-1 || srv.cn.Load()-cn0 != 1 ||
			srv.peak.Load() != int64(streams) {
			t.Errorf("streams %d: %d samples; server answered %d requests on %d connections, %d at once", streams, n,
				got, srv.cn.Load()-cn0, srv.peak.Load())
		}
		if wire < int64(n)<<20 || wire > int64(n)<<20+1<<20 {
			t.Errorf("streams %d: wire bytes in %d for %d MiB of bodies", streams, wire, n)
		}
	}
}

// TestSources: --source binds each connection's UDP socket to the next
// source address in turn: the server sees the requests come from each.
func TestSources(t *testing.T) {
	var mu sync.Mutex
	from := map[string]int{}
	srv := serveH3(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		mu.Lock()
		from[host]++
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	a := args(vocab.EngineCPS, srv.addr, srv.ca.Pool())
	a.Conn.Sources = []net.IP{net.IPv4(127, 0, 0, 2), net.IPv4(127, 0, 0, 3)}
	for i, s := range do(t, build(t, vocab.EngineCPS, a), 4) {
		if s.Class != "" {
			t.Fatalf("sample %d: %s (%v)", i, s.Class, s.Err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(from) != 2 || from["127.0.0.2"] != 2 || from["127.0.0.3"] != 2 {
		t.Errorf("requests came from %v, want 2 from each source", from)
	}
}

// TestDeviceEndsKeptConnection: a device that closes each connection
// (CONNECTION_CLOSE, H3_NO_ERROR) after its second response: the request
// the client then makes on it is asked again on a new connection, once,
// and succeeds (cps with 3 requests per connection; throughput, whose
// steady window counts the reconnections).
func TestDeviceEndsKeptConnection(t *testing.T) {
	var mu sync.Mutex
	var requests atomic.Int64
	served := map[*quic.Conn]int{}
	srv := serveH3(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.Context().Value(connKey{}).(*quic.Conn)
		mu.Lock()
		served[c]++
		n := served[c]
		mu.Unlock()
		requests.Add(1)
		_, _ = w.Write([]byte("ok"))
		if n == 2 {
			time.AfterFunc(10*time.Millisecond, func() { _ = c.CloseWithError(0x100, "enough") })
		}
	}))
	for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
		a := args(e, srv.addr, srv.ca.Pool())
		a.Request.Path, a.Request.ExpectSize, a.RequestsPerConn = "/", 2, 3
		if e == vocab.EngineThroughput {
			a.RequestsPerConn = 0
		}
		op := build(t, e, a)
		w, err := op.NewWorker(0)
		if err != nil {
			t.Fatal(err)
		}
		rq0, cn0 := requests.Load(), srv.cn.Load()
		for i := range 6 {
			s := metrics.Sample{Start: time.Now(), Steady: true}
			w.Do(context.Background(), &s)
			if s.Class != "" {
				t.Fatalf("%s, sample %d: %s (%v)", e, i, s.Class, s.Err)
			}
			time.Sleep(50 * time.Millisecond) // the device's close arrives
		}
		_ = w.(interface{ Close() error }).Close()
		if rq, cn := requests.Load()-rq0, srv.cn.Load()-cn0; rq != 6 || cn != 3 {
			t.Errorf("%s: server answered %d requests on %d connections, want 6 on 3", e, rq, cn)
		}
		if r, ok := op.(interface{ Reconnects() int64 }); ok && r.Reconnects() != 2 {
			t.Errorf("%s: %d reconnections, want 2", e, r.Reconnects())
		}
	}
}
