package promexp

import (
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
	descTgtHS      = prometheus.NewDesc(Namespace+"_target_handshakes_total", "Full TLS handshakes the reference target completed, per listener.", targetLabels, nil)
	descTgtResumed = prometheus.NewDesc(Namespace+"_target_resumed_total", "Resumed TLS sessions, per listener.", targetLabels, nil)
	descTgtReqs    = prometheus.NewDesc(Namespace+"_target_requests_total", "HTTP requests served, per listener.", targetLabels, nil)
	descTgtHSErr   = prometheus.NewDesc(Namespace+"_target_handshake_errors_total", "Handshakes that failed after the client sent something, per listener.", targetLabels, nil)
	descTgtConns   = prometheus.NewDesc(Namespace+"_target_connections_total", "TCP connections accepted, per listener.", targetLabels, nil)
	descTgtFaults  = prometheus.NewDesc(Namespace+"_target_faults_injected_total", "Faults injected, per listener and kind.", append(targetLabels, "kind"), nil)
)

// Target registers the reference target's counters, read from stats (a
// target.Target's Stats) at each scrape.
func (e *Exporter) Target(stats func() []target.Stats) {
	e.reg.MustRegister(targetCollector{stats})
}

// Describe implements prometheus.Collector.
func (targetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTgtHS, descTgtResumed, descTgtReqs, descTgtHSErr, descTgtConns, descTgtFaults} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c targetCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.stats() {
		k := func(d *prometheus.Desc, v int64, more ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{s.Profile, s.Address}, more...)...)
		}
		k(descTgtHS, s.Handshakes)
		k(descTgtResumed, s.Resumed)
		k(descTgtReqs, s.Requests)
		k(descTgtHSErr, s.HandshakeErrors)
		k(descTgtConns, s.Connections)
		for kind, n := range s.Injected {
			k(descTgtFaults, n, kind)
		}
	}
}
