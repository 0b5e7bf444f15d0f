// Package stats compares two samples of measurements: their moments, Welch's
// t interval of the shift (Student's t quantiles from gonum's distuv), the
// Mann-Whitney rank test, two one-sided tests for equivalence within a bound,
// and the verdict they give together. Pure functions on numbers.
package stats

import (
	"fmt"
	"math"
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
	Baseline, Candidate Moments
	// Delta is mean(candidate) − mean(baseline); CI95 its 95% confidence
	// half-width (Welch's t interval, Student's t at the fractional
	// Welch–Satterthwaite degrees of freedom).
	Delta float64 `json:"delta"`
	CI95  float64 `json:"ci95"`
	// P is the two-sided p-value of the Mann-Whitney rank test (exact for
	// small samples, see mannWhitney).
	P float64 `json:"p"`
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

// Moments summarises one sample.
type Moments struct {
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

// MomentsOf summarises xs.
func MomentsOf(xs []float64) Moments {
	m := Moments{N: len(xs)}
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
	s := Shift{Baseline: MomentsOf(baseline), Candidate: MomentsOf(candidate), P: 1, EquivalenceP: 1,
		EquivalenceBoundPct: boundPct, Verdict: VerdictInconclusive}
	b, c := s.Baseline, s.Candidate
	s.EquivalenceBound = math.Abs(b.Mean) * boundPct / 100
	s.MinP = minRankP(b.N, c.N)
	if b.N < 2 || c.N < 2 {
		s.Delta = c.Mean - b.Mean
		s.RoundsNeeded = rankRoundsNeeded()
		s.Reason = fmt.Sprintf("%s a side: no spread to test with; at least %d rounds a side would be needed", s.RoundsText(), s.RoundsNeeded)
		return s
	}
	s.Delta = c.Mean - b.Mean
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
	s.P = mannWhitney(baseline, candidate)
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
		why = append(why, fmt.Sprintf("%s a side cannot reach p < %g: the smallest possible p is %.3f", s.RoundsText(), Alpha, s.MinP))
	case s.P >= Alpha:
		why = append(why, fmt.Sprintf("p = %.3g is not below %g", s.P, Alpha))
	default:
		why = append(why, fmt.Sprintf("p = %.3g but the 95%% interval ±%.3g includes zero", s.P, s.CI95))
	}
	switch {
	case s.EquivalenceBound == 0:
		why = append(why, "the bound is zero (baseline mean zero)")
	case math.Abs(s.Delta) >= s.EquivalenceBound:
		why = append(why, fmt.Sprintf("the shift %+.3g is outside the bound ±%.3g", s.Delta, s.EquivalenceBound))
	default:
		why = append(why, fmt.Sprintf("the 98%% interval %+.3g ± %.3g is wider than the bound ±%.3g", s.Delta, s.CI98, s.EquivalenceBound))
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

// exactLimit is the largest n1+n2 for which mannWhitney counts the exact
// permutation distribution; above it the normal approximation (with tie
// correction) is within a few thousandths of it.
const exactLimit = 60

// mannWhitney returns the two-sided p-value of the Mann-Whitney U test of a
// against b: the probability, over all C(n, len(a)) equally likely ways to
// split the n pooled ranks, of a rank sum at least as far from its mean as
// the observed one.
//
// Up to exactLimit observations the distribution is exact. Without ties it
// is that of U by the standard recurrence (uCounts); with ties it is the
// exact permutation distribution of the midrank sum (rankSumCounts: the
// conditional test given the tie pattern). Above exactLimit: the normal
// approximation with tie correction and continuity correction.
func mannWhitney(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 1
	}
	ranks2, tied, ties := midranks2(a, b)
	na, nb := len(a), len(b)
	n := na + nb
	var w2 int // twice the rank sum of a
	for _, r := range ranks2[:na] {
		w2 += r
	}
	mean2 := na * (n + 1) // twice the mean rank sum
	if n <= exactLimit {
		dev := abs(w2 - mean2)
		var far, total float64
		if !tied {
			counts := uCounts(na, nb)
			// W = U + na(na+1)/2, so 2W − mean2 = 2U − na·nb.
			for u, c := range counts {
				total += c
				if abs(2*u-na*nb) >= dev {
					far += c
				}
			}
		} else {
			counts := rankSumCounts(ranks2, na)
			for s, c := range counts {
				total += c
				if c > 0 && abs(s-mean2) >= dev {
					far += c
				}
			}
		}
		return math.Min(1, far/total)
	}
	return mannWhitneyNormal(w2, na, nb, ties)
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
	idx := make([]int, len(a)+len(b))
	val := func(i int) float64 {
		if i < len(a) {
			return a[i]
		}
		return b[i-len(a)]
	}
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return val(idx[i]) < val(idx[j]) })
	ranks2 = make([]int, len(idx))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && val(idx[j]) == val(idx[i]) {
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

// uCounts returns, for u = 0..m·n, the number of arrangements of m and n
// distinct observations with Mann-Whitney U = u, by the recurrence
// f(m, n, u) = f(m−1, n, u−n) + f(m, n−1, u) (the largest observation is
// from the first sample, adding n to U, or from the second), with
// f(0, n, 0) = f(m, 0, 0) = 1.
func uCounts(m, n int) []float64 {
	// f[i][j] is the distribution for sizes i and j.
	f := make([][][]float64, m+1)
	for i := range f {
		f[i] = make([][]float64, n+1)
		for j := range f[i] {
			d := make([]float64, i*j+1)
			switch {
			case i == 0 || j == 0:
				d[0] = 1
			default:
				for u := range d {
					if u-j >= 0 && u-j < len(f[i-1][j]) {
						d[u] += f[i-1][j][u-j]
					}
					if u < len(f[i][j-1]) {
						d[u] += f[i][j-1][u]
					}
				}
			}
			f[i][j] = d
		}
	}
	return f[m][n]
}

// rankSumCounts returns, for every s, the number of ways to pick k of the
// doubled ranks ranks2 whose sum is s: the exact permutation distribution of
// twice the rank sum, ties included.
func rankSumCounts(ranks2 []int, k int) []float64 {
	var top int
	for _, r := range ranks2 {
		top += r
	}
	// c[j][s]: subsets of size j of the ranks seen so far summing to s.
	c := make([][]float64, k+1)
	for j := range c {
		c[j] = make([]float64, top+1)
	}
	c[0][0] = 1
	for _, r := range ranks2 {
		for j := k; j >= 1; j-- {
			for s := top; s >= r; s-- {
				c[j][s] += c[j-1][s-r]
			}
		}
	}
	return c[k]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
