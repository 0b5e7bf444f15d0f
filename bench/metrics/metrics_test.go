package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// durs returns a sample duration array with every phase set to d, except
// Total and Uncorrected which are twice d.
func durs(d time.Duration) [vocab.NumTimed]time.Duration {
	var a [vocab.NumTimed]time.Duration
	for p := range a {
		a[p] = d
	}
	a[vocab.PhaseTotal], a[vocab.PhaseUncorrected] = 2*d, 2*d
	return a
}

func TestNewRecorderShards(t *testing.T) {
	tests := []struct {
		n, want int
	}{
		// At least one shard.
		{0, 1},
		{-3, 1},
		// As asked.
		{1, 1},
		{16, 16},
	}
	for _, tt := range tests {
		r := metrics.NewRecorder(tt.n, t0)
		if got := r.Shards(); got != tt.want {
			t.Errorf("NewRecorder(%d).Shards() = %d, want %d", tt.n, got, tt.want)
		}
		// Any non-negative index is taken modulo the shard count.
		r.Record(tt.want*7+3, &metrics.Sample{Steady: true, Dur: durs(time.Millisecond)})
		if got := r.Snapshot().OK; got != 1 {
			t.Errorf("NewRecorder(%d): OK = %d after one sample, want 1", tt.n, got)
		}
	}
}

// count is one named integer of a result and its expected value.
type count struct {
	name      string
	got, want int64
}

func checkCounts(t *testing.T, what string, cs []count) {
	t.Helper()
	for _, c := range cs {
		if c.got != c.want {
			t.Errorf("%s: %s = %d, want %d", what, c.name, c.got, c.want)
		}
	}
}

func TestRecordSnapshot(t *testing.T) {
	errTimeout1 := errors.New("dial tcp: i/o timeout (first)")
	errTimeout2 := errors.New("dial tcp: i/o timeout (second)")
	errReset := errors.New("connection reset by peer")
	samples := []metrics.Sample{
		// Warm-up success: whole run only, no bytes, no histogram.
		{Dur: durs(1 * time.Millisecond), Handshake: true, BytesIn: 1000, BytesOut: 100},
		// Steady success.
		{Steady: true, Dur: durs(2 * time.Millisecond), Handshake: true, BytesIn: 2000, BytesOut: 200},
		// Steady success.
		{Steady: true, Dur: durs(4 * time.Millisecond), Handshake: true, BytesIn: 4000, BytesOut: 400},
		// Steady timeout: its message is the example of its class.
		{Steady: true, Class: "timeout", Err: errTimeout1, BytesOut: 50},
		// Another timeout: counted, its message is not kept.
		{Steady: true, Class: "timeout", Err: errTimeout2},
		// A reset without an error value: no example yet.
		{Steady: true, Class: "reset", Handshake: true, BytesIn: 7},
		// A reset with an error: the first example of its class.
		{Steady: true, Class: "reset", Err: errReset},
		// Warm-up error: whole run only, no example.
		{Class: "tls_alert", Err: errors.New("remote error: tls: handshake failure"), Handshake: true},
		// Drain success after the window.
		{Dur: durs(8 * time.Millisecond), BytesIn: 8000},
	}
	r := metrics.NewRecorder(3, t0)
	for i := range samples {
		r.Record(i, &samples[i])
	}
	s := r.Snapshot()

	checkCounts(t, "Snapshot", []count{
		// Successful transactions of the steady window.
		{"OK", s.OK, 2},
		// Whole run: warm-up, steady and drain.
		{"AllOK", s.AllOK, 4},
		{"AllErrors", s.AllErrors, 5},
		// Handshakes completed, whatever the outcome, whole run.
		{"Handshakes", s.Handshakes, 5},
		// Bytes of every steady transaction, failed ones included.
		{"BytesIn", s.Bytes.In, 2000 + 4000 + 7},
		{"BytesOut", s.Bytes.Out, 200 + 400 + 50},
		// Nothing out of range.
		{"OutOfRange", s.OutOfRange, 0},
	})
	if got, want := s.Errors, map[vocab.Class]int64{"timeout": 2, "reset": 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("Snapshot.Errors = %v, want %v", got, want)
	}
	if got, want := s.Examples, map[vocab.Class]string{"timeout": errTimeout1.Error(), "reset": errReset.Error()}; !reflect.DeepEqual(got, want) {
		t.Errorf("Snapshot.Examples = %q, want %q", got, want)
	}
	for p, h := range s.Hist {
		if got, want := h.TotalCount(), int64(2); got != want {
			t.Errorf("%s histogram holds %d values, want %d (steady successes)", vocab.Phase(p), got, want)
		}
		// 2 ms and 4 ms (Total and Uncorrected: 4 ms and 8 ms).
		lo, hi := int64(2000), int64(4000)
		if p == int(vocab.PhaseTotal) || p == int(vocab.PhaseUncorrected) {
			lo, hi = 4000, 8000
		}
		if !h.ValuesAreEquivalent(h.Min(), lo) || !h.ValuesAreEquivalent(h.Max(), hi) {
			t.Errorf("%s histogram min/max = %d/%d µs, want %d/%d", vocab.Phase(p), h.Min(), h.Max(), lo, hi)
		}
	}

	// A snapshot is a copy: later records do not change it.
	r.Record(0, &samples[1])
	if got, want := s.OK, int64(2); got != want {
		t.Errorf("old snapshot OK = %d after another record, want %d", got, want)
	}
	if got, want := s.Hist[vocab.PhaseTotal].TotalCount(), int64(2); got != want {
		t.Errorf("old snapshot histogram changed: %d values, want %d", got, want)
	}
	if got, want := r.Snapshot().OK, int64(3); got != want {
		t.Errorf("new snapshot OK = %d, want %d", got, want)
	}
}

// TestExampleFirstAcrossShards: each class keeps one example, the first
// recorded with an error, even when shards disagree.
func TestExampleFirstAcrossShards(t *testing.T) {
	r := metrics.NewRecorder(2, t0)
	r.Record(0, &metrics.Sample{Steady: true, Class: "x", Err: errors.New("shard 0 first")})
	r.Record(0, &metrics.Sample{Steady: true, Class: "x", Err: errors.New("shard 0 second")})
	r.Record(1, &metrics.Sample{Steady: true, Class: "x", Err: errors.New("shard 1")})
	s := r.Snapshot()
	if got, want := s.Examples["x"], "shard 0 first"; got != want {
		t.Errorf("example = %q, want %q", got, want)
	}
	if got, want := s.Errors["x"], int64(3); got != want {
		t.Errorf("errors = %d, want %d", got, want)
	}
}

func TestOutOfRange(t *testing.T) {
	tests := []struct {
		d      time.Duration
		steady bool
		oor    int64  // per phase recorded
		value  int64  // µs recorded in the histogram
		count  int64  // histogram values
		desc   string // for messages
	}{
		// The largest value in range.
		{metrics.Highest * time.Microsecond, true, 0, metrics.Highest, 1, "Highest"},
		// Just above: clamped and counted.
		{(metrics.Highest + 1) * time.Microsecond, true, 1, metrics.Highest, 1, "Highest+1"},
		// Far above.
		{time.Hour, true, 1, metrics.Highest, 1, "1 h"},
		// Sub-microsecond truncates to 0, which is in range.
		{500 * time.Nanosecond, true, 0, 0, 1, "500 ns"},
		// Negative (clock step): recorded as 0, not out of range.
		{-time.Millisecond, true, 0, 0, 1, "-1 ms"},
		// Out of range in warm-up: not in the steady histograms, not counted.
		{time.Hour, false, 0, 0, 0, "1 h warm-up"},
	}
	for _, tt := range tests {
		r := metrics.NewRecorder(1, t0)
		var d [vocab.NumTimed]time.Duration
		d[vocab.PhaseTotal] = tt.d
		r.Record(0, &metrics.Sample{Steady: tt.steady, Dur: d})
		s := r.Snapshot()
		if got, want := s.OutOfRange, tt.oor; got != want {
			t.Errorf("%s: OutOfRange = %d, want %d", tt.desc, got, want)
		}
		h := s.Hist[vocab.PhaseTotal]
		if got, want := h.TotalCount(), tt.count; got != want {
			t.Errorf("%s: histogram holds %d values, want %d", tt.desc, got, want)
		}
		if tt.count > 0 && !h.ValuesAreEquivalent(h.Max(), tt.value) {
			t.Errorf("%s: recorded %d µs, want %d", tt.desc, h.Max(), tt.value)
		}
	}

	// Each phase out of range counts once.
	r := metrics.NewRecorder(1, t0)
	r.Record(0, &metrics.Sample{Steady: true, Dur: durs(time.Hour)})
	if got, want := r.Snapshot().OutOfRange, int64(vocab.NumTimed); got != want {
		t.Errorf("all phases out of range: OutOfRange = %d, want %d", got, want)
	}
}

// values returns n pseudo-random latencies, log-uniform from 1 µs to about
// 30 min (some beyond Highest), the same on every call.
func values(n int) []time.Duration {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]time.Duration, n)
	for i := range out {
		us := math.Pow(10, rng.Float64()*9.3) // 1 µs .. 10^9.3 µs
		out[i] = time.Duration(us*float64(time.Microsecond)) + time.Duration(rng.IntN(1000))
	}
	return out
}

// central records values as the recorder promises to: whole µs, clamped to
// Highest.
func central(vs []time.Duration) *hdr.Histogram {
	h := metrics.NewHistogram()
	for _, v := range vs {
		us := int64(v / time.Microsecond)
		if us > metrics.Highest {
			us = metrics.Highest
		}
		if err := h.RecordValue(us); err != nil {
			panic(err)
		}
	}
	return h
}

// sampleFor returns a steady success whose phase p lasts (p+1)·v.
func sampleFor(v time.Duration) *metrics.Sample {
	s := &metrics.Sample{Steady: true}
	for p := range s.Dur {
		s.Dur[p] = phaseDur(v, vocab.Phase(p))
	}
	return s
}

func phaseDur(v time.Duration, p vocab.Phase) time.Duration { return v * time.Duration(p+1) }

// TestShardsMergeExactly records the same values into 1 and 8 shards,
// concurrently, and compares with one central histogram per phase.
func TestShardsMergeExactly(t *testing.T) {
	vs := values(5000)
	one := metrics.NewRecorder(1, t0)
	for _, v := range vs {
		one.Record(0, sampleFor(v))
	}

	many := metrics.NewRecorder(8, t0)
	var wg sync.WaitGroup
	const workers = 8
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(vs); i += workers {
				many.Record(w, sampleFor(vs[i]))
			}
		})
	}
	// Snapshots and ticks while recording must be safe (run with -race).
	for range 3 {
		many.Snapshot()
		many.Tick(t0)
	}
	wg.Wait()

	s1, s8 := one.Snapshot(), many.Snapshot()
	var wantOOR int64
	for p := range vocab.NumTimed {
		var pv []time.Duration
		for _, v := range vs {
			pv = append(pv, phaseDur(v, p))
			if phaseDur(v, p) > metrics.Highest*time.Microsecond {
				wantOOR++
			}
		}
		c := central(pv)
		if !s1.Hist[p].Equals(c) {
			t.Errorf("%s: 1 shard differs from the central histogram", p)
		}
		if !s8.Hist[p].Equals(c) {
			t.Errorf("%s: 8 shards differ from the central histogram (%d vs %d values)", p, s8.Hist[p].TotalCount(), c.TotalCount())
		}
		if got, want := metrics.Summarize(s8.Hist[p]), metrics.Summarize(c); got != want {
			t.Errorf("%s: percentiles %+v, want %+v", p, got, want)
		}
	}
	if wantOOR == 0 {
		t.Fatal("test values never exceed Highest")
	}
	for _, s := range []metrics.Snapshot{s1, s8} {
		if got, want := s.OutOfRange, wantOOR; got != want {
			t.Errorf("OutOfRange = %d, want %d", got, want)
		}
		if got, want := s.OK, int64(len(vs)); got != want {
			t.Errorf("OK = %d, want %d", got, want)
		}
	}
}

func TestTick(t *testing.T) {
	r := metrics.NewRecorder(4, t0)
	// 100 successes: handshake 1..100 ms, total 2..200 ms; 30 of them in warm-up.
	for i := 1; i <= 100; i++ {
		var d [vocab.NumTimed]time.Duration
		d[vocab.PhaseHandshake] = time.Duration(i) * time.Millisecond
		d[vocab.PhaseTotal] = 2 * time.Duration(i) * time.Millisecond
		r.Record(i, &metrics.Sample{Steady: i > 30, Dur: d, Payload: 10, Handshake: true})
	}
	// 5 errors, bytes not counted in the interval.
	for i := range 5 {
		r.Record(i, &metrics.Sample{Steady: true, Class: "timeout", Payload: 1000})
	}

	sec := r.Tick(t0.Add(3*time.Second + 400*time.Millisecond))
	checkCounts(t, "Tick", []count{
		// Rounded seconds since start.
		{"T", int64(sec.T), 3},
		{"Unix", sec.Unix, t0.Unix() + 3},
		// Whole run: warm-up included.
		{"Transactions", sec.Transactions, 100},
		{"Errors", sec.Errors, 5},
		// Bytes of successful transactions.
		{"PayloadBytes", sec.PayloadBytes, 1000},
	})
	// Two significant figures: within 1%.
	floats := []struct {
		name      string
		got, want float64
	}{
		{"HandshakeP99", sec.HandshakeP99, 99_000},
		{"TotalP50", sec.TotalP50, 100_000},
		{"TotalP99", sec.TotalP99, 198_000},
	}
	for _, c := range floats {
		if c.got < c.want*0.99 || c.got > c.want*1.01 {
			t.Errorf("Tick: %s = %.0f µs, want %.0f ±1%%", c.name, c.got, c.want)
		}
	}

	// The next tick starts from zero.
	next := r.Tick(t0.Add(4 * time.Second))
	if want := (metrics.Second{T: 4, Unix: t0.Unix() + 4}); next != want {
		t.Errorf("second Tick = %+v, want %+v", next, want)
	}

	// Ticks do not touch the run totals.
	s := r.Snapshot()
	if s.OK != 70 || s.AllOK != 100 || s.AllErrors != 5 || s.Errors["timeout"] != 5 {
		t.Errorf("after Tick: OK=%d AllOK=%d AllErrors=%d Errors=%v", s.OK, s.AllOK, s.AllErrors, s.Errors)
	}

	// Only what came after the last tick is counted.
	r.Record(0, &metrics.Sample{Dur: durs(time.Millisecond), Payload: 3})
	if got := r.Tick(t0.Add(5 * time.Second)); got.Transactions != 1 || got.PayloadBytes != 3 {
		t.Errorf("third Tick = %+v, want 1 transaction of 3 bytes", got)
	}
}

func TestTickSecond(t *testing.T) {
	tests := []struct {
		offset time.Duration
		want   int
	}{
		// At the start.
		{0, 0},
		// Just before a second rounds down.
		{1499 * time.Millisecond, 1},
		// Half a second rounds up.
		{2500 * time.Millisecond, 3},
		// A late tick.
		{59*time.Second + 700*time.Millisecond, 60},
	}
	for _, tt := range tests {
		r := metrics.NewRecorder(1, t0)
		if got := r.Tick(t0.Add(tt.offset)).T; got != tt.want {
			t.Errorf("Tick(start+%v).T = %d, want %d", tt.offset, got, tt.want)
		}
	}
}

// filledRun returns a record filled from a recorder with varied data.
func filledRun(t *testing.T) (*metrics.Run, metrics.Snapshot) {
	t.Helper()
	r := metrics.NewRecorder(4, t0)
	for i, v := range values(5000) {
		s := sampleFor(v)
		s.BytesIn, s.BytesOut, s.Handshake = 100, 10, true
		r.Record(i, s)
	}
	r.Record(0, &metrics.Sample{Steady: true, Class: "resumed", Err: errors.New("session resumed")})
	r.Record(1, &metrics.Sample{Steady: true, Class: "resumed"})
	r.Record(2, &metrics.Sample{Steady: true, Class: "timeout", Err: errors.New("i/o timeout")})
	r.Record(3, &metrics.Sample{Class: "timeout"})
	snap := r.Snapshot()
	run := &metrics.Run{Schema: metrics.Schema, Engine: "cps", Profile: "p"}
	if err := run.Fill(snap, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return run, snap
}

func TestFill(t *testing.T) {
	run, snap := filledRun(t)
	checks := []struct {
		name      string
		got, want any
	}{
		// Window and rate.
		{"DurationS", run.DurationS, 10.0},
		{"Transactions", run.Transactions, int64(5000)},
		{"CPS", metrics.Value(run.CPS), 500.0},
		// Errors of the window, with resumptions counted apart too.
		{"Errors.Total", run.Errors.Total, int64(3)},
		{"Errors.ByClass", run.Errors.ByClass, map[vocab.Class]int64{"resumed": 2, "timeout": 1}},
		{"Errors.Examples", run.Errors.Examples, map[vocab.Class]string{"resumed": "session resumed", "timeout": "i/o timeout"}},
		{"Resumed", run.Resumed, int64(2)},
		{"Handshakes", run.Handshakes, int64(5000)},
		{"Bytes", run.Bytes, metrics.Bytes{In: 500_000, Out: 50_000}},
		{"throughput rates", run.HasThroughput(), false},
		{"OutOfRange", run.OutOfRange, snap.OutOfRange},
		{"Whole", run.Whole, metrics.Whole{Transactions: 5000, Errors: 4}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("Fill: %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if snap.OutOfRange == 0 {
		t.Error("test data has nothing out of range")
	}
	if got, want := len(run.Latency), int(vocab.NumTimed); got != want {
		t.Errorf("Latency has %d phases, want %d", got, want)
	}
	if got, want := len(run.Histograms), int(vocab.NumTimed); got != want {
		t.Errorf("Histograms has %d phases, want %d", got, want)
	}

	// An empty window: no rate, no division by zero.
	var empty metrics.Run
	if err := empty.Fill(metrics.NewRecorder(1, t0).Snapshot(), 0); err != nil {
		t.Fatal(err)
	}
	if empty.CPS != nil || empty.Transactions != 0 || empty.Percentiles(vocab.PhaseTotal) != (metrics.Percentiles{}) {
		t.Errorf("empty Fill: CPS=%v Transactions=%d total=%+v", metrics.Value(empty.CPS), empty.Transactions, empty.Percentiles(vocab.PhaseTotal))
	}
	empty.Engine = "cps"
	if err := empty.Fill(metrics.NewRecorder(1, t0).Snapshot(), 0); err != nil {
		t.Fatal(err)
	}
	if empty.CPS == nil || *empty.CPS != 0 {
		t.Errorf("empty window: CPS %v", empty.CPS)
	}
}

// checkHistograms asserts that every phase of run decodes to exactly the
// snapshot's histogram and that Latency summarises it.
func checkHistograms(t *testing.T, run *metrics.Run, snap metrics.Snapshot) {
	t.Helper()
	for p := range vocab.NumTimed {
		name := p.String()
		h, err := run.Histogram(name)
		if err != nil {
			t.Errorf("Histogram(%q): %v", name, err)
			continue
		}
		if !h.Equals(snap.Hist[p]) {
			t.Errorf("%s: decoded histogram differs from the recorded one", name)
		}
		if h.LowestTrackableValue() != metrics.Lowest || h.HighestTrackableValue() != metrics.Highest || h.SignificantFigures() != metrics.SigFigs {
			t.Errorf("%s: decoded geometry %d..%d/%d, want %d..%d/%d", name,
				h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), metrics.Lowest, metrics.Highest, metrics.SigFigs)
		}
		if got, want := run.Latency[name], metrics.Summarize(h); got != want {
			t.Errorf("%s: Latency %+v, decoded histogram gives %+v", name, got, want)
		}
		if run.Latency[name].Count == 0 {
			t.Errorf("%s: no values", name)
		}
		// Decoded histograms merge exactly (runs and agents are merged this way).
		m := metrics.NewHistogram()
		m.Merge(h)
		m.Merge(snap.Hist[p])
		if got, want := m.TotalCount(), 2*snap.Hist[p].TotalCount(); got != want {
			t.Errorf("%s: merged %d values, want %d", name, got, want)
		}
	}
}

func TestHistogramRoundTrip(t *testing.T) {
	run, snap := filledRun(t)
	checkHistograms(t, run, snap)

	tests := []struct {
		phase  string
		enc    string
		substr string
	}{
		// A phase the record does not have.
		{"dns", "", `no "dns" histogram`},
		// Not base64.
		{"total", "!!!not base64!!!", "decoding total histogram"},
		// Base64 of something else.
		{"total", "aGVsbG8gd29ybGQ=", "decoding total histogram"},
	}
	for _, tt := range tests {
		r := &metrics.Run{Histograms: map[string]string{}}
		if tt.enc != "" {
			r.Histograms[tt.phase] = tt.enc
		}
		h, err := r.Histogram(tt.phase)
		if err == nil {
			t.Errorf("Histogram(%q) of %q = %d values, want an error", tt.phase, tt.enc, h.TotalCount())
			continue
		}
		if !strings.Contains(err.Error(), tt.substr) {
			t.Errorf("Histogram(%q) error %q, want it to contain %q", tt.phase, err, tt.substr)
		}
	}
}

func TestSummarizeEmpty(t *testing.T) {
	if got := metrics.Summarize(metrics.NewHistogram()); got != (metrics.Percentiles{}) {
		t.Errorf("Summarize(empty) = %+v, want zero", got)
	}
}

// compact returns raw JSON without insignificant white space.
func compact(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestWriteJSONReadRun(t *testing.T) {
	run, snap := filledRun(t)
	run.ProfileSpec = json.RawMessage(`{"name":"p","groups":["P-384"]}`)
	run.Config = json.RawMessage(`{"concurrency":4}`)
	run.Target = metrics.Target{URL: "https://localhost:8443/", Address: "127.0.0.1:8443", ServerName: "localhost", InProcess: true}
	run.Tool = metrics.Tool{Name: "tlsbench", Version: "test", GoVersion: "go1.26"}
	run.Host = metrics.Host{Hostname: "h", OS: "linux", Arch: "amd64", CPUs: 2}
	run.Started, run.Ended = t0, t0.Add(15*time.Second)
	run.Complete = true
	run.Negotiated = metrics.Negotiated{Version: "TLS1.2", CipherSuite: "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", Group: "P-384", CertKey: "ECDSA P-256", SuitePinned: true}
	run.Load = metrics.Load{Mode: "open", Concurrency: 4, Rate: 1000.5, Late: 2, Dropped: 1}
	run.WarmupS, run.SteadyStartS = 2, 2.5
	run.Series = []metrics.Second{{T: 1, Unix: t0.Unix() + 1, Transactions: 10, HandshakeP99: 1.5}}
	run.Client = metrics.Client{CPUSeconds: 1.25, Cores: 2, Utilization: 0.3, CPUPerTxnUS: 250}

	file := filepath.Join(t.TempDir(), "run.json")
	if err := run.WriteJSON(context.Background(), file, nil, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("}\n")) || !bytes.Contains(data, []byte("\n  \"schema\": ")) {
		t.Errorf("WriteJSON output is not indented JSON ending in a newline:\n%.200s", data)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode() != 0o644 {
		t.Errorf("WriteJSON file mode %v (%v), want 0644", fi.Mode(), err)
	}

	got, err := metrics.ReadRun(file)
	if err != nil {
		t.Fatal(err)
	}
	got.ProfileSpec, got.Config = compact(t, got.ProfileSpec), compact(t, got.Config)
	if !reflect.DeepEqual(got, run) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(run)
		t.Errorf("ReadRun(WriteJSON(r)) differs:\n got %.600s\nwant %.600s", gj, wj)
	}
	checkHistograms(t, got, snap)
}

func TestReadRunErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		substr  string
	}{
		// Another schema version.
		{"old.json", `{"schema":"tlsbench/run/v0","engine":"cps"}`, `schema "tlsbench/run/v0", want "tlsbench/run/v1"`},
		// No schema at all (some other JSON file).
		{"other.json", `{"name":"x"}`, `schema "", want "tlsbench/run/v1"`},
		// Not JSON.
		{"text.json", "hello, world\n", "not a run record"},
		// Empty file.
		{"empty.json", "", "not a run record"},
		// Truncated record.
		{"cut.json", `{"schema":"tlsbench/run/v1","latency_us":{`, "not a run record"},
		// JSON, but not an object.
		{"array.json", `[1,2,3]`, "not a run record"},
		// A field of the wrong type.
		{"type.json", `{"schema":"tlsbench/run/v1","transactions":"many"}`, "not a run record"},
	}
	for _, tt := range tests {
		file := filepath.Join(dir, tt.name)
		if err := os.WriteFile(file, []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := metrics.ReadRun(file)
		if err == nil {
			t.Errorf("ReadRun(%s) = %+v, want an error", tt.name, r)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, file) || !strings.Contains(msg, tt.substr) {
			t.Errorf("ReadRun(%s) error %q, want it to name the file and contain %q", tt.name, msg, tt.substr)
		}
	}

	missing := filepath.Join(dir, "missing.json")
	if _, err := metrics.ReadRun(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("ReadRun(missing) = %v, want a not-exist error naming the file", err)
	}
}

// TestRecordNegativeShard: Record documents the shard index as taken modulo
// the shard count; a negative index should not panic.
func TestRecordNegativeShard(t *testing.T) {
	r := metrics.NewRecorder(4, t0)
	defer func() {
		if v := recover(); v != nil {
			t.Errorf("Record(-1, …) panics: %v", v)
		}
	}()
	r.Record(-1, &metrics.Sample{Steady: true, Dur: durs(time.Millisecond)})
	if got := r.Snapshot().OK; got != 1 {
		t.Errorf("OK = %d, want 1", got)
	}
}
