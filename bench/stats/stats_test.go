package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestShiftOf(t *testing.T) {
	// Two samples whose means differ by exactly 10 with little noise.
	var b, c []float64
	for i := 0; i < 30; i++ {
		noise := float64(i%5) - 2 // -2..2
		b = append(b, 20+noise)
		c = append(c, 30+noise)
	}
	s := ShiftOf(b, c)
	if math.Abs(s.Delta-10) > 1e-9 || !s.Significant || s.P > 1e-6 || s.Verdict != VerdictSignificant {
		t.Errorf("shift %+v: want +10, significant", s)
	}
	// Same distribution: not significant.
	s = ShiftOf(b, append([]float64(nil), b...))
	if s.Delta != 0 || s.Significant || s.P < 0.5 {
		t.Errorf("identical samples: %+v", s)
	}
}

// TestTQuantileTable checks Student's t quantiles at integer degrees of
// freedom against the printed table (e.g. Abramowitz & Stegun, table 26.10;
// any statistics textbook's "t table", 3 decimals).
func TestTQuantileTable(t *testing.T) {
	for _, tc := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706}, {0.975, 2, 4.303}, {0.975, 3, 3.182}, {0.975, 4, 2.776}, {0.975, 5, 2.571},
		{0.975, 10, 2.228}, {0.975, 20, 2.086}, {0.975, 30, 2.042}, {0.975, 60, 2.000}, {0.975, 120, 1.980},
		{0.99, 1, 31.821}, {0.99, 2, 6.965}, {0.99, 3, 4.541}, {0.99, 5, 3.365}, {0.99, 10, 2.764}, {0.99, 30, 2.457},
	} {
		if got := tQuantile(tc.p, tc.df); math.Abs(got-tc.want) > 0.0005 {
			t.Errorf("t(%v, %v) = %.4f, want %.3f", tc.p, tc.df, got, tc.want)
		}
	}
}

// tDensity is Student's t density with nu degrees of freedom.
func tDensity(x, nu float64) float64 {
	a, _ := math.Lgamma((nu + 1) / 2)
	b, _ := math.Lgamma(nu / 2)
	return math.Exp(a-b) / math.Sqrt(nu*math.Pi) * math.Pow(1+x*x/nu, -(nu+1)/2)
}

// integrate is composite Simpson's rule of f over [a, b] in n (even) steps.
func integrate(f func(float64) float64, a, b float64, n int) float64 {
	h := (b - a) / float64(n)
	sum := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(a+float64(i)*h)
	}
	return sum * h / 3
}

// TestTQuantileFractional checks quantiles at fractional degrees of freedom
// by another route: the density integrated numerically from 0 to the
// quantile must hold p − ½ of the mass. Closed forms at df 1 and 2 as well.
func TestTQuantileFractional(t *testing.T) {
	for _, nu := range []float64{1.2, 1.5, 1.99, 2.5, 3.7, 5.5, 7.3, 14.6, 41.8} {
		for _, p := range []float64{0.975, 0.99} {
			q := tQuantile(p, nu)
			mass := integrate(func(x float64) float64 { return tDensity(x, nu) }, 0, q, 200000)
			if math.Abs(mass-(p-0.5)) > 1e-8 {
				t.Errorf("df %v: ∫₀^%.6f density = %.10f, want %.10f", nu, q, mass, p-0.5)
			}
		}
	}
	// df = 1 is Cauchy: tan(π(p − ½)); df = 2: (2p − 1)/√(2p(1 − p)).
	if got, want := tQuantile(0.975, 1), math.Tan(math.Pi*0.475); math.Abs(got-want) > 1e-9 {
		t.Errorf("t(0.975, 1) = %v, want %v", got, want)
	}
	if got, want := tQuantile(0.975, 2), 0.95/math.Sqrt(2*0.975*0.025); math.Abs(got-want) > 1e-9 {
		t.Errorf("t(0.975, 2) = %v, want %v", got, want)
	}
	// The table floored df: at df 1.99 it used df 1 (12.706), 2.9× the
	// true quantile.
	if r := 12.706 / tQuantile(0.975, 1.99); r < 2.9 || r > 3 {
		t.Errorf("12.706 / t(0.975, 1.99) = %.2f, want 2.9", r)
	}
}

// withU returns samples of sizes m and n without ties whose Mann-Whitney U
// (pairs with the first sample's value above the second's) is u.
func withU(m, n, u int) (a, b []float64) {
	for j := 1; j <= n; j++ {
		b = append(b, float64(2*j))
	}
	for i := 0; i < m; i++ {
		k := min(u, n) // a[i] is above k of b
		u -= k
		a = append(a, float64(2*k+1)+float64(i)*0.001)
	}
	return a, b
}

// exactP is mannWhitney's p, which must say it is exact.
func exactP(t *testing.T, a, b []float64) float64 {
	t.Helper()
	p, exact := mannWhitney(a, b)
	if !exact {
		t.Fatalf("%d vs %d: p %v not exact", len(a), len(b), p)
	}
	return p
}

// TestMannWhitneyExact checks exact p-values against their closed forms
// and the published critical values of U (two-sided; e.g. the Mann-Whitney
// table in Siegel & Castellan, or any textbook's): the critical U has
// p ≤ α and U + 1 has p > α.
func TestMannWhitneyExact(t *testing.T) {
	for _, tc := range []struct {
		m, n, u int
		want    float64
	}{
		{5, 5, 0, 2.0 / 252},  // complete separation, 5 vs 5: 0.00794 (the normal approximation said 0.0122)
		{4, 4, 0, 2.0 / 70},   // 4 vs 4: 0.0286, never below 0.01
		{3, 3, 0, 2.0 / 20},   // 3 vs 3: 0.1
		{2, 2, 0, 2.0 / 6},    // 2 vs 2: 0.333
		{5, 5, 2, 8.0 / 252},  // P(U ≤ 2) = (1+1+2)/252
		{4, 6, 0, 2.0 / 210},  // unequal sizes
		{5, 5, 25, 2.0 / 252}, // the other direction
		{1, 1, 0, 1},          // 1 vs 1: both splits as far
		{3, 4, 6, 1},          // U at the mean, mn/2
	} {
		a, b := withU(tc.m, tc.n, tc.u)
		if got := exactP(t, a, b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%d vs %d, U = %d: p = %.6f, want %.6f", tc.m, tc.n, tc.u, got, tc.want)
		}
		if got := exactP(t, b, a); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%d vs %d, U = %d, samples swapped: p = %.6f, want %.6f", tc.m, tc.n, tc.u, got, tc.want)
		}
	}
	for _, tc := range []struct {
		n        int
		alpha    float64
		critical int
	}{
		{5, 0.05, 2}, {5, 0.01, 0}, {6, 0.05, 5}, {6, 0.01, 2}, {7, 0.05, 8}, {7, 0.01, 4},
		{8, 0.05, 13}, {8, 0.01, 7}, {10, 0.05, 23}, {10, 0.01, 16}, {20, 0.05, 127}, {20, 0.01, 105},
	} {
		a, b := withU(tc.n, tc.n, tc.critical)
		at := exactP(t, a, b)
		a, b = withU(tc.n, tc.n, tc.critical+1)
		above := exactP(t, a, b)
		if at > tc.alpha || above <= tc.alpha {
			t.Errorf("%d vs %d, α %v: p(U=%d) = %.4f, p(U=%d) = %.4f; the table's critical U is %d",
				tc.n, tc.n, tc.alpha, tc.critical, at, tc.critical+1, above, tc.critical)
		}
	}
}

// TestMannWhitneyExactLarge: the exact p beyond 60 observations (where the
// normal approximation was used), against the exact two-sided p that R's
// wilcox.test(exact = TRUE) gives, min(1, 2 P(U ≤ min(U, mn − U))), computed
// independently with integer arithmetic (the counts of U as the Gaussian
// binomial's coefficients in Python's big integers, over C(m+n, m)). At 5
// vs 60, U = 45 to 49 is significant at 0.01 (exact p 0.0069 to 0.0100);
// the normal approximation said 0.0101 to 0.0134, not significant.
func TestMannWhitneyExactLarge(t *testing.T) {
	for _, tc := range []struct {
		m, n, u  int
		want     float64
		signific bool // p < 0.01
	}{
		{5, 60, 44, 0.0062831360425226104, true},
		{5, 60, 45, 0.006915348004718708, true},
		{5, 60, 46, 0.0075976817119069893, true},
		{5, 60, 47, 0.0083323163703914634, true},
		{5, 60, 48, 0.0091231261247125862, true},
		{5, 60, 49, 0.0099722901811743689, true},
		{5, 60, 50, 0.010883924818351048, false},
		{5, 60, 255, 0.006915348004718708, true}, // U = 45 the other way
		{5, 60, 20, 0.00027240078800099953, true},
		{5, 60, 100, 0.23076777796502809, false},
		{3, 80, 20, 0.0077926883686507548, true}, // normal: 0.0152
		{10, 10, 23, 0.04325705254497824, false},
		{30, 30, 250, 0.0027380550958255737, true},
		{30, 40, 400, 0.01722002088081788, false},
		{60, 60, 1300, 0.008417142677629658, true},
		{60, 60, 1400, 0.035677658186400368, false},
		{100, 100, 3900, 0.0070346639029586445, true},
		{100, 100, 4200, 0.050618476080005838, false},
		{200, 200, 17000, 0.0093749220151016985, true},
	} {
		a, b := withU(tc.m, tc.n, tc.u)
		got := exactP(t, a, b)
		if math.Abs(got-tc.want) > 1e-12*math.Max(1, 1/tc.want) || (got < Alpha) != tc.signific {
			t.Errorf("%d vs %d, U = %d: p = %.17g, want %.17g", tc.m, tc.n, tc.u, got, tc.want)
		}
		if s := ShiftOf(a, b); s.PMethod != pExact || s.PNote() != "" {
			t.Errorf("%d vs %d: p method %q, note %q", tc.m, tc.n, s.PMethod, s.PNote())
		}
	}
}

// TestMannWhitneyTies: with ties the exact p is the permutation p over the
// midranks, checked by enumerating every split, and at 30 vs 40, 60 vs 60
// and 5 vs 60 against the exact permutation p computed independently (every
// subset's midrank sum counted in Python's big integers); without ties the
// two exact routes (U's Gaussian binomial, rank-sum counts) agree.
func TestMannWhitneyTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 60; trial++ {
		m, n := 2+rng.IntN(6), 2+rng.IntN(6)
		var a, b []float64
		for range m {
			a = append(a, float64(rng.IntN(4)))
		}
		for range n {
			b = append(b, float64(rng.IntN(4)+rng.IntN(2)))
		}
		got := exactP(t, a, b)
		if want := bruteForceP(a, b); math.Abs(got-want) > 1e-12 {
			t.Errorf("%v vs %v: p = %.6f, enumeration %.6f", a, b, got, want)
		}
	}
	for _, tc := range []struct {
		m, n int
		want float64
	}{{30, 40, 0.083518572221241968}, {60, 60, 0.019803045729389866}, {5, 60, 0.2306600283199966}} {
		var a, b []float64
		for i := range tc.m {
			a = append(a, float64(i*7%10))
		}
		for j := range tc.n {
			b = append(b, float64(j*3%11+1))
		}
		if got := exactP(t, a, b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("tied %d vs %d: p = %.17g, want %.17g", tc.m, tc.n, got, tc.want)
		}
	}
	for _, sizes := range [][2]int{{3, 4}, {5, 5}, {6, 9}, {10, 12}, {20, 30}} {
		m, n := sizes[0], sizes[1]
		ranks := make([]int, m+n)
		for i := range ranks {
			ranks[i] = 2 * (i + 1)
		}
		for u := 0; u <= m*n/2; u++ {
			// 2W = 2U + m(m+1).
			byU, bySum := uLowerTail(m, n, u), rankSumTail(ranks, m, 2*u+m*(m+1))
			if math.Abs(byU-bySum) > 1e-12*byU {
				t.Fatalf("%v: P(U ≤ %d) = %g by U, %g by rank sums", sizes, u, byU, bySum)
			}
		}
	}
}

// bruteForceP enumerates every way to split the pooled midranks.
func bruteForceP(a, b []float64) float64 {
	ranks2, _, _ := midranks2(a, b)
	m, n := len(a), len(ranks2)
	var obs int
	for _, r := range ranks2[:m] {
		obs += r
	}
	mean := m * (n + 1)
	var far, all float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != m {
			continue
		}
		var s int
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				s += ranks2[i]
			}
		}
		all++
		if abs(s-mean) >= abs(obs-mean) {
			far++
		}
	}
	return far / all
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

// TestMannWhitneyApproximate: above ExactLimit observations (ExactTiedLimit
// with ties) p is the normal approximation, and the shift says so; its
// summary's reason writes "(normal approximation)" after p.
func TestMannWhitneyApproximate(t *testing.T) {
	half := exactLimit/2 + 1
	a, b := withU(half, half, half*half/2-3*half)
	p, exact := mannWhitney(a, b)
	if exact {
		t.Errorf("%d vs %d: exact, above ExactLimit", half, half)
	}
	ranks2, _, _ := midranks2(a, b)
	var w2 int
	for _, r := range ranks2[:half] {
		w2 += r
	}
	if want := mannWhitneyNormal(w2, half, half, 0); p != want {
		t.Errorf("%d vs %d: p %v, normal approximation %v", half, half, p, want)
	}
	// Tied: 61 vs 61 values among 0..9.
	var ta, tb []float64
	for i := range ExactTiedLimit/2 + 1 {
		ta, tb = append(ta, float64(i%10)), append(tb, float64(i*3%10))
	}
	if _, exact := mannWhitney(ta, tb); exact {
		t.Errorf("tied %d vs %d: exact, above ExactTiedLimit", len(ta), len(tb))
	}
	s := ShiftOf(ta, tb)
	if s.PMethod != PApprox || s.Verdict != VerdictInconclusive ||
		!strings.Contains(s.Reason, " (normal approximation) ") {
		t.Errorf("tied %d a side: method %q, verdict %s, reason %q", len(ta), s.PMethod, s.Verdict, s.Reason)
	}
	if s := ShiftOf(ta[:60], tb[:60]); s.PMethod != pExact || strings.Contains(s.Reason, "approximation") {
		t.Errorf("tied 60 a side: method %q, reason %q", s.PMethod, s.Reason)
	}
}

// TestMannWhitneyLargestTime measures the exact p at the largest sizes it
// is computed for: ExactLimit observations without ties, ExactTiedLimit
// with ties, U at the middle (the longest tails).
func TestMannWhitneyLargestTime(t *testing.T) {
	half := exactLimit / 2
	a, b := withU(half, half, half*half/2-1)
	start := time.Now()
	p := exactP(t, a, b)
	untied := time.Since(start)
	var ta, tb []float64
	for i := range ExactTiedLimit / 2 {
		ta, tb = append(ta, float64(i%50)), append(tb, float64(i%50))
	}
	tb[0] = 100 // one value above all: the smallest shift from the middle
	start = time.Now()
	tp := exactP(t, ta, tb)
	tied := time.Since(start)
	t.Logf("%d vs %d without ties: p %.4f in %v; %d vs %d with ties: p %.4f in %v", half, half, p, untied,
		len(ta), len(tb), tp, tied)
	if p < 0.9 || tp < 0.5 || tp >= 1 {
		t.Errorf("p %v without ties, %v with ties", p, tp)
	}
	if untied > 20*time.Second || tied > 20*time.Second {
		t.Errorf("the exact p took %v without ties, %v with ties", untied, tied)
	}
}

// TestVerdicts crafts samples for each verdict.
func TestVerdicts(t *testing.T) {
	noisy := func(mean, spread float64, n int, seed uint64) []float64 {
		rng := rand.New(rand.NewPCG(seed, 7))
		var xs []float64
		for range n {
			xs = append(xs, mean*(1+spread*(rng.Float64()-0.5)))
		}
		return xs
	}
	for _, tc := range []struct {
		name    string
		b, c    []float64
		verdict string
		reason  []string
		rounds  int // RoundsNeeded; -1: any > the sample size
	}{
		// 8 rounds a side, candidate 20% slower, 2% noise.
		{"significant", noisy(10, 0.02, 8, 1), noisy(12, 0.02, 8, 2), VerdictSignificant, nil, 0},
		// 8 rounds a side, the same target, 1% noise: within ±5%.
		{"equivalent", noisy(10, 0.01, 8, 3), noisy(10, 0.01, 8, 4), VerdictEquivalent, nil, 0},
		// 3.4× slower, 4 rounds a side: the rank test cannot get below 0.01.
		{"3.4× slower, 4 a side", []float64{1.0, 1.1, 0.9, 1.05}, []float64{3.4, 3.5, 3.3, 3.45}, VerdictInconclusive,
			[]string{"4 rounds a side cannot reach p < 0.01: the smallest possible p is 0.029", "outside the bound", "about 5 rounds a side would be needed"}, 5},
		// The same target with 20% noise and 4 rounds: the interval is
		// wider than the bound; more rounds would narrow it.
		{"noisy, 4 a side", noisy(10, 0.2, 4, 5), noisy(10, 0.2, 4, 6), VerdictInconclusive,
			[]string{"cannot reach p < 0.01", "wider than the bound ±0.5"}, -1},
		// One round a side: no spread.
		{"1 a side", []float64{1}, []float64{2}, VerdictInconclusive, []string{"1 round a side: no spread to test with"}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ShiftWithin(tc.b, tc.c, 5)
			t.Logf("%s: %s", s.Verdict, s.Reason)
			if s.Verdict != tc.verdict {
				t.Fatalf("verdict %q, want %q: %+v", s.Verdict, tc.verdict, s)
			}
			for _, w := range tc.reason {
				if !strings.Contains(s.Reason, w) {
					t.Errorf("reason %q lacks %q", s.Reason, w)
				}
			}
			if tc.verdict != VerdictInconclusive && (s.Reason != "" || s.RoundsNeeded != 0) {
				t.Errorf("%s with reason %q, rounds needed %d", s.Verdict, s.Reason, s.RoundsNeeded)
			}
			switch {
			case tc.rounds > 0 && s.RoundsNeeded != tc.rounds:
				t.Errorf("rounds needed %d, want %d", s.RoundsNeeded, tc.rounds)
			case tc.rounds < 0 && s.RoundsNeeded <= len(tc.b):
				t.Errorf("rounds needed %d, want more than %d", s.RoundsNeeded, len(tc.b))
			}
			if math.Abs(s.EquivalenceBound-0.05*s.Baseline.Mean) > 1e-12 {
				t.Errorf("bound %v, want 5%% of %v", s.EquivalenceBound, s.Baseline.Mean)
			}
		})
	}
}

// shaped returns n values with exactly the given mean and sample standard
// deviation.
func shaped(n int, mean, sd float64) []float64 {
	z := make([]float64, n)
	for i := range z {
		z[i] = float64(i) // any pattern with spread
	}
	m := momentsOf(z)
	for i := range z {
		z[i] = mean + sd*(z[i]-m.Mean)/m.StdDev
	}
	return z
}

// TestRoundsNeededSettles: samples with the same means and spreads as an
// inconclusive study, at the rounds it says are needed, are settled (and
// one round fewer is not): for equivalence and for significance.
func TestRoundsNeededSettles(t *testing.T) {
	for _, tc := range []struct {
		name             string
		bMean, cMean, sd float64
		want             string
	}{
		{"same mean, σ 4%", 10, 10.1, 0.4, VerdictEquivalent},
		{"+10%, σ 10%", 10, 11, 1, VerdictSignificant},
	} {
		s := ShiftWithin(shaped(4, tc.bMean, tc.sd), shaped(4, tc.cMean, tc.sd), 5)
		n := s.RoundsNeeded
		if s.Verdict != VerdictInconclusive || n <= 4 {
			t.Fatalf("%s, 4 a side: %s", tc.name, s.Reason)
		}
		at := ShiftWithin(shaped(n, tc.bMean, tc.sd), shaped(n, tc.cMean, tc.sd), 5)
		before := ShiftWithin(shaped(n-1, tc.bMean, tc.sd), shaped(n-1, tc.cMean, tc.sd), 5)
		t.Logf("%s: %d rounds needed; at %d: %s", tc.name, n, n, at.Verdict)
		if at.Verdict != tc.want || before.Verdict == tc.want && tc.want == VerdictEquivalent {
			t.Errorf("%s: at %d rounds %s, at %d %s; want %s from %d", tc.name, n, at.Verdict, n-1, before.Verdict, tc.want, n)
		}
	}
}
