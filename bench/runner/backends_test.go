package runner_test

// "Client TLS, server plain" (RFC 9411 §4.3.2): a device terminates TLS and
// forwards plain HTTP to a pool of backends that tlsbench owns
// (target.StartBackends). Every transaction tlsbench counts, the
// preflight's too, reached a backend: the backends' requests equal them
// exactly, the device balanced them evenly, and each second of the record
// agrees with the backends' count of the same second within what was in
// flight at its edges.

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/devcount"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/runner"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
)

const poolSize = 4

// startPool starts a pool of poolSize backends with its admin listener.
func startPool(t *testing.T) *target.Backends {
	t.Helper()
	p, err := target.StartBackends(target.BackendsConfig{Count: poolSize, Admin: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// poolSpec is a 2 s CPS run of /1k at concurrency 4 against addr, with the
// pool's total as the device's counters (kind target, the pool's /stats).
func poolSpec(addr string, ca *cipher.CA, p *target.Backends) *runner.Spec {
	s := runner.Defaults(vocab.EngineCPS)
	s.Profile, s.Target = "ecdhe-ecdsa-aes128-sha256-p256", metrics.Target{Address: addr, ServerName: "localhost"}
	s.Roots, s.Host, s.Path, s.UserAgent = ca.Pool(), "localhost", "/1k", "tlsbench/test"
	s.Concurrency, s.Duration, s.Warmup, s.Drain = 4, 2*time.Second, 0, 5*time.Second
	s.Device = &devcount.Source{Kind: "target", URL: "http://" + p.AdminAddr + "/stats", Frontend: target.TotalName}
	return &s
}

// checkPool checks that every transaction of r reached a backend: the
// pool's requests are the run's and its preflight's, exactly, spread
// within spread of each other; the device counters' run row says so too;
// each second agrees within the transactions in flight at its edges.
func checkPool(t *testing.T, r *metrics.Run, p *target.Backends, spread int64) {
	t.Helper()
	pf := r.Preflight
	if pf == nil || !pf.OK || r.Whole.Errors != 0 || r.Whole.Transactions < 100 {
		t.Fatalf("preflight %+v, whole run %+v: want a good run of 100 transactions or more", pf, r.Whole)
	}
	each, total := p.Requests()
	want := r.Whole.Transactions + pf.Transactions
	t.Logf("%d transactions + %d preflight; backends %v, total %d", r.Whole.Transactions, pf.Transactions, each, total)
	if total != want {
		t.Errorf("the backends answered %d requests, tlsbench made %d transactions and its preflight %d",
			total, r.Whole.Transactions, pf.Transactions)
	}
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, n := range each {
		lo, hi = min(lo, n), max(hi, n)
	}
	if hi-lo > spread {
		t.Errorf("backends %v: spread %d, want at most %d", each, hi-lo, spread)
	}
	checkDeviceRow(t, r)
	counts := make([]int64, len(r.Series))
	for i, s := range r.Series {
		end := r.Started.Add(time.Duration(s.T) * time.Second)
		_, counts[i] = p.Between(end.Add(-time.Second), end)
	}
	seconds := analysis.BackendSeconds(r, counts, target.Resolution)
	if len(seconds) != len(r.Series) {
		t.Fatalf("%d seconds compared of %d", len(seconds), len(r.Series))
	}
	for _, s := range seconds {
		t.Logf("second %d: backends %d, tlsbench %d, margin %d", s.T, s.Backends, s.Engine, s.Margin)
		if !s.Agrees {
			t.Errorf("second %d: backends %d, tlsbench %d: beyond the margin %d", s.T, s.Backends, s.Engine, s.Margin)
		}
	}
}

// checkDeviceRow: the record's device row "run requests" (the pool's
// total read as a kind=target source) is exact.
func checkDeviceRow(t *testing.T, r *metrics.Run) {
	t.Helper()
	if r.Device == nil || r.Device.Error != "" {
		t.Fatalf("device counters %+v", r.Device)
	}
	for _, row := range r.DeviceRows() {
		if row.Scope == "run" && row.Counter == "requests" {
			if row.Diff != 0 {
				t.Errorf("device row %s", row.Explain())
			}
			return
		}
	}
	t.Errorf("no run requests row in %+v", r.DeviceRows())
}

// TestPoolThroughHAProxy: HAProxy terminates TLS and balances round robin
// over 4 backends, a server connection a request.
func TestPoolThroughHAProxy(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	p := startPool(t)
	h := testdut.StartHAProxy(t, dir, []testdut.Frontend{{Name: "pool", Cert: cert,
		Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curves: "prime256v1", Backends: p.Addrs()}})
	r, err := runner.Run(context.Background(), poolSpec(h.Addr("pool"), ca, p))
	if err != nil {
		t.Fatal(err)
	}
	checkPool(t, r, p, 1)
}

// TestPoolThroughNginx: nginx (one worker) terminates TLS and proxies to
// an upstream of 4 backends over kept-alive connections: fewer backend
// connections than requests, the same requests.
func TestPoolThroughNginx(t *testing.T) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	p := startPool(t)
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: dir, Workers: 1,
		HTTP: testdut.NginxUpstream("pool", p.Addrs(), 16),
		Servers: []testdut.NginxServer{{Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "prime256v1",
			Extra: testdut.NginxProxy("pool")}}})
	r, err := runner.Run(context.Background(), poolSpec(n.Addrs[0], ca, p))
	if err != nil {
		t.Fatal(err)
	}
	checkPool(t, r, p, 1)
	var conns int64
	for _, s := range p.Stats()[:poolSize] {
		conns += s.Connections
	}
	if _, total := p.Requests(); conns >= total/2 {
		t.Errorf("%d backend connections for %d requests: the upstream's connections were not kept alive", conns, total)
	}
	t.Logf("backend connections %d", conns)
}
