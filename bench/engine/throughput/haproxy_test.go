package throughput_test

// Integration tests of the throughput engine through a real HAProxy in the
// study's "client TLS, server plaintext" shape: HAProxy terminates TLS as the
// study configured it and forwards to the reference target in plain mode.
// The engine's counts must agree with HAProxy's handshakes, HAProxy's log of
// every request and the backend's request count, byte for byte.

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/engine/throughput"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/internal/testdut"
	"github.com/tlsbench/tlsbench/profiles"
)

// hpWorkers is the closed loop's concurrency in every row.
const hpWorkers = 4

// hpRun is one row's measurement through HAProxy.
type hpRun struct {
	res  *engine.Outcome
	op   *throughput.Op
	gbps float64
	// Growth of HAProxy's handshake counter, and of the backend's request
	// count read as soon as the run ended.
	sslSess, backend int64
	// HAProxy's request log: responses with status 200 on each TLS
	// connection (by client random), and the other logged requests.
	perConn map[string]int64
	other   int64
	dropped int64 // log lines HAProxy dropped during the run
}

// hpMeasure runs cfg's operation for 1.5s, no warm-up, hpWorkers workers,
// against frontend, whose backend is the plain listener be. It fails the
// test unless the run completed with nothing abandoned.
func hpMeasure(t *testing.T, h *testdut.HAProxy, frontend string, be *target.Listener, cfg throughput.Config) hpRun {
	t.Helper()
	op, err := throughput.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hsBase := h.Counter(t, frontend, testdut.HAProxyCounter)
	reqBase := be.Stats().Requests
	dropBase := h.Info(t, "DroppedLogs")
	res, err := engine.Run(context.Background(), engine.Config{Load: engine.Load{Concurrency: hpWorkers, Duration: 1500 * time.Millisecond, Drain: 10 * time.Second}}, op)
	if err != nil {
		t.Fatal(err)
	}
	r := hpRun{res: res, op: op, backend: be.Stats().Requests - reqBase}
	if !res.Complete || res.Abandoned != 0 {
		t.Fatalf("run complete %v, abandoned %d; want complete, none abandoned", res.Complete, res.Abandoned)
	}
	snap := &res.Snapshot
	r.sslSess = h.CounterDelta(t, frontend, testdut.HAProxyCounter, hsBase, snap.Handshakes)
	r.dropped = h.Info(t, "DroppedLogs") - dropBase
	r.perConn, r.other = h.Requests(t, frontend, snap.AllOK-r.dropped)
	rec := metrics.Run{Engine: "throughput"}
	if err := rec.Fill(*snap, res.Window); err != nil {
		t.Fatal(err)
	}
	r.gbps = metrics.Value(rec.Gbps)
	t.Logf("%.3f Gbps (wire %.3f) over %v: %d responses, errors %v, %d connections, %d handshakes; HAProxy %s +%d, %d connections and %d+%d requests logged; backend +%d requests",
		metrics.Value(rec.Gbps), metrics.Value(rec.WireGbps), res.Window, snap.AllOK, snap.Errors, snap.AllOpened, snap.Handshakes,
		testdut.HAProxyCounter, r.sslSess, len(r.perConn), sum(r.perConn), r.other, r.backend)
	return r
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// TestHAProxyThroughput fetches /1m through HAProxy frontends configured as
// in the study (TLS 1.2 only, no tickets, no session cache) that forward to
// a plain-HTTP reference target over kept-alive, reused connections.
func TestHAProxyThroughput(t *testing.T) {
	testdut.RequireHAProxy(t)
	dir := t.TempDir()
	ca := testdut.NewCA(t)
	seeds := map[string]testdut.Seed{}
	for _, s := range testdut.Seeds(t, ca, dir) {
		seeds[s.Profile] = s
	}
	verify, err := throughput.ParseVerify("pattern", target.Pattern)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string // subtest and HAProxy frontend
		profile  string // a seed profile; the frontend is its study row's
		pipeline int    // --pipeline
		perConn  int    // --requests-per-conn (0: no limit)
	}{
		// Study row 1 (ECDHE on P-384): one request in flight, each
		// worker's connection kept for the whole run.
		{name: "p384", profile: "ecdhe-ecdsa-aes128-sha256-p384", pipeline: 1},
		// Study row 2 (ECDHE on P-256), likewise.
		{name: "p256", profile: "ecdhe-ecdsa-aes128-sha256-p256", pipeline: 1},
		// Study row 3 (RSA key exchange), likewise.
		{name: "rsa2048", profile: "rsa2048-aes128-gcm-sha256", pipeline: 1},
		// --pipeline 4: four requests in flight on each connection; HAProxy
		// reads them from its buffer and answers them in order.
		{name: "p256-pipeline4", profile: "ecdhe-ecdsa-aes128-sha256-p256", pipeline: 4},
		// --requests-per-conn 3: the engine closes each connection after its
		// third response and opens (and fully handshakes) a new one.
		{name: "p384-3-per-conn", profile: "ecdhe-ecdsa-aes128-sha256-p384", pipeline: 1, perConn: 3},
	}
	// Each row has its own frontend and plain backend, so that every count
	// is the row's own.
	backends := make([]*target.Listener, len(tests))
	fes := make([]testdut.Frontend, len(tests))
	for i, tt := range tests {
		be, err := target.Start(target.Config{Plain: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { be.Close() }) // after HAProxy's, registered later
		backends[i] = be.Listeners[0]
		fes[i] = seeds[tt.profile].Frontend
		fes[i].Name, fes[i].Backend = tt.name, backends[i].Addr
	}
	h := testdut.StartHAProxy(t, dir, fes)

	for i, tt := range tests {
		// Rows run one at a time: each has the CPUs to itself, so that the
		// Gbps logged are comparable.
		t.Run(tt.name, func(t *testing.T) {
			seed := seeds[tt.profile]
			p, err := profiles.Builtin().Get(tt.profile)
			if err != nil {
				t.Fatal(err)
			}
			cfg := throughput.Defaults()
			cfg.Profile = p
			cfg.Address = h.Addr(tt.name)
			cfg.Host = "localhost"
			cfg.TLS = &tls.Config{ServerName: "localhost", RootCAs: ca.Pool()}
			cfg.Path, cfg.ExpectSize, cfg.Verify = "/1m", 1<<20, verify
			cfg.Pipeline, cfg.RequestsPerConn = tt.pipeline, tt.perConn
			r := hpMeasure(t, h, tt.name, backends[i], cfg)
			snap := r.res.Snapshot

			if snap.AllErrors != 0 {
				t.Errorf("errors = %d %v (example %v), want none", snap.AllErrors, snap.Errors, snap.Examples)
			}
			// No warm-up: the steady window holds every response.
			if snap.OK <= 0 || snap.OK != snap.AllOK {
				t.Errorf("responses = %d (whole run %d), want > 0 and equal", snap.OK, snap.AllOK)
			}
			if r.gbps <= 0 {
				t.Errorf("Gbps = %g, want > 0", r.gbps)
			}
			checkBytes(t, snap)
			if got := r.op.Negotiated(); got == nil {
				t.Errorf("Negotiated() = nil, want %+v", seed.Want)
			} else if *got != seed.Want {
				t.Errorf("Negotiated() = %+v, want %+v", *got, seed.Want)
			}
			checkConnections(t, r, tt.perConn)
			checkRequests(t, r, tt.pipeline)
		})
	}
}

// checkBytes checks the byte accounting of a run without errors: every
// response counted is a whole, verified 1 MiB body, and the TLS bytes read
// carry at least the bodies.
func checkBytes(t *testing.T, snap metrics.Snapshot) {
	t.Helper()
	b := snap.Bytes
	if got, want := b.Payload, snap.OK<<20; got != want {
		t.Errorf("payload bytes = %d, want %d (%d responses × 1 MiB)", got, want, snap.OK)
	}
	if got := b.PayloadPartial; got != 0 {
		t.Errorf("partial payload bytes = %d, want 0 (no errors)", got)
	}
	if b.WireIn < b.Payload {
		t.Errorf("wire bytes in = %d, want ≥ payload %d", b.WireIn, b.Payload)
	}
}

// checkConnections checks that connections and handshakes agree between the
// engine and HAProxy, and how many responses each connection carried.
func checkConnections(t *testing.T, r hpRun, perConn int) {
	t.Helper()
	snap := r.res.Snapshot
	// One full handshake per connection, each completed on both sides.
	if got, want := r.sslSess, snap.Handshakes; got != want {
		t.Errorf("HAProxy %s grew by %d, engine completed %d handshakes", testdut.HAProxyCounter, got, want)
	}
	if got, want := snap.Handshakes, snap.AllOpened; got != want {
		t.Errorf("client handshakes = %d, want %d (one per connection opened)", got, want)
	}
	// Every connection carried at least one response, so HAProxy logged a
	// 200 on each.
	if got, want := int64(len(r.perConn)), snap.AllOpened; got != want {
		t.Errorf("HAProxy logged 200 responses on %d TLS connections, engine opened %d", got, want)
	}
	if perConn == 0 {
		// Nothing closes a kept-alive connection: one per worker.
		if got, want := snap.AllOpened, int64(hpWorkers); got != want {
			t.Errorf("connections opened = %d, want %d (one per worker)", got, want)
		}
		return
	}
	// Every connection but each worker's last carried exactly perConn
	// responses; the last one 1 to perConn.
	n, k := snap.AllOK, int64(perConn)
	if lo, hi := k*(snap.AllOpened-hpWorkers)+hpWorkers, k*snap.AllOpened; n < lo || n > hi {
		t.Errorf("%d responses on %d connections, want %d to %d (%d a connection, %d workers)", n, snap.AllOpened, lo, hi, k, hpWorkers)
	}
	// HAProxy's view of the same: no connection answered more than perConn.
	for random, got := range r.perConn {
		if got > k {
			t.Errorf("HAProxy answered %d requests on the connection of client random %s, want ≤ %d", got, random, k)
		}
	}
}

// checkRequests reconciles the engine's responses with HAProxy's log and the
// plain backend's count. A request the engine counted was answered by the
// backend (it counts before answering) and logged by HAProxy. At the end of
// the run each worker closes its connection with pipeline−1 requests still
// in flight (it keeps the pipeline full and reads one response a
// transaction). Those abandoned requests may or may not have reached the
// backend by then, or later (HAProxy forwards a request whose client has
// gone), and HAProxy logs the backend's status even when the client left
// before the body was through. So both counts lie between the engine's and
// that many more; with no pipelining they are equal.
func checkRequests(t *testing.T, r hpRun, pipeline int) {
	t.Helper()
	ok := r.res.Snapshot.AllOK
	inFlight := int64(pipeline-1) * hpWorkers
	if got := r.backend; got < ok || got > ok+inFlight {
		t.Errorf("backend answered %d requests, want %d to %d (engine's responses, plus %d abandoned in flight at most)", got, ok, ok+inFlight, inFlight)
	}
	// HAProxy's logger drops lines rather than block when its output is
	// busy, and counts them (DroppedLogs): logged + dropped is exact.
	if got := sum(r.perConn) + r.other + r.dropped; got < ok || got > ok+inFlight {
		t.Errorf("HAProxy logged %d requests (%d answered 200) and dropped %d log lines, want %d to %d", got-r.dropped, sum(r.perConn), r.dropped, ok, ok+inFlight)
	}
}
