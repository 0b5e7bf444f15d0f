// Package analysis holds the figures derived from run records: the
// comparison of two runs, Siege's terms, latency curves, the generator's
// CPU per GB. It reads records (package metrics) and writes nothing.
package analysis

import (
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// RunComparison is every metric of two runs side by side, in the layout of an
// A/B impact table ("with WAF | without WAF | impact"): B is the baseline,
// Delta is A − B and DeltaPct is (A − B) ÷ B in percent.
type RunComparison struct {
	A    string  `json:"a"` // what A is (a file, a campaign cell)
	B    string  `json:"b"`
	Rows []Delta `json:"rows"`
}

// Delta is one metric of a RunComparison.
type Delta struct {
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"` // "" for counts
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	Delta  float64 `json:"delta"` // A − B
	// DeltaPct is (A − B) ÷ B × 100; nil when B is 0.
	DeltaPct *float64 `json:"delta_pct"`
	// Note says how the metric is derived, when that is not obvious.
	Note string `json:"note,omitempty"`
}

// compared is one metric of CompareRuns: its name, unit, derivation and value.
type compared struct {
	metric, unit, note string
	value              func(*metrics.Run) float64
	// has reports whether a run has the metric (nil: every run has it).
	has func(*metrics.Run) bool
}

// comparedMetrics lists CompareRuns' rows in order.
func comparedMetrics() []compared {
	ms := []compared{
		{metric: "transactions", value: func(r *metrics.Run) float64 { return float64(r.Transactions) }},
		{metric: "availability", unit: "%", note: "successful ÷ (successful + failed)",
			value: func(r *metrics.Run) float64 { return availability(r) * 100 }},
		{metric: "elapsed", unit: "s", note: "the steady window measured",
			value: func(r *metrics.Run) float64 { return r.DurationS }},
		{metric: "data transferred", unit: "MB",
			note:  "response bodies of successful transactions; MB = 2^20 bytes, as Siege counts",
			value: func(r *metrics.Run) float64 { return float64(r.Bytes.Payload) / (1 << 20) }},
		{metric: "response time", unit: "ms", note: "mean total latency of successful transactions",
			value: func(r *metrics.Run) float64 { return r.Percentiles(vocab.PhaseTotal).Mean / 1e3 }},
		{metric: "transaction rate", unit: "/s", value: transactionRate},
		{metric: "throughput", unit: "MB/s",
			value: func(r *metrics.Run) float64 { return perSecond(r, float64(r.Bytes.Payload)/(1<<20)) }},
		{metric: "concurrency", note: "mean transactions in flight by Little's law: transaction rate × mean response time",
			value: concurrency},
		{metric: "successful", value: func(r *metrics.Run) float64 { return float64(r.Transactions) }},
		{metric: "failed", value: func(r *metrics.Run) float64 { return float64(r.Errors.Total) }},
		{metric: "longest", unit: "ms",
			value: func(r *metrics.Run) float64 { return float64(r.Percentiles(vocab.PhaseTotal).Max) / 1e3 }},
		{metric: "shortest", unit: "ms",
			value: func(r *metrics.Run) float64 { return float64(r.Percentiles(vocab.PhaseTotal).Min) / 1e3 }},
	}
	for _, phase := range []vocab.Phase{vocab.PhaseConnect, vocab.PhaseHandshake, vocab.PhaseTTFB, vocab.PhaseTotal} {
		for _, q := range []struct {
			name string
			get  func(metrics.Percentiles) int64
		}{
			{"p50", func(p metrics.Percentiles) int64 { return p.P50 }},
			{"p90", func(p metrics.Percentiles) int64 { return p.P90 }},
			{"p99", func(p metrics.Percentiles) int64 { return p.P99 }},
		} {
			c := compared{metric: phase.String() + " " + q.name, unit: "ms",
				value: func(r *metrics.Run) float64 { return float64(q.get(r.Percentiles(phase))) / 1e3 }}
			if phase == vocab.PhaseConnect { // none over QUIC: no row rather than zeros
				c.has = func(r *metrics.Run) bool { return r.Transport != "quic" }
			}
			ms = append(ms, c)
		}
	}
	return append(append(ms,
		compared{metric: "CPS", unit: "/s", value: func(r *metrics.Run) float64 { return metrics.Value(r.CPS) },
			has: func(r *metrics.Run) bool { return r.CPS != nil }},
		compared{metric: "Gbps", unit: "Gbps", value: func(r *metrics.Run) float64 { return metrics.Value(r.Gbps) },
			has: func(r *metrics.Run) bool { return r.HasThroughput() }},
		compared{metric: "generator CPU", unit: "%",
			value: func(r *metrics.Run) float64 { return r.Client.Utilization * 100 }},
	), tcpCompared()...)
}

// CompareRuns sets every metric of a beside b's: the counts, availability,
// elapsed time, data, response time, rates, concurrency, longest and
// shortest transaction, p50/p90/p99 of each phase, CPS and Gbps (when both
// runs have them), and the generator's CPU. a and b name the runs.
func CompareRuns(a, b string, ra, rb *metrics.Run) *RunComparison {
	c := &RunComparison{A: a, B: b}
	for _, m := range comparedMetrics() {
		if m.has != nil && (!m.has(ra) || !m.has(rb)) {
			continue
		}
		c.Rows = append(c.Rows, NewDelta(m.metric, m.unit, m.value(ra), m.value(rb), m.note))
	}
	return c
}

// NewDelta returns the row of a metric whose values are a and b.
func NewDelta(metric, unit string, a, b float64, note string) Delta {
	d := Delta{Metric: metric, Unit: unit, A: a, B: b, Delta: a - b, Note: note}
	if b != 0 {
		pct := (a - b) / b * 100
		d.DeltaPct = &pct
	}
	return d
}

// Row returns the comparison's row of metric, if it has one.
func (c *RunComparison) Row(metric string) (Delta, bool) {
	for _, d := range c.Rows {
		if d.Metric == metric {
			return d, true
		}
	}
	return Delta{}, false
}

func perSecond(r *metrics.Run, v float64) float64 {
	if r.DurationS <= 0 {
		return 0
	}
	return v / r.DurationS
}

// availability is the steady window's successful transactions ÷ all its
// transactions (successful and failed), 0..1; 0 when there were none.
func availability(r *metrics.Run) float64 {
	n := r.Transactions + r.Errors.Total
	if n == 0 {
		return 0
	}
	return float64(r.Transactions) / float64(n)
}

// transactionRate is successful transactions per second of the steady
// window (the CPS of the CPS engine, the requests per second of the
// throughput engine).
func transactionRate(r *metrics.Run) float64 { return perSecond(r, float64(r.Transactions)) }

// concurrency is the mean number of transactions in flight, by Little's
// law: the transaction rate times the mean total latency (in seconds). In a
// closed loop it approaches the configured concurrency; far below it, the
// generator rather than the target was waiting.
func concurrency(r *metrics.Run) float64 {
	return transactionRate(r) * r.Percentiles(vocab.PhaseTotal).Mean / 1e6
}
