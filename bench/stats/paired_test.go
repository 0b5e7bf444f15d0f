package stats_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/stats"
)

// TestPairedRatio: the rounds' ratios' geometric mean and its interval,
// against values computed by hand from Student's t quantile.
func TestPairedRatio(t *testing.T) {
	// Ratios 1.1, 1.1², 1.1³: logarithms ln 1.1 × {1, 2, 3}, mean 2 ln 1.1,
	// standard deviation ln 1.1; the interval 1.21 × 1.1^(∓t/√3), t the
	// 97.5% quantile of Student's t with 2 degrees of freedom (R:
	// qt(0.975, 2)).
	const t975df2 = 4.302652729749464
	p := stats.PairedRatio([]float64{100, 200, 400}, []float64{110, 242, 532.4}, 3)
	e := t975df2 / math.Sqrt(3)
	if want := [3]float64{1.21, 1.21 * math.Pow(1.1, -e), 1.21 * math.Pow(1.1, e)}; p.N != 3 ||
		relDiff(p.Ratio, want[0]) > 1e-12 || relDiff(p.Lo, want[1]) > 1e-12 || relDiff(p.Hi, want[2]) > 1e-12 {
		t.Errorf("ratios 1.1, 1.21, 1.331: %+v, want %d pairs, %.15g [%.15g, %.15g]", p, 3, want[0], want[1], want[2])
	}
	p = stats.PairedRatio([]float64{100, 200, 400}, []float64{110, 220, 440}, 3)
	if relDiff(p.Ratio, 1.1) > 1e-12 || relDiff(p.Lo, 1.1) > 1e-12 || relDiff(p.Hi, 1.1) > 1e-12 ||
		p.Verdict != stats.VerdictSignificant {
		t.Errorf("equal ratios 1.1: %+v, want 1.1 [1.1, 1.1], significant", p)
	}
	// A pair without both values positive is left out.
	if p := stats.PairedRatio([]float64{1, 0, 2}, []float64{2, 3, 4}, 3); p.N != 2 || p.Ratio != 2 {
		t.Errorf("a zero in the second pair: %+v, want the 2 other pairs, ratio 2", p)
	}
	if p := stats.PairedRatio([]float64{1}, []float64{2}, 3); p.N != 1 || p.Ratio != 0 ||
		p.Verdict != stats.VerdictInconclusive || p.RoundsNeeded != 0 {
		t.Errorf("one round: %+v, want no interval, inconclusive", p)
	}
}

// TestPairedRatioAgainstR compares PairedRatio with R's one-sample t.test
// of the rounds' log ratios (the paired t interval on the logarithms),
// exponentiated, and its verdict and rounds needed with the same rules
// written in R on R's qt: rounds from a fixed seed, all moved, A/A, few and
// many, one pair with a zero left out.
func TestPairedRatioAgainstR(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261207, 39))
	pairs := func(n int, ratio, noise float64) [2][]float64 {
		var b, c []float64
		for range n {
			x := 100 * (1 + 0.2*rng.Float64()) // the machine's drift, shared by the pair
			b, c = append(b, x*(1+noise*rng.NormFloat64())), append(c, x*ratio*(1+noise*rng.NormFloat64()))
		}
		return [2][]float64{b, c}
	}
	cases := [][2][]float64{pairs(2, 1.03, 0.01), pairs(4, 1.03, 0.005), pairs(6, 1, 0.04), pairs(6, 1, 0.002),
		pairs(8, 0.97, 0.02), pairs(12, 1.01, 0.01), pairs(40, 1.02, 0.03), pairs(200, 0.999, 0.01),
		{{100, 0, 110, 90}, {103, 50, 112, 95}}}
	var data strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&data, "%s\t%s\n", hexList(c[0]), hexList(c[1]))
	}
	out := runR(t, rPairedScript, data.String())
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(cases)+1 {
		t.Fatalf("R printed %d lines, want %d:\n%s", len(lines), len(cases)+1, out)
	}
	t.Log(lines[0])
	kinds, worst := map[string]int{}, 0.0
	for i, c := range cases {
		p := stats.PairedRatio(c[0], c[1], 3)
		f := strings.Split(lines[i+1], "\t")
		got := fmt.Sprintf("%d %s %d", p.N, p.Verdict, p.RoundsNeeded)
		if len(f) != 6 || got != strings.Join([]string{f[0], f[4], f[5]}, " ") {
			t.Errorf("case %d: pairs, verdict, rounds needed %q, R %q", i, got, lines[i+1])
			continue
		}
		kinds[p.Verdict]++
		for j, v := range []float64{p.Ratio, p.Lo, p.Hi} {
			r, err := strconv.ParseFloat(f[1+j], 64)
			d := relDiff(v, r)
			if worst = math.Max(worst, d); err != nil || d > 1e-9 {
				t.Errorf("case %d: %s %.17g, R %s (relative difference %.3g)", i, []string{"ratio", "lo", "hi"}[j], v, f[1+j], d)
			}
		}
		t.Logf("case %d: %d pairs, %.4f [%.4f, %.4f] %s %d", i, p.N, p.Ratio, p.Lo, p.Hi, p.Verdict, p.RoundsNeeded)
	}
	t.Logf("largest relative difference from R: %.3g", worst)
	if len(kinds) != 3 {
		t.Errorf("verdicts met %v: want each of the three", kinds)
	}
}

// rPairedScript reads pairs of samples (hexadecimal doubles, read exactly),
// and prints R's version, then per line: the pairs with both values
// positive, the geometric mean of their ratios and its 95% interval
// (t.test of the log ratios), the verdict at ±3% and the rounds needed.
const rPairedScript = `
cat(R.version.string, "\n", sep = "")
num <- function(s) as.numeric(strsplit(s, ",", fixed = TRUE)[[1]])
for (line in readLines(commandArgs(trailingOnly = TRUE)[1])) {
  f <- strsplit(line, "\t", fixed = TRUE)[[1]]
  x <- num(f[1]); y <- num(f[2]); keep <- x > 0 & y > 0
  l <- log(y[keep] / x[keep]); n <- length(l)
  ci <- exp(t.test(l, conf.level = 0.95)$conf.int)
  m <- mean(l); s <- sd(l); need <- 0
  if (ci[1] > 1 || ci[2] < 1) {
    v <- "significant"
  } else if (ci[1] >= 0.97 && ci[2] <= 1.03) {
    v <- "equivalent"
  } else {
    v <- "inconclusive"
    settle <- max(abs(m), min(log(1.03) - m, m - log(0.97)))
    for (k in 2:10000) if (qt(0.975, k - 1) * s / sqrt(k) < settle) { need <- k; break }
  }
  cat(n, sprintf("%.17g", c(exp(m), ci)), v, need, sep = "\t")
  cat("\n")
}
`
