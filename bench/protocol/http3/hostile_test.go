package http3_test

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// serveRaw starts a QUIC server speaking h3 whose every connection is
// given to handle, and returns its address and CA.
func serveRaw(t *testing.T, handle func(*quic.Conn)) (string, *cipher.CA) {
	t.Helper()
	p, _ := profiles.Builtin().Get(testProfile)
	ca := testdut.NewCA(t)
	leaf, err := ca.Leaf(p.ServerCertKey(), []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := quic.ListenAddr("127.0.0.1:0", p.Speaking("h3").ServerConfig(leaf), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String(), ca
}

// request accepts c's next request stream and reads the request.
func request(c *quic.Conn) *quic.Stream {
	s, err := c.AcceptStream(context.Background())
	if err != nil {
		return nil
	}
	buf := make([]byte, 4096)
	_ = s.SetReadDeadline(time.Now().Add(time.Second))
	_, _ = s.Read(buf)
	return s
}

// TestHostile: servers that misbehave fail their transactions with a
// class naming what they did, within the deadlines (no hang), without the
// client holding what they send (the endless body is judged, not kept).
func TestHostile(t *testing.T) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	endless := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := make([]byte, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	silent := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})
	reset := http.HandlerFunc(func(_ http.ResponseWriter, _ *http.Request) { panic(http.ErrAbortHandler) })
	status := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) })
	small := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(make([]byte, 100)) })
	short := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "100")
		_, _ = w.Write(make([]byte, 10))
	})
	closing := func(c *quic.Conn) {
		if request(c) != nil {
			_ = c.CloseWithError(0x101, "hostile") // H3_GENERAL_PROTOCOL_ERROR
		}
	}
	garbage := func(c *quic.Conn) {
		if s := request(c); s != nil {
			_, _ = s.Write([]byte{0x00, 0x03, 'a', 'b', 'c'}) // DATA before HEADERS
			_ = s.Close()
			time.Sleep(time.Second)
		}
	}
	blackhole, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = blackhole.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := blackhole.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	type server struct {
		addr string
		ca   *cipher.CA
	}
	h3 := func(h http.Handler) server { s := serveH3(t, nil, h); return server{s.addr, s.ca} }
	raw := func(f func(*quic.Conn)) server { a, ca := serveRaw(t, f); return server{a, ca} }
	for _, tc := range []struct {
		name   string
		srv    server
		expect int64
		class  vocab.Class
		naming string
	}{
		{"endless body", h3(endless), 1024, vocab.ClassBodySize, "above the 1024 bytes"},
		{"no response", h3(silent), -1, vocab.ClassReadTimeout, "deadline"},
		{"stream reset", h3(reset), -1, vocab.ClassH3, "H3_"},
		{"status", h3(status), -1, vocab.ClassStatus, "status 403"},
		{"smaller body than expected", h3(small), 1024, vocab.ClassBodySize, "body of 100 bytes, expected 1024"},
		{"short body", h3(short), -1, vocab.ClassBodySize, "content-length 100"},
		{"CONNECTION_CLOSE H3 error", raw(closing), -1, vocab.ClassH3, "H3_GENERAL_PROTOCOL_ERROR"},
		{"DATA before HEADERS", raw(garbage), -1, vocab.ClassH3, "HEADERS"},
		{"no handshake", server{blackhole.LocalAddr().String(), nil}, -1, vocab.ClassQUICHandshakeTimeout,
			"no QUIC handshake"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
				a := args(e, tc.srv.addr, nil)
				if tc.srv.ca != nil {
					a = args(e, tc.srv.addr, tc.srv.ca.Pool())
				}
				a.Request.ReadTimeout, a.Conn.HandshakeTimeout = 300*time.Millisecond, time.Second
				if tc.srv.ca == nil {
					a.Conn.HandshakeTimeout = 300 * time.Millisecond
				}
				a.Request.ExpectSize = tc.expect
				if e == vocab.EngineThroughput {
					a.Streams = 2
				}
				op := build(t, e, a)
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				start := time.Now()
				s := do(t, op, 2)
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				for i := range s {
					if s[i].Class != tc.class || s[i].Err == nil || !strings.Contains(s[i].Err.Error(), tc.naming) {
						t.Errorf("%s, sample %d: %q (%v), want %s naming %q", e, i, s[i].Class, s[i].Err, tc.class, tc.naming)
					}
				}
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("%s: two transactions took %v", e, d)
				}
				if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 64<<20 {
					t.Errorf("%s: the heap grew by %d bytes", e, grew)
				}
			}
		})
	}
}

// TestStatelessReset: a device that lost a connection's state (a proxy
// hands the client's 1-RTT packets, its request among them, to another
// QUIC stack with the same stateless reset key) answers with a stateless
// reset: the transaction fails as quic_stateless_reset, at once.
func TestStatelessReset(t *testing.T) {
	p, _ := profiles.Builtin().Get(testProfile)
	ca := testdut.NewCA(t)
	leaf, err := ca.Leaf(p.ServerCertKey(), []string{"localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Speaking("h3").ServerConfig(leaf)
	key := &quic.StatelessResetKey{1, 2, 3}
	listen := func() *net.UDPConn { // a QUIC stack with the key, on a port of its own
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		tr := &quic.Transport{Conn: udp, StatelessResetKey: key}
		ln, err := tr.Listen(cfg, &quic.Config{})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				if _, err := ln.Accept(context.Background()); err != nil {
					return
				}
			}
		}()
		t.Cleanup(func() { _ = tr.Close(); _ = udp.Close() })
		return udp
	}
	first, second := listen(), listen()
	proxy, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	upstream := map[bool]*net.UDPConn{}
	for _, long := range []bool{true, false} {
		up, err := net.DialUDP("udp", nil, map[bool]*net.UDPConn{true: first, false: second}[long].LocalAddr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		upstream[long] = up
		t.Cleanup(func() { _ = up.Close() })
	}
	var client atomic.Pointer[net.UDPAddr]
	go func() { // the client's long-header packets to the first stack, the others to the second
		buf := make([]byte, 2048)
		for {
			n, from, err := proxy.ReadFromUDP(buf)
			if err != nil {
				return
			}
			client.Store(from)
			_, _ = upstream[buf[0]&0x80 != 0].Write(buf[:n])
		}
	}()
	for _, up := range upstream {
		go func() { // and their answers back
			buf := make([]byte, 2048)
			for {
				n, err := up.Read(buf)
				if err != nil {
					return
				}
				_, _ = proxy.WriteToUDP(buf[:n], client.Load())
			}
		}()
	}
	a := args(vocab.EngineCPS, proxy.LocalAddr().String(), ca.Pool())
	a.Request.ReadTimeout = 3 * time.Second
	start := time.Now()
	s := do(t, build(t, vocab.EngineCPS, a), 1)[0]
	if s.Class != vocab.ClassQUICStatelessReset || time.Since(start) > 2*time.Second {
		t.Errorf("%q (%v) after %v, want quic_stateless_reset at once", s.Class, s.Err, time.Since(start))
	}
}
