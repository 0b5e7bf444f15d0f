// Package reports renders run records and campaigns for people: text
// summaries, the published table with its methodology appendix and charts
// (text, Markdown, CSV, JSON, self-contained HTML), and comparisons of two
// runs or campaigns. It only formats; statistics live in bench/metrics and
// bench/method.
package reports

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tlsbench/tlsbench/bench/metrics"

	"github.com/tlsbench/tlsbench/bench/vocab"

	"slices"
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

// RunText writes a run's summary: target, negotiated parameters, rate,
// errors by class, latency percentiles per phase and the client's CPU.
func RunText(w io.Writer, r *metrics.Run) {
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
	switch {
	case r.CPS != nil:
		fmt.Fprintf(w, "  cps          %.1f (%d transactions in %.1f s; %d errors)\n", *r.CPS, r.Transactions, r.DurationS, r.Errors.Total)
	case r.HasThroughput():
		fmt.Fprintf(w, "  throughput   %.3f Gbps payload, %.3f Gbps wire (%d requests in %.1f s, %.1f/s; %d errors)\n",
			metrics.Value(r.Gbps), metrics.Value(r.WireGbps), metrics.Value(r.Requests), r.DurationS, metrics.Value(r.RPS), r.Errors.Total)
		fmt.Fprintf(w, "  bytes        %d payload (+%d partial), %d wire in, %d wire out; %d connections opened (whole run %d)\n",
			r.Bytes.Payload, r.Bytes.PayloadPartial, r.Bytes.WireIn, r.Bytes.WireOut, r.ConnectionsOpened, r.Whole.ConnectionsOpened)
	}
	if r.Load.Mode == "open" {
		fmt.Fprintf(w, "  open loop    %.0f/s offered; %d late, %d dropped", r.Load.Rate, r.Load.Late, r.Load.Dropped)
		if r.Load.Scheduled > 0 {
			fmt.Fprintf(w, " (%.1f%% of %d scheduled)", r.Load.DroppedShare*100, r.Load.Scheduled)
		}
		fmt.Fprintln(w)
	}
	if c := r.Closes; c != nil {
		fmt.Fprintf(w, "  closes       server first %d, client first (deadline) %d, no close_notify %d\n", c.ServerFirst, c.ClientFirst, c.NoCloseNotify)
	}
	classes := make([]vocab.Class, 0, len(r.Errors.ByClass))
	for c := range r.Errors.ByClass {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	for _, c := range classes {
		fmt.Fprintf(w, "  error        %-20s %d  %s\n", c, r.Errors.ByClass[c], r.Errors.Examples[c])
	}
	// A run that dropped starts has latencies that are lower bounds: each
	// value says so (≥) with the share of starts dropped beside it.
	bound, dropped := "", ""
	if r.Load.LatencyLowerBound {
		bound, dropped = "≥", fmt.Sprintf("  (%.1f%% of starts dropped)", r.Load.DroppedShare*100)
	}
	val := func(v int64) string { return bound + Micros(float64(v)) }
	fmt.Fprintf(w, "  %-12s %9s %9s %9s %9s %9s\n", "latency", "p50", "p90", "p99", "p99.9", "max")
	phases := []vocab.Phase{vocab.PhaseConnect, vocab.PhaseHandshake, vocab.PhaseTTFB, vocab.PhaseTransfer, vocab.PhaseTotal}
	if r.Percentiles(vocab.PhaseScheduleLag).Count > 0 {
		phases = append(phases, vocab.PhaseScheduleLag)
	}
	for _, ph := range phases {
		l := r.Percentiles(ph)
		if l.Count == 0 {
			fmt.Fprintf(w, "  %-12s %9s\n", ph, "-")
			continue
		}
		fmt.Fprintf(w, "  %-12s %9s %9s %9s %9s %9s%s\n", ph, val(l.P50), val(l.P90),
			val(l.P99), val(l.P999), val(l.Max), dropped)
	}
	if r.Load.LatencyLowerBound {
		fmt.Fprintf(w, "  WARNING      %.1f%% of the scheduled starts were dropped (no worker free): they are in no histogram, so every latency above is a lower bound\n", r.Load.DroppedShare*100)
	}
	if r.Load.StartLagMaterial {
		l, t := r.Percentiles(vocab.PhaseScheduleLag), r.Percentiles(vocab.PhaseTotal)
		fmt.Fprintf(w, "  WARNING      the generator's own start lateness (schedule_lag p50 %s, p99 %s) is a material part of the total latency (p50 %s, p99 %s)\n",
			Micros(float64(l.P50)), Micros(float64(l.P99)), Micros(float64(t.P50)), Micros(float64(t.P99)))
	}
	c := r.Client
	note := ""
	if c.IncludesTarget {
		note = " (includes the in-process target)"
	}
	cost := fmt.Sprintf("%.0f µs per transaction", c.CPUPerTxnUS)
	if r.HasThroughput() {
		cost = fmt.Sprintf("%.2f s per GB", CPUPerGB(r))
	}
	fmt.Fprintf(w, "  client CPU   %.2f s, %.0f%% of %d cores, %s%s; max RSS %.1f MB\n",
		c.CPUSeconds, c.Utilization*100, c.Cores, cost, note, float64(c.MaxRSSBytes)/1e6)
	if c.GeneratorBound {
		fmt.Fprintln(w, "  WARNING      generator-bound: the generator used more than 90% of its cores; the target may not have set the pace")
	}
}

// CPSTable writes one row per run: the published CPS table with its evidence.
func CPSTable(w io.Writer, runs []*metrics.Run) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tCIPHER (OpenSSL)\tGROUP\tCERT\tCPS (SR=0)\tERRORS\tHANDSHAKE p99\tTOTAL p99\tCPU/TXN")
	for _, r := range runs {
		n := r.Negotiated
		cps := metrics.Value(r.CPS)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%d\t%s\t%s\t%.0f µs\n", r.Profile, dash(n.OpenSSL), dash(n.Group), dash(n.CertKey),
			cps, r.Errors.Total, Micros(float64(r.Percentiles(vocab.PhaseHandshake).P99)), Micros(float64(r.Percentiles(vocab.PhaseTotal).P99)), r.Client.CPUPerTxnUS)
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// CPUPerGB is the generator's CPU seconds per GB (10^9 bytes) of payload
// received over the whole run (the CPU is measured over the whole run too).
func CPUPerGB(r *metrics.Run) float64 {
	if r.Bytes.Payload == 0 || r.DurationS == 0 {
		return 0
	}
	// Scale the window's payload to the whole run's wall time.
	wall := r.Ended.Sub(r.Started).Seconds()
	gb := float64(r.Bytes.Payload) / 1e9 * wall / r.DurationS
	return r.Client.CPUSeconds / gb
}

// ThroughputTable writes one row per throughput run.
func ThroughputTable(w io.Writer, runs []*metrics.Run) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tCIPHER (OpenSSL)\tGROUP\tCERT\tTHROUGHPUT\tWIRE\tREQ/S\tERRORS\tTTFB p99\tTOTAL p99\tCPU/GB")
	for _, r := range runs {
		n := r.Negotiated
		gbps, wire, rps := metrics.Value(r.Gbps), metrics.Value(r.WireGbps), metrics.Value(r.RPS)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f Gbps\t%.3f Gbps\t%.1f\t%d\t%s\t%s\t%.2f s\n", r.Profile, dash(n.OpenSSL), dash(n.Group), dash(n.CertKey),
			gbps, wire, rps, r.Errors.Total, Micros(float64(r.Percentiles(vocab.PhaseTTFB).P99)), Micros(float64(r.Percentiles(vocab.PhaseTotal).P99)), CPUPerGB(r))
	}
	tw.Flush()
}
