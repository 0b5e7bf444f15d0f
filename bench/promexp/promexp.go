// Package promexp exports a run's live figures, a campaign's progress and
// the reference target's counters in the Prometheus exposition format,
// through the Prometheus client library (client_golang), on a bounded HTTP
// listener (Serve).
//
// Nothing is counted per transaction: a run's collector reads the engine's
// own recorder (engine.Live) when Prometheus scrapes, and turns its HDR
// histograms into Prometheus histograms with classic buckets
// (ClassicBuckets) and native ones (NativeSchema). A finished run's figures
// are frozen at its end (Run.Finish) and stay exposed, so that the final
// scrape sees the record's counts.
package promexp

import (
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tlsbench/tlsbench/bench/engine"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// namespace prefixes every metric name.
const namespace = "tlsbench"

// runLabelNames are the labels of a run's metrics (RunLabels).
var runLabelNames = []string{"engine", "protocol", "profile", "dut", "agent", "shard", "method_phase", "run"}

// RunLabels name a run in its metrics. Empty ones are left out by
// Prometheus (an empty label is no label).
type RunLabels struct {
	Engine, Profile, DUT string
	Protocol             string // http/1.1, http/2
	// Agent and Shard name a distributed run's agent ("" and -1 for none).
	Agent string
	Shard int
	// Phase and Run are a campaign's: its method phase and the run's
	// number in the campaign (0 outside one).
	Phase string
	Run   int
}

func (l RunLabels) values() []string {
	shard, run := "", ""
	if l.Shard >= 0 && l.Agent != "" {
		shard = strconv.Itoa(l.Shard)
	}
	if l.Run > 0 {
		run = strconv.Itoa(l.Run)
	}
	return []string{l.Engine, l.Protocol, l.Profile, l.DUT, l.Agent, shard, l.Phase, run}
}

// KeepFinished is how many finished runs stay exposed (a campaign makes
// hundreds; Prometheus has kept what it scraped of the older ones).
const KeepFinished = 8

// Exporter holds the registry a /metrics endpoint serves: the runs of this
// process, the generator's CPU, and what else is registered (Campaign,
// Target).
type Exporter struct {
	reg  *prometheus.Registry
	mu   sync.Mutex
	runs []*Run // in the order begun; finished ones are frozen
	cpu0 time.Duration
}

// New returns an exporter with the run collector, the generator's CPU and
// Go's and the process's own collectors registered.
func New() *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry()}
	e.cpu0, _ = processCPU()
	e.reg.MustRegister(runCollector{e}, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return e
}

// Registry is the exporter's registry, for further collectors.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Handler serves the registry (text or protobuf, as the scraper asks; the
// protobuf carries the native histograms), at most 4 scrapes at once, each
// within 10 s.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{
		MaxRequestsInFlight: 4, Timeout: 10 * time.Second, EnableOpenMetrics: false,
	})
}

// Run is one run's metrics: begun with its labels, live once the load
// starts (Run.Live), frozen at its end (Run.Finish).
type Run struct {
	e      *Exporter
	labels []string
	mu     sync.Mutex
	live   *engine.Live
	cpu0   time.Duration
	frozen []prometheus.Metric // once finished
	done   bool
	// The last live collection, reused by scrapes within MinInterval.
	cached   []prometheus.Metric
	cachedAt time.Time
}

// minInterval is the least time between two readings of a live run's
// recorder: scrapes closer together (several scrapers) get the same
// values, so the recorder is read at most this often.
const minInterval = 500 * time.Millisecond

// Begin adds a run. Set Live as the run's runner.Spec.Live, and call Finish
// with its record.
func (e *Exporter) Begin(l RunLabels) *Run {
	r := &Run{e: e, labels: l.values()}
	e.mu.Lock()
	e.runs = append(e.runs, r)
	e.mu.Unlock()
	return r
}

// Live receives the run's recorder (engine.Config.Live).
func (r *Run) Live(lv engine.Live) {
	cpu, _ := processCPU()
	r.mu.Lock()
	r.live, r.cpu0, r.cached, r.cachedAt = &lv, cpu, nil, time.Time{}
	r.mu.Unlock()
}

// Finish freezes the run's metrics at their final values, with what only
// the record knows (rec may be nil: a run that could not be made), and
// keeps the last KeepFinished finished runs exposed.
func (r *Run) Finish(rec *metrics.Run) {
	r.mu.Lock()
	var ms []prometheus.Metric
	add := func(m prometheus.Metric) { ms = append(ms, m) }
	r.collect(add, true)
	// Only the record has the kernel's TCP account of the run's connections
	// (Linux), when it was measured.
	if rec != nil && rec.TCP != nil && rec.TCP.Unavailable == "" {
		c := func(d *prometheus.Desc, v int64) {
			add(prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), r.labels...))
		}
		c(descRetransmits, rec.TCP.Retransmits)
		c(descSynRetransmits, rec.TCP.SynRetransmits)
		c(descResetsReceived, rec.TCP.ResetsReceived)
	}
	r.frozen, r.live, r.done, r.cached = ms, nil, true, nil
	r.mu.Unlock()

	e := r.e
	e.mu.Lock()
	defer e.mu.Unlock()
	finished := 0
	for i := len(e.runs) - 1; i >= 0; i-- {
		if e.runs[i].isDone() {
			finished++
			if finished > KeepFinished {
				e.runs = slices.Delete(e.runs, i, i+1)
			}
		}
	}
}

func (r *Run) isDone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

var (
	descTransactions = runDesc("transactions_total",
		"Successful transactions that started in the steady window (the record's transactions).")
	descWholeTxns = runDesc("whole_run_transactions_total",
		"Successful transactions of the whole run (warm-up and drain included).")
	descWholeErrs = runDesc("whole_run_errors_total",
		"Failed transactions of the whole run (warm-up and drain included).")
	descErrors = runDesc("errors_total",
		"Failed transactions that started in the steady window, by error class.", "class")
	descHandshakes = runDesc("handshakes_total", "TLS handshakes the client completed, whole run.")
	descResumed    = runDesc("resumed_total",
		"Connections that resumed a TLS session (an error: the profiles forbid it), steady window.")
	descOpened = runDesc("connections_opened_total",
		"Connections opened by transactions that started in the steady window.")
	descPayload = runDesc("payload_bytes_total", "Response body bytes of successful transactions, steady window.")
	descWireIn  = runDesc("wire_in_bytes_total", "TLS bytes read from the sockets, steady window.")
	descWireOut = runDesc("wire_out_bytes_total", "TLS bytes written to the sockets, steady window.")
	descLatency = runDesc("latency_seconds",
		"Latency of successful transactions that started in the steady window, by phase.", "phase")
	descHeld = runDesc("connections_held",
		"Connections open now (operations that count them; 0 once the run has ended).")
	descHeldPeak = runDesc("connections_held_peak", "The most connections open at once so far.")
	descRunning  = runDesc("run_running", "1 while the run's load goes, 0 once it has ended.")
	descSteady   = runDesc("run_steady", "1 while the run is in its steady window.")
	descUtil     = runDesc("generator_utilization",
		"This process's CPU since the load started ÷ (wall time × cores), 0..1.")
	descCPU = prometheus.NewDesc(namespace+"_generator_cpu_seconds_total",
		"This process's user and system CPU (the generator's; a target in the same process included).", nil, nil)
	descCores = prometheus.NewDesc(namespace+"_generator_cores", "The cores this process may use.", nil, nil)
	// The record's TCP counts, exposed when the run ends.
	descRetransmits = runDesc("tcp_retransmits_total",
		"TCP segments the run's connections retransmitted, SYNs included "+
			"(TCP_INFO at each close; exposed when the run ends).")
	descSynRetransmits = runDesc("tcp_syn_retransmits_total",
		"SYN retransmissions of the run's connects (exposed when the run ends).")
	descResetsReceived = runDesc("tcp_resets_received_total",
		"The run's connections ended by the peer's RST (exposed when the run ends).")
)

func runDesc(name, help string, more ...string) *prometheus.Desc {
	return prometheus.NewDesc(namespace+"_"+name, help, append(slices.Clone(runLabelNames), more...), nil)
}

// phases are the latency phases exposed.
var phases = []vocab.Phase{
	vocab.PhaseConnect,
	vocab.PhaseHandshake,
	vocab.PhaseTTFB,
	vocab.PhaseTransfer,
	vocab.PhaseTotal,
	vocab.PhaseUncorrected,
}

// classes are the error classes always exposed (0 when none), so that
// rates and dashboards have a series; others appear when they occur.
var classes = []vocab.Class{
	vocab.ClassRefused,
	vocab.ClassConnectTimeout,
	vocab.ClassReset,
	vocab.ClassHandshakeTimeout,
	vocab.ClassCertificate,
	vocab.ClassClientCertRefused,
	vocab.ClassCertName,
	vocab.ClassMismatch,
	vocab.ClassResumed,
	vocab.ClassNotResumed,
	vocab.ClassStatus,
	vocab.ClassBodySize,
	vocab.ClassReadTimeout,
	vocab.ClassEOF,
	vocab.ClassOther,
}

// collect sends the run's metrics; r.mu is held. Before the load starts a
// run has none; once finished, its frozen ones; final makes those.
func (r *Run) collect(ch func(prometheus.Metric), final bool) {
	if r.done {
		for _, m := range r.frozen {
			ch(m)
		}
		return
	}
	if r.live == nil {
		return
	}
	lv := r.live
	s := lv.Recorder.Snapshot()
	c := func(d *prometheus.Desc, v float64, more ...string) {
		ch(prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append(slices.Clone(r.labels), more...)...))
	}
	g := func(d *prometheus.Desc, v float64) {
		ch(prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, r.labels...))
	}
	c(descTransactions, float64(s.OK))
	c(descWholeTxns, float64(s.AllOK))
	c(descWholeErrs, float64(s.AllErrors))
	for _, k := range classes {
		c(descErrors, float64(s.Errors[k]), string(k))
	}
	for k, v := range s.Errors {
		if !slices.Contains(classes, k) {
			c(descErrors, float64(v), string(k))
		}
	}
	c(descHandshakes, float64(s.Handshakes))
	c(descResumed, float64(s.Errors[vocab.ClassResumed]))
	c(descOpened, float64(s.Opened))
	c(descPayload, float64(s.Bytes.Payload))
	c(descWireIn, float64(s.Bytes.WireIn))
	c(descWireOut, float64(s.Bytes.WireOut))
	for _, p := range phases {
		ch(newHistogram(descLatency, s.Hist[p], append(slices.Clone(r.labels), p.String())...))
	}
	now := time.Now()
	var held, peak int64
	if lv.OpenConns != nil {
		held, peak = lv.OpenConns()
	}
	if final {
		held = 0
	}
	g(descHeld, float64(held))
	g(descHeldPeak, float64(peak))
	g(descRunning, b2f(!final))
	g(descSteady, b2f(!final && !now.Before(lv.SteadyStart) && now.Before(lv.End)))
	if cpu, ok := processCPU(); ok {
		wall := now.Sub(lv.Started)
		if wall > 0 {
			g(descUtil, min(1, float64(cpu-r.cpu0)/float64(wall)/float64(runtime.GOMAXPROCS(0))))
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// runCollector collects every run of an exporter at scrape time. It is
// unchecked (its label values vary with the runs).
type runCollector struct{ e *Exporter }

func (runCollector) Describe(chan<- *prometheus.Desc) {}

func (c runCollector) Collect(ch chan<- prometheus.Metric) {
	c.e.mu.Lock()
	runs := slices.Clone(c.e.runs)
	c.e.mu.Unlock()
	send := func(m prometheus.Metric) { ch <- m }
	for _, r := range runs {
		r.mu.Lock()
		switch {
		case r.done || r.live == nil:
			r.collect(send, false)
		case time.Since(r.cachedAt) < minInterval:
			for _, m := range r.cached {
				ch <- m
			}
		default:
			r.cached = r.cached[:0]
			r.collect(func(m prometheus.Metric) { r.cached = append(r.cached, m); ch <- m }, false)
			r.cachedAt = time.Now()
		}
		r.mu.Unlock()
	}
	if cpu, ok := processCPU(); ok {
		ch <- prometheus.MustNewConstMetric(descCPU, prometheus.CounterValue, cpu.Seconds())
	}
	ch <- prometheus.MustNewConstMetric(descCores, prometheus.GaugeValue, float64(runtime.GOMAXPROCS(0)))
}

// processCPU is this process's user and system CPU so far. (The package
// builds only on Unix: bench/metrics writes through bench/outfile.)
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
