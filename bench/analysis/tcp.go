package analysis

import "github.com/tlsbench/tlsbench/bench/metrics"

// hasTCP reports whether a run has the kernel's account of its connections.
func hasTCP(r *metrics.Run) bool { return r.TCP != nil && r.TCP.Unavailable == "" }

// tcpCompared are CompareRuns' rows of the connections' TCP (when both runs
// have it): retransmitted segments, per transaction, SYNs, resets received,
// smoothed RTT p50 and p99.
func tcpCompared() []compared {
	return []compared{
		{metric: "TCP retransmits", has: hasTCP, value: func(r *metrics.Run) float64 { return float64(r.TCP.Retransmits) }},
		{metric: "TCP retransmits per transaction", unit: "%", has: hasTCP,
			note:  "segments the client retransmitted ÷ transactions (TCP_INFO at each close)",
			value: func(r *metrics.Run) float64 { return r.RetransmitRate() * 100 }},
		{metric: "SYN retransmits", has: hasTCP,
			value: func(r *metrics.Run) float64 { return float64(r.TCP.SynRetransmits) }},
		{metric: "resets received", has: hasTCP,
			value: func(r *metrics.Run) float64 { return float64(r.TCP.ResetsReceived) }},
		{metric: "TCP RTT p50", unit: "ms", has: hasTCP,
			value: func(r *metrics.Run) float64 { return float64(r.TCP.RTT.P50) / 1e3 }},
		{metric: "TCP RTT p99", unit: "ms", has: hasTCP,
			value: func(r *metrics.Run) float64 { return float64(r.TCP.RTT.P99) / 1e3 }},
	}
}
