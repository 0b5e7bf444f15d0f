package throughput_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/internal/rawtls"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

const mib = 1 << 20

func refProfile(t *testing.T, name string) *profiles.Profile {
	t.Helper()
	p, err := profiles.Builtin().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// refConfig is a throughput configuration for addr, verified with pool.
func refConfig(p *profiles.Profile, addr string, pool *tlsconn.Config) throughput.Config {
	cfg := throughput.Defaults()
	cfg.Config = *pool
	cfg.Profile, cfg.Address, cfg.Host = p, addr, "localhost"
	cfg.ReadTimeout = 5 * time.Second
	return cfg
}

// refRun runs op for d with c connections and no warm-up.
func refRun(t *testing.T, cfg throughput.Config, c int, d time.Duration) (*throughput.Op, *engine.Outcome) {
	t.Helper()
	op, err := throughput.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: c, Duration: d, Drain: 10 * time.Second}}, op)
	if err != nil {
		t.Fatal(err)
	}
	return op, res
}

// refTarget starts the reference target for p (closed when the test ends)
// and returns a configuration for it.
func refTarget(t *testing.T, p *profiles.Profile) (*target.Target, throughput.Config) {
	t.Helper()
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	opts := tlsOpts(tg.CA)
	return tg, refConfig(p, tg.Listener(p.Name).Addr, &opts)
}

func tlsOpts(ca *cipher.CA) tlsconn.Config {
	return tlsconn.Config{Settings: tlsconn.Settings{ConnectTimeout: 5 * time.Second, HandshakeTimeout: 5 * time.Second},
		TLS: &tls.Config{ServerName: "localhost", RootCAs: ca.Pool()},
	}
}

// TestEveryProfile: every built-in profile against the reference target;
// byte counts exact, bodies verified, one handshake per connection.
func TestEveryProfile(t *testing.T) {
	all := profiles.Builtin().All()
	tg, err := target.Start(target.Config{Profiles: all})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	check, _ := throughput.ParseVerify("pattern", target.Pattern)
	for _, p := range all {
		t.Run(p.Name, func(t *testing.T) {
			opts := tlsOpts(tg.CA)
			cfg := refConfig(p, tg.Listener(p.Name).Addr, &opts)
			cfg.ExpectSize, cfg.Verify = mib, check
			op, res := refRun(t, cfg, 2, 400*time.Millisecond)
			s := res.Snapshot
			if s.OK == 0 || len(s.Errors) != 0 || s.AllErrors != 0 {
				t.Fatalf("ok %d, errors %v %v", s.OK, s.Errors, s.Examples)
			}
			if got, want := s.Bytes.Payload, s.OK*mib; got != want {
				t.Errorf("payload %d bytes, want %d requests × 1 MiB = %d", got, s.OK, want)
			}
			if s.Bytes.PayloadPartial != 0 {
				t.Errorf("partial payload %d without errors", s.Bytes.PayloadPartial)
			}
			if s.Bytes.WireIn <= s.Bytes.Payload {
				t.Errorf("wire in %d not above payload %d", s.Bytes.WireIn, s.Bytes.Payload)
			}
			if got, want := s.AllOpened, int64(2); got != want {
				t.Errorf("connections opened %d, want one per worker (%d)", got, want)
			}
			if got, want := s.Handshakes, s.AllOpened; got != want {
				t.Errorf("handshakes %d, connections %d", got, want)
			}
			st := tg.Listener(p.Name).Stats()
			if got, want := st.Handshakes, s.Handshakes; got != want {
				t.Errorf("target handshakes %d, engine %d", got, want)
			}
			// Pipeline 1: nothing is left in flight when a worker stops.
			if got, want := st.Requests, s.AllOK; got != want {
				t.Errorf("target requests %d, engine responses %d", got, want)
			}
			if n := op.Negotiated(); n == nil || n.Version != p.ExpectedVersion().Short() {
				t.Errorf("negotiated %+v", n)
			}
			run := &metrics.Run{Engine: "throughput"}
			if err := run.Fill(s, res.Window); err != nil {
				t.Fatal(err)
			}
			want := float64(s.Bytes.Payload) * 8 / res.Window.Seconds() / 1e9
			if metrics.Value(run.Gbps) != want || metrics.Value(run.Requests) != s.OK {
				t.Errorf("record Gbps %v requests %d; want %v, %d", metrics.Value(run.Gbps), metrics.Value(run.Requests), want, s.OK)
			}
			t.Logf("%.2f Gbps payload, %.2f Gbps wire", metrics.Value(run.Gbps), metrics.Value(run.WireGbps))
		})
	}
}

// TestPipelineAndBudget: pipelining and a per-connection request budget
// against the reference target.
func TestPipelineAndBudget(t *testing.T) {
	p := refProfile(t, "ecdhe-rsa-aes128-gcm-sha256-p256")
	for _, tc := range []struct {
		name              string
		pipeline, perConn int
	}{
		{"pipeline 4", 4, 0},             // four requests in flight per connection
		{"3 per connection", 1, 3},       // a new connection every 3 responses
		{"pipeline 2, 5 per conn", 2, 5}, // both
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, cfg := refTarget(t, p)
			cfg.Path, cfg.ExpectSize = "/bytes/64k", 64<<10
			cfg.Pipeline, cfg.RequestsPerConn = tc.pipeline, tc.perConn
			op, res := refRun(t, cfg, 2, 300*time.Millisecond)
			s := res.Snapshot
			if s.OK == 0 || s.AllErrors != 0 {
				t.Fatalf("ok %d, errors %v %v", s.OK, s.Errors, s.Examples)
			}
			if n := op.Reconnects(); n != 0 {
				t.Errorf("%d reconnections: the client's own budget closed them, not the device", n)
			}
			if got, want := s.Bytes.Payload, s.OK*(64<<10); got != want {
				t.Errorf("payload %d, want %d", got, want)
			}
			st := tg.Listener(p.Name).Stats()
			if got, want := st.Handshakes, s.AllOpened; got != want {
				t.Errorf("target handshakes %d, engine connections %d", got, want)
			}
			// Requests still in flight when a worker stops are abandoned:
			// at most pipeline-1 per worker.
			if abandoned := st.Requests - s.AllOK; abandoned < 0 || abandoned > int64(2*(tc.pipeline-1)) {
				t.Errorf("target answered %d requests, engine read %d", st.Requests, s.AllOK)
			}
			if tc.perConn > 0 {
				if min := (s.AllOK + int64(tc.perConn) - 1) / int64(tc.perConn); s.AllOpened < min {
					t.Errorf("%d connections for %d responses at %d per connection", s.AllOpened, s.AllOK, tc.perConn)
				}
			}
		})
	}
}

// TestReconnectsAfterDeviceClose: a device that closes its kept-alive
// connections after 10 responses (Connection: close on the 10th, as
// Apache's MaxKeepAliveRequests does) makes the workers reconnect inside
// the window: each new connection after a worker's first is counted, and
// they are all the device's handshakes.
func TestReconnectsAfterDeviceClose(t *testing.T) {
	p := refProfile(t, "ecdhe-rsa-aes128-gcm-sha256-p256")
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, MaxRequestsPerConn: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	opts := tlsOpts(tg.CA)
	cfg := refConfig(p, tg.Listener(p.Name).Addr, &opts)
	cfg.Path, cfg.ExpectSize = "/bytes/64k", 64<<10
	op, res := refRun(t, cfg, 2, 400*time.Millisecond) // no warm-up: every connection in the window
	s := res.Snapshot
	if s.OK < 40 || s.AllErrors != 0 {
		t.Fatalf("ok %d, errors %v %v", s.OK, s.Errors, s.Examples)
	}
	// Every worker's first connection is not a reconnection.
	if got, want := op.Reconnects(), s.Opened-2; got != want || got < s.OK/10-2 {
		t.Errorf("%d reconnections, want %d (%d connections opened in the window, %d responses)", got, want,
			s.Opened, s.OK)
	}
	if got := tg.Listener(p.Name).Stats().Handshakes; got != s.AllOpened {
		t.Errorf("target handshakes %d, engine connections %d", got, s.AllOpened)
	}
}

func body(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = target.Pattern[i%target.PatternPeriod]
	}
	return b
}

// TestMisbehavingServers: closes and bad bodies land in the right class.
func TestMisbehavingServers(t *testing.T) {
	p := refProfile(t, "ecdhe-ecdsa-aes128-sha256-p256")
	good := body(4096)
	bad := bytes.Clone(good)
	bad[1000] ^= 1
	sum := sha256.Sum256(good)
	for _, tc := range []struct {
		name   string
		verify string
		serve  func(c net.Conn, r *textproto.Reader)
		class  vocab.Class // the only error class expected; "" for none
		reopen bool        // connections must have been reopened
	}{
		{
			// Closes the kept-alive connection after two responses, without
			// saying so: the engine opens a new one, no error.
			name: "close between responses", verify: "pattern", reopen: true,
			serve: func(c net.Conn, r *textproto.Reader) {
				for i := 0; i < 2 && rawtls.ReadRequest(r); i++ {
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(good))
					c.Write(good)
				}
			},
		},
		{
			// Promises 4096 bytes, sends 1000 and closes: eof.
			name: "close mid-body", class: vocab.ClassEOF,
			serve: func(c net.Conn, r *textproto.Reader) {
				if rawtls.ReadRequest(r) {
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(good))
					c.Write(good[:1000])
				}
			},
		},
		{
			// One flipped bit in the body, checked against the pattern.
			name: "wrong body (pattern)", verify: "pattern", class: vocab.ClassBodyMismatch,
			serve: func(c net.Conn, r *textproto.Reader) {
				for rawtls.ReadRequest(r) {
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(bad))
					c.Write(bad)
				}
			},
		},
		{
			// The same, checked by SHA-256.
			name: "wrong body (sha256)", verify: "sha256:" + hex.EncodeToString(sum[:]), class: vocab.ClassBodyMismatch,
			serve: func(c net.Conn, r *textproto.Reader) {
				for rawtls.ReadRequest(r) {
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(bad))
					c.Write(bad)
				}
			},
		},
		{
			// A correct body passes the SHA-256 check, chunked.
			name: "chunked, sha256 ok", verify: "sha256:" + hex.EncodeToString(sum[:]),
			serve: func(c net.Conn, r *textproto.Reader) {
				for rawtls.ReadRequest(r) {
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", 96, good[:96], len(good)-96, good[96:])
				}
			},
		},
		{
			// Not 200.
			name: "status 503", class: vocab.ClassStatus,
			serve: func(c net.Conn, r *textproto.Reader) {
				for rawtls.ReadRequest(r) {
					fmt.Fprintf(c, "HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy")
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, ca := rawtls.Serve(t, p, tc.serve)
			opts := tlsOpts(ca)
			cfg := refConfig(p, addr, &opts)
			check, err := throughput.ParseVerify(tc.verify, target.Pattern)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Verify = check
			_, res := refRun(t, cfg, 2, 200*time.Millisecond)
			s := res.Snapshot
			if tc.class == "" {
				if s.AllErrors != 0 || s.OK == 0 {
					t.Fatalf("ok %d, errors %v %v", s.OK, s.Errors, s.Examples)
				}
				if got, want := s.Bytes.Payload, s.OK*int64(len(good)); got != want {
					t.Errorf("payload %d, want %d", got, want)
				}
			} else {
				if s.AllOK != 0 {
					t.Errorf("%d successes from a misbehaving server", s.AllOK)
				}
				if len(s.Errors) != 1 || s.Errors[tc.class] == 0 {
					t.Errorf("errors %v (%v), want only %s", s.Errors, s.Examples, tc.class)
				}
			}
			if tc.reopen && s.AllOpened < 2*2 {
				t.Errorf("connections opened %d: the closed ones were not reopened", s.AllOpened)
			}
			if tc.class == vocab.ClassEOF && s.Bytes.PayloadPartial == 0 {
				t.Error("the partial body is not counted as partial")
			}
		})
	}
}

func TestParseVerify(t *testing.T) {
	for _, tc := range []struct {
		spec string
		ok   bool
	}{
		{"", true},        // no check
		{"pattern", true}, // the reference target's objects
		{"sha256:" + strings.Repeat("ab", 32), true},
		{"sha256:abc", false},                         // too short
		{"sha256:" + strings.Repeat("zz", 32), false}, // not hex
		{"md5:00", false},                             // unknown kind
	} {
		if _, err := throughput.ParseVerify(tc.spec, target.Pattern); (err == nil) != tc.ok {
			t.Errorf("ParseVerify(%q) error %v, want ok=%v", tc.spec, err, tc.ok)
		}
	}
}

// TestIdleConnectionsHeld: in open loop at a low rate, every connection is
// opened (one handshake each) before the load, kept while idle and carries
// requests in turn; the read buffers go back between responses.
func TestIdleConnectionsHeld(t *testing.T) {
	p := refProfile(t, "ecdhe-ecdsa-aes128-sha256-p256")
	tg, cfg := refTarget(t, p)
	cfg.Path, cfg.ExpectSize = "/1k", 1024
	op, err := throughput.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const conns = 50
	// 100 requests a second for 1 s: every connection twice, in turn.
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: conns, Rate: 100, Duration: time.Second, Drain: 10 * time.Second}}, op)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Snapshot
	if s.AllErrors != 0 || s.AllOK < 95 {
		t.Fatalf("ok %d, errors %v %v", s.AllOK, s.Errors, s.Examples)
	}
	if res.PreOpened != conns || res.PreOpenFailed != 0 {
		t.Errorf("pre-opened %d (%d failed), want %d", res.PreOpened, res.PreOpenFailed, conns)
	}
	if res.HeldAtEnd != conns || res.HeldPeak != conns {
		t.Errorf("held %d at the end, %d at most; want %d", res.HeldAtEnd, res.HeldPeak, conns)
	}
	// Every connection carried a request (its first sample counts it as
	// opened), and none was opened twice.
	if s.AllOpened != conns {
		t.Errorf("%d connections counted as opened, want %d", s.AllOpened, conns)
	}
	if got := tg.Listener(p.Name).Stats().Handshakes; got != conns {
		t.Errorf("target handshakes %d, want %d", got, conns)
	}
	if now, _ := op.OpenConns(); now != 0 {
		t.Errorf("%d connections still open after the run", now)
	}
}
