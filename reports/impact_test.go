package reports_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/impact"
	"github.com/tlsbench/tlsbench/bench/stats"
	"github.com/tlsbench/tlsbench/reports"
)

func TestImpactFormats(t *testing.T) {
	rep := &impact.Report{
		Metrics: []impact.Metric{{Key: "response_time", Label: "Response time", Unit: "s", Baseline: 0.018, Candidate: 0.028, Delta: 0.01, DeltaPct: 55.5, Tested: true, Significant: true, Verdict: stats.VerdictSignificant}},
		Phases:  []impact.Metric{{Key: "ttfb_p50_ms", Label: "ttfb p50", Unit: "ms", Baseline: 1, Candidate: 6, Delta: 5, DeltaPct: 500}},
		Rounds:  []impact.Round{{Round: 1, BaselineRate: 100, CandidateRate: 90, BaselineResponseTimeMS: 18, CandidateResponseTimeMS: 28}},
		// 3.4× slower, 4 rounds a side: inconclusive, the rank test cannot get below 0.01.
		ResponseTime: stats.ShiftWithin([]float64{1.0, 1.1, 0.9, 1.05}, []float64{3.4, 3.5, 3.3, 3.45}, 5),
		// Rates within 0.5%, 8 rounds a side: equivalent.
		Rate: stats.ShiftWithin([]float64{100, 101, 99, 100, 100.5, 99.5, 100, 100}, []float64{100, 100.5, 99.5, 100, 101, 99, 100.2, 99.8}, 5),
	}
	rep.Verdict, rep.Summary = rep.ResponseTime.Verdict, impact.ShiftSummary(rep.ResponseTime)
	rep.Protocol = "http/2"
	if rep.Verdict != stats.VerdictInconclusive || rep.Rate.Verdict != stats.VerdictEquivalent {
		t.Fatalf("verdicts %s, %s", rep.Verdict, rep.Rate.Verdict)
	}
	reason := "4 rounds a side cannot reach p &lt; 0.01: the smallest possible p is 0.029"
	common := []string{"candidate against baseline over HTTP/2", "Verdicts", "inconclusive", "equivalent", "0.029", "± 0.0506 (5%)", "± 5 (5%)", "about 5 rounds a side would be needed"}
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
		want   []string
	}{
		{"text", func(b *bytes.Buffer) error { return reports.ImpactDoc(rep).Text(b) }, []string{"Response time (s)", "+55.50%", "significant", rep.Summary, strings.ReplaceAll(reason, "&lt;", "<")}},
		{"md", func(b *bytes.Buffer) error { return reports.ImpactDoc(rep).Markdown(b, "", nil) }, []string{"| Response time (s) |", reason}}, // Markdown escapes <
		{"html", func(b *bytes.Buffer) error { return reports.ImpactDoc(rep).HTML(b) }, []string{"<table>", "Response time (s)", "<!DOCTYPE html>", reason}},
	} {
		tc.want = append(tc.want, common...)
		var b bytes.Buffer
		if err := tc.render(&b); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s lacks %q:\n%s", tc.name, w, b.String())
			}
		}
		if tc.name == "html" && (strings.Contains(b.String(), "http://") || strings.Contains(b.String(), "https://") || strings.Contains(b.String(), "src=")) {
			t.Error("the HTML refers to something outside itself")
		}
	}
}
