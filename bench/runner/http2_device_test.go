package runner_test

// HTTP/2 against real devices: nginx with http2 on its TLS listeners and
// HAProxy with alpn h2,http/1.1, each serving the three seed profiles; and
// devices that do not offer h2, refused at the preflight.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// h2Spec is deviceSpec over HTTP/2, shorter: 300 ms of warm-up, 700 ms
// measured.
func h2Spec(e vocab.Engine, profile, addr string, ca *cipher.CA, src devcount.Source) *runner.Spec {
	s := deviceSpec(e, profile, addr, ca, src)
	s.Protocol, s.Duration, s.Warmup = "http/2", 700*time.Millisecond, 300*time.Millisecond
	return s
}

// answered is what the device must have counted of a run: its whole run's
// transactions and the preflight's requests.
func answered(r *metrics.Run) int64 { return r.Whole.Transactions + r.Preflight.Requests }

// TestDeviceCountersHTTP2: a CPS run and a throughput run over HTTP/2 of
// each seed profile against nginx (http2) and HAProxy (alpn h2,http/1.1):
// the devices' own counts equal tlsbench's exactly, preflight included —
// nginx's stub_status (accepts, requests) and its access log, every request
// logged as HTTP/2.0; HAProxy's frontend (stot, req_tot) and its HTTP/2
// requests (h2_headers_rcvd), none over HTTP/1 (h1_total_streams); with 1
// stream a connection and with 4.
func TestDeviceCountersHTTP2(t *testing.T) {
	testdut.RequireNginx(t)
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	seeds := testdut.Seeds(t, ca, dir)
	cfg := testdut.NginxConfig{Dir: dir, StubStatus: true, ProtocolLog: true}
	var fes []testdut.Frontend
	for _, s := range seeds {
		cfg.Servers = append(cfg.Servers, testdut.NginxServer{Cert: s.Frontend.Cert, Ciphers: s.Frontend.Ciphers,
			Curve: s.Frontend.Curves, KeepAlive: true, HTTP2: true})
		s.Frontend.ALPN = "h2,http/1.1"
		fes = append(fes, s.Frontend)
	}
	n := testdut.StartNginxT(t, cfg)
	h := testdut.StartHAProxy(t, dir, fes)
	spoke := func(t *testing.T, r *metrics.Run) {
		t.Helper()
		if r.Negotiated.ALPN != "h2" || r.HTTP2 == nil || !r.HTTP2.SettingsAcked {
			t.Errorf("negotiated alpn %q, http2 %+v: want h2, the settings acknowledged", r.Negotiated.ALPN, r.HTTP2)
		}
	}
	onNginx := func(t *testing.T, i int, spec *runner.Spec) {
		spec.Device = &devcount.Source{Kind: devcount.KindNginx, URL: n.StubStatusURL()}
		before := n.Protocols(t, i, 0)["HTTP/2.0 200"]
		r := checkAgreement(t, spec, "run sessions", "run requests", "window sessions", "window requests")
		spoke(t, r)
		want := answered(r)
		if got := n.Protocols(t, i, before+want); len(got) != 1 || got["HTTP/2.0 200"]-before != want {
			t.Errorf("nginx logged %v (%d before), tlsbench made %d HTTP/2 requests", got, before, want)
		}
	}
	onHAProxy := func(t *testing.T, fe string, spec *runner.Spec) {
		spec.Device = &devcount.Source{Kind: devcount.KindHAProxy, URL: h.StatsCSV(), Frontend: fe}
		h2, h1 := h.Counter(t, fe, "h2_headers_rcvd"), h.Counter(t, fe, "h1_total_streams")
		r := checkAgreement(t, spec, "run sessions", "run requests", "window sessions", "window requests")
		spoke(t, r)
		want := answered(r)
		if got := h.CounterDelta(t, fe, "h2_headers_rcvd", h2, want); got != want {
			t.Errorf("HAProxy received %d HTTP/2 requests, tlsbench made %d", got, want)
		}
		if got := h.Counter(t, fe, "h1_total_streams") - h1; got != 0 {
			t.Errorf("HAProxy received %d HTTP/1 requests", got)
		}
	}
	for i, s := range seeds {
		fe := s.Frontend.Name
		for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
			t.Run("nginx/"+string(e)+"/"+s.Profile, func(t *testing.T) {
				onNginx(t, i, h2Spec(e, s.Profile, n.Addrs[i], ca, devcount.Source{}))
			})
			t.Run("haproxy/"+string(e)+"/"+s.Profile, func(t *testing.T) {
				onHAProxy(t, fe, h2Spec(e, s.Profile, h.Addr(fe), ca, devcount.Source{}))
			})
		}
	}
	// Four concurrent streams a connection, exact as well: the streams open
	// when a worker stops are read to the end (and counted), and the
	// preflight opens one.
	s := seeds[1]
	t.Run("nginx/throughput/streams 4", func(t *testing.T) {
		spec := h2Spec(vocab.EngineThroughput, s.Profile, n.Addrs[1], ca, devcount.Source{})
		spec.Streams = 4
		onNginx(t, 1, spec)
	})
	t.Run("haproxy/throughput/streams 4", func(t *testing.T) {
		spec := h2Spec(vocab.EngineThroughput, s.Profile, h.Addr(s.Frontend.Name), ca, devcount.Source{})
		spec.Streams = 4
		onHAProxy(t, s.Frontend.Name, spec)
	})
}

// TestHTTP2NoH2Device: a device that does not offer h2 fails the preflight,
// before any load, naming what it chose: nginx without http2 selects
// http/1.1, which a run over HTTP/2 offers after h2 (the seed profiles,
// and a profile that offers both itself: a mismatch naming http/1.1);
// HAProxy without alpn selects nothing (a mismatch: none). The device
// answers no request and no load follows.
func TestHTTP2NoH2Device(t *testing.T) {
	testdut.RequireNginx(t)
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	seed := testdut.Seeds(t, ca, dir)[1] // ECDHE-ECDSA-AES128-SHA256 on P-256
	fe := seed.Frontend
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: dir, ProtocolLog: true, Servers: []testdut.NginxServer{
		{Cert: fe.Cert, Ciphers: fe.Ciphers, Curve: fe.Curves, KeepAlive: true}}})
	h := testdut.StartHAProxy(t, dir, []testdut.Frontend{fe})
	set := profiles.Builtin()
	both, err := profiles.Parse("both.yaml", []byte(`name: h2-or-http11
min_version: TLS1.2
max_version: TLS1.2
cipher_suites: [ECDHE-ECDSA-AES128-SHA256]
groups: [P-256]
alpn: [h2, http/1.1]
expect: {version: TLS1.2, cipher_suite: ECDHE-ECDSA-AES128-SHA256, group: P-256, alpn: h2}
`))
	if err != nil || set.Add(both[0]) != nil {
		t.Fatal(err)
	}
	requests := map[string]func() int64{
		"nginx": func() int64 {
			var total int64
			for _, c := range n.Protocols(t, 0, 0) {
				total += c
			}
			return total
		},
		"haproxy": func() int64 { return h.Counter(t, fe.Name, "req_tot") },
	}
	for _, tc := range []struct {
		device, addr, profile string
		class                 vocab.Class
		want                  string
	}{
		{"nginx", n.Addrs[0], seed.Profile, vocab.ClassMismatch, "negotiated alpn http/1.1"},
		{"nginx", n.Addrs[0], "h2-or-http11", vocab.ClassMismatch,
			"negotiated alpn http/1.1, profile h2-or-http11 expects h2"},
		{"haproxy", h.Addr(fe.Name), seed.Profile, vocab.ClassMismatch, "negotiated alpn none"},
	} {
		for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
			t.Run(tc.device+"/"+string(e)+"/"+tc.profile, func(t *testing.T) {
				spec := h2Spec(e, tc.profile, tc.addr, ca, devcount.Source{})
				spec.Device, spec.Profiles, spec.Duration = nil, set, 10*time.Second
				before := requests[tc.device]()
				begin := time.Now()
				r, err := runner.Run(context.Background(), spec)
				took := time.Since(begin)
				if err != nil {
					t.Fatal(err)
				}
				pf := r.Preflight
				if pf == nil || pf.OK || pf.Class != tc.class || !strings.Contains(pf.Answer(), tc.want) {
					t.Fatalf("preflight %+v, want failed with %s naming %q", pf, tc.class, tc.want)
				}
				if r.Load.Attempts != 0 || r.Whole.Transactions+r.Whole.Errors != 0 || r.Failed() == "" ||
					took > 5*time.Second {
					t.Errorf("load attempts %d, whole run %+v, failed %q, %s: want no load after the preflight",
						r.Load.Attempts, r.Whole, r.Failed(), took)
				}
				time.Sleep(100 * time.Millisecond) // the device's counts follow the client
				if got := requests[tc.device]() - before; got != 0 {
					t.Errorf("%s answered %d requests", tc.device, got)
				}
			})
		}
	}
}
