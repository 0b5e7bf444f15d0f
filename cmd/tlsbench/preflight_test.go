package main

import (
	"context"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/profiles"
)

const preflightProfile = "ecdhe-ecdsa-aes128-sha256-p256"

// startTarget starts the reference target with cfg and writes its CA.
func startTarget(t *testing.T, cfg target.Config) (*target.Target, string) {
	t.Helper()
	if !cfg.Plain && len(cfg.Profiles) == 0 {
		p, _ := profiles.Builtin().Get(preflightProfile)
		cfg.Profiles = []*profiles.Profile{p}
	}
	tg, err := target.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if tg.CA == nil {
		return tg, ""
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, tg.CA.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return tg, ca
}

// connections reads a listener's accepted connections once they have
// settled (the target counts an accept after the client's connect).
func connections(l *target.Listener) int64 {
	n := l.Stats().Connections
	for i := 0; i < 20; i++ {
		time.Sleep(10 * time.Millisecond)
		m := l.Stats().Connections
		if m == n && i >= 4 {
			break
		}
		n = m
	}
	return n
}

// TestMistakesCostMilliseconds: a closed port, a plain-HTTP port, a
// profile the server refuses, a certificate of another CA, a path that is
// not there and a device that negotiates another suite each end the run
// with exit 1 in under a second, before any load, at the first attempt
// (none is a timeout or a reset, which the preflight tries again): the
// device sees the preflight's one connection, no more.
func TestMistakesCostMilliseconds(t *testing.T) {
	tg, ca := startTarget(t, target.Config{})
	plain, _ := startTarget(t, target.Config{Plain: true})
	// The P-384 profile offers P-256 too: the target picks it.
	p384, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p384")
	wrong, wrongCA := startTarget(t, target.Config{Profiles: []*profiles.Profile{p384},
		Faults: []target.Fault{{Kind: "wrong-suite", Fraction: 1}}})
	other, err := cipher.NewCA(cipher.KeyType{Alg: "ECDSA", Curve: "P-256"}, "another CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	otherCA := filepath.Join(t.TempDir(), "other.pem")
	if err := os.WriteFile(otherCA, other.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	tls := tg.Listeners[0]
	for _, tc := range []struct {
		name   string
		url    string
		args   []string
		device *target.Listener // nil: nothing listens
		class  vocab.Class      // the preflight's failure
		want   string           // in the message
	}{
		{"closed port", "https://" + closed + "/", nil, nil, vocab.ClassRefused, "cannot connect to " + closed},
		{"plain-HTTP port", "https://localhost:" + portOf(plain.Listeners[0].Addr) + "/", nil, plain.Listeners[0], vocab.ClassOther, "does not look like a TLS handshake"},
		{"wrong profile", "https://localhost:" + portOf(tls.Addr) + "/", []string{"--profile", "ecdhe-ecdsa-aes128-gcm-sha256-p256"}, tls, "tls_alert:handshake_failure", "offered TLS1.2..TLS1.2, ECDHE-ECDSA-AES128-GCM-SHA256"},
		{"wrong certificate", "https://localhost:" + portOf(tls.Addr) + "/", []string{"--cacert", otherCA}, tls, vocab.ClassCertificate, "unknown authority"},
		{"404 path", "https://localhost:" + portOf(tls.Addr) + "/nope", nil, tls, vocab.ClassStatus, "status 404"},
		{"another suite", "https://localhost:" + portOf(wrong.Listeners[0].Addr) + "/", []string{"--cacert", wrongCA, "--profile", p384.Name},
			wrong.Listeners[0], vocab.ClassMismatch, "the server's answer: mismatch"},
	} {
		for _, kind := range []string{"cps", "throughput"} {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				url := tc.url
				if strings.HasSuffix(url, "/") {
					url += strings.TrimPrefix(map[string]string{"cps": "/1k", "throughput": "/1m"}[kind], "/")
				}
				var before int64
				if tc.device != nil {
					before = connections(tc.device)
				}
				rec := filepath.Join(t.TempDir(), "run.json")
				args := append([]string{kind, "-q", "-d", "10s", "--cacert", ca, "--json", rec, url}, tc.args...)
				begin := time.Now()
				code, stdout, stderr := invoke(t, context.Background(), args...)
				took := time.Since(begin)
				var seen int64
				if tc.device != nil {
					seen = connections(tc.device) - before
				}
				t.Logf("exit %d in %s; the device saw %d connections: %s", code, took.Round(time.Millisecond), seen, strings.TrimSpace(stderr))
				if code != exitFailed {
					t.Fatalf("exit %d, want %d: %s", code, exitFailed, stderr)
				}
				if took >= time.Second {
					t.Errorf("exit after %s, want under a second", took)
				}
				if seen > 1 {
					t.Errorf("the device saw %d connections, want at most 1", seen)
				}
				if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "no load sent") || strings.Count(stderr, "\n") != 1 {
					t.Errorf("message %q does not name %q and no load sent in one line", stderr, tc.want)
				}
				if stdout != "" {
					t.Errorf("stdout %q: no run, no table", stdout)
				}
				r, err := metrics.ReadRun(rec)
				if err != nil {
					t.Fatal(err)
				}
				pf := r.Preflight
				if pf == nil || pf.OK || pf.Class != tc.class || pf.Transactions != 1 ||
					len(pf.FailedAttempts) != 1 || pf.FailedAttempts[0].Class != tc.class || pf.FailedAttempts[0].Error != pf.Error {
					t.Fatalf("record's preflight %+v, want failed with %s at the first attempt", pf, tc.class)
				}
				// CPS opens a connection per transaction; throughput keeps
				// its connection after a complete response (the 404).
				if tc.device != nil && (seen > pf.Transactions || kind == "cps" && seen != pf.Transactions) {
					t.Errorf("preflight transactions %d, the device saw %d connections", pf.Transactions, seen)
				}
				if r.Load.Attempts != 0 || r.Whole.Transactions+r.Whole.Errors != 0 || r.Complete {
					t.Errorf("load attempts %d, whole run %+v, complete %v: no load may follow a failed preflight", r.Load.Attempts, r.Whole, r.Complete)
				}
			})
		}
	}
}

// TestDeviceFailsMidRun: a device that stops completing handshakes mid-run
// (the target is replaced by one that accepts and closes) makes the workers
// back off and the run end with exit 1 within --abort-after, every attempt
// counted and the device's connections bounded.
func TestDeviceFailsMidRun(t *testing.T) {
	for _, kind := range []string{"cps", "throughput"} {
		t.Run(kind, func(t *testing.T) {
			tg, ca := startTarget(t, target.Config{})
			addr := tg.Listeners[0].Addr
			rec := filepath.Join(t.TempDir(), "run.json")
			const conc, abort = 8, time.Second
			args := []string{kind, "-q", "-c", "8", "-d", "30s", "--warmup", "0s", "--abort-after", abort.String(),
				"--cacert", ca, "--json", rec, "--requests-per-conn", "5", "https://localhost:" + portOf(addr) + "/1k"}
			if kind == "cps" {
				args = append(args[:len(args)-3], args[len(args)-1])
			}
			var broke atomic.Int64
			var seen atomic.Int64
			go func() {
				time.Sleep(700 * time.Millisecond)
				tg.Close()
				// The broken device: accepts and closes at once.
				ln, err := net.Listen("tcp", addr)
				if err != nil {
					t.Error(err)
					return
				}
				broke.Store(time.Now().UnixNano())
				t.Cleanup(func() { ln.Close() })
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					seen.Add(1)
					c.Close()
				}
			}()
			code, _, stderr := invoke(t, context.Background(), args...)
			end := time.Now()
			if broke.Load() == 0 {
				t.Fatalf("exit %d before the device broke: %s", code, stderr)
			}
			after := end.Sub(time.Unix(0, broke.Load()))
			r, err := metrics.ReadRun(rec)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("exit %d %s after the device broke; it saw %d connections since; load.attempts %d, backoffs %d: %s",
				code, after.Round(time.Millisecond), seen.Load(), r.Load.Attempts, r.Load.Backoffs, strings.TrimSpace(stderr))
			if code != exitFailed || !strings.Contains(stderr, "run stopped") || !strings.Contains(stderr, "no transaction succeeded for 1s") {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if after > abort+2*time.Second {
				t.Errorf("ended %s after the device broke, want about %s", after, abort)
			}
			if r.Load.Aborted == "" || r.Complete || r.Preflight == nil || !r.Preflight.OK {
				t.Errorf("aborted %q, complete %v, preflight %+v", r.Load.Aborted, r.Complete, r.Preflight)
			}
			if r.Load.Attempts != r.Whole.Transactions+r.Whole.Errors {
				t.Errorf("load.attempts %d, whole run %d + %d", r.Load.Attempts, r.Whole.Transactions, r.Whole.Errors)
			}
			// Backing off, each worker tries a handful of times in the
			// bound; without backoff it would be thousands.
			if max := int64(conc * (engine.BackoffAfter + 12)); seen.Load() > max || r.Load.Backoffs == 0 {
				t.Errorf("the broken device saw %d connections (want at most %d), %d backoffs", seen.Load(), max, r.Load.Backoffs)
			}
		})
	}
}

// measured runs the command args against the target's listener l, which
// must exit 0, and returns its record, the connections l accepted meanwhile
// and the command's stdout.
func measured(t *testing.T, l *target.Listener, args ...string) (*metrics.Run, int64, string) {
	t.Helper()
	before := connections(l)
	rec := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := invoke(t, context.Background(), append(args, "--json", rec)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	seen := connections(l) - before
	r, err := metrics.ReadRun(rec)
	if err != nil {
		t.Fatal(err)
	}
	return r, seen, stdout
}

// TestFaultsUnderLoadAreMeasured: a device that fails 5% of its handshakes
// is measured, not aborted; the device's connections reconcile exactly
// with the record's whole run plus its preflight.
func TestFaultsUnderLoadAreMeasured(t *testing.T) {
	tg, ca := startTarget(t, target.Config{Faults: []target.Fault{{Kind: "alert", Fraction: 0.05}}})
	l := tg.Listeners[0]
	r, seen, _ := measured(t, l, "cps", "-q", "-c", "4", "-d", "1500ms", "--warmup", "0s", "--abort-after", "300ms",
		"--cacert", ca, "https://localhost:"+portOf(l.Addr)+"/1k")
	alerts := r.Errors.ByClass["tls_alert:handshake_failure"]
	t.Logf("%d transactions, %d alerts, %d backoffs; the device saw %d connections, whole run %d + %d, preflight %d",
		r.Transactions, alerts, r.Load.Backoffs, seen, r.Whole.Transactions, r.Whole.Errors, r.Preflight.Transactions)
	if r.Load.Aborted != "" || !r.Complete || r.Load.Backoffs != 0 {
		t.Errorf("aborted %q, complete %v, %d backoffs", r.Load.Aborted, r.Complete, r.Load.Backoffs)
	}
	// The target faults 5% of its connections, the preflight's counted,
	// exactly at every point of the run (N × 0.05 rounded down or up: the
	// faults' disjoint shares, bench/target/faults.go): every fault it
	// injected is an error of the run, in its class.
	injected := l.Stats().Injected["alert"]
	if off := float64(injected) - float64(seen)*0.05; alerts == 0 || alerts != injected || math.Abs(off) >= 1 || alerts != r.Errors.Total {
		t.Errorf("%d alerts (%d errors) in the record, the target injected %d in %d connections", alerts, r.Errors.Total, injected, seen)
	}
	if want := r.Whole.Transactions + r.Whole.Errors + r.Preflight.Transactions; seen != want {
		t.Errorf("the device saw %d connections, the record %d (whole run) + %d (preflight)", seen, r.Whole.Transactions+r.Whole.Errors, r.Preflight.Transactions)
	}
	if r.Load.Attempts != r.Whole.Transactions+r.Whole.Errors {
		t.Errorf("load.attempts %d, whole run %d + %d", r.Load.Attempts, r.Whole.Transactions, r.Whole.Errors)
	}
}

// TestFlakyDeviceIsMeasured: a device that stalls a connection of every
// four (serve --fault stall:0.25), the preflight's first included, is
// measured: the stalled attempt times out at its own deadline, the next
// succeeds, the run goes on with its handshake timeouts counted and exits
// 0; the record's preflight lists the failed attempt, the summary shows it
// in one line, and the device's connections reconcile exactly. A device
// that stalls every connection fails the preflight after 3 attempts.
func TestFlakyDeviceIsMeasured(t *testing.T) {
	for _, kind := range []string{"cps", "throughput"} {
		t.Run(kind, func(t *testing.T) {
			tg, ca := startTarget(t, target.Config{Faults: []target.Fault{{Kind: "stall", Fraction: 0.25}}})
			l := tg.Listeners[0]
			// The target's first connection of four is never stalled, its
			// second is: this one takes the first, the preflight the second.
			c, err := net.DialTimeout("tcp", l.Addr, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			// A deadline of a second: the attempt after a stall is made
			// however long the stall took.
			r, seen, stdout := measured(t, l, kind, "-q", "-c", "4", "-d", "1s", "--warmup", "0s",
				"--handshake-timeout", "1s", "--cacert", ca, "https://localhost:"+portOf(l.Addr)+"/1k")
			pf := r.Preflight
			t.Logf("preflight %+v; %d transactions, errors %v; the device saw %d connections", pf, r.Whole.Transactions,
				r.Errors.ByClass, seen)
			if !pf.OK || pf.Transactions != 2 || len(pf.FailedAttempts) != 1 ||
				pf.FailedAttempts[0].Class != vocab.ClassHandshakeTimeout || pf.FailedAttempts[0].Error == "" {
				t.Errorf("preflight %+v, want ok at the second attempt, the first a handshake_timeout", pf)
			}
			// CPS opens a connection per transaction, a stall of every
			// four; throughput keeps its two.
			stalls := r.Errors.ByClass[vocab.ClassHandshakeTimeout]
			if r.Transactions == 0 || kind == "cps" && stalls == 0 || !r.Complete {
				t.Errorf("%d transactions, errors %v, complete %v: the load must run, its stalls counted",
					r.Transactions, r.Errors.ByClass, r.Complete)
			}
			line := "  preflight    ok; 1 attempt failed: handshake_timeout ("
			if strings.Count(stdout, "preflight ") != 1 || !strings.Contains(stdout, line) {
				t.Errorf("the summary does not show the failed attempt in one line %q:\n%s", line, stdout)
			}
			if conns := r.Whole.ConnectionsOpened + pf.Transactions; seen != conns {
				t.Errorf("the device saw %d connections, the record %d (whole run and preflight)", seen, conns)
			}
		})
	}
	t.Run("stall everything", func(t *testing.T) {
		tg, ca := startTarget(t, target.Config{Faults: []target.Fault{{Kind: "stall", Fraction: 1}}})
		l := tg.Listeners[0]
		rec := filepath.Join(t.TempDir(), "run.json")
		begin := time.Now()
		code, stdout, stderr := invoke(t, context.Background(), "cps", "-q", "-d", "10s", "--handshake-timeout", "600ms",
			"--cacert", ca, "--json", rec, "https://localhost:"+portOf(l.Addr)+"/1k")
		took := time.Since(begin)
		seen := connections(l)
		t.Logf("exit %d in %s, the device saw %d connections: %s", code, took.Round(time.Millisecond), seen, strings.TrimSpace(stderr))
		want := "after 3 transaction(s) (3 attempts failed: handshake_timeout ×3), no load sent"
		if code != exitFailed || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Fatalf("exit %d, %q: want exit 1 and %q in one line", code, stderr, want)
		}
		if took < 3*600*time.Millisecond || took > 5*time.Second {
			t.Errorf("took %s, want three deadlines of 600ms", took)
		}
		r, err := metrics.ReadRun(rec)
		if err != nil {
			t.Fatal(err)
		}
		pf := r.Preflight
		if pf.OK || pf.Transactions != engine.PreflightAttempts || len(pf.FailedAttempts) != engine.PreflightAttempts ||
			pf.Class != vocab.ClassHandshakeTimeout || seen != engine.PreflightAttempts || r.Load.Attempts != 0 {
			t.Errorf("preflight %+v, %d load attempts, the device saw %d connections; want 3 failed attempts, no load",
				pf, r.Load.Attempts, seen)
		}
		if f := r.Failed(); !strings.Contains(f, "3 attempts failed: handshake_timeout ×3") {
			t.Errorf("Failed() = %q does not say it tried 3 times", f)
		}
	})
}

// TestImpactPreflight: a candidate whose path is wrong ends the study
// before its first round (the baseline's included): exit 1 in under a
// second.
func TestImpactPreflight(t *testing.T) {
	a, b, ca := impactTargets(t, 0)
	begin := time.Now()
	code, _, stderr := invoke(t, context.Background(), "impact", "-q", "--baseline", a, "--candidate", strings.TrimSuffix(b, "/1k")+"/nope",
		"--cacert", ca, "-c", "2", "-d", "2s", "--rounds", "3", "--profile", "ecdhe-ecdsa-aes128-gcm-sha256-p256")
	took := time.Since(begin)
	t.Logf("exit %d in %s: %s", code, took.Round(time.Millisecond), strings.TrimSpace(stderr))
	if code != exitFailed || !strings.Contains(stderr, "status 404") || !strings.Contains(stderr, "no load sent") || strings.Contains(stderr, "round 1/") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if took >= time.Second {
		t.Errorf("exit after %s, want under a second", took)
	}
}

// TestAbortAfterBadValue: a negative --abort-after is a usage error that
// names the flag.
func TestAbortAfterBadValue(t *testing.T) {
	for _, cmd := range []string{"cps", "throughput"} {
		code, _, stderr := invoke(t, context.Background(), cmd, "--abort-after", "-1s", "https://127.0.0.1:1/")
		if code != exitBadUsage || !strings.Contains(stderr, "--abort-after") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s --abort-after -1s: exit %d, %q", cmd, code, stderr)
		}
	}
}
