package cps_test

// Object mixes, requests per connection and RFC 9411's TTFB/TTLB against
// the reference target and nginx.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/cps"
	"github.com/tlsbench/tlsbench/bench/engine/httpreq"
	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
	"github.com/tlsbench/tlsbench/cipher"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// sampled checks every sample the trace hook sees and counts them.
type sampled struct {
	t     *testing.T
	sizes []int64
	mu    sync.Mutex
	n     int64 // samples
	open  int64 // of them, those that opened their connection
	byObj []int64
	bad   int // failed checks (the first few reported)
}

func (c *sampled) trace(_ int, s *metrics.Sample, _ tlsconn.FirstByte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if s.Opened {
		c.open++
	}
	fail := func(format string, args ...any) {
		if c.bad++; c.bad <= 5 {
			c.t.Errorf(format, args...)
		}
	}
	if s.Class != "" {
		return
	}
	if len(c.sizes) > 0 {
		i := int(s.Object) - 1
		if i < 0 || i >= len(c.sizes) {
			fail("sample's object %d, want 1 to %d", s.Object, len(c.sizes))
			return
		}
		c.byObj[i]++
		if s.Payload != c.sizes[i] {
			fail("object %d: body of %d bytes, want %d", i, s.Payload, c.sizes[i])
		}
	}
	ttfb := s.Dur[vocab.PhaseTTFB]
	if s.Opened {
		ttfb += s.Dur[vocab.PhaseConnect] + s.Dur[vocab.PhaseHandshake]
	} else if s.Dur[vocab.PhaseConnect] != 0 || s.Dur[vocab.PhaseHandshake] != 0 || s.Handshake {
		fail("a transaction on a held connection has connect %v, handshake %v (%v)", s.Dur[vocab.PhaseConnect],
			s.Dur[vocab.PhaseHandshake], s.Handshake)
	}
	if s.RFCTTFB <= 0 || s.RFCTTFB < ttfb || s.RFCTTLB < s.RFCTTFB {
		fail("RFC TTFB %v, TTLB %v; phases to the first byte %v (opened %v)", s.RFCTTFB, s.RFCTTLB, ttfb, s.Opened)
	}
}

func targetConfig(t *testing.T, m int, objs []httpreq.Object, tr *sampled) (cps.Config, *x509.CertPool, func() int64) {
	t.Helper()
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	tg := testdut.StartTarget(t, p)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(tg.CA.CertPEM())
	cfg := cps.Defaults()
	cfg.Profile, cfg.Address, cfg.Host = p, tg.Listeners[0].Addr, "localhost"
	cfg.TLS = &tls.Config{ServerName: "localhost", RootCAs: pool}
	cfg.RequestsPerConn, cfg.Objects = m, objs
	if len(objs) == 0 {
		cfg.ExpectSize = 1024
	}
	for _, o := range objs {
		tr.sizes = append(tr.sizes, o.Size)
	}
	tr.byObj = make([]int64, len(objs))
	cfg.Trace = tr.trace
	return cfg, pool, func() int64 { return tg.Listeners[0].Stats().Connections }
}

func run(t *testing.T, cfg cps.Config, d time.Duration) *engine.Outcome {
	t.Helper()
	op, err := cps.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: 4, Duration: d,
		Drain: 10 * time.Second}}, op)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Abandoned != 0 {
		t.Fatalf("run complete %v, abandoned %d", res.Complete, res.Abandoned)
	}
	return res
}

// TestObjectMix: a 1k:3,16k:1 mix, with one request per connection and with
// ten, draws its objects 3:1 (within 4 binomial standard deviations), every
// body of its object's size, no error.
func TestObjectMix(t *testing.T) {
	objs, err := httpreq.ParseObjects("1k:3,16k:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []int{1, 10} {
		t.Run(fmt.Sprint("m=", m), func(t *testing.T) {
			tr := &sampled{t: t}
			cfg, _, _ := targetConfig(t, m, objs, tr)
			res := run(t, cfg, 1500*time.Millisecond)
			snap := res.Snapshot
			if snap.AllErrors != 0 {
				t.Fatalf("errors %v (%v)", snap.Errors, snap.Examples)
			}
			counts := snap.ObjectCounts()
			if len(counts) != 2 {
				t.Fatalf("window's object counts %v, want 2 objects", counts)
			}
			n := float64(counts[0] + counts[1])
			sd := math.Sqrt(n * 0.75 * 0.25)
			if n < 100 || math.Abs(float64(counts[0])-0.75*n) > 4*sd {
				t.Errorf("1k drawn %d times of %v, want %.0f ± %.0f (4 sd)", counts[0], n, 0.75*n, 4*sd)
			}
			if tr.byObj[0]+tr.byObj[1] != snap.AllOK {
				t.Errorf("traced %v successes by object, engine %d", tr.byObj, snap.AllOK)
			}
			t.Logf("window: 1k %d, 16k %d; whole run %d transactions, %d connections", counts[0], counts[1],
				snap.AllOK, snap.AllOpened)
		})
	}
}

// TestObjectWrongSize: an object the target serves with another size is a
// body_size error, counted against that object.
func TestObjectWrongSize(t *testing.T) {
	objs := []httpreq.Object{{Size: 1024, Weight: 1}, {Size: 1000, Weight: 1, Path: "/bytes/999"}}
	tr := &sampled{t: t}
	cfg, _, _ := targetConfig(t, 1, objs, tr)
	res := run(t, cfg, time.Second)
	snap := res.Snapshot
	if snap.Errors[vocab.ClassBodySize] == 0 || len(snap.Errors) != 1 {
		t.Fatalf("errors %v, want body_size only", snap.Errors)
	}
	if snap.AllOK != tr.byObj[0] || tr.byObj[1] != 0 || snap.AllOK == 0 {
		t.Errorf("successes %d, by object %v: want all of the 1k object", snap.AllOK, tr.byObj)
	}
	r := &metrics.Run{Engine: vocab.EngineCPS}
	if err := r.Fill(snap, res.Window); err != nil {
		t.Fatal(err)
	}
	if err := r.SetObjects([]metrics.ObjectStats{{Size: 1024}, {Size: 1000}}, snap); err != nil {
		t.Fatal(err)
	}
	if o := r.Objects[1]; o.Transactions != 0 || o.Errors != snap.Errors[vocab.ClassBodySize] {
		t.Errorf("object 1000: %d transactions, %d errors; want 0 and the %d body_size errors", o.Transactions,
			o.Errors, snap.Errors[vocab.ClassBodySize])
	}
}

// TestRequestsPerConn: with ten requests per connection, every connection
// but each worker's last carries ten transactions; each opened one had a
// handshake, and the target accepted as many.
func TestRequestsPerConn(t *testing.T) {
	tr := &sampled{t: t}
	cfg, _, accepted := targetConfig(t, 10, nil, tr)
	res := run(t, cfg, 1500*time.Millisecond)
	s := res.Snapshot
	if s.AllErrors != 0 {
		t.Fatalf("errors %v (%v)", s.Errors, s.Examples)
	}
	const workers = 4
	if s.AllOK > 10*s.AllOpened || s.AllOK < 10*s.AllOpened-9*workers || s.AllOpened == 0 {
		t.Errorf("%d transactions on %d connections: want 10 per connection, but for each worker's last",
			s.AllOK, s.AllOpened)
	}
	if s.Handshakes != s.AllOpened || tr.open != s.AllOpened || tr.n != s.AllOK {
		t.Errorf("handshakes %d, connections %d, traced %d opening of %d samples, engine %d transactions",
			s.Handshakes, s.AllOpened, tr.open, tr.n, s.AllOK)
	}
	if got := accepted(); got != s.AllOpened {
		t.Errorf("the target accepted %d connections, the engine opened %d", got, s.AllOpened)
	}
	if h := s.Hist[vocab.PhaseHandshake].TotalCount(); h >= s.OK {
		t.Errorf("%d handshake times of %d window transactions: held connections have none", h, s.OK)
	}
	t.Logf("%d transactions, %d connections", s.AllOK, s.AllOpened)
}

// TestNginxRequestsPerConn: nginx, keep-alive, ten requests per connection:
// its access log has a line per transaction, on as many connections as
// the engine opened. When nginx closes a connection sooner (its
// keepalive_requests 3: Connection: close on the third response), the
// next transaction opens a new one, without error.
func TestNginxRequestsPerConn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		server  []string
		perConn int64
	}{
		{"nginx keeps 100000", []string{"keepalive_timeout 75s;", "keepalive_requests 100000;"}, 10},
		{"nginx keeps 3", []string{"keepalive_timeout 75s;", "keepalive_requests 3;"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) { nginxPerConn(t, tc.server, tc.perConn) })
	}
}

func nginxPerConn(t *testing.T, server []string, perConn int64) {
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	cert := testdut.Leaf(t, ca, dir, cipher.KeyType{Alg: "ECDSA", Curve: "P-256"})
	logf := filepath.Join(dir, "conns.log")
	n := testdut.StartNginxT(t, testdut.NginxConfig{Dir: dir, NoFile: 1088,
		HTTP: []string{`log_format conns '$connection $connection_requests $status $body_bytes_sent';`},
		Servers: []testdut.NginxServer{{Cert: cert, Ciphers: "ECDHE-ECDSA-AES128-SHA256", Curve: "prime256v1",
			Extra: append(server, "access_log "+logf+" conns;")}}})
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-sha256-p256")
	cfg := cps.Defaults()
	cfg.Profile, cfg.Address, cfg.Host = p, n.Addrs[0], "localhost"
	cfg.TLS = &tls.Config{ServerName: "localhost", RootCAs: ca.Pool()}
	cfg.ExpectSize, cfg.RequestsPerConn = 1024, 10
	tr := &sampled{t: t}
	cfg.Trace = tr.trace
	res := run(t, cfg, time.Second)
	s := res.Snapshot
	if s.AllErrors != 0 {
		t.Fatalf("errors %v (%v)", s.Errors, s.Examples)
	}
	var lines []string
	deadline := time.Now().Add(5 * time.Second) // nginx writes its log as it goes
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(logf)
		if err != nil {
			t.Fatal(err)
		}
		if lines = strings.Split(strings.TrimSpace(string(b)), "\n"); int64(len(lines)) >= s.AllOK {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	conns := map[string]bool{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 4 || f[2] != "200" || f[3] != "1024" {
			t.Fatalf("access log line %q, want a 200 of 1024 bytes", l)
		}
		conns[f[0]] = true
	}
	if int64(len(lines)) != s.AllOK || int64(len(conns)) != s.AllOpened {
		t.Errorf("nginx logged %d requests on %d connections; the engine made %d transactions on %d", len(lines),
			len(conns), s.AllOK, s.AllOpened)
	}
	const workers = 4
	if s.AllOK > perConn*s.AllOpened || s.AllOK < perConn*s.AllOpened-(perConn-1)*workers {
		t.Errorf("%d transactions on %d connections, want %d per connection", s.AllOK, s.AllOpened, perConn)
	}
	t.Logf("%d transactions on %d connections (nginx: %d on %d)", s.AllOK, s.AllOpened, len(lines), len(conns))
}
