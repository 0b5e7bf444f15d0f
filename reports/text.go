// Package reports renders run records and campaigns for people: text
// summaries, the published table with its methodology appendix and charts
// (text, Markdown, CSV, JSON, self-contained HTML), and comparisons of two
// runs or campaigns. Every output but CSV and JSON is laid out once as a
// Document and rendered by one renderer per format. It only lays out: the
// figures are bench/analysis's, bench/stats's and bench/impact's, the
// judgements bench/method's.
package reports

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tlsbench/tlsbench/bench/analysis"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// Micros formats a microsecond value with a readable unit.
func Micros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2f ms", us/1e3)
	}
	return fmt.Sprintf("%.0f µs", us)
}

// RunSummary lays a run's summary out in fixed columns: target,
// negotiated parameters, rate, errors by class, latency percentiles per
// phase and the client's CPU.
func RunSummary(r *metrics.Run) Document {
	w := &strings.Builder{}
	summaryTarget(w, r)
	summaryRate(w, r)
	summaryErrors(w, r)
	summaryLatency(w, r)
	summaryObjects(w, r)
	summaryCPU(w, r)
	w.WriteString(deviceSummary(r))
	return Document{title: r.Profile, blocks: []block{pre(w.String())}}
}

// summaryTarget is the summary's first lines: the profile, the target and
// what was negotiated.
func summaryTarget(w *strings.Builder, r *metrics.Run) {
	fmt.Fprintf(w, "\n%s → %s", r.Profile, r.Target.Address)
	if r.Target.DUT != "" {
		fmt.Fprintf(w, " (DUT %s)", r.Target.DUT)
	}
	if r.Target.InProcess {
		fmt.Fprint(w, " (in-process reference target)")
	}
	if r.Target.InsecureSkipVerify {
		fmt.Fprint(w, " [chain verification skipped]")
	}
	if !r.Complete {
		fmt.Fprint(w, " [INTERRUPTED: incomplete]")
	}
	fmt.Fprintln(w)
	n := r.Negotiated
	if n.Version != "" {
		suite := n.OpenSSL
		if !n.SuitePinned {
			suite += " (observed)"
		}
		fmt.Fprintf(w, "  negotiated   %s %s, group %s, certificate %s\n", n.Version, suite, n.Group, n.CertKey)
	}
	fmt.Fprintf(w, "  protocol     %s\n", vocab.ProtocolTitle(r.Protocol))
}

// summaryRate is the rate the engine reached, the open loop's schedule and
// how connections closed.
func summaryRate(w *strings.Builder, r *metrics.Run) {
	switch {
	case r.CPS != nil:
		fmt.Fprintf(w, "  cps          %.1f (%d transactions in %.1f s; %d errors)\n",
			*r.CPS, r.Transactions, r.DurationS, r.Errors.Total)
	case r.HasThroughput():
		fmt.Fprintf(w, "  throughput   %.3f Gbps payload, %.3f Gbps wire (%d requests in %.1f s, %.1f/s; %d errors)\n",
			metrics.Value(r.Gbps), metrics.Value(r.WireGbps), metrics.Value(r.Requests), r.DurationS,
			metrics.Value(r.RPS), r.Errors.Total)
		fmt.Fprintf(w, "  bytes        %d payload (+%d partial), %d wire in, %d wire out; "+
			"%d connections opened (whole run %d)\n",
			r.Bytes.Payload, r.Bytes.PayloadPartial, r.Bytes.WireIn, r.Bytes.WireOut,
			r.ConnectionsOpened, r.Whole.ConnectionsOpened)
		if n := metrics.Value(r.Reconnects); n > 0 {
			fmt.Fprintf(w, "  reconnects   %s: the device closed kept-alive connections, "+
				"so the window has handshakes (accept.max_reconnect_share)\n", reconnects(r))
		}
	}
	if r.Load.Mode == "open" {
		fmt.Fprintf(w, "  open loop    %s/s offered; %d late, %d dropped", strconv.FormatFloat(r.Load.Rate, 'f', -1, 64),
			r.Load.Late, r.Load.Dropped)
		if r.Load.Scheduled > 0 {
			fmt.Fprintf(w, " (%.1f%% of %d scheduled)", r.Load.DroppedShare*100, r.Load.Scheduled)
		}
		fmt.Fprintln(w)
	}
	if r.Closes != nil {
		fmt.Fprintf(w, "  closes       %s\n", closesText(r))
	}
	if p := r.Preflight; p != nil && p.OK && len(p.FailedAttempts) > 0 {
		fmt.Fprintf(w, "  preflight    ok; %s (%s)\n", p.Tries(), p.FailedAttempts[0].Error)
	}
}

// closesText is the record's closes in the words of its transport. Over
// HTTP/1.x the client waits for the server's FIN after its close_notify
// (the deadline coming first, it closes first); over HTTP/2 the client
// closes after its GOAWAY unless the server had closed, and no
// close_notify is counted; QUIC has neither FIN nor close_notify, and the
// client ends each connection with a CONNECTION_CLOSE (http3's cps counts
// no other close).
func closesText(r *metrics.Run) string {
	c := r.Closes
	switch r.ProtocolName() {
	case "http/2":
		return fmt.Sprintf("server first %d, client first (GOAWAY, then close) %d", c.ServerFirst, c.ClientFirst)
	case "http/3":
		return fmt.Sprintf("client first (CONNECTION_CLOSE) %d", c.ClientFirst)
	}
	return fmt.Sprintf("server first %d, client first (deadline) %d, no close_notify %d", c.ServerFirst,
		c.ClientFirst, c.NoCloseNotify)
}

// reconnects is Run.Reconnects and its share of the requests ("-": none).
func reconnects(r *metrics.Run) string {
	if r.Reconnects == nil {
		return "-"
	}
	n, req := *r.Reconnects, metrics.Value(r.Requests)
	return fmt.Sprintf("%d (%.1f%% of requests)", n, float64(n)/float64(max(req, 1))*100)
}

// summaryErrors is a line per error class, in the classes' order.
func summaryErrors(w *strings.Builder, r *metrics.Run) {
	for _, c := range slices.Sorted(maps.Keys(r.Errors.ByClass)) {
		fmt.Fprintf(w, "  error        %-20s %d  %s\n", c, r.Errors.ByClass[c], r.Errors.Examples[c])
	}
}

// summaryLatency is the table of percentiles per phase and the warnings
// that qualify them.
func summaryLatency(w *strings.Builder, r *metrics.Run) {
	// A run that dropped starts has latencies that are lower bounds: each
	// value says so (≥) with the share of starts dropped beside it.
	bound, dropped := "", ""
	if r.Load.LatencyLowerBound {
		bound = "≥"
		dropped = fmt.Sprintf("  (%.1f%% of starts dropped)", r.Load.DroppedShare*100)
	}
	val := func(v int64) string { return bound + Micros(float64(v)) }
	fmt.Fprintf(w, "  %-12s %9s %9s %9s %9s %9s\n", "latency", "p50", "p90", "p99", "p99.9", "max")
	phases := slices.Clone(latencyPhases)
	if r.Percentiles(vocab.PhaseScheduleLag).Count > 0 {
		phases = append(phases, vocab.PhaseScheduleLag)
	}
	for _, ph := range phases {
		l := r.Percentiles(ph)
		if ph == vocab.PhaseConnect && r.Transport == "quic" {
			fmt.Fprintf(w, "  %-12s %9s  (QUIC: no TCP connect; its handshake starts with the first Initial)\n", ph, "n/a")
			continue
		}
		if l.Count == 0 {
			fmt.Fprintf(w, "  %-12s %9s\n", ph, "-")
			continue
		}
		fmt.Fprintf(w, "  %-12s %9s %9s %9s %9s %9s%s\n", ph, val(l.P50), val(l.P90),
			val(l.P99), val(l.P999), val(l.Max), dropped)
	}
	if r.Load.LatencyLowerBound {
		fmt.Fprintf(w, "  WARNING      %.1f%% of the scheduled starts were dropped (no worker free): "+
			"they are in no histogram, so every latency above is a lower bound\n", r.Load.DroppedShare*100)
	}
	if r.Load.StartLagMaterial {
		lag := r.Percentiles(vocab.PhaseScheduleLag)
		total := r.Percentiles(vocab.PhaseTotal)
		fmt.Fprintf(w, "  WARNING      the generator's own start lateness (schedule_lag p50 %s, p99 %s) "+
			"is a material part of the total latency (p50 %s, p99 %s)\n",
			Micros(float64(lag.P50)), Micros(float64(lag.P99)), Micros(float64(total.P50)), Micros(float64(total.P99)))
	}
}

// latencyPhases are the phases whose percentiles summaries show, in the
// transaction's order.
var latencyPhases = []vocab.Phase{
	vocab.PhaseConnect,
	vocab.PhaseHandshake,
	vocab.PhaseTTFB,
	vocab.PhaseTransfer,
	vocab.PhaseTotal,
}

// summaryCPU is the client's CPU, per transaction or per GB.
func summaryCPU(w *strings.Builder, r *metrics.Run) {
	c := r.Client
	note := ""
	if c.IncludesTarget {
		note = " (includes the in-process target)"
	}
	cost := fmt.Sprintf("%.0f µs per transaction", c.CPUPerTxnUS)
	if r.HasThroughput() {
		cost = fmt.Sprintf("%.2f s per GB", analysis.CPUPerGB(r))
	}
	fmt.Fprintf(w, "  client CPU   %.2f s, %.0f%% of %d cores, %s%s; max RSS %.1f MB\n",
		c.CPUSeconds, c.Utilization*100, c.Cores, cost, note, float64(c.MaxRSSBytes)/1e6)
	if c.GeneratorBound {
		fmt.Fprintln(w, "  WARNING      generator-bound: the generator used more than 90% of its cores; "+
			"the target may not have set the pace")
	}
}

// CPSTable is one row per run: the published CPS table with its evidence.
//
// When a run resumed sessions, the CPS column is each run's at its session
// reuse (SR: the share of connections meant to resume), as datasheets quote
// "SSL TPS" with and without reuse: its handshakes (connections) per second,
// whose split follows, and then its requests per second apart (more with
// --requests-per-conn).
func CPSTable(runs []*metrics.Run) Document {
	reuse := resumes(runs)
	cols := []string{"PROFILE", "CIPHER (OpenSSL)", "GROUP", "CERT", "PROTOCOL", "CPS (SR=0)", "ERRORS",
		"HANDSHAKE p99", "TOTAL p99", "CPU/TXN"}
	if reuse {
		cols = slices.Insert(slices.Delete(cols, 5, 6), 5, "SR", "CPS", "FULL/s", "RESUMED/s", "REQ/S")
	}
	t := newTable(cols...)
	for _, r := range runs {
		n := r.Negotiated
		cps := fmt.Sprintf("%.1f", metrics.Value(r.CPS))
		row := []string{r.Profile, dash(n.OpenSSL), dash(n.Group), dash(n.CertKey), vocab.ProtocolTitle(r.Protocol)}
		if reuse {
			row = append(row, srCells(r)...)
		}
		t.add(append(row, cps, fmt.Sprint(r.Errors.Total), p99(r, vocab.PhaseHandshake), p99(r, vocab.PhaseTotal),
			fmt.Sprintf("%.0f µs", r.Client.CPUPerTxnUS))...)
	}
	return runsTable("CPS", runs, t)
}

// resumes reports whether a run of runs resumed sessions.
func resumes(runs []*metrics.Run) bool {
	return slices.ContainsFunc(runs, func(r *metrics.Run) bool { return r.Resumption != nil })
}

// srCells are a run's session reuse: SR, its handshakes (connections) per
// second, full and resumed; an SR=0 run's beside resuming ones, every
// connection full.
func srCells(r *metrics.Run) []string {
	sr, full, resumed := "0", float64(r.ConnectionsOpened)/max(r.DurationS, 1e-9), 0.0
	if x := r.Resumption; x != nil {
		sr, full, resumed = fmt.Sprintf("%g %s", x.Ratio, x.Mode), x.FullPerS, x.ResumedPerS
	}
	return []string{sr, fmt.Sprintf("%.1f", full+resumed), fmt.Sprintf("%.1f", full), fmt.Sprintf("%.1f", resumed)}
}

// runsTable is the table of runs after a blank line; nothing without runs.
func runsTable(title string, runs []*metrics.Run, t *table) Document {
	if len(runs) == 0 {
		return Document{title: title}
	}
	return Document{title: title, blocks: []block{para(""), t}}
}

// p99 is r's p99 of phase; "-" when no transaction of its window succeeded.
func p99(r *metrics.Run, phase vocab.Phase) string {
	if r.Transactions == 0 {
		return "-"
	}
	return Micros(float64(r.Percentiles(phase).P99))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ThroughputTable is one row per throughput run.
func ThroughputTable(runs []*metrics.Run) Document {
	cols := []string{"PROFILE", "CIPHER (OpenSSL)", "GROUP", "CERT", "PROTOCOL", "THROUGHPUT", "WIRE", "REQ/S",
		"ERRORS", "RECONNECTS", "TTFB p99", "TOTAL p99", "CPU/GB"}
	reuse := resumes(runs) // --resume with --requests-per-conn: its handshakes, as the CPS table's
	if reuse {
		cols = slices.Insert(cols, 8, "SR", "CONN/s", "FULL/s", "RESUMED/s")
	}
	t := newTable(cols...)
	for _, r := range runs {
		n := r.Negotiated
		row := []string{r.Profile, dash(n.OpenSSL), dash(n.Group), dash(n.CertKey), vocab.ProtocolTitle(r.Protocol),
			fmt.Sprintf("%.3f Gbps", metrics.Value(r.Gbps)), fmt.Sprintf("%.3f Gbps", metrics.Value(r.WireGbps)),
			fmt.Sprintf("%.1f", metrics.Value(r.RPS))}
		if reuse {
			row = append(row, srCells(r)...)
		}
		t.add(append(row, fmt.Sprint(r.Errors.Total), reconnects(r), p99(r, vocab.PhaseTTFB), p99(r, vocab.PhaseTotal),
			fmt.Sprintf("%.2f s", analysis.CPUPerGB(r)))...)
	}
	return runsTable("throughput", runs, t)
}
