package promexp

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlsbench/tlsbench/bench/target"
)

// targetCollector exposes the reference target's per-listener counters
// (the admin /stats), read at scrape time.
type targetCollector struct {
	stats func() []target.Stats
}

var targetLabels = []string{"profile", "address"}

var (
	descTgtHS = targetDesc("target_handshakes_total",
		"Full TLS handshakes the reference target completed, per listener.")
	descTgtResumed = targetDesc("target_resumed_total", "Resumed TLS sessions, per listener.")
	descTgtReqs    = targetDesc("target_requests_total", "HTTP requests served, per listener.")
	descTgtHSErr   = targetDesc("target_handshake_errors_total",
		"Handshakes that failed after the client sent something, per listener.")
	descTgtConns  = targetDesc("target_connections_total", "TCP connections accepted, per listener.")
	descTgtFaults = targetDesc("target_faults_injected_total", "Faults injected, per listener and kind.", "kind")
	descTgtReqsBy = targetDesc("target_requests_by_protocol_total",
		"HTTP requests served, per listener and protocol (http/1.1, http/2, http/3).", "protocol")
)

// targetDesc describes a counter of the target's listeners (labels
// targetLabels, then more).
func targetDesc(name, help string, more ...string) *prometheus.Desc {
	return prometheus.NewDesc(namespace+"_"+name, help, append(slices.Clone(targetLabels), more...), nil)
}

// Target registers the reference target's counters, read from stats (a
// target.Target's Stats) at each scrape.
func (e *Exporter) Target(stats func() []target.Stats) {
	e.reg.MustRegister(targetCollector{stats})
}

// Describe implements prometheus.Collector.
func (targetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descTgtHS, descTgtResumed, descTgtReqs, descTgtReqsBy, descTgtHSErr, descTgtConns, descTgtFaults,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c targetCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.stats() {
		k := func(d *prometheus.Desc, v int64, more ...string) {
			labels := append([]string{s.Profile, s.Address}, more...)
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
		}
		k(descTgtHS, s.Handshakes)
		k(descTgtResumed, s.Resumed)
		k(descTgtReqs, s.Requests)
		k(descTgtHSErr, s.HandshakeErrors)
		k(descTgtConns, s.Connections)
		for proto, n := range s.ByProtocol {
			k(descTgtReqsBy, n, proto)
		}
		for kind, n := range s.Injected {
			k(descTgtFaults, n, kind)
		}
	}
}
