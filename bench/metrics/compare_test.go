package metrics_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tlsbench/tlsbench/bench/metrics"

	"github.com/tlsbench/tlsbench/bench/vocab"
)

// compareRun is a CPS run of n successful transactions of total latency
// d (phases in proportion) and failed ones, over a 10 s window.
func compareRun(t *testing.T, n, failed int, d time.Duration) *metrics.Run {
	t.Helper()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := metrics.NewRecorder(2, start)
	for i := range n {
		s := &metrics.Sample{Steady: true, Opened: true, Handshake: true, Payload: 1000}
		s.Dur = [vocab.NumTimed]time.Duration{d / 10, d / 2, d / 5, d / 10, d, d}
		rec.Record(i, s)
	}
	for i := range failed {
		rec.Record(i, &metrics.Sample{Steady: true, Class: "reset", Err: errors.New("reset")})
	}
	r := &metrics.Run{Schema: metrics.Schema, Engine: "cps", Profile: "p", Started: start, Ended: start.Add(12 * time.Second),
		SteadyStartS: 2, Target: metrics.Target{Address: "dut:443"}, Client: metrics.Client{Utilization: 0.5}}
	if err := r.Fill(rec.Snapshot(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCompare(t *testing.T) {
	// A: 9000 transactions of 20 ms and 1000 failures; B: 10000 of 10 ms.
	a, b := compareRun(t, 9000, 1000, 20*time.Millisecond), compareRun(t, 10000, 0, 10*time.Millisecond)
	c := metrics.Compare("a", "b", a, b)
	for _, tt := range []struct {
		metric, unit string
		a, b         float64
		pct          float64 // NaN: none (B is 0)
	}{
		// Counts, and their change relative to B.
		{"transactions", "", 9000, 10000, -10},
		{"successful", "", 9000, 10000, -10},
		{"failed", "", 1000, 0, math.NaN()},
		// Successful ÷ (successful + failed).
		{"availability", "%", 90, 100, -10},
		{"elapsed", "s", 10, 10, 0},
		// 1000-byte bodies; MB are 2^20 bytes, as Siege counts.
		{"data transferred", "MB", 9e6 / (1 << 20), 1e7 / (1 << 20), -10},
		{"throughput", "MB/s", 9e5 / (1 << 20), 1e6 / (1 << 20), -10},
		{"response time", "ms", 20, 10, 100},
		{"transaction rate", "/s", 900, 1000, -10},
		// Little's law: 900/s × 20 ms and 1000/s × 10 ms.
		{"concurrency", "", 18, 10, 80},
		{"longest", "ms", 20, 10, 100},
		{"shortest", "ms", 20, 10, 100},
		// Phases in proportion to the total.
		{"handshake p99", "ms", 10, 5, 100},
		{"connect p50", "ms", 2, 1, 100},
		{"CPS", "/s", 900, 1000, -10},
		{"generator CPU", "%", 50, 50, 0},
	} {
		d, ok := c.Row(tt.metric)
		if !ok {
			t.Errorf("no %s row", tt.metric)
			continue
		}
		// HDR buckets hold a value to 3 significant digits.
		if got, want := d.A, tt.a; math.Abs(got-want) > want*1e-3 {
			t.Errorf("%s A = %v, want %v", tt.metric, got, want)
		}
		if got, want := d.B, tt.b; math.Abs(got-want) > want*1e-3 {
			t.Errorf("%s B = %v, want %v", tt.metric, got, want)
		}
		if got, want := d.Delta, d.A-d.B; got != want {
			t.Errorf("%s Δ = %v, want A − B = %v", tt.metric, got, want)
		}
		if got, want := d.Unit, tt.unit; got != want {
			t.Errorf("%s unit %q, want %q", tt.metric, got, want)
		}
		switch {
		case math.IsNaN(tt.pct):
			if d.DeltaPct != nil {
				t.Errorf("%s Δ%% = %v, want none", tt.metric, *d.DeltaPct)
			}
		case d.DeltaPct == nil:
			t.Errorf("%s Δ%% missing", tt.metric)
		case math.Abs(*d.DeltaPct-tt.pct) > 0.2:
			t.Errorf("%s Δ%% = %v, want %v", tt.metric, *d.DeltaPct, tt.pct)
		}
	}
	if d, _ := c.Row("concurrency"); !strings.Contains(d.Note, "Little's law") {
		t.Errorf("concurrency note %q does not name Little's law", d.Note)
	}
	// Only runs that both have a rate get its row.
	if _, ok := c.Row("Gbps"); ok {
		t.Error("two CPS runs compared by Gbps")
	}
	if got, want := c.Rows[0].Metric, "transactions"; got != want {
		t.Errorf("first row %q, want %q", got, want)
	}
}

func TestNewDelta(t *testing.T) {
	for _, tt := range []struct {
		a, b, delta float64
		pct         *float64
	}{
		// The WAF study's transactions: −1,605 (−0.67%).
		{237238, 238843, -1605, ptr(-1605.0 / 238843 * 100)},
		// No baseline: no relative change.
		{5, 0, 5, nil},
		{0, 0, 0, nil},
	} {
		d := metrics.NewDelta("m", "", tt.a, tt.b, "")
		if d.Delta != tt.delta || (d.DeltaPct == nil) != (tt.pct == nil) || (d.DeltaPct != nil && *d.DeltaPct != *tt.pct) {
			t.Errorf("NewDelta(%v, %v) = %v, %v; want %v, %v", tt.a, tt.b, d.Delta, d.DeltaPct, tt.delta, tt.pct)
		}
	}
}

func ptr(v float64) *float64 { return &v }

func TestQuantiles(t *testing.T) {
	h := metrics.NewHistogram()
	for v := int64(1); v <= 1000; v++ {
		h.RecordValue(v)
	}
	q := metrics.Quantiles(h, []float64{0, 50, 90, 99.9, 100})
	for i, want := range []int64{1, 500, 900, 999, 1000} {
		if got := q[i].US; got != want {
			t.Errorf("p%v = %d, want %d", q[i].Percentile, got, want)
		}
	}
	if got := metrics.Quantiles(metrics.NewHistogram(), metrics.CurvePercentiles); got != nil {
		t.Errorf("an empty histogram has quantiles %v", got)
	}
	// The curve's percentiles rise, and end at p99.999.
	ps := metrics.CurvePercentiles
	for i := 1; i < len(ps); i++ {
		if ps[i] <= ps[i-1] {
			t.Errorf("CurvePercentiles[%d] = %v after %v", i, ps[i], ps[i-1])
		}
	}
	if got, want := ps[len(ps)-1], 99.999; got != want {
		t.Errorf("last percentile %v, want %v", got, want)
	}
}

func TestGroupOrKey(t *testing.T) {
	for _, tt := range []struct {
		n    metrics.Negotiated
		want string
	}{
		// ECDHE groups by their OpenSSL names.
		{metrics.Negotiated{Group: "P-384"}, "secp384r1 (P-384)"},
		{metrics.Negotiated{Group: "P-256"}, "prime256v1 (P-256)"},
		// RSA key exchange: the key.
		{metrics.Negotiated{Group: "none", CertKey: "RSA 2048"}, "— (RSA 2048 key exchange)"},
		// Others as they are; nothing negotiated, nothing.
		{metrics.Negotiated{Group: "X25519MLKEM768"}, "X25519MLKEM768"},
		{metrics.Negotiated{}, ""},
	} {
		if got := tt.n.GroupOrKey(); got != tt.want {
			t.Errorf("GroupOrKey(%+v) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestHistogramLogRoundTrip: HdrHistogram's own log reader reads the log
// back into the record's histograms, tagged with their phases, at the
// steady window's time.
func TestHistogramLogRoundTrip(t *testing.T) {
	a, b := compareRun(t, 3000, 0, 7*time.Millisecond), compareRun(t, 500, 2, 90*time.Millisecond)
	b.Started = b.Started.Add(time.Minute + 250*time.Millisecond)
	for _, tt := range []struct {
		runs []metrics.LabeledRun
		tags []string // of the first run's phases
	}{
		// One run: the tags are the phases.
		{[]metrics.LabeledRun{{Label: "a", Run: a}}, []string{"connect", "handshake", "ttfb", "transfer", "total", "total_uncorrected"}},
		// Several: the label (made safe) and the phase.
		{[]metrics.LabeledRun{{Label: "adc a,1", Run: a}, {Label: "b", Run: b}}, []string{"adc_a_1.connect", "adc_a_1.handshake"}},
	} {
		var buf bytes.Buffer
		if err := metrics.WriteHistogramLog(&buf, tt.runs); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "MICROSECONDS") {
			t.Errorf("the log does not state its unit:\n%s", buf.String())
		}
		rd := hdr.NewHistogramLogReader(&buf)
		n := 0
		for _, lr := range tt.runs {
			start := lr.Run.Started.Add(time.Duration(lr.Run.SteadyStartS * float64(time.Second)))
			for p := range vocab.NumTimed {
				h, err := rd.NextIntervalHistogram()
				if err != nil || h == nil {
					t.Fatalf("interval %d: %v, %v", n, h, err)
				}
				want, err := lr.Run.Histogram(p.String())
				if err != nil {
					t.Fatal(err)
				}
				if !h.Equals(want) {
					t.Errorf("%s %s: read back %d values, differs from the record's %d", lr.Label, p, h.TotalCount(), want.TotalCount())
				}
				if n < len(tt.tags) && h.Tag() != tt.tags[n] {
					t.Errorf("interval %d tag %q, want %q", n, h.Tag(), tt.tags[n])
				}
				if got, want := h.StartTimeMs(), start.UnixMilli(); got != want {
					t.Errorf("%s %s: starts at %d ms, want %d", lr.Label, p, got, want)
				}
				if got, want := h.EndTimeMs()-h.StartTimeMs(), int64(lr.Run.DurationS*1000); got != want {
					t.Errorf("%s %s: lasts %d ms, want %d", lr.Label, p, got, want)
				}
				n++
			}
		}
		if h, err := rd.NextIntervalHistogram(); h != nil || (err != nil && err != io.EOF) {
			t.Errorf("an interval too many: %v, %v", h, err)
		}
	}
	if err := metrics.WriteHistogramLog(io.Discard, nil); err == nil {
		t.Error("a log of no run was written")
	}
}

// TestHistogramLogSeconds: each second of the series with histograms is an
// interval of its own, tagged phase.1s, from T−1 to T seconds after the
// start (the partial last one ending with the run), and the log is in the
// order of the intervals' starts.
func TestHistogramLogSeconds(t *testing.T) {
	r := compareRun(t, 50, 0, 7*time.Millisecond)
	r.Started = r.Started.Add(250 * time.Millisecond)
	rng := rand.New(rand.NewPCG(4, 4))
	rec := metrics.NewRecorder(2, r.Started)
	for sec := 1; sec <= 13; sec++ {
		for i := range 40 * sec {
			rec.Record(i, playedSample(rng, sec > 2))
		}
		s := rec.Tick(r.Started.Add(time.Duration(sec) * time.Second))
		s.Partial = sec == 13
		r.Series = append(r.Series, s)
	}
	r.Ended = r.Started.Add(12*time.Second + 300*time.Millisecond)
	// A record made before the standard encoding: the log has it in the
	// standard one.
	r.Series[0].TotalHist = oldSparse(mustDecodeSecond(t, r.Series[0].TotalHist))

	var buf bytes.Buffer
	if err := metrics.WriteHistogramLog(&buf, []metrics.LabeledRun{{Label: "a", Run: r}}); err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	rd := hdr.NewHistogramLogReader(&buf)
	var seconds [2]int
	var last int64
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil || h == nil {
			break
		}
		if h.StartTimeMs() < last {
			t.Errorf("%s starts at %d ms, before the interval above it (%d ms)", h.Tag(), h.StartTimeMs(), last)
		}
		last = h.StartTimeMs()
		var i int
		var enc string
		switch h.Tag() {
		case "handshake.1s":
			i, enc = 0, r.Series[seconds[0]].HandshakeHist
		case "total.1s":
			i, enc = 1, r.Series[seconds[1]].TotalHist
		default:
			continue
		}
		s := r.Series[seconds[i]]
		seconds[i]++
		if want := mustDecodeSecond(t, enc); !h.Equals(want) {
			t.Errorf("%s second %d: read back %d values, the record's second has %d", h.Tag(), s.T, h.TotalCount(), want.TotalCount())
		}
		from := r.Started.Add(time.Duration(s.T-1) * time.Second)
		to := from.Add(time.Second)
		if s.Partial {
			to = r.Ended
		}
		if h.StartTimeMs() != from.UnixMilli() || h.EndTimeMs() != to.UnixMilli() {
			t.Errorf("%s second %d: %d–%d ms, want %d–%d", h.Tag(), s.T, h.StartTimeMs(), h.EndTimeMs(), from.UnixMilli(), to.UnixMilli())
		}
	}
	if seconds != [2]int{13, 13} {
		t.Errorf("read %v handshake and total seconds, want 13 each", seconds)
	}
	if !strings.Contains(log, "-tag total.1s") {
		t.Error("the log does not say how to read one series")
	}
}

func mustDecodeSecond(t *testing.T, enc string) *hdr.Histogram {
	t.Helper()
	h, err := metrics.DecodeSecondHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
