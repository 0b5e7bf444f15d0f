package cps_test

// Integration tests of the CPS engine against a real HAProxy terminating TLS:
// the seed profiles must negotiate exactly what they expect, HAProxy's own
// handshake counter must agree with the engine's, and a server that cannot
// serve a profile must yield only the right error class.

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// measure runs profile name against frontend: a closed loop of 4 workers,
// no warm-up, for d. It checks that the run completed and that HAProxy's
// handshake counter grew by exactly the engine's count of completed
// handshakes (whole run).
func measure(t *testing.T, h *testdut.HAProxy, name, frontend string, ca *cipher.CA, d time.Duration) (*engine.Outcome, *cps.Op) {
	t.Helper()
	p, err := profiles.Builtin().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cps.Defaults()
	cfg.Profile = p
	cfg.Address = h.Addr(frontend)
	cfg.Host = "localhost"
	cfg.TLS = &tls.Config{ServerName: "localhost", RootCAs: ca.Pool()}
	cfg.ExpectSize = 1024
	op, err := cps.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := h.Counter(t, frontend, testdut.HAProxyCounter)
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 4, Duration: d, Drain: 10 * time.Second}}, op)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Abandoned != 0 {
		t.Fatalf("run complete %v, abandoned %d; want complete, none abandoned", res.Complete, res.Abandoned)
	}
	snap := &res.Snapshot
	got := h.CounterDelta(t, frontend, testdut.HAProxyCounter, base, snap.Handshakes)
	if want := snap.Handshakes; got != want {
		t.Errorf("HAProxy %s grew by %d, engine completed %d handshakes", testdut.HAProxyCounter, got, want)
	}
	t.Logf("transactions %d, errors %v, handshakes %d, HAProxy %s +%d", snap.AllOK, snap.Errors, snap.Handshakes, testdut.HAProxyCounter, got)
	return res, op
}

// TestHAProxySeedProfiles runs the reference study's three profiles against
// HAProxy frontends configured as in the study.
func TestHAProxySeedProfiles(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	// The study's rows (see testdut.Seeds).
	tests := testdut.Seeds(t, ca, dir)
	fes := make([]testdut.Frontend, len(tests))
	for i, tt := range tests {
		fes[i] = tt.Frontend
	}
	h := testdut.StartHAProxy(t, dir, fes)

	for _, tt := range tests {
		t.Run(tt.Profile, func(t *testing.T) {
			t.Parallel() // each row has its own frontend and counters
			res, op := measure(t, h, tt.Profile, tt.Frontend.Name, ca, time.Second)
			snap := res.Snapshot

			if snap.AllErrors != 0 {
				t.Errorf("errors = %d %v (example %v), want none", snap.AllErrors, snap.Errors, snap.Examples)
			}
			if snap.AllOK <= 0 || snap.OK <= 0 {
				t.Errorf("transactions = %d (steady %d), want > 0", snap.AllOK, snap.OK)
			}
			// Every transaction is a full handshake that completed.
			if got, want := snap.Handshakes, snap.AllOK+snap.AllErrors; got != want {
				t.Errorf("client handshakes = %d, want %d (one per transaction)", got, want)
			}
			if got := op.Negotiated(); got == nil {
				t.Errorf("Negotiated() = nil, want %+v", tt.Want)
			} else if *got != tt.Want {
				t.Errorf("Negotiated() = %+v, want %+v", *got, tt.Want)
			}
		})
	}
}

// TestHAProxyFailures runs profiles against frontends that cannot serve them
// as expected: every transaction must fail, in exactly one class.
func TestHAProxyFailures(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	ecdsaCert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})

	tests := []struct {
		name    string
		profile string
		fe      testdut.Frontend
		class   vocab.Class
		// handshakes: whether every failed transaction completed its
		// handshake (true) or none did (false).
		handshakes bool
		example    []string // substrings of the class's example message
	}{
		// No suite in common: OpenSSL refuses the ClientHello with a
		// handshake_failure alert (40); no handshake completes.
		{
			name:    "suite",
			profile: "ecdhe-ecdsa-aes128-sha256-p256",
			fe:      testdut.Frontend{Name: "aes256", Cert: ecdsaCert, Ciphers: "ECDHE-ECDSA-AES256-GCM-SHA384", Curves: "prime256v1"},
			class:   "tls_alert:handshake_failure",
			example: []string{"handshake failure"},
		},
		// The server's ECDHE group is P-256 only; the p384 profile offers
		// P-384 and P-256, so the handshake completes on P-256 and the
		// profile check rejects it.
		{
			name:       "group",
			profile:    "ecdhe-ecdsa-aes128-sha256-p384",
			fe:         testdut.Frontend{Name: "p256only", Cert: ecdsaCert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curves: "prime256v1"},
			class:      vocab.ClassMismatch,
			handshakes: true,
			example:    []string{"negotiated group P-256", "expects P-384"},
		},
	}
	fes := make([]testdut.Frontend, len(tests))
	for i, tt := range tests {
		fes[i] = tt.fe
	}
	h := testdut.StartHAProxy(t, dir, fes)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each row has its own frontend and counters
			res, op := measure(t, h, tt.profile, tt.fe.Name, ca, 500*time.Millisecond)
			snap := res.Snapshot

			if snap.AllOK != 0 || snap.OK != 0 {
				t.Errorf("transactions = %d (steady %d), want 0", snap.AllOK, snap.OK)
			}
			if snap.AllErrors <= 0 {
				t.Fatalf("errors = %d, want > 0", snap.AllErrors)
			}
			// No warm-up: the steady window holds every transaction.
			if got, want := snap.Errors[tt.class], snap.AllErrors; got != want || len(snap.Errors) != 1 {
				t.Errorf("errors by class = %v, want only %s: %d", snap.Errors, tt.class, want)
			}
			for _, s := range tt.example {
				if got := snap.Examples[tt.class]; !strings.Contains(got, s) {
					t.Errorf("example of %s = %q, want it to contain %q", tt.class, got, s)
				}
			}
			if got := op.Negotiated(); got != nil {
				t.Errorf("Negotiated() = %+v, want nil (no verified connection)", *got)
			}
			wantHS := int64(0)
			if tt.handshakes {
				wantHS = snap.AllErrors
			}
			if got, want := snap.Handshakes, wantHS; got != want {
				t.Errorf("client handshakes = %d, want %d", got, want)
			}
		})
	}
}
