package reports

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/tlsbench/tlsbench/bench/impact"
	"github.com/tlsbench/tlsbench/bench/stats"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// ImpactDoc lays an impact study out: the verdicts, Siege's metrics with
// deltas, the latency split and the rounds.
func ImpactDoc(r *impact.Report) Document {
	summary := cmp.Or(r.Summary, r.Verdict)
	d := Document{title: "tlsbench impact study"}
	d.add(heading{1, "Impact study: candidate against baseline over " + vocab.ProtocolTitle(r.Protocol)}, para(summary))
	t := newTable("Shift", "Verdict", ">Delta", ">95% interval", ">p", ">Smallest p",
		">Bound", ">98% interval", ">Rounds needed")
	var reasons []string
	for _, sh := range []struct {
		name string
		s    stats.Shift
	}{{"Response time (ms)", r.ResponseTime}, {"Transaction rate (/s)", r.Rate}} {
		s := sh.s
		needed := "-"
		if s.Verdict == stats.VerdictInconclusive {
			needed = fmt.Sprint(s.RoundsNeeded)
			if s.RoundsNeeded == 0 {
				needed = "unknown"
			}
			reasons = append(reasons, fmt.Sprintf("%s: inconclusive: %s.", sh.name, s.Reason))
		}
		t.add(sh.name, s.Verdict, impactSigned(s.Delta), "± "+impactNum(s.CI95), impactP(s.P)+s.PNote(), impactP(s.MinP),
			fmt.Sprintf("± %s (%g%%)", impactNum(s.EquivalenceBound), s.EquivalenceBoundPct), "± "+impactNum(s.CI98), needed)
	}
	d.add(heading{2, "Verdicts"}, t)
	for _, why := range reasons {
		d.add(para(why))
	}
	s := r.ResponseTime
	d.add(para(fmt.Sprintf(
		"One sample per round and side (the round's steady-window mean): "+
			"response time baseline %.3g ± %.3g ms (n=%d), candidate %.3g ± %.3g ms (n=%d). "+
			"Significant: the %s p < %g and the 95%% Welch interval excludes zero. "+
			"Equivalent: the 98%% Welch interval (two one-sided tests at %g) lies inside the bound, "+
			"± %g%% of the baseline mean. "+
			"Otherwise inconclusive, with the reason and the rounds a side that would settle it at the observed spread.",
		s.Baseline.Mean, s.Baseline.StdDev, s.Baseline.N, s.Candidate.Mean, s.Candidate.StdDev, s.Candidate.N,
		pMethodText(s), stats.Alpha, stats.Alpha, s.EquivalenceBoundPct)))
	t = newTable("Metric", ">Baseline", ">Candidate", ">Delta", ">Delta %", "Verdict")
	for _, m := range r.Metrics {
		t.add(impactLabel(m), impactNum(m.Baseline), impactNum(m.Candidate),
			impactSigned(m.Delta), impactPct(m), impactSig(m))
	}
	d.add(heading{2, "Siege's metrics (pooled over the rounds)"}, t)
	d.add(heading{2, "Latency per phase"}, impactTable("Latency", r.Phases))
	if len(r.TCP) > 0 { // nothing when a run has no measurement
		d.add(heading{2, "TCP retransmissions (pooled over the rounds)"},
			impactTable("TCP (the kernel's, at each close)", r.TCP))
	}
	t = newTable(">Round", ">Baseline rate (/s)", ">Baseline response (ms)",
		">Candidate rate (/s)", ">Candidate response (ms)")
	for _, rd := range r.Rounds {
		t.add(fmt.Sprint(rd.Round), fmt.Sprintf("%.1f", rd.BaselineRate), fmt.Sprintf("%.2f", rd.BaselineResponseTimeMS),
			fmt.Sprintf("%.1f", rd.CandidateRate), fmt.Sprintf("%.2f", rd.CandidateResponseTimeMS))
	}
	d.add(heading{2, "Rounds (interleaved)"}, t)
	return d
}

// impactTable sets the two sides' metrics side by side.
func impactTable(title string, ms []impact.Metric) *table {
	t := newTable(title, ">Baseline", ">Candidate", ">Delta", ">Delta %")
	for _, m := range ms {
		t.add(impactLabel(m), impactNum(m.Baseline), impactNum(m.Candidate), impactSigned(m.Delta), impactPct(m))
	}
	return t
}

func impactLabel(m impact.Metric) string {
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

func impactSigned(v float64) string { return plus(v, impactNum(v)) }

func impactPct(m impact.Metric) string {
	if m.Baseline == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", m.DeltaPct)
}

// impactSig is the verdict of a tested metric's shift.
func impactSig(m impact.Metric) string {
	switch {
	case !m.Tested:
		return ""
	case m.Verdict != "":
		return m.Verdict
	case m.Significant:
		return stats.VerdictSignificant
	}
	return "-"
}

// pMethodText names the rank test's p as computed: "exact Mann-Whitney",
// "Mann-Whitney (normal approximation)".
func pMethodText(s stats.Shift) string {
	if s.PMethod == stats.PApprox {
		return "Mann-Whitney (" + stats.PApprox + ")"
	}
	return "exact Mann-Whitney"
}

// impactP formats a p-value to two significant digits.
func impactP(p float64) string {
	if p < 0.0001 {
		return "< 0.0001"
	}
	return fmt.Sprintf("%.2g", p)
}
