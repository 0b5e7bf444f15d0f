package analysis_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/metrics/metricstest"
)

func TestCompare(t *testing.T) {
	// A: 9000 transactions of 20 ms and 1000 failures; B: 10000 of 10 ms.
	a, b := metricstest.Run(t, 9000, 1000, 20*time.Millisecond), metricstest.Run(t, 10000, 0, 10*time.Millisecond)
	c := analysis.CompareRuns("a", "b", a, b)
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
	// Over QUIC there is no connect phase: no row, rather than zeros.
	b.Transport = "quic"
	if d, ok := analysis.CompareRuns("a", "b", a, b).Row("connect p50"); ok {
		t.Errorf("a connect row beside a run over QUIC: %+v", d)
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
		d := analysis.NewDelta("m", "", tt.a, tt.b, "")
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
	q := analysis.Quantiles(h, []float64{0, 50, 90, 99.9, 100})
	for i, want := range []int64{1, 500, 900, 999, 1000} {
		if got := q[i].US; got != want {
			t.Errorf("p%v = %d, want %d", q[i].Percentile, got, want)
		}
	}
	if got := analysis.Quantiles(metrics.NewHistogram(), analysis.CurvePercentiles); got != nil {
		t.Errorf("an empty histogram has quantiles %v", got)
	}
	// The curve's percentiles rise, and end at p99.999.
	ps := analysis.CurvePercentiles
	for i := 1; i < len(ps); i++ {
		if ps[i] <= ps[i-1] {
			t.Errorf("CurvePercentiles[%d] = %v after %v", i, ps[i], ps[i-1])
		}
	}
	if got, want := ps[len(ps)-1], 99.999; got != want {
		t.Errorf("last percentile %v, want %v", got, want)
	}
}
