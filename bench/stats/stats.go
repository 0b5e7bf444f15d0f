// Package stats compares two samples of measurements: their moments, Welch's
// t interval of the shift (Student's t quantiles from gonum's distuv), the
// Mann-Whitney rank test, two one-sided tests for equivalence within a bound,
// and the verdict they give together. Pure functions on numbers.
package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// The verdicts of a Shift.
const (
	// VerdictSignificant: the rank test gives p < Alpha and the 95%
	// interval of the shift excludes zero.
	VerdictSignificant = "significant"
	// VerdictEquivalent: no difference larger than the equivalence bound (two
	// one-sided tests at Alpha: the 1 − 2·Alpha = 98% interval of the shift
	// lies inside ±bound).
	VerdictEquivalent = "equivalent"
	// VerdictInconclusive: neither; Reason says why and RoundsNeeded how many
	// samples a side would settle it.
	VerdictInconclusive = "inconclusive"
)

// Shift is the difference of two samples, candidate minus baseline, and
// its verdict.
type Shift struct {
	Baseline, Candidate moments
	// Delta is mean(candidate) − mean(baseline); CI95 its 95% confidence
	// half-width (Welch's t interval, Student's t at the fractional
	// Welch–Satterthwaite degrees of freedom).
	Delta float64 `json:"delta"`
	CI95  float64 `json:"ci95"`
	// P is the two-sided p-value of the Mann-Whitney rank test; PMethod
	// says how it was computed: PExact (the exact distribution, up to
	// ExactLimit observations in all, ExactTiedLimit with ties) or PApprox
	// (the normal approximation, above); empty when no test was made (fewer
	// than 2 a side).
	P       float64 `json:"p"`
	PMethod string  `json:"p_method,omitempty"`
	// Significant is P below Alpha and a confidence interval that does not
	// contain zero.
	Significant bool `json:"significant"`

	// Verdict is VerdictSignificant, VerdictEquivalent or VerdictInconclusive.
	Verdict string `json:"verdict"`
	// EquivalenceBound is the largest difference called no difference, in
	// the samples' unit: EquivalenceBoundPct percent of the baseline mean.
	EquivalenceBound    float64 `json:"equivalence_bound"`
	EquivalenceBoundPct float64 `json:"equivalence_bound_pct"`
	// CI98 is the 98% half-width of Delta: the interval of the two
	// one-sided tests at Alpha. EquivalenceP is their p-value (the larger
	// of the two).
	CI98         float64 `json:"ci98"`
	EquivalenceP float64 `json:"equivalence_p"`
	// MinP is the smallest two-sided p the rank test can give at these
	// sample sizes (complete separation, no ties): 2 / C(n₁+n₂, n₁).
	MinP float64 `json:"min_p"`
	// Reason says why the verdict is VerdictInconclusive; empty otherwise.
	Reason string `json:"reason"`
	// RoundsNeeded, for VerdictInconclusive, is how many samples a side would be
	// needed (0 when no number would do or it cannot be estimated; Reason
	// then says so).
	RoundsNeeded int `json:"rounds_needed"`
}

// moments summarises one sample.
type moments struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Alpha is the significance level of the tests.
const Alpha = 0.01

// DefaultEquivalencePct is the default equivalence bound: a shift within
// ±5% of the baseline mean is no difference.
const DefaultEquivalencePct = 5.0

// momentsOf summarises xs.
func momentsOf(xs []float64) moments {
	m := moments{N: len(xs)}
	if len(xs) == 0 {
		return m
	}
	m.Min, m.Max = xs[0], xs[0]
	for _, x := range xs {
		m.Mean += x
		m.Min, m.Max = math.Min(m.Min, x), math.Max(m.Max, x)
	}
	m.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - m.Mean) * (x - m.Mean)
		}
		m.StdDev = math.Sqrt(ss / float64(len(xs)-1))
	}
	return m
}

// ShiftOf tests whether candidate differs from baseline, with the default
// equivalence bound.
func ShiftOf(baseline, candidate []float64) Shift {
	return ShiftWithin(baseline, candidate, DefaultEquivalencePct)
}

// ShiftWithin tests whether candidate differs from baseline, and whether
// it differs by less than boundPct percent of the baseline mean.
func ShiftWithin(baseline, candidate []float64, boundPct float64) Shift {
	s := Shift{Baseline: momentsOf(baseline), Candidate: momentsOf(candidate), P: 1, EquivalenceP: 1,
		EquivalenceBoundPct: boundPct, Verdict: VerdictInconclusive}
	b, c := s.Baseline, s.Candidate
	s.EquivalenceBound = math.Abs(b.Mean) * boundPct / 100
	s.MinP = minRankP(b.N, c.N)
	s.Delta = c.Mean - b.Mean
	if b.N < 2 || c.N < 2 {
		s.RoundsNeeded = rankRoundsNeeded()
		s.Reason = fmt.Sprintf("%s a side: no spread to test with; at least %d rounds a side would be needed",
			s.RoundsText(), s.RoundsNeeded)
		return s
	}
	vb, vc := b.StdDev*b.StdDev, c.StdDev*c.StdDev
	se := math.Sqrt(vb/float64(b.N) + vc/float64(c.N))
	if se > 0 {
		df := welchDF(vb, vc, b.N, c.N)
		s.CI95 = tQuantile(0.975, df) * se
		s.CI98 = tQuantile(1-Alpha, df) * se
		// Two one-sided tests: H₀ Delta ≤ −bound and H₀ Delta ≥ +bound.
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
		pLow := t.Survival((s.Delta + s.EquivalenceBound) / se)
		pHigh := t.CDF((s.Delta - s.EquivalenceBound) / se)
		s.EquivalenceP = math.Max(pLow, pHigh)
	} else if math.Abs(s.Delta) < s.EquivalenceBound {
		s.EquivalenceP = 0
	}
	var exact bool
	s.P, exact = mannWhitney(baseline, candidate)
	s.PMethod = PApprox
	if exact {
		s.PMethod = pExact
	}
	s.Significant = s.P < Alpha && math.Abs(s.Delta) > s.CI95
	equivalent := math.Abs(s.Delta)+s.CI98 < s.EquivalenceBound
	switch {
	case s.Significant:
		s.Verdict = VerdictSignificant
	case equivalent:
		s.Verdict = VerdictEquivalent
	default:
		s.Reason, s.RoundsNeeded = inconclusive(s)
	}
	return s
}

// inconclusive says why s is neither significant nor equivalent, and how
// many samples a side would settle it.
func inconclusive(s Shift) (string, int) {
	b, c := s.Baseline, s.Candidate
	var why []string
	switch {
	case s.MinP >= Alpha:
		why = append(why, fmt.Sprintf("%s a side cannot reach p < %g: the smallest possible p is %.3f",
			s.RoundsText(), Alpha, s.MinP))
	case s.P >= Alpha:
		why = append(why, fmt.Sprintf("p = %.3g%s is not below %g", s.P, s.PNote(), Alpha))
	default:
		why = append(why, fmt.Sprintf("p = %.3g%s but the 95%% interval ±%.3g includes zero", s.P, s.PNote(), s.CI95))
	}
	switch {
	case s.EquivalenceBound == 0:
		why = append(why, "the bound is zero (baseline mean zero)")
	case math.Abs(s.Delta) >= s.EquivalenceBound:
		why = append(why, fmt.Sprintf("the shift %+.3g is outside the bound ±%.3g", s.Delta, s.EquivalenceBound))
	default:
		why = append(why, fmt.Sprintf("the 98%% interval %+.3g ± %.3g is wider than the bound ±%.3g",
			s.Delta, s.CI98, s.EquivalenceBound))
	}
	vb, vc := b.StdDev*b.StdDev, c.StdDev*c.StdDev
	var n int
	if s.EquivalenceBound > 0 && math.Abs(s.Delta) < s.EquivalenceBound {
		// The observed shift is inside the bound: rounds for the 98%
		// interval, at the observed variances, to fit inside it.
		n = samplesFor(vb, vc, 1-Alpha, s.EquivalenceBound-math.Abs(s.Delta))
	} else {
		// Outside the bound: rounds for the rank test to be able to reach
		// Alpha, and for a t test at Alpha to reject at the observed shift
		// and variances, divided by the rank test's efficiency relative
		// to it (3/π for normal samples). An estimate: samples as spread
		// as these, shifted as much, are significant at that many rounds;
		// a true shift of this size needs more about half the time.
		n = samplesFor(vb, vc, 1-Alpha/2, math.Abs(s.Delta))
		if n > 0 {
			n = max(int(math.Ceil(float64(n)*math.Pi/3)), rankRoundsNeeded())
		}
	}
	if n == 0 {
		why = append(why, fmt.Sprintf("no number of rounds up to %d would settle it at the observed spread", maxRounds))
	} else {
		why = append(why, fmt.Sprintf("about %d rounds a side would be needed", n))
	}
	return strings.Join(why, "; "), n
}

// maxRounds caps the search for RoundsNeeded.
const maxRounds = 10000

// samplesFor is the smallest n ≥ 2 a side for which the q-quantile Welch
// half-width with variances vb and vc is below width, or 0 above maxRounds.
func samplesFor(vb, vc, q, width float64) int {
	if width <= 0 {
		return 0
	}
	for n := 2; n <= maxRounds; n++ {
		se := math.Sqrt((vb + vc) / float64(n))
		if se == 0 {
			return n
		}
		if tQuantile(q, welchDF(vb, vc, n, n))*se < width {
			return n
		}
	}
	return 0
}

// rankRoundsNeeded is the smallest n for which n against n can reach a
// two-sided p below Alpha.
func rankRoundsNeeded() int {
	n := 2
	for minRankP(n, n) >= Alpha {
		n++
	}
	return n
}

// PNote is what a printed p needs after it: " (normal approximation)" when
// it is not exact, else nothing.
func (s Shift) PNote() string {
	if s.PMethod == PApprox {
		return " (" + PApprox + ")"
	}
	return ""
}

// RoundsText says the sample sizes as rounds: "5 rounds", "4 and 5 rounds".
func (s Shift) RoundsText() string {
	unit := func(n int) string {
		if n == 1 {
			return "1 round"
		}
		return fmt.Sprintf("%d rounds", n)
	}
	if s.Baseline.N == s.Candidate.N {
		return unit(s.Baseline.N)
	}
	return fmt.Sprintf("%d and %s", s.Baseline.N, unit(s.Candidate.N))
}

// welchDF are the Welch–Satterthwaite degrees of freedom (fractional) of
// two samples with variances vb, vc and sizes nb, nc.
func welchDF(vb, vc float64, nb, nc int) float64 {
	ab, ac := vb/float64(nb), vc/float64(nc)
	return (ab + ac) * (ab + ac) / (ab*ab/float64(nb-1) + ac*ac/float64(nc-1))
}

// tQuantile is the p quantile of Student's t with df (fractional) degrees
// of freedom.
func tQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// minRankP is the smallest two-sided p of the Mann-Whitney test with sizes
// n1 and n2: both orders of complete separation, 2 / C(n1+n2, n1).
func minRankP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	return math.Min(1, 2/choose(n1+n2, n1))
}

func choose(n, k int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Round(math.Exp(lg(n) - lg(k) - lg(n-k)))
}

// The largest n1+n2 for which mannWhitney computes the exact distribution:
// ExactLimit without ties, ExactTiedLimit with ties. Above them the p value
// is the normal approximation, and says so (Shift.PMethod).
const (
	exactLimit     = 400
	ExactTiedLimit = 120
)

// The methods of a Shift's P.
const (
	pExact  = "exact"
	PApprox = "normal approximation"
)

// mannWhitney returns the two-sided p-value of the Mann-Whitney U test of a
// against b: the probability, over all C(n, len(a)) equally likely ways to
// split the n pooled ranks, of a rank sum at least as far from its mean as
// the observed one; and whether it is exact.
//
// Without ties, up to ExactLimit observations, it is the exact
// distribution of U (uLowerTail); with ties, up to ExactTiedLimit, the exact
// permutation distribution of the midrank sum (rankSumTail: the conditional
// test given the tie pattern). Above: the normal approximation with tie
// correction and continuity correction, and exact is false.
func mannWhitney(a, b []float64) (p float64, exact bool) {
	if len(a) == 0 || len(b) == 0 {
		return 1, true
	}
	if len(a) > len(b) {
		a, b = b, a // the same p; the exact tails run over the smaller sample
	}
	ranks2, tied, ties := midranks2(a, b)
	m, n := len(a), len(b)
	var w2 int // twice the rank sum of a
	for _, r := range ranks2[:m] {
		w2 += r
	}
	mean2 := m * (m + n + 1) // twice the mean rank sum
	dev := max(w2-mean2, mean2-w2)
	switch {
	case dev == 0 && (!tied && m+n <= exactLimit || tied && m+n <= ExactTiedLimit):
		return 1, true
	case !tied && m+n <= exactLimit:
		// W = U + m(m+1)/2; U is symmetric about mn/2: p = 2 P(U ≤ min(U, mn − U)).
		u := (w2 - m*(m+1)) / 2
		return math.Min(1, 2*uLowerTail(m, n, min(u, m*n-u))), true
	case tied && m+n <= ExactTiedLimit:
		// Twice the rank sum at most mean2 − dev, or at least mean2 + dev:
		// with the ranks reversed (r → 2(N+1) − r) the second is the first.
		rev := make([]int, len(ranks2))
		for i, r := range ranks2 {
			rev[i] = 2*(m+n+1) - r
		}
		return math.Min(1, rankSumTail(ranks2, m, mean2-dev)+rankSumTail(rev, m, mean2-dev)), true
	}
	return mannWhitneyNormal(w2, m, n, ties), false
}

// uLowerTail is P(U ≤ lo) for the Mann-Whitney U of samples of m and n
// distinct values. The counts of U are the coefficients of the Gaussian
// binomial [m+n choose k]_q, k = min(m, n), l = max(m, n): the product over
// i = 1..k of (1 − q^(l+i)) / (1 − q^i), built factor by factor and kept a
// probability distribution (the i-th step multiplied by i / (l+i)), and
// truncated at degree lo: no step moves mass to a lower degree. k·lo steps.
func uLowerTail(m, n, lo int) float64 {
	if lo < 0 {
		return 0
	}
	k, l := min(m, n), max(m, n)
	c := make([]float64, lo+1)
	c[0] = 1
	for i := 1; i <= k; i++ {
		for u := i; u <= lo; u++ { // ÷ (1 − q^i)
			c[u] += c[u-i]
		}
		// × (1 − q^(l+i)) · i/(l+i), from the top: c[u−l−i] is not yet
		// scaled when c[u] takes it.
		scale := float64(i) / float64(l+i)
		for u := lo; u >= 0; u-- {
			if u >= l+i {
				c[u] -= c[u-l-i]
			}
			c[u] *= scale
		}
	}
	var p float64
	for _, x := range c {
		p += x
	}
	return p
}

// rankSumTail is the probability that k of the doubled ranks ranks2, drawn
// at random without replacement, sum to at most top: the counts of the
// subsets of each size j and sum s, rank by rank in ascending order, over
// C(N, k). Only sums that can still end at most top are kept: after rank i,
// a subset of j has k − j ranks to come, each at least the next rank.
func rankSumTail(ranks2 []int, k, top int) float64 {
	if top < 0 {
		return 0
	}
	sorted := slices.Clone(ranks2)
	slices.Sort(sorted)
	n := len(sorted)
	least := make([]int, k+1) // the smallest sum of j ranks
	for j := 1; j <= k; j++ {
		least[j] = least[j-1] + sorted[j-1]
	}
	c := make([][]float64, k+1)
	for j := range c {
		c[j] = make([]float64, top+1)
	}
	c[0][0] = 1
	for i, r := range sorted {
		// Subsets of size j among the first i+1 ranks that can still grow
		// to k with the n−i−1 left.
		for j := min(k, i+1); j >= max(1, k-(n-i-1)); j-- {
			hi := top
			if i+1 < n {
				hi = min(top, top-(k-j)*sorted[i+1])
			}
			prev, cur := c[j-1], c[j]
			for s := hi; s >= max(r+least[j-1], least[j]); s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	var count float64
	for _, x := range c[k] {
		count += x
	}
	return count / choose(n, k)
}

// mannWhitneyNormal is the normal approximation of the two-sided p: w2 twice
// the rank sum of the first sample, ties Σ(t³ − t) over the tie groups.
func mannWhitneyNormal(w2, na, nb int, ties float64) float64 {
	fa, fb, fn := float64(na), float64(nb), float64(na+nb)
	u := float64(w2)/2 - fa*(fa+1)/2
	mu := fa * fb / 2
	sigma := math.Sqrt(fa * fb / 12 * ((fn + 1) - ties/(fn*(fn-1))))
	if sigma == 0 {
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / sigma // continuity correction
	if z < 0 {
		z = 0
	}
	return math.Erfc(z / math.Sqrt2)
}

// midranks2 ranks a and b pooled, ties taking the mean of their ranks, and
// returns twice each rank (an integer) in the order a then b, whether there
// are ties, and Σ(t³ − t) over the tie groups.
func midranks2(a, b []float64) (ranks2 []int, tied bool, ties float64) {
	vals := slices.Concat(a, b)
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return vals[idx[i]] < vals[idx[j]] })
	ranks2 = make([]int, len(idx))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && vals[idx[j]] == vals[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			ranks2[idx[k]] = i + j + 1 // ranks i+1..j averaged, doubled
		}
		if t := float64(j - i); t > 1 {
			tied = true
			ties += t*t*t - t
		}
		i = j
	}
	return ranks2, tied, ties
}
