package reports_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/reports"
)

func TestImpactFormats(t *testing.T) {
	rep := &method.ImpactReport{
		Metrics: []method.ImpactMetric{{Key: "response_time", Label: "Response time", Unit: "s", Baseline: 0.018, Candidate: 0.028, Delta: 0.01, DeltaPct: 55.5, Tested: true, Significant: true}},
		Phases:  []method.ImpactMetric{{Key: "ttfb_p50_ms", Label: "ttfb p50", Unit: "ms", Baseline: 1, Candidate: 6, Delta: 5, DeltaPct: 500}},
		Rounds:  []method.ImpactRound{{Round: 1, BaselineRate: 100, CandidateRate: 90, BaselineResponseTimeMS: 18, CandidateResponseTimeMS: 28}},
		Verdict: "candidate adds 9.84 ms ± 1.20 ms per request (p < 0.01)",
	}
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer) error
		want   []string
	}{
		{"text", func(b *bytes.Buffer) error { return reports.ImpactText(b, rep) }, []string{"Response time (s)", "+55.50%", "yes", rep.Verdict}},
		{"md", func(b *bytes.Buffer) error { return reports.ImpactMarkdown(b, rep) }, []string{"| Response time (s) |", "candidate adds 9.84 ms ± 1.20 ms per request (p &lt; 0.01)"}}, // Markdown escapes <
		{"html", func(b *bytes.Buffer) error { return reports.ImpactHTML(b, rep) }, []string{"<table>", "Response time (s)", "<!DOCTYPE html>"}},
	} {
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
