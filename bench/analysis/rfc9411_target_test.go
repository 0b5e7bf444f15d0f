package analysis_test

// RFC 9411's criteria judged on real runs against the reference target,
// each fault making its own criterion fail: a share of resets after the
// response (b), of 503 responses (a), and of slow responses that stall a
// closed loop's workers for a second at a time (c).

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

const rfcProfile = "ecdhe-ecdsa-aes128-sha256-p256"

// faultRun is a 4 s CPS run (0.5 s of warm-up) of conc workers against the
// in-process reference target configured as cfg.
func faultRun(t *testing.T, cfg target.Config, conc int) *metrics.Run {
	t.Helper()
	return targetRun(t, cfg, conc, nil)
}

// targetRun is faultRun's run, its spec edited by set.
func targetRun(t *testing.T, cfg target.Config, conc int, set func(*runner.Spec)) *metrics.Run {
	t.Helper()
	tg := testdut.StartTargetWith(t, cfg, rfcProfile)
	s := runner.Defaults(vocab.EngineCPS)
	s.Profile, s.Target = rfcProfile, metrics.Target{Address: tg.Listeners[0].Addr, ServerName: "localhost"}
	s.Roots, s.Host, s.Path, s.ExpectSize, s.UserAgent = tg.CA.Pool(), "localhost", "/1k", 1024, "tlsbench/test"
	s.ConnectTimeout, s.HandshakeTimeout, s.ReadTimeout = 3*time.Second, 3*time.Second, 5*time.Second
	s.Concurrency, s.Duration, s.Warmup, s.Drain, s.AbortAfter = conc, 4*time.Second, 500*time.Millisecond,
		10*time.Second, 0
	if set != nil {
		set(&s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := runner.Run(ctx, &s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed() != "" {
		t.Fatalf("run failed: %s", r.Failed())
	}
	return r
}

func logVerdict(t *testing.T, v analysis.Verdict) {
	t.Helper()
	for _, c := range v.Criteria {
		t.Logf("  %-20s pass %-5v value %.6g limit %g: %s", c.Name, c.Pass, c.Value, c.Limit, c.Note)
	}
}

func TestRFC9411ReferenceTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs load")
	}
	t.Run("clean", func(t *testing.T) {
		r := faultRun(t, target.Config{}, 4)
		v := analysis.RFC9411(r, "7.6", 0)
		logVerdict(t, v)
		for _, name := range []string{analysis.CriterionFailed, analysis.CriterionResets} {
			if c := criterion(t, v, name); !c.Pass {
				t.Errorf("no fault, %s fails: %+v", name, c)
			}
		}
	})
	// 2% of the connections get their response, then an RST: b fails at
	// about 2% (the tcp block counts them; so do the reset errors).
	t.Run("reset-after-response", func(t *testing.T) {
		r := faultRun(t, target.Config{Faults: []target.Fault{{Kind: "reset-after-response", Fraction: 0.02}}}, 4)
		v := analysis.RFC9411(r, "7.6", 0)
		logVerdict(t, v)
		c := criterion(t, v, analysis.CriterionResets)
		if c.Pass || v.Pass || math.Abs(c.Value-2) > 0.5 {
			t.Errorf("2%% of connections reset: %+v, want a fail at about 2%%", c)
		}
	})
	// 1% of the connections answer 503: a fails at about 1%, b passes.
	t.Run("status-503", func(t *testing.T) {
		r := faultRun(t, target.Config{Faults: []target.Fault{{Kind: "status-503", Fraction: 0.01}}}, 4)
		v := analysis.RFC9411(r, "7.6", 0)
		logVerdict(t, v)
		c := criterion(t, v, analysis.CriterionFailed)
		if c.Pass || v.Reason() != analysis.CriterionFailed || math.Abs(c.Value-1) > 0.3 {
			t.Errorf("1%% of responses 503: %+v, want a fail at about 1%%", c)
		}
		if b := criterion(t, v, analysis.CriterionResets); !b.Pass {
			t.Errorf("503s are no resets: %+v", b)
		}
	})
	// One connection in 100 waits 1.3 s for its first byte (within the
	// read deadline: a success), and the one worker waits with it: the
	// stall covers at least 0.65 s of some second, whose rate collapses
	// while the others run at full speed; a and b pass.
	t.Run("slow", func(t *testing.T) {
		cfg := target.Config{Faults: []target.Fault{{Kind: "slow", Fraction: 0.01}}, SlowDelay: 1300 * time.Millisecond}
		r := faultRun(t, cfg, 1)
		v := analysis.RFC9411(r, "7.6", 0)
		logVerdict(t, v)
		c := criterion(t, v, analysis.CriterionRate)
		if c.Pass || c.Value < 20 {
			t.Errorf("slow responses: %+v, want the rate to deviate by 20%% or more", c)
		}
		for _, name := range []string{analysis.CriterionFailed, analysis.CriterionResets} {
			if c := criterion(t, v, name); !c.Pass {
				t.Errorf("slow successes, %s fails: %+v", name, c)
			}
		}
	})
}

// A §7.9 run: 8 kept-alive connections held (100 requests each, 100 ms
// apart: none ends within the run), ramped up and down over a second. Once the series
// counts the open connections, d holds 8 at every sustain second, the
// connections asked; until then d is not measured, and fails.
func TestRFC9411HeldConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("runs load")
	}
	r := targetRun(t, target.Config{}, 8, func(s *runner.Spec) {
		s.Engine, s.Pipeline = vocab.EngineThroughput, 1
		s.RequestsPerConn, s.Pause, s.RampUp, s.RampDown = 100, 100*time.Millisecond, time.Second, time.Second
		s.Duration = 3 * time.Second
	})
	v := analysis.RFC9411(r, "7.9", 8)
	logVerdict(t, v)
	for _, name := range []string{analysis.CriterionFailed, analysis.CriterionResets} {
		if c := criterion(t, v, name); !c.Pass {
			t.Errorf("held connections, %s fails: %+v", name, c)
		}
	}
	d := criterion(t, v, analysis.CriterionConnections)
	if !d.Pass || d.Value != 0 || !strings.Contains(d.Note, "mean 8.0 open connections (the mean of each second's 10 ms") ||
		!strings.Contains(d.Note, "(100.0% of the 8 asked") {
		t.Errorf("8 connections held, counted every 10 ms: %+v", d)
	}
	if held, ok := analysis.HeldConnections(r); !ok || held != 8 {
		t.Errorf("HeldConnections %v (measured %v), want 8, the mean d judged", held, ok)
	}
	// Nothing counted is not measured: d fails, the KPI is not the 8 asked.
	for i := range r.Series {
		r.Series[i].OpenConns, r.Series[i].OpenConnsMean = 0, 0
	}
	if d := criterion(t, analysis.RFC9411(r, "7.9", 8), analysis.CriterionConnections); d.Pass ||
		!strings.HasPrefix(d.Note, "not measured") {
		t.Errorf("no open connections counted, d judged: %+v", d)
	}
	if held, ok := analysis.HeldConnections(r); ok || held != 0 {
		t.Errorf("no open connections counted: HeldConnections %v, %v; want not measured", held, ok)
	}
}

// Criterion e (§7.8): an open loop at 400 transactions a second, at most 4
// in flight, against a device that answers each after 20 ms: it can carry
// about 200 a second, and the target objective is missed by about half;
// nothing fails, nothing is reset.
func TestRFC9411TargetMissed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs load")
	}
	r := targetRun(t, target.Config{Delay: 20 * time.Millisecond}, 4, func(s *runner.Spec) {
		s.Rate, s.Duration = 400, 3*time.Second
	})
	v := analysis.RFC9411(r, "7.8", 400)
	logVerdict(t, v)
	e := criterion(t, v, analysis.CriterionTarget)
	if e.Pass || v.Pass || v.Reason() != analysis.CriterionTarget || e.Value < 30 {
		t.Errorf("a device carrying half the target: %+v (verdict reason %q), want e failed by 30%% or more", e,
			v.Reason())
	}
	// The same device at a rate it carries reaches it.
	r = targetRun(t, target.Config{Delay: 20 * time.Millisecond}, 4, func(s *runner.Spec) {
		s.Rate, s.Duration = 100, 3*time.Second
	})
	if e := criterion(t, analysis.RFC9411(r, "7.8", 100), analysis.CriterionTarget); !e.Pass {
		t.Errorf("a device carrying twice the target: %+v", e)
	}
}

// Criterion d (§7.9): 8 connections asked, each making a request every
// 200 ms, against nginx with keepalive_requests 1 — a device that closes
// every connection after its response: the connections are open only
// while a request is under way, far fewer than asked, and d fails; no
// transaction fails (the worker opens a new connection for each).
func TestRFC9411ConnectionsNotHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("runs load")
	}
	testdut.RequireNginx(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: dir, NoFile: 1088,
		Servers: []testdut.NginxServer{{Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "prime256v1",
			Extra: []string{"keepalive_requests 1;"}}}})
	s := runner.Defaults(vocab.EngineCPS)
	s.Profile, s.Target = rfcProfile, metrics.Target{Address: n.Addrs[0], ServerName: "localhost"}
	s.Roots, s.Host, s.Path, s.UserAgent = ca.Pool(), "localhost", "/1k", "tlsbench/test"
	s.Concurrency, s.Duration, s.Warmup, s.AbortAfter = 8, 3*time.Second, 0, 0
	s.RequestsPerConn, s.Pause, s.RampUp, s.RampDown = 1000, 200*time.Millisecond, time.Second, time.Second
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := runner.Run(ctx, &s)
	if err != nil {
		t.Fatal(err)
	}
	v := analysis.RFC9411(r, "7.9", 8)
	logVerdict(t, v)
	d := criterion(t, v, analysis.CriterionConnections)
	if d.Pass || v.Pass || d.Value < 50 {
		t.Errorf("a device that keeps no connection: %+v, want d failed by 50%% or more", d)
	}
	if a := criterion(t, v, analysis.CriterionFailed); !a.Pass {
		t.Errorf("the worker reopens its connection: no transaction fails, but %+v", a)
	}
}
