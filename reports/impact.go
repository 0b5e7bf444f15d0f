package reports

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tlsbench/tlsbench/bench/method"
)

// ImpactText writes an impact study as Siege's comparison table with deltas,
// the latency split, the rounds and the verdict.
func ImpactText(w io.Writer, r *method.ImpactReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "METRIC\tBASELINE\tCANDIDATE\tDELTA\tDELTA %\tSIGNIFICANT\t")
	for _, m := range append(append([]method.ImpactMetric(nil), r.Metrics...), r.Phases...) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", impactLabel(m), impactNum(m.Baseline), impactNum(m.Candidate), impactSigned(m.Delta), impactPct(m), impactSig(m))
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "rounds (transaction rate /s, response time ms):")
	for _, rd := range r.Rounds {
		fmt.Fprintf(w, "  %d  baseline %.1f /s, %.2f ms   candidate %.1f /s, %.2f ms\n", rd.Round, rd.BaselineRate, rd.BaselineResponseTimeMS, rd.CandidateRate, rd.CandidateResponseTimeMS)
	}
	s := r.ResponseTime
	fmt.Fprintf(w, "per-second mean response time: baseline %.2f ± %.2f ms (n=%d), candidate %.2f ± %.2f ms (n=%d)\n",
		s.Baseline.Mean, s.Baseline.StdDev, s.Baseline.N, s.Candidate.Mean, s.Candidate.StdDev, s.Candidate.N)
	fmt.Fprintf(w, "\n%s\n", r.Verdict)
	return nil
}

// ImpactMarkdown writes the same as Markdown.
func ImpactMarkdown(w io.Writer, r *method.ImpactReport) error {
	fmt.Fprintln(w, "| Metric | Baseline | Candidate | Delta | Delta % | Significant |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	for _, m := range append(append([]method.ImpactMetric(nil), r.Metrics...), r.Phases...) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", impactLabel(m), impactNum(m.Baseline), impactNum(m.Candidate), impactSigned(m.Delta), impactPct(m), impactSig(m))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Round | Baseline rate (/s) | Baseline response (ms) | Candidate rate (/s) | Candidate response (ms) |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|")
	for _, rd := range r.Rounds {
		fmt.Fprintf(w, "| %d | %.1f | %.2f | %.1f | %.2f |\n", rd.Round, rd.BaselineRate, rd.BaselineResponseTimeMS, rd.CandidateRate, rd.CandidateResponseTimeMS)
	}
	fmt.Fprintf(w, "\n**%s**\n", r.Verdict)
	return nil
}

func impactLabel(m method.ImpactMetric) string {
	if m.Unit == "" || m.Unit == "hits" {
		return m.Label
	}
	return m.Label + " (" + m.Unit + ")"
}

func impactNum(v float64) string {
	switch {
	case v == float64(int64(v)) && (v >= 1000 || v <= -1000):
		return fmt.Sprintf("%.0f", v)
	case v >= 100 || v <= -100:
		return fmt.Sprintf("%.1f", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}

func impactSigned(v float64) string {
	s := impactNum(v)
	if v > 0 {
		return "+" + s
	}
	return s
}

func impactPct(m method.ImpactMetric) string {
	if m.Baseline == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", m.DeltaPct)
}

func impactSig(m method.ImpactMetric) string {
	switch {
	case !m.Tested:
		return ""
	case m.Significant:
		return "yes"
	}
	return "no"
}
