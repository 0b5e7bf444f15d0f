package stats

import (
	"math"
	"testing"
)

// TestPairedVerdict: rounds that all moved are significant (either way),
// A/A noise is equivalent when tight and inconclusive when wide, with the
// rounds that would settle it: rounds of the same mean and spread of the
// logarithms settle it at that many, and at one fewer do not.
func TestPairedVerdict(t *testing.T) {
	base := []float64{100, 130, 90, 110, 95, 120, 105, 98}
	scaled := func(rs ...float64) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = base[i] * r
		}
		return out
	}
	for _, c := range []struct {
		name    string
		cand    []float64
		verdict string
	}{
		{"all +3%", scaled(1.02, 1.03, 1.04, 1.03, 1.035, 1.025, 1.03, 1.03), VerdictSignificant},
		{"all -2%", scaled(0.98, 0.975, 0.985, 0.98, 0.98, 0.979, 0.981, 0.98), VerdictSignificant},
		{"A/A, 0.5% noise", scaled(1.005, 0.995, 1.004, 0.996, 1, 1.003, 0.997, 1), VerdictEquivalent},
		{"A/A, 8% noise", scaled(1.08, 0.92, 1.05, 0.94, 1.07, 0.95, 1.01, 0.97), VerdictInconclusive},
		{"+2.5%, 4% noise", scaled(1.08, 0.97, 1.06, 0.99, 1.05, 0.98, 1.04, 1.03), VerdictInconclusive},
	} {
		p := PairedRatio(base, c.cand, 3)
		t.Logf("%-16s %.4f [%.4f, %.4f] %s, %d rounds needed", c.name, p.Ratio, p.Lo, p.Hi, p.Verdict, p.RoundsNeeded)
		if p.Verdict != c.verdict || (p.Verdict == VerdictSignificant) != (p.Lo > 1 || p.Hi < 1) {
			t.Errorf("%s: %+v, want %s", c.name, p, c.verdict)
		}
		if p.Verdict != VerdictInconclusive {
			if p.RoundsNeeded != 0 {
				t.Errorf("%s: %s with %d rounds needed", c.name, p.Verdict, p.RoundsNeeded)
			}
			continue
		}
		n := p.RoundsNeeded
		if n <= len(base) {
			t.Fatalf("%s: inconclusive at %d rounds, %d needed", c.name, len(base), n)
		}
		logs := make([]float64, len(base))
		for i := range base {
			logs[i] = math.Log(c.cand[i] / base[i])
		}
		m := momentsOf(logs)
		for _, k := range []int{n - 1, n} {
			ones, ratios := make([]float64, k), shaped(k, m.Mean, m.StdDev)
			for i := range ones {
				ones[i], ratios[i] = 1, math.Exp(ratios[i])
			}
			if v := PairedRatio(ones, ratios, 3); (v.Verdict == VerdictInconclusive) != (k < n) {
				t.Errorf("%s: %d rounds needed, but %d rounds of the same mean and spread give %+v", c.name, n, k, v)
			}
		}
	}
}
