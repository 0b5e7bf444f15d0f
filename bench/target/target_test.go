package target_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

// serverStates collects the server side of every handshake, per profile.
type serverStates struct {
	mu sync.Mutex
	m  map[string][]tls.ConnectionState
}

func (s *serverStates) add(l *target.Listener, cs tls.ConnectionState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[l.Profile.Name] = append(s.m[l.Profile.Name], cs)
}

func (s *serverStates) get(name string) []tls.ConnectionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tls.ConnectionState(nil), s.m[name]...)
}

func startTarget(t *testing.T, ps []*profiles.Profile, states *serverStates) *target.Target {
	t.Helper()
	cfg := target.Config{Profiles: ps, Admin: "127.0.0.1:0"}
	if states != nil {
		cfg.OnHandshake = states.add
	}
	tg, err := target.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// cpsRun measures one listener of tg for d with c connections.
func cpsRun(t *testing.T, tg *target.Target, p *profiles.Profile, c int, d time.Duration) (*cps.Op, *engine.Outcome) {
	t.Helper()
	cfg := cps.Defaults()
	cfg.Profile = p
	cfg.Address = tg.Listener(p.Name).Addr
	cfg.Host = "localhost"
	cfg.ExpectSize = 1024
	cfg.TLS = &tls.Config{ServerName: "localhost", RootCAs: tg.CA.Pool()}
	op, err := cps.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: c, Duration: d, Drain: 10 * time.Second}}, op)
	if err != nil {
		t.Fatal(err)
	}
	return op, res
}

// TestEveryProfileNegotiates runs every built-in profile against its
// listener and checks what both sides negotiated.
func TestEveryProfileNegotiates(t *testing.T) {
	all := profiles.Builtin().All()
	states := &serverStates{m: map[string][]tls.ConnectionState{}}
	tg := startTarget(t, all, states)
	for _, p := range all {
		t.Run(p.Name, func(t *testing.T) {
			op, res := cpsRun(t, tg, p, 2, 300*time.Millisecond)
			snap := res.Snapshot
			if snap.OK == 0 || len(snap.Errors) != 0 {
				t.Fatalf("transactions %d, errors %v %v", snap.OK, snap.Errors, snap.Examples)
			}
			n := op.Negotiated()
			if n == nil {
				t.Fatal("nothing negotiated")
			}
			if got, want := n.Version, p.ExpectedVersion().Short(); got != want {
				t.Errorf("client version %s, want %s", got, want)
			}
			if s, ok := p.ExpectedSuite(); ok {
				if got, want := n.CipherSuite, s.IANA; got != want {
					t.Errorf("client suite %s, want %s", got, want)
				}
			}
			if g, ok := p.ExpectedGroup(); ok {
				if got, want := n.Group, cipher.GroupName(g.ID); got != want {
					t.Errorf("client group %s, want %s", got, want)
				}
			}
			if got, want := n.CertKey, p.ServerCertKey().String(); got != want {
				t.Errorf("client saw certificate %s, want %s", got, want)
			}
			// The server side of every handshake agrees.
			ss := states.get(p.Name)
			if len(ss) == 0 {
				t.Fatal("no server-side handshake observed")
			}
			for _, cs := range ss {
				if cs.DidResume {
					t.Fatal("server resumed a session")
				}
				if got, want := cipher.Version(cs.Version).Short(), n.Version; got != want {
					t.Fatalf("server version %s, client %s", got, want)
				}
				if got, want := cipher.SuiteName(cs.CipherSuite), n.CipherSuite; got != want {
					t.Fatalf("server suite %s, client %s", got, want)
				}
				if got, want := cipher.GroupName(cs.CurveID), n.Group; got != want {
					t.Fatalf("server group %s, client %s", got, want)
				}
			}
		})
	}
}

// TestCountsExact: with no warm-up, the target's full handshakes equal the
// engine's completed handshakes, and its requests equal the transactions.
func TestCountsExact(t *testing.T) {
	set := profiles.Builtin()
	var ps []*profiles.Profile
	for _, n := range profiles.SeedProfiles {
		p, _ := set.Get(n)
		ps = append(ps, p)
	}
	tg := startTarget(t, ps, nil)
	for _, p := range ps {
		t.Run(p.Name, func(t *testing.T) {
			_, res := cpsRun(t, tg, p, 4, 500*time.Millisecond)
			snap := res.Snapshot
			st := adminStats(t, tg, p.Name)
			if got, want := st.Handshakes, snap.Handshakes; got != want {
				t.Errorf("target handshakes %d, engine handshakes %d", got, want)
			}
			if got, want := st.Handshakes, snap.AllOK+snap.AllErrors; got != want {
				t.Errorf("target handshakes %d, engine transactions %d + failed %d", got, snap.AllOK, snap.AllErrors)
			}
			if got, want := st.Requests, snap.AllOK; got != want {
				t.Errorf("target requests %d, engine transactions %d", got, want)
			}
			if st.Resumed != 0 {
				t.Errorf("target resumed %d sessions", st.Resumed)
			}
			// With no warm-up every transaction is in the steady window.
			if got, want := snap.OK, snap.AllOK; got != want {
				t.Errorf("steady transactions %d, whole run %d", got, want)
			}
		})
	}
}

func adminStats(t *testing.T, tg *target.Target, profile string) target.Stats {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + tg.AdminAddr + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all struct{ Listeners []target.Stats }
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatal(err)
	}
	for _, s := range all.Listeners {
		if s.Profile == profile {
			return s
		}
	}
	t.Fatalf("no listener %s in /stats", profile)
	return target.Stats{}
}

// httpsTarget starts the reference target for the built-in profile name
// and returns an HTTPS client for it (with timeout) and its base URL.
func httpsTarget(t *testing.T, name string, timeout time.Duration) (*http.Client, string) {
	t.Helper()
	p, _ := profiles.Builtin().Get(name)
	tg := startTarget(t, []*profiles.Profile{p}, nil)
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		TLSClientConfig: p.ClientConfig(&tls.Config{RootCAs: tg.CA.Pool(), ServerName: "localhost"}),
	}}, "https://" + tg.Listener(p.Name).Addr
}

// TestStatsOverTLS: a listener's own /stats does not count the connection
// that asks for it.
func TestStatsOverTLS(t *testing.T) {
	c, url := httpsTarget(t, "ecdhe-ecdsa-aes128-sha256-p256", 5*time.Second)
	for i := 0; i < 3; i++ {
		resp, err := c.Get(url + "/1k")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(body) != 1024 {
			t.Fatalf("body %d bytes", len(body))
		}
	}
	c.CloseIdleConnections()
	resp, err := c.Get(url + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st target.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	// net/http keeps the connection alive: one handshake served the three
	// requests; the /stats connection is a second one, not counted.
	if got, want := st.Handshakes, int64(1); got != want {
		t.Errorf("handshakes %d, want %d", got, want)
	}
	if got, want := st.Requests, int64(3); got != want {
		t.Errorf("requests %d, want %d", got, want)
	}
}

// TestObjects checks the sizes and the pattern of the served objects.
func TestObjects(t *testing.T) {
	c, base := httpsTarget(t, "tls13-aes128-gcm-x25519", 10*time.Second)
	checkObjects(t, c, base, 1)
}

// checkObjects requests every kind of object from base with c, checking
// status, size, pattern and headers, and that it speaks HTTP/major.
func checkObjects(t *testing.T, c *http.Client, base string, major int) {
	t.Helper()
	for _, tc := range []struct {
		path string
		size int64
		code int
	}{
		{"/1k", 1024, 200},
		{"/1m", 1 << 20, 200},
		{"/bytes/0", 0, 200},
		{"/bytes/3k", 3 << 10, 200},
		{"/bytes/17m", 17 << 20, 200}, // above the preallocated size: streamed
		{"/bytes/x", -1, 400},         // not a size
		{"/nope", -1, 404},            // unknown object
	} {
		resp, err := c.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != major || resp.Header.Get("Server") != "tlsbench" || resp.ContentLength != int64(len(body)) {
			t.Errorf("%s: %s, Server %q, Content-Length %d for %d bytes; want HTTP/%d, tlsbench, the body's length",
				tc.path, resp.Proto, resp.Header.Get("Server"), resp.ContentLength, len(body), major)
		}
		if got, want := resp.StatusCode, tc.code; got != want {
			t.Errorf("%s: status %d, want %d", tc.path, got, want)
			continue
		}
		if tc.size < 0 {
			continue
		}
		if got, want := int64(len(body)), tc.size; got != want {
			t.Errorf("%s: %d bytes, want %d", tc.path, got, want)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("%s: Content-Type %q", tc.path, ct)
		}
		for i, b := range body {
			if b != target.Pattern[i%target.PatternPeriod] {
				t.Fatalf("%s: byte %d is %q, pattern says %q", tc.path, i, b, target.Pattern[i%target.PatternPeriod])
			}
		}
	}
}

func ExampleStart() {
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}})
	if err != nil {
		panic(err)
	}
	defer tg.Close()
	fmt.Println(tg.Listeners[0].Profile.Name)
	// Output: ecdhe-ecdsa-aes128-sha256-p256
}

// TestHandshakeErrors: a connection that closes without a ClientHello (a
// reachability probe) is not a failed handshake; one that sends garbage is.
func TestHandshakeErrors(t *testing.T) {
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	tg := startTarget(t, []*profiles.Profile{p}, nil)
	addr := tg.Listener(p.Name).Addr
	dial := func(payload string) {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write([]byte(payload))
		// The probe's end (EOF before any byte) or the garbage ends the
		// server's handshake, which counts (or not) before the server
		// closes: once it has closed, the counters are final.
		_ = c.(*net.TCPConn).CloseWrite()
		_, _ = io.Copy(io.Discard, c) // until the server gives up
		c.Close()
	}
	dial("")
	dial("GET / HTTP/1.0\r\n\r\n")
	st := tg.Listener(p.Name).Stats()
	if got, want := st.HandshakeErrors, int64(1); got != want {
		t.Errorf("handshake errors %d, want %d (the probe must not count)", got, want)
	}
	if st.Handshakes != 0 {
		t.Errorf("handshakes %d", st.Handshakes)
	}
}

// TestHeadersRegenerated: templated headers differ on every request, as the
// target sees them; the paths of a list are requested in turn.
func TestHeadersRegenerated(t *testing.T) {
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	var mu sync.Mutex
	agents := map[string]int{}
	paths := map[string]int{}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, OnRequest: func(_ *target.Listener, ctx *fasthttp.RequestCtx) {
		mu.Lock()
		defer mu.Unlock()
		agents[string(ctx.Request.Header.Peek("X-Agent"))]++
		paths[string(ctx.Path())]++
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	cfg := cps.Defaults()
	cfg.Profile, cfg.Address, cfg.Host = p, tg.Listener(p.Name).Addr, "localhost"
	cfg.Paths = []string{"/1k", "/bytes/2k"}
	cfg.Headers = [][2]string{{"X-Agent", "{{random.base64 500}}"}}
	cfg.TLS = &tls.Config{ServerName: "localhost", RootCAs: tg.CA.Pool()}
	op, err := cps.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 2, Duration: 300 * time.Millisecond}}, op)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	n := res.Snapshot.AllOK
	if n == 0 || res.Snapshot.AllErrors != 0 {
		t.Fatalf("ok %d, errors %v", n, res.Snapshot.Errors)
	}
	if got := int64(len(agents)); got != n {
		t.Errorf("%d distinct X-Agent values for %d requests", got, n)
	}
	for v := range agents {
		if len(v) != 668 { // base64 of 500 bytes
			t.Fatalf("X-Agent of %d characters", len(v))
		}
	}
	if d := paths["/1k"] - paths["/bytes/2k"]; d < -2 || d > 2 {
		t.Errorf("paths %v: not in turn", paths)
	}
}
