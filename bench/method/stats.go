package method

import (
	"math"
	"sort"
)

// Difference of two samples: candidate minus baseline.
type Shift struct {
	Baseline, Candidate Moments
	// Delta is mean(candidate) − mean(baseline); CI95 its 95% confidence
	// half-width (Welch's t interval).
	Delta float64 `json:"delta"`
	CI95  float64 `json:"ci95"`
	// P is the two-sided p-value of the Mann-Whitney rank test.
	P float64 `json:"p"`
	// Significant is P below Alpha and a confidence interval that does not
	// contain zero.
	Significant bool `json:"significant"`
}

// Moments summarises one sample.
type Moments struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Alpha is the significance level of the impact study.
const Alpha = 0.01

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

// Compare tests whether candidate differs from baseline.
func Compare(baseline, candidate []float64) Shift {
	s := Shift{Baseline: MomentsOf(baseline), Candidate: MomentsOf(candidate), P: 1}
	b, c := s.Baseline, s.Candidate
	if b.N < 2 || c.N < 2 {
		return s
	}
	s.Delta = c.Mean - b.Mean
	vb, vc := b.StdDev*b.StdDev/float64(b.N), c.StdDev*c.StdDev/float64(c.N)
	se := math.Sqrt(vb + vc)
	if se > 0 {
		// Welch–Satterthwaite degrees of freedom.
		df := (vb + vc) * (vb + vc) / (vb*vb/float64(b.N-1) + vc*vc/float64(c.N-1))
		s.CI95 = tQuantile975(df) * se
	}
	s.P = mannWhitney(baseline, candidate)
	s.Significant = s.P < Alpha && math.Abs(s.Delta) > s.CI95
	return s
}

// tQuantile975 is the 97.5% quantile of Student's t with df degrees of
// freedom (exact table to 30, then the Cornish-Fisher expansion).
func tQuantile975(df float64) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df < 1 {
		df = 1
	}
	if df <= 30 {
		return table[int(math.Floor(df))-1]
	}
	z := 1.959963985
	return z + (z*z*z+z)/(4*df) + (5*math.Pow(z, 5)+16*z*z*z+3*z)/(96*df*df)
}

// mannWhitney returns the two-sided p-value of the Mann-Whitney U test
// (normal approximation with tie correction).
func mannWhitney(a, b []float64) float64 {
	type obs struct {
		v    float64
		from int
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, obs{v, 0})
	}
	for _, v := range b {
		all = append(all, obs{v, 1})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	n := float64(len(all))
	var rankA, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1..j, averaged
		for k := i; k < j; k++ {
			if all[k].from == 0 {
				rankA += rank
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	na, nb := float64(len(a)), float64(len(b))
	u := rankA - na*(na+1)/2
	mu := na * nb / 2
	sigma := math.Sqrt(na * nb / 12 * ((n + 1) - ties/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / sigma // continuity correction
	if z < 0 {
		z = 0
	}
	return math.Erfc(z / math.Sqrt2)
}
