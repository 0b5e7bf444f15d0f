package runner_test

// The device's own counters beside the engine's (bench/devcount), against
// real devices: HAProxy's stats CSV and its Prometheus exporter, nginx's
// stub_status, the reference target's /stats, a command; and wrong sources,
// reported in the record, not ignored.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// helperEnv makes the test binary a command source: it prints a counter
// of an HAProxy frontend, read from the stats CSV at the URL in the
// variable ("URL FRONTEND COUNTER").
const helperEnv = "TLSBENCH_DEVCOUNT_HELPER"

func init() {
	v := os.Getenv(helperEnv)
	if v == "" {
		return
	}
	f := strings.Fields(v)
	src := devcount.Source{Kind: devcount.KindHAProxy, URL: f[0], Frontend: f[1]}
	c, err := src.Read(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println(c[devcount.Counter(f[2])])
	os.Exit(0)
}

// deviceSpec is a short run of engine e against addr with the device's
// counters read from src.
func deviceSpec(e vocab.Engine, profile, addr string, ca *cipher.CA, src devcount.Source) *runner.Spec {
	s := runner.Defaults(e)
	s.Profile, s.Target = profile, metrics.Target{Address: addr, ServerName: "localhost"}
	s.Roots, s.ConnectTimeout, s.HandshakeTimeout, s.ReadTimeout = ca.Pool(), 2*time.Second, 2*time.Second, 2*time.Second
	s.Host, s.Path, s.UserAgent, s.ExpectSize = "localhost", "/1k", "tlsbench/test", 1024
	s.Concurrency, s.Duration, s.Warmup = 4, 1500*time.Millisecond, 500*time.Millisecond
	s.Device = &src
	return &s
}

// checkAgreement runs spec and checks the device's counts: every count of
// the run exactly as expected, the window's within the in-flight slack,
// and the counters listed in want present.
func checkAgreement(t *testing.T, spec *runner.Spec, want ...string) *metrics.Run {
	t.Helper()
	r, err := runner.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if r.Transactions == 0 || r.Errors.Total != 0 || !r.Preflight.OK {
		t.Fatalf("the run itself failed: %d transactions, errors %+v, preflight %+v", r.Transactions, r.Errors, r.Preflight)
	}
	d := r.Device
	if d == nil || d.Error != "" || d.Run == nil || d.Window == nil {
		t.Fatalf("device block %+v", d)
	}
	rows := r.DeviceRows()
	have := map[string]bool{}
	for _, row := range rows {
		t.Log(row.Explain())
		have[row.Scope+" "+row.Counter] = true
		if row.Scope == "run" && row.Diff != 0 && !row.Informative {
			t.Errorf("not exact: %s", row.Explain())
		}
		if !row.Agrees {
			t.Errorf("disagrees: %s", row.Explain())
		}
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("no %s row among %d", w, len(rows))
		}
	}
	for _, why := range method.Judge(plan.Accept{MaxGeneratorCPU: 2, MaxDeviceDisagreement: new(plan.Percent(0))}, r) {
		if strings.Contains(why, "device") {
			t.Errorf("rejected with exact agreement asked: %q", why)
		}
	}
	return r
}

// TestDeviceCountersHAProxy: HAProxy's stats CSV (per frontend: stot,
// req_tot, bin, bout) agrees exactly with the engine over a CPS run and a
// throughput run of each of the three seed profiles.
func TestDeviceCountersHAProxy(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	seeds := testdut.Seeds(t, ca, dir)
	var fes []testdut.Frontend
	for _, s := range seeds {
		fes = append(fes, s.Frontend)
	}
	h := testdut.StartHAProxy(t, dir, fes)
	for _, s := range seeds {
		for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
			t.Run(string(e)+"/"+s.Profile, func(t *testing.T) {
				src := devcount.Source{Kind: devcount.KindHAProxy, URL: h.StatsCSV(), Frontend: s.Frontend.Name}
				checkAgreement(t, deviceSpec(e, s.Profile, h.Addr(s.Frontend.Name), ca, src),
					"run sessions", "run requests", "window sessions", "window requests", "window bytes_in", "window bytes_out")
			})
		}
	}
	// Pipelined requests: a connection closed at the run's end (and the
	// preflight's) leaves up to pipeline − 1 requests the device received
	// and the engine never saw answered: within the slack, not exact.
	t.Run("throughput/pipeline", func(t *testing.T) {
		s := seeds[1]
		src := devcount.Source{Kind: devcount.KindHAProxy, URL: h.StatsCSV(), Frontend: s.Frontend.Name}
		spec := deviceSpec(vocab.EngineThroughput, s.Profile, h.Addr(s.Frontend.Name), ca, src)
		spec.Pipeline = 4
		r, err := runner.Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range r.DeviceRows() {
			t.Log(row.Explain())
			if !row.Agrees || (row.Scope == "run" && row.Counter == "sessions" && row.Diff != 0) {
				t.Errorf("%s", row.Explain())
			}
			if row.Scope == "run" && row.Counter == "requests" && (row.Diff < 0 || row.Slack != 3*(r.Whole.ConnectionsOpened+1)) {
				t.Errorf("pipelined requests: diff %d, slack %d; want 0 ≤ diff ≤ 3 × %d connections", row.Diff, row.Slack, r.Whole.ConnectionsOpened+1)
			}
		}
	})
	// The same counters through HAProxy's Prometheus exporter (a text
	// exposition parsed by devcount), and through a command.
	s := seeds[1]
	t.Run("prometheus", func(t *testing.T) {
		src := devcount.Source{Kind: devcount.KindPrometheus, URL: h.MetricsURL(), Metrics: map[devcount.Counter]string{
			devcount.Sessions: `haproxy_frontend_sessions_total{proxy="{profile}"}`,
			devcount.Requests: `haproxy_frontend_http_requests_total{proxy="{profile}"}`,
		}}
		src.Metrics[devcount.Sessions] = strings.ReplaceAll(src.Metrics[devcount.Sessions], devcount.ProfileVar, s.Frontend.Name)
		src.Metrics[devcount.Requests] = strings.ReplaceAll(src.Metrics[devcount.Requests], devcount.ProfileVar, s.Frontend.Name)
		checkAgreement(t, deviceSpec(vocab.EngineCPS, s.Profile, h.Addr(s.Frontend.Name), ca, src), "run sessions", "run requests")
	})
	t.Run("command", func(t *testing.T) {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(helperEnv, h.StatsCSV()+" "+s.Frontend.Name+" sessions")
		src, err := devcount.Parse(fmt.Sprintf("kind=command sessions='%s' timeout=5s", exe))
		if err != nil {
			t.Fatal(err)
		}
		checkAgreement(t, deviceSpec(vocab.EngineCPS, s.Profile, h.Addr(s.Frontend.Name), ca, src), "run sessions")
	})
	// Wrong sources: a frontend HAProxy does not have, a page that is not
	// the stats CSV, a metric that is not exposed, a negative count. The
	// first read, before the preflight, fails: no load is sent (HAProxy's
	// own count of the frontend does not move) and the error says why.
	sessions := func() int64 {
		t.Helper()
		src := devcount.Source{Kind: devcount.KindHAProxy, URL: h.StatsCSV(), Frontend: s.Frontend.Name}
		c, err := src.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c[devcount.Sessions]
	}
	for _, tc := range []struct {
		name string
		src  devcount.Source
		want string
	}{
		{"missing frontend", devcount.Source{Kind: devcount.KindHAProxy, URL: h.StatsCSV(), Frontend: "fe_p256"}, `no frontend "fe_p256"`},
		{"not the CSV", devcount.Source{Kind: devcount.KindHAProxy, URL: strings.TrimSuffix(h.StatsCSV(), ";csv"),
			Frontend: "p256"}, "not HAProxy's stats CSV"},
		{"404", devcount.Source{Kind: devcount.KindNginx, URL: h.MetricsURL() + "/nope"}, "HTTP status 503"},
		{"missing metric", devcount.Source{Kind: devcount.KindPrometheus, URL: h.MetricsURL(),
			Metrics: map[devcount.Counter]string{devcount.Sessions: `haproxy_frontend_sessions_total{proxy="nope"}`}}, "no series matches"},
		{"negative", devcount.Source{Kind: devcount.KindCommand,
			Commands: map[devcount.Counter]string{devcount.Sessions: "echo -3"}}, "negative, not a count"},
	} {
		t.Run("wrong/"+tc.name, func(t *testing.T) {
			before := sessions()
			r, err := runner.Run(context.Background(), deviceSpec(vocab.EngineCPS, s.Profile, h.Addr(s.Frontend.Name), ca, tc.src))
			var re *devcount.ReadError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "no load sent") {
				t.Fatalf("record %v, error %v; want a *devcount.ReadError naming %q and no load sent", r != nil, err, tc.want)
			}
			if after := sessions(); after != before {
				t.Errorf("HAProxy's frontend counted %d sessions during the failed run: load was sent", after-before)
			}
		})
	}
	// A source that fails after its first read (the device restarted, its
	// stats went away): the run is made, the record says why the counts are
	// missing, and a plan asking for agreement rejects the run.
	t.Run("wrong/after the first read", func(t *testing.T) {
		once := filepath.Join(t.TempDir(), "read")
		src, err := devcount.Parse(fmt.Sprintf(
			`kind=command sessions="sh -c 'test -e %[1]s && echo gone || { touch %[1]s; echo 0; }'"`, once))
		if err != nil {
			t.Fatal(err)
		}
		spec := deviceSpec(vocab.EngineCPS, s.Profile, h.Addr(s.Frontend.Name), ca, src)
		r, err := runner.Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if r.Transactions == 0 {
			t.Errorf("no load was made")
		}
		const want = `printed "gone": not a number`
		if d := r.Device; d == nil || !strings.Contains(d.Error, want) || d.Run != nil || d.Window != nil {
			t.Fatalf("device block %+v, want the error %q and no counts", d, want)
		}
		reasons := method.Judge(plan.Accept{MaxGeneratorCPU: 2, MaxDeviceDisagreement: new(plan.Percent(0.01))}, r)
		if len(reasons) != 1 || !strings.Contains(reasons[0], want) {
			t.Errorf("reasons %q, want one naming %q", reasons, want)
		}
	})
}

// TestDeviceCountersNginx: nginx's stub_status (accepts, requests; it
// counts its own reads) agrees exactly with the engine over a CPS run and
// a throughput run of each of the three seed profiles.
func TestDeviceCountersNginx(t *testing.T) {
	testdut.RequireNginx(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	seeds := testdut.Seeds(t, ca, dir)
	cfg := testdut.NginxConfig{Dir: dir, StubStatus: true}
	for _, s := range seeds {
		cfg.Servers = append(cfg.Servers, testdut.NginxServer{Cert: s.Frontend.Cert, Ciphers: s.Frontend.Ciphers, Curve: s.Frontend.Curves, KeepAlive: true})
	}
	n := testdut.StartNginxT(t, cfg)
	src := devcount.Source{Kind: devcount.KindNginx, URL: n.StubStatusURL()}
	for i, s := range seeds {
		for _, e := range []vocab.Engine{vocab.EngineCPS, vocab.EngineThroughput} {
			t.Run(string(e)+"/"+s.Profile, func(t *testing.T) {
				r := checkAgreement(t, deviceSpec(e, s.Profile, n.Addrs[i], ca, src),
					"run sessions", "run requests", "window sessions", "window requests")
				if !r.Device.CountsReads || r.Device.Run.Reads != 3 || r.Device.Window.Reads != 1 {
					t.Errorf("device block %+v: want the reads counted (3 in the run, 1 in the window)", r.Device)
				}
			})
		}
	}
	t.Run("wrong/not stub_status", func(t *testing.T) {
		bad := devcount.Source{Kind: devcount.KindNginx, URL: "http://" + n.StatusAddr + "/"}
		r, err := runner.Run(context.Background(), deviceSpec(vocab.EngineCPS, seeds[0].Profile, n.Addrs[0], ca, bad))
		if err == nil || r != nil || !strings.Contains(err.Error(), "HTTP status 404") ||
			!strings.Contains(err.Error(), "no load sent") {
			t.Fatalf("record %v, error %v; want no run and the error", r != nil, err)
		}
		t.Log(err)
	})
}

// TestDeviceCountersTarget: the reference target's admin /stats (its
// listener per profile: connections, handshakes, requests).
func TestDeviceCountersTarget(t *testing.T) {
	p, err := profiles.Builtin().Get(runner.DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Admin: "127.0.0.1:0",
		Resumption: target.Resumption{Tickets: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	src, err := devcount.Parse("kind=target url=http://" + tg.AdminAddr + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	// cps-resume: the preflight resumes a session (two requests, both
	// counted by the target), judged exactly.
	for _, name := range []string{"cps", "throughput", "cps-resume"} {
		t.Run(name, func(t *testing.T) {
			e, resume := vocab.Engine(name), 0.0
			if name == "cps-resume" {
				e, resume = vocab.EngineCPS, 0.5
			}
			spec := deviceSpec(e, p.Name, tg.Listeners[0].Addr, tg.CA, src)
			spec.ExpectSize, spec.Resume = -1, resume
			r := checkAgreement(t, spec, "run sessions", "run handshakes", "run requests", "window sessions",
				"window requests")
			if pf := r.Preflight; resume > 0 && (pf.Requests != 2 || pf.Resumed != 1) {
				t.Errorf("preflight %+v, want two requests, the second resumed", pf)
			}
			// The top-level resumed counts unexpected resumptions (docs/RECORD.md).
			if resume > 0 && (r.Resumed != 0 || r.Whole.Resumed == 0) {
				t.Errorf("resumed %d, whole_run.resumed %d: want 0 and the resumptions asked for", r.Resumed,
					r.Whole.Resumed)
			}
			// closes counts the preflight's connections, whole_run does not
			// (docs/RECORD.md).
			if c := r.Closes; c != nil && c.ServerFirst+c.ClientFirst != r.Whole.Transactions+r.Preflight.Requests {
				t.Errorf("closes %+v: want whole_run's %d transactions + the preflight's %d", c, r.Whole.Transactions,
					r.Preflight.Requests)
			}
		})
	}
}

// TestDeviceCountersTLSBytes: a device that counts TLS bytes (here a TCP
// proxy in front of the reference target, counting what it relays, served
// as a Prometheus page) is set against tlsbench's wire bytes, not its
// application bytes (the Apache/Caddy cross-check: 520.6 vs 85.0 a request,
// where tlsbench's own TLS count matched the device's).
func TestDeviceCountersTLSBytes(t *testing.T) {
	tg := testdut.StartTargetWith(t, target.Config{}, runner.DefaultProfile)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var in, out atomic.Int64 // from the clients, to them
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.DialTimeout("tcp", tg.Listeners[0].Addr, 2*time.Second)
				if err != nil {
					return
				}
				defer s.Close()
				go func() { n, _ := io.Copy(s, c); in.Add(n); s.(*net.TCPConn).CloseWrite() }()
				n, _ := io.Copy(c, s)
				out.Add(n)
			}()
		}
	}()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "proxy_in %d\nproxy_out %d\n", in.Load(), out.Load())
	}))
	defer page.Close()
	src, err := devcount.Parse("kind=prometheus url=" + page.URL + " tls_bytes_in=proxy_in tls_bytes_out=proxy_out")
	if err != nil {
		t.Fatal(err)
	}
	spec := deviceSpec(vocab.EngineCPS, runner.DefaultProfile, ln.Addr().String(), tg.CA, src)
	spec.ExpectSize, spec.Concurrency = -1, 2
	r, err := runner.Run(context.Background(), spec)
	if err != nil || r.Transactions == 0 {
		t.Fatalf("run: %v", err)
	}
	rows := map[string]int64{"tls_bytes_in": r.Bytes.WireOut, "tls_bytes_out": r.Bytes.WireIn}
	for _, row := range r.DeviceRows() {
		t.Log(row.Explain())
		want, ok := rows[row.Counter]
		if !ok {
			continue
		}
		delete(rows, row.Counter)
		// Like with like: the window's TLS bytes a transaction, within 5%.
		if row.Engine != want || math.Abs(float64(row.Device-row.Engine)) > 0.05*float64(row.Engine) {
			t.Errorf("%s: device %d, tlsbench %d; want tlsbench's wire bytes %d, within 5%%", row.Counter,
				row.Device, row.Engine, want)
		}
	}
	if len(rows) != 0 {
		t.Errorf("no rows for %v", rows)
	}
}
