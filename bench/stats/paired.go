package stats

import "math"

// Paired compares rounds measured in pairs (candidate[i] against
// baseline[i], back to back: a drift of the machine common to a pair
// cancels in its ratio): the geometric mean of the ratios and its 95%
// interval, Student's t on their logarithms.
type Paired struct {
	N     int     `json:"n"` // the pairs with both values positive
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// Verdict: VerdictSignificant when the interval excludes 1, else
	// VerdictEquivalent when it lies within 1 ± the bound, else
	// VerdictInconclusive, and RoundsNeeded pairs of the observed mean and
	// spread would settle it either way (0: none up to maxRounds, or fewer
	// than 2 pairs).
	Verdict      string `json:"verdict"`
	RoundsNeeded int    `json:"rounds_needed"`
}

// PairedRatio compares candidate with baseline pair by pair, equivalent
// within ± boundPct %.
func PairedRatio(baseline, candidate []float64, boundPct float64) Paired {
	var logs []float64
	for i := range min(len(baseline), len(candidate)) {
		if baseline[i] > 0 && candidate[i] > 0 {
			logs = append(logs, math.Log(candidate[i]/baseline[i]))
		}
	}
	m := momentsOf(logs)
	p := Paired{N: m.N, Verdict: VerdictInconclusive}
	if m.N < 2 {
		return p
	}
	half := func(n int) float64 { return tQuantile(0.975, float64(n-1)) * m.StdDev / math.Sqrt(float64(n)) }
	h, b := half(m.N), boundPct/100
	p.Ratio, p.Lo, p.Hi = math.Exp(m.Mean), math.Exp(m.Mean-h), math.Exp(m.Mean+h)
	switch {
	case p.Lo > 1 || p.Hi < 1:
		p.Verdict = VerdictSignificant
	case p.Lo >= 1-b && p.Hi <= 1+b:
		p.Verdict = VerdictEquivalent
	default: // a half-width below |mean| is significant, below the distance to the bound equivalent
		settle := math.Max(math.Abs(m.Mean), math.Min(math.Log1p(b)-m.Mean, m.Mean-math.Log1p(-b)))
		for n := 2; n <= maxRounds && settle > 0 && p.RoundsNeeded == 0; n++ {
			if half(n) < settle {
				p.RoundsNeeded = n
			}
		}
	}
	return p
}
