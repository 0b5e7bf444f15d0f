package impact

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tlsbench/tlsbench/bench/metrics"
)

// tcpMetrics sets the kernel's account of the two sides' connections side
// by side, pooled over the rounds; nil when a run of either side has none
// (an older record, not Linux).
func tcpMetrics(baseline, candidate []*metrics.Run) ([]Metric, error) {
	type pooled struct {
		retrans, syn, resets, txns int64
		rtt                        *hdr.Histogram
	}
	pool := func(runs []*metrics.Run) (*pooled, error) {
		p := &pooled{rtt: metrics.NewHistogram()}
		for _, r := range runs {
			t := r.TCP
			if t == nil || t.Unavailable != "" {
				return nil, nil
			}
			p.retrans += t.Retransmits
			p.syn += t.SynRetransmits
			p.resets += t.ResetsReceived
			p.txns += r.Transactions + r.Errors.Total
			if t.RTTHist == "" {
				continue
			}
			h, err := hdr.Decode([]byte(t.RTTHist))
			if err != nil {
				return nil, fmt.Errorf("impact: tcp rtt histogram: %w", err)
			}
			p.rtt.Merge(h)
		}
		return p, nil
	}
	b, err := pool(baseline)
	if err != nil || b == nil {
		return nil, err
	}
	c, err := pool(candidate)
	if err != nil || c == nil {
		return nil, err
	}
	per := func(n, txns int64) float64 {
		if txns == 0 {
			return 0
		}
		return float64(n) / float64(txns) * 100
	}
	var out []Metric
	add := func(key, label, unit string, bv, cv float64) {
		out = append(out, newMetric(key, label, unit, bv, cv))
	}
	add("retransmits", "TCP retransmits", "", float64(b.retrans), float64(c.retrans))
	add("retransmit_rate", "TCP retransmits per transaction", "%", per(b.retrans, b.txns), per(c.retrans, c.txns))
	add("syn_retransmits", "SYN retransmits", "", float64(b.syn), float64(c.syn))
	add("resets_received", "Resets received", "", float64(b.resets), float64(c.resets))
	for _, q := range []float64{50, 99} {
		add(fmt.Sprintf("rtt_p%g_ms", q), fmt.Sprintf("TCP RTT p%g", q), "ms",
			float64(metrics.ValueAtPercentile(b.rtt, q))/1000, float64(metrics.ValueAtPercentile(c.rtt, q))/1000)
	}
	return out, nil
}

// tcpByKey keys the TCP metrics for the JSON; nil when there are none.
func tcpByKey(ms []Metric) map[string]Metric {
	if len(ms) == 0 {
		return nil
	}
	return byKey(ms)
}
