package reports_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/impact"
	"github.com/tlsbench/tlsbench/bench/stats"
	"github.com/tlsbench/tlsbench/reports"
)

// TestImpactPMethod: the impact report (and impact's summary,
// impact.ShiftSummary) calls the rank test's p exact only when it is: a p
// from the normal approximation (more rounds than the exact distribution is
// computed for) is labelled so in the rule, beside p in the table and in the
// summary.
func TestImpactPMethod(t *testing.T) {
	sample := func(n int, base float64) []float64 {
		var xs []float64
		for i := range n {
			xs = append(xs, base+float64(i%10))
		}
		return xs
	}
	for _, n := range []int{stats.ExactTiedLimit / 2, stats.ExactTiedLimit/2 + 1} {
		s := stats.ShiftOf(sample(n, 100), sample(n, 101))
		rep := &impact.Report{ResponseTime: s, Rate: s, Verdict: s.Verdict, Summary: impact.ShiftSummary(s)}
		var b bytes.Buffer
		if err := reports.ImpactDoc(rep).Text(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		approx := s.PMethod == stats.PApprox
		if strings.Contains(rep.Summary, "(normal approximation)") != approx {
			t.Errorf("%d a side (%s): summary %q", n, s.PMethod, rep.Summary)
		}
		if approx != (n > stats.ExactTiedLimit/2) {
			t.Fatalf("%d a side: p method %q", n, s.PMethod)
		}
		if strings.Contains(out, "exact Mann-Whitney") == approx ||
			strings.Contains(out, "(normal approximation)") != approx {
			t.Errorf("%d a side (%s):\n%s", n, s.PMethod, out)
		}
	}
}
