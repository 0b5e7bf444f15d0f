package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/tlsbench/tlsbench/bench/method"
)

// ImpactText writes an impact study as Siege's comparison table with deltas,
// the latency split, the rounds and the verdict.
func ImpactText(w io.Writer, r *method.ImpactReport) error { return impactDoc(r).writeText(w) }

// ImpactMarkdown writes the same as Markdown.
func ImpactMarkdown(w io.Writer, r *method.ImpactReport) error {
	return impactDoc(r).writeMarkdown(w, "", nil)
}

// ImpactHTML writes the same as one self-contained HTML file.
func ImpactHTML(w io.Writer, r *method.ImpactReport) error {
	return impactDoc(r).writeHTML(w, "tlsbench impact study")
}

func impactDoc(r *method.ImpactReport) document {
	d := document{heading{1, "Impact study: candidate against baseline"}, para(r.Verdict)}
	t := newTable("Metric", ">Baseline", ">Candidate", ">Delta", ">Delta %", "Significant")
	for _, m := range r.Metrics {
		t.add(impactLabel(m), impactNum(m.Baseline), impactNum(m.Candidate), impactSigned(m.Delta), impactPct(m), impactSig(m))
	}
	d = append(d, heading{2, "Siege's metrics (pooled over the rounds)"}, t)
	t = newTable("Latency", ">Baseline", ">Candidate", ">Delta", ">Delta %")
	for _, m := range r.Phases {
		t.add(impactLabel(m), impactNum(m.Baseline), impactNum(m.Candidate), impactSigned(m.Delta), impactPct(m))
	}
	d = append(d, heading{2, "Latency per phase"}, t)
	t = newTable(">Round", ">Baseline rate (/s)", ">Baseline response (ms)", ">Candidate rate (/s)", ">Candidate response (ms)")
	for _, rd := range r.Rounds {
		t.add(fmt.Sprint(rd.Round), fmt.Sprintf("%.1f", rd.BaselineRate), fmt.Sprintf("%.2f", rd.BaselineResponseTimeMS),
			fmt.Sprintf("%.1f", rd.CandidateRate), fmt.Sprintf("%.2f", rd.CandidateResponseTimeMS))
	}
	s := r.ResponseTime
	d = append(d, heading{2, "Rounds (interleaved)"}, t, para(fmt.Sprintf(
		"Per-second mean response time: baseline %.2f ± %.2f ms (n=%d), candidate %.2f ± %.2f ms (n=%d); shift %+.2f ms, 95%% interval ± %.2f ms (Welch), Mann-Whitney p = %.3g; significant when p < %g and the interval excludes zero.",
		s.Baseline.Mean, s.Baseline.StdDev, s.Baseline.N, s.Candidate.Mean, s.Candidate.StdDev, s.Candidate.N, s.Delta, s.CI95, s.P, method.Alpha)))
	return d
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
