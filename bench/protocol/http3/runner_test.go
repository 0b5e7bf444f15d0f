package http3_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/schemas"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// spec is a short HTTP/3 run of engine e against addr, as the CLI makes it.
func spec(e vocab.Engine, addr string, ca *cipher.CA) runner.Spec {
	s := runner.Defaults(e)
	s.Protocol, s.Profile = "http/3", testProfile
	s.Target = metrics.Target{Address: addr, ServerName: "localhost"}
	s.Host = "localhost"
	if ca != nil {
		s.Roots = ca.Pool()
	}
	s.Concurrency, s.Duration, s.Warmup, s.Drain = 2, 500*time.Millisecond, 0, 5*time.Second
	s.ReadTimeout = 2 * time.Second
	return s
}

// TestRunRecord: runner.Run over HTTP/3 (as `cps --http 3` makes it), cps
// and throughput with 4 streams: the preflight and the load succeed, the
// server's request count is the record's transactions plus the
// preflight's, exactly (throughput's streams open at the end are read:
// engine.Drainer), the record says its transport is QUIC, has no connect
// phase, counts its packets, and is valid (Go and schema).
func TestRunRecord(t *testing.T) {
	srv := serveH3(t, nil, nil)
	for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
		s := spec(e, srv.addr, srv.ca)
		s.Path, s.ExpectSize = "/1k", 1024
		if e == vocab.EngineThroughput {
			s.Streams = 4
		}
		rq0 := srv.requests.Load()
		r, err := runner.Run(context.Background(), &s)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Preflight.OK || r.Errors.Total != 0 || r.Whole.Transactions == 0 || r.Preflight.Server != "h3test" {
			t.Fatalf("%s: preflight %+v, errors %+v, %d transactions", e, r.Preflight, r.Errors, r.Whole.Transactions)
		}
		got, want := srv.requests.Load()-rq0, r.Whole.Transactions+r.Preflight.Requests
		if got != want {
			t.Errorf("%s: server answered %d requests, the record has %d", e, got, want)
		}
		_, connect := r.Latency[vocab.PhaseConnect.String()]
		if r.Transport != "quic" || connect || r.QUIC == nil || r.QUIC.PacketsSent == 0 || r.TCP != nil ||
			r.Latency[vocab.PhaseHandshake.String()].Count == 0 || r.Negotiated.ALPN != "h3" {
			t.Errorf("%s: transport %q, connect phase %v, quic %+v, tcp %+v, negotiated %+v", e, r.Transport, connect,
				r.QUIC, r.TCP, r.Negotiated)
		}
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		schematest.Valid(t, schemas.Run, "the record", data)
		if _, err := metrics.DecodeRun(data); err != nil {
			t.Errorf("%s: %v", e, err)
		}
		// A QUIC record with TCP's connect phase, or no transport, is invalid.
		r.Latency[vocab.PhaseConnect.String()] = r.Latency[vocab.PhaseTotal.String()]
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "connect phase") {
			t.Errorf("%s: a QUIC record with a connect phase: %v", e, err)
		}
		delete(r.Latency, vocab.PhaseConnect.String())
		if r.Transport = ""; r.Validate() == nil {
			t.Errorf("%s: a record with QUIC statistics and no transport is valid", e)
		}
	}
}

// TestBadInput: what HTTP/3 cannot do is refused before any load, one
// line naming it: a TLS 1.2 profile, linger0, TLS 1.2 tickets, streams
// with cps, a body check that is none.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		set        func(*runner.Spec)
	}{
		{"TLS 1.2 profile", "http/3 runs over TLS 1.3 or later, but the profile's max_version is TLS1.2",
			func(s *runner.Spec) { s.Profile = "ecdhe-ecdsa-aes128-gcm-sha256-p256" }},
		{"linger0", "linger0", func(s *runner.Spec) { s.LingerZero = true }},
		{"tickets", "HTTP/3 runs over TLS 1.3, which resumes with psk",
			func(s *runner.Spec) { s.Resume, s.Resumption = 0.5, "tickets" }},
		{"streams with cps", "streams are throughput's", func(s *runner.Spec) { s.Streams = 4 }},
		{"verify_body", "verify_body must be pattern or sha256", func(s *runner.Spec) { s.VerifyBody = "md5:x" }},
	} {
		s := spec(vocab.EngineCPS, "127.0.0.1:1", nil)
		tc.set(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming %q", tc.name, err, tc.want)
		}
	}
	s := spec(vocab.EngineCPS, "127.0.0.1:1", nil)
	if err := s.Validate(); err != nil {
		t.Errorf("a good spec: %v", err)
	}
}

// TestPreflightFailsFast: a closed UDP port (ICMP port unreachable) fails
// the preflight as refused at once, not at the handshake's deadline; a
// device whose QUIC offers only h2, or no ALPN it shares, fails it as a
// mismatch: no load either way.
func TestPreflightFailsFast(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := pc.LocalAddr().String()
	_ = pc.Close()
	h2only := serveH3(t, []string{"h2"}, nil)
	other := serveH3(t, []string{"hq-interop"}, nil)
	for _, tc := range []struct {
		name, addr, naming string
		ca                 *cipher.CA
		class              vocab.Class
	}{
		{"closed port", closed, "ICMP port unreachable", h2only.ca, vocab.ClassRefused},
		{"h2 only", h2only.addr, "does not speak h3", h2only.ca, vocab.ClassMismatch},
		{"no h3", other.addr, "does not speak h3", other.ca, vocab.ClassMismatch},
	} {
		for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
			s := spec(e, tc.addr, tc.ca)
			s.HandshakeTimeout = 3 * time.Second
			start := time.Now()
			r, err := runner.Run(context.Background(), &s)
			if err != nil {
				t.Fatal(err)
			}
			pf := r.Preflight
			if pf.OK || pf.Class != tc.class || !strings.Contains(pf.Error, tc.naming) || r.Complete ||
				r.Whole.Transactions != 0 || time.Since(start) > time.Second {
				t.Errorf("%s, %s: preflight %+v, complete %v, %d transactions, %v; want %s naming %q at once before any load",
					tc.name, e, pf, r.Complete, r.Whole.Transactions, time.Since(start), tc.class, tc.naming)
			}
		}
	}
}

// TestResume: --resume 0.5 over HTTP/3 resumes TLS 1.3 sessions (psk,
// from the server's NewSessionTicket) on half of each worker's connections
// after its first, its handshakes verified, the record's resumption split.
func TestResume(t *testing.T) {
	srv := serveH3(t, nil, nil)
	s := spec(vocab.EngineCPS, srv.addr, srv.ca)
	s.Path, s.ExpectSize, s.Resume = "/1k", 1024, 0.5
	r, err := runner.Run(context.Background(), &s)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Preflight.OK || r.Preflight.Resumed != 1 || r.Errors.Total != 0 || r.Resumption == nil {
		t.Fatalf("preflight %+v, errors %+v, resumption %+v", r.Preflight, r.Errors, r.Resumption)
	}
	res := r.Resumption
	if res.Mode != "psk" || res.Resumed == 0 || res.Full == 0 ||
		res.Resumed > res.Full+2 || res.Full > res.Resumed+2 {
		t.Errorf("resumption %+v: want psk, about half resumed", res)
	}
}

// TestPreflightRetriesLostHandshake: a device that never answers the
// Initial (a UDP black hole) fails the preflight as quic_handshake_timeout
// after three attempts (a lost Initial is tried again, as a TCP handshake
// timeout is), each within the handshake deadline, and no load is sent.
func TestPreflightRetriesLostHandshake(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	s := spec(vocab.EngineCPS, pc.LocalAddr().String(), nil)
	s.HandshakeTimeout = 200 * time.Millisecond
	start := time.Now()
	r, err := runner.Run(context.Background(), &s)
	if err != nil {
		t.Fatal(err)
	}
	pf := r.Preflight
	if pf.OK || pf.Class != vocab.ClassQUICHandshakeTimeout || pf.Transactions != 3 || len(pf.FailedAttempts) != 3 ||
		r.Whole.Transactions != 0 || time.Since(start) > 2*time.Second {
		t.Errorf("preflight %+v, %d transactions, %v: want 3 quic_handshake_timeout attempts and no load", pf,
			r.Whole.Transactions, time.Since(start))
	}
}

// TestEarlyData: --resume 1 --early-data sends each resuming connection's
// request as 0-RTT data: a device that takes it answers every request once
// (counts exact) and the record counts the connections accepted; one that
// refuses 0-RTT (its tickets allow none at resumption) answers the request
// made again in 1-RTT on a new connection, counted as rejected. Without --resume, or over
// throughput or another protocol, it is refused.
func TestEarlyData(t *testing.T) {
	if raceDetector {
		// quic-go's client opens a stream's flow controller from the
		// peer's transport parameters that its handshake may write at the
		// same time when 0-RTT is used (quic-go issue #4303, open).
		t.Skip("quic-go#4303: a data race of quic-go's in 0-RTT connections")
	}
	refuse := func(c *tls.Config) {
		c.UnwrapSession = func(id []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
			ss, err := c.DecryptTicket(id, cs)
			if ss != nil {
				ss.EarlyData = false
			}
			return ss, err
		}
	}
	for _, tc := range []struct {
		name   string
		srv    *h3Server
		reject bool
	}{{"accepted", serveH3(t, nil, nil), false}, {"rejected", serveH3(t, nil, nil, refuse), true}} {
		s := spec(vocab.EngineCPS, tc.srv.addr, tc.srv.ca)
		s.Path, s.ExpectSize, s.Resume, s.EarlyData = "/1k", 1024, 1, true
		r, err := runner.Run(context.Background(), &s)
		if err != nil {
			t.Fatal(err)
		}
		q := r.QUIC
		if q == nil {
			t.Fatalf("%s: no quic statistics", tc.name)
		}
		if !r.Preflight.OK || r.Errors.Total != 0 {
			t.Fatalf("%s: preflight %+v, errors %+v", tc.name, r.Preflight, r.Errors)
		}
		// A rejected request may still reach the device in 1-RTT on the
		// connection that sent it (quic-go sends the dropped 0-RTT stream
		// data again) before the client closes it: the device may answer
		// it too.
		got, want := tc.srv.requests.Load(), r.Whole.Transactions+r.Preflight.Requests
		if got < want || got > want+q.EarlyDataRejected || !tc.reject && got != want {
			t.Errorf("%s: server answered %d requests, the record has %d", tc.name, got, want)
		}
		early := q.EarlyDataAccepted
		if tc.reject {
			early = q.EarlyDataRejected
		}
		if early < r.Whole.Transactions/2 || q.EarlyDataAccepted > 0 && q.EarlyDataRejected > 0 {
			t.Errorf("%s: 0-RTT accepted %d, rejected %d, of %d transactions", tc.name, q.EarlyDataAccepted,
				q.EarlyDataRejected, r.Whole.Transactions)
		}
	}
	for _, set := range []func(*runner.Spec){
		func(s *runner.Spec) {},
		func(s *runner.Spec) { s.Resume, s.Engine, s.RequestsPerConn = 1, vocab.EngineThroughput, 10 },
		func(s *runner.Spec) { s.Resume, s.Protocol = 1, "http/2" },
	} {
		s := spec(vocab.EngineCPS, "127.0.0.1:1", nil)
		s.EarlyData = true
		set(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "early_data") {
			t.Errorf("%s %s, resume %v: %v", s.Protocol, s.Engine, s.Resume, err)
		}
	}
}
