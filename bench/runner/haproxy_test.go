package runner_test

// The preflight against a real HAProxy terminating TLS: mistakes cost a few
// connections (HAProxy's conn_tot, counted at accept), and a good run's
// handshakes reconcile exactly with HAProxy's ssl_sess once the preflight's
// are added.

import (
	"context"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

func TestHAProxyPreflight(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	other := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	backend, err := target.Start(target.Config{Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	h := testdut.StartHAProxy(t, dir, []testdut.Frontend{
		{Name: "p256", Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curves: "prime256v1"},
		{Name: "fwd", Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curves: "prime256v1", Backend: backend.Listeners[0].Addr},
	})
	spec := func(profile, frontend, path string, roots *cipher.CA) *runner.Spec {
		s := runner.Defaults(vocab.EngineCPS)
		s.Profile, s.Target = profile, metrics.Target{Address: h.Addr(frontend), ServerName: "localhost"}
		s.Roots, s.ConnectTimeout, s.HandshakeTimeout, s.ReadTimeout = roots.Pool(), time.Second, time.Second, time.Second
		s.Host, s.Path, s.UserAgent = "localhost", path, "tlsbench/test"
		s.Concurrency, s.Duration, s.Warmup = 4, 10*time.Second, 0
		return &s
	}
	const good = "ecdhe-ecdsa-aes128-sha256-p256"
	for _, tc := range []struct {
		name, frontend string
		spec           *runner.Spec
		class          vocab.Class
	}{
		{"wrong profile", "p256", spec("ecdhe-ecdsa-aes128-gcm-sha256-p256", "p256", "/", ca), "tls_alert:handshake_failure"},
		{"wrong certificate", "p256", spec(good, "p256", "/", other), vocab.ClassCertificate},
		{"404 path", "fwd", spec(good, "fwd", "/nope", ca), vocab.ClassStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := h.Counter(t, tc.frontend, "conn_tot")
			begin := time.Now()
			r, err := runner.Run(context.Background(), tc.spec)
			took := time.Since(begin)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // HAProxy's counters follow the client
			seen := h.Counter(t, tc.frontend, "conn_tot") - base
			t.Logf("returned in %s; HAProxy accepted %d connections; preflight %+v", took.Round(time.Millisecond), seen, r.Preflight)
			pf := r.Preflight
			if pf == nil || pf.OK || pf.Class != tc.class {
				t.Fatalf("preflight %+v, want failed with %s", pf, tc.class)
			}
			if took >= time.Second {
				t.Errorf("returned after %s, want under a second", took)
			}
			if seen != pf.Transactions || seen > engine.PreflightAttempts {
				t.Errorf("HAProxy accepted %d connections, the preflight made %d (at most %d)", seen, pf.Transactions, engine.PreflightAttempts)
			}
			if r.Load.Attempts != 0 || r.Whole.Transactions+r.Whole.Errors != 0 || r.Failed() == "" {
				t.Errorf("load attempts %d, whole run %+v, failed %q: no load after a failed preflight", r.Load.Attempts, r.Whole, r.Failed())
			}
		})
	}

	t.Run("good run reconciles", func(t *testing.T) {
		s := spec(good, "p256", "/", ca)
		s.Duration, s.Drain = 500*time.Millisecond, 10*time.Second
		hs := h.Counter(t, "p256", testdut.HAProxyCounter)
		r, err := runner.Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		pf := r.Preflight
		if pf == nil || !pf.OK || pf.Transactions != 1 || pf.Handshakes != 1 || pf.BodySize != 1024 {
			t.Fatalf("preflight %+v, want one good transaction", pf)
		}
		want := r.Handshakes + pf.Handshakes
		if got := h.CounterDelta(t, "p256", testdut.HAProxyCounter, hs, want); got != want {
			t.Errorf("HAProxy %s grew by %d; the run completed %d handshakes and its preflight %d", testdut.HAProxyCounter, got, r.Handshakes, pf.Handshakes)
		}
		if r.Load.Attempts != r.Whole.Transactions+r.Whole.Errors || r.Load.Aborted != "" {
			t.Errorf("attempts %d, whole run %+v, aborted %q", r.Load.Attempts, r.Whole, r.Load.Aborted)
		}
	})
}
