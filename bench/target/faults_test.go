package target_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

// TestFaultMatrix injects every fault into half the connections and checks
// that the engines count exactly what the target injected, in the class the
// fault must produce, and that the other connections succeed.
func TestFaultMatrix(t *testing.T) {
	set := profiles.Builtin()
	for _, tc := range []struct {
		kind    string
		profile string
		engines []string
	}{
		{"reset-handshake", "ecdhe-ecdsa-aes128-sha256-p256", []string{"cps", "throughput"}},
		{"alert", "ecdhe-ecdsa-aes128-sha256-p256", []string{"cps", "throughput"}},
		{"stall", "ecdhe-ecdsa-aes128-sha256-p256", []string{"cps", "throughput"}},
		{"slow", "rsa2048-aes128-gcm-sha256", []string{"cps", "throughput"}},
		{"close-mid-body", "ecdhe-ecdsa-aes128-gcm-sha256-p256", []string{"cps", "throughput"}},
		{"short-body", "ecdhe-ecdsa-aes128-gcm-sha256-p256", []string{"cps", "throughput"}},
		{"status-503", "tls13-aes128-gcm-x25519", []string{"cps", "throughput"}},
		// The P-384 profile offers P-256 too: the target picks it.
		{"wrong-suite", "ecdhe-ecdsa-aes128-sha256-p384", []string{"cps", "throughput"}},
		// The engines never offer a session: nothing resumes, nothing counts.
		{"accept-resumption", "tls13-aes128-gcm-x25519", []string{"cps", "throughput"}},
		{"expired-cert", "ecdhe-rsa-aes128-gcm-sha256-p256", []string{"cps", "throughput"}},
		// A keep-alive client closes on "Connection: close" and never sees
		// the RST: only the CPS engine waits for the server's close.
		{"reset-after-response", "ecdhe-ecdsa-aes128-sha256-p256", []string{"cps"}},
	} {
		for _, kind := range tc.engines {
			t.Run(tc.kind+"/"+kind, func(t *testing.T) {
				p, _ := set.Get(tc.profile)
				tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p},
					Faults: []target.Fault{{Kind: tc.kind, Fraction: 0.5}}, SlowDelay: 1500 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				defer tg.Close()
				conn := tlsconn.Config{Settings: tlsconn.Settings{ConnectTimeout: 2 * time.Second, HandshakeTimeout: time.Second}, Profile: p, Address: tg.Listener(p.Name).Addr,
					TLS: &tls.Config{ServerName: "localhost", RootCAs: tg.CA.Pool()},
				}
				req := httpreq.Request{Path: "/bytes/8k", ExpectSize: 8 << 10, ReadTimeout: time.Second, UserAgent: "test"}
				var op engine.Op
				if kind == "cps" {
					op, err = cps.New(cps.Config{Config: conn, Request: req})
				} else {
					op, err = throughput.New(throughput.Config{Config: conn, Request: req, Pipeline: 1})
				}
				if err != nil {
					t.Fatal(err)
				}
				res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 4, Duration: 700 * time.Millisecond, Drain: 10 * time.Second}}, op)
				if err != nil {
					t.Fatal(err)
				}
				s := res.Snapshot
				inj := tg.Listener(p.Name).Stats().Injected[tc.kind]
				class := target.FaultClass[tc.kind]
				t.Logf("injected %d, counted %v (examples %v), ok %d", inj, s.Errors, s.Examples, s.AllOK)
				// Throughput opens its connections before the load: a
				// failed open is a warm-up error (AllErrors), and the
				// worker tries again in the window.
				if got, want := s.Errors[class]+int64(res.PreOpenFailed), inj; got != want || s.AllErrors != got {
					t.Errorf("%s: engine counted %d in the window + %d opening (%d in all), target injected %d", class, s.Errors[class], res.PreOpenFailed, s.AllErrors, want)
				}
				if tc.kind != "accept-resumption" && inj == 0 {
					t.Error("nothing injected")
				}
				for c, n := range s.Errors {
					if c != class {
						t.Errorf("unexpected class %s ×%d (%s)", c, n, s.Examples[c])
					}
				}
				if s.AllOK == 0 {
					t.Error("no transaction succeeded on the unfaulted connections")
				}
			})
		}
	}
}

func TestParseFault(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"stall", true},
		{"alert:0.25", true},
		{"alert:0", false},   // no connection
		{"alert:1.5", false}, // more than all
		{"alert:x", false},   // not a number
		{"nope", false},      // unknown kind
	} {
		if _, err := target.ParseFault(tc.in); (err == nil) != tc.ok {
			t.Errorf("ParseFault(%q): %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}
