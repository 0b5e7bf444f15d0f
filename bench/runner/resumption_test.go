package runner_test

// Session resumption checked against the servers' own counts: the
// reference target's /stats, nginx's $ssl_session_reused per request and
// HAProxy's ssl_reused_sess. Every handshake the run and its preflight made
// is on the server's side too, so the counts must be equal, not close.

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

// resumeSpec is a short CPS run of profile against addr at resumption
// ratio resume.
func resumeSpec(profile, addr string, ca *cipher.CA, resume float64) *runner.Spec {
	s := runner.Defaults(vocab.EngineCPS)
	s.Profile, s.Target = profile, metrics.Target{Address: addr, ServerName: "localhost"}
	s.Roots, s.ConnectTimeout, s.HandshakeTimeout, s.ReadTimeout = ca.Pool(), 2*time.Second, 2*time.Second, 2*time.Second
	s.Host, s.Path, s.UserAgent = "localhost", "/1k", "tlsbench/test"
	s.Concurrency, s.Duration, s.Warmup, s.Drain = 4, 700*time.Millisecond, 200*time.Millisecond, 10*time.Second
	s.Resume = resume
	return &s
}

// runResume makes the run and checks what does not depend on the server:
// no error, the preflight's resumption, the split of the window, and the
// share of resumed handshakes. It returns the run's resumed and full
// handshakes, preflight included: what the server must have seen.
func runResume(t *testing.T, s *runner.Spec, mode string) (resumed, full int64) {
	t.Helper()
	r, err := runner.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	pf := r.Preflight
	if pf == nil || !pf.OK || r.Errors.Total != 0 {
		t.Fatalf("preflight %+v, errors %+v", pf, r.Errors)
	}
	resumed = r.Whole.Resumed + pf.Resumed
	full = r.Handshakes + pf.Handshakes - resumed
	all := r.Handshakes + pf.Handshakes
	t.Logf("R=%g: preflight %d transactions (%d resumed); whole run %+v; resumption %+v", s.Resume,
		pf.Transactions, pf.Resumed, r.Whole, r.Resumption)
	if s.Resume == 0 {
		if r.Resumption != nil || resumed != 0 {
			t.Errorf("SR=0 run: resumption %+v, %d resumed", r.Resumption, resumed)
		}
		return resumed, full
	}
	x := r.Resumption
	if x == nil || x.Mode != mode || x.Ratio != s.Resume || x.Full+x.Resumed != r.Transactions {
		t.Fatalf("resumption %+v, want mode %s ratio %g, full + resumed = %d transactions", x, mode, s.Resume,
			r.Transactions)
	}
	if pf.Transactions != 2 || pf.Resumed != 1 {
		t.Errorf("preflight %+v, want a full handshake then a resumed one", pf)
	}
	// Each worker's first connection is full; of the others, the share
	// Resume resumes (to a connection per worker, the preflight's included).
	if got, slack := float64(resumed)/float64(all), float64(s.Concurrency+2)/float64(all); math.Abs(got-s.Resume) > slack {
		t.Errorf("%d of %d handshakes resumed (%.3f), want %g within %.3f", resumed, all, got, s.Resume, slack)
	}
	lat := r.Latency[vocab.PhaseHandshakeResumed.String()]
	if lat.Count != x.Resumed || r.Latency[vocab.PhaseHandshakeFull.String()].Count != x.Full {
		t.Errorf("handshake histograms count %d resumed, %d full; the split says %d and %d", lat.Count,
			r.Latency[vocab.PhaseHandshakeFull.String()].Count, x.Resumed, x.Full)
	}
	return resumed, full
}

var ratios = []float64{0, 0.5, 1}

func TestResumptionReferenceTarget(t *testing.T) {
	for _, tc := range []struct{ profile, mode string }{
		{"ecdhe-ecdsa-aes128-sha256-p256", tlsconn.ResumeTickets},
		{"tls13-aes128-gcm-x25519", tlsconn.ResumePSK},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			tgt := testdut.StartTargetWith(t, target.Config{Resumption: target.Resumption{Tickets: true, PSK: true}},
				tc.profile)
			l := tgt.Listeners[0]
			for _, ratio := range ratios {
				before := l.Stats()
				resumed, full := runResume(t, resumeSpec(tc.profile, l.Addr, tgt.CA, ratio), tc.mode)
				after := l.Stats()
				if got := after.Resumed - before.Resumed; got != resumed {
					t.Errorf("R=%g: the target resumed %d sessions, the run %d", ratio, got, resumed)
				}
				if got := after.Handshakes - before.Handshakes; got != full {
					t.Errorf("R=%g: the target made %d full handshakes, the run %d", ratio, got, full)
				}
			}
		})
	}
}

// A server that does not resume fails the preflight, within milliseconds,
// with not_resumed: the load is never sent. So with any share R > 0, with
// requests per connection (the held connection is closed for the check)
// and with the throughput engine when it reconnects.
func TestResumptionRefusedByServer(t *testing.T) {
	const profile = "ecdhe-ecdsa-aes128-sha256-p256"
	tgt := testdut.StartTargetWith(t, target.Config{}, profile)
	l := tgt.Listeners[0]
	for _, tc := range []struct {
		engine vocab.Engine
		rpc    int
		resume float64
	}{
		{vocab.EngineCPS, 0, 0.5}, {vocab.EngineCPS, 0, 1e-9}, {vocab.EngineCPS, 10, 1},
		{vocab.EngineThroughput, 5, 0.5},
	} {
		s := resumeSpec(profile, l.Addr, tgt.CA, tc.resume)
		s.Engine, s.RequestsPerConn = tc.engine, tc.rpc
		before := l.Stats().Connections
		begin := time.Now()
		r, err := runner.Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(begin)
		pf := r.Preflight
		if pf == nil || pf.OK || pf.Class != vocab.ClassNotResumed || pf.Transactions != 2 {
			t.Fatalf("%+v: preflight %+v, want failed with not_resumed after 2 transactions", tc, pf)
		}
		if took > time.Second || r.Load.Attempts != 0 {
			t.Errorf("%+v: returned after %s with %d load attempts: want under a second, no load", tc, took,
				r.Load.Attempts)
		}
		if c := l.Stats().Connections - before; c != 2 {
			t.Errorf("%+v: the target accepted %d connections, want the preflight's 2", tc, c)
		}
	}
}

func TestResumptionNginx(t *testing.T) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	logs := [2]string{filepath.Join(dir, "tls12.log"), filepath.Join(dir, "tls13.log")}
	n := testdut.StartNginxT(t, testdut.NginxConfig{
		Dir:  dir,
		HTTP: []string{`log_format reuse "$ssl_session_reused $status";`},
		Servers: []testdut.NginxServer{
			{Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "prime256v1", Tickets: true,
				Extra: []string{"access_log " + logs[0] + " reuse;"}},
			{Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "X25519", Tickets: true, Protocols: "TLSv1.3",
				Extra: []string{"access_log " + logs[1] + " reuse;",
					"ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;"}},
		},
	})
	for i, tc := range []struct{ profile, mode string }{
		{"ecdhe-ecdsa-aes128-sha256-p256", tlsconn.ResumeTickets},
		{"tls13-aes128-gcm-x25519", tlsconn.ResumePSK},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			for _, ratio := range ratios {
				if err := os.Truncate(logs[i], 0); err != nil {
					t.Fatal(err)
				}
				resumed, full := runResume(t, resumeSpec(tc.profile, n.Addrs[i], ca, ratio), tc.mode)
				// nginx logs a request once its response is sent: the
				// client may be a moment ahead.
				var reused, fresh int64
				for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
					reused, fresh = countReuse(t, logs[i])
					if reused+fresh >= resumed+full {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if reused != resumed || fresh != full {
					t.Errorf("R=%g: nginx logged %d reused and %d new sessions, the run %d and %d", ratio, reused,
						fresh, resumed, full)
				}
			}
		})
	}
}

// countReuse counts the access log's requests by $ssl_session_reused: "r"
// (reused) or "." (new), each answered 200.
func countReuse(t *testing.T, file string) (reused, fresh int64) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		switch line {
		case "":
		case "r 200":
			reused++
		case ". 200":
			fresh++
		default:
			t.Fatalf("nginx logged %q", line)
		}
	}
	return reused, fresh
}

func TestResumptionHAProxy(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	h := testdut.StartHAProxy(t, dir, []testdut.Frontend{
		{Name: "tickets", Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curves: "prime256v1", Tickets: true},
	})
	for _, ratio := range ratios {
		sess, reused := h.Counter(t, "tickets", "ssl_sess"), h.Counter(t, "tickets", "ssl_reused_sess")
		resumed, full := runResume(t, resumeSpec("ecdhe-ecdsa-aes128-sha256-p256", h.Addr("tickets"), ca, ratio),
			tlsconn.ResumeTickets)
		gotReused := h.CounterDelta(t, "tickets", "ssl_reused_sess", reused, resumed)
		gotSess := h.CounterDelta(t, "tickets", "ssl_sess", sess, full)
		t.Logf("R=%g: HAProxy ssl_sess +%d, ssl_reused_sess +%d; the run %d resumed, %d full", ratio, gotSess,
			gotReused, resumed, full)
		// ssl_sess counts the full handshakes, ssl_reused_sess the others.
		if gotReused != resumed || gotSess != full {
			t.Errorf("R=%g: HAProxy ssl_reused_sess +%d, ssl_sess +%d; the run resumed %d, made %d full", ratio,
				gotReused, gotSess, resumed, full)
		}
	}
}
