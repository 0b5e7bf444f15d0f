package stats_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/stats"
)

// The tolerances of TestAgainstR, relative to the larger of the two values.
// With R 4.2.2 the largest differences seen are 2.5e-15 (exact p), 8e-15
// (approximate p), 4.7e-14 (CI95, CI98) and 2.4e-15 (Delta, on its scale):
// the tolerances leave four orders of magnitude or more for other R
// versions and platforms, and are still far below what a real difference
// in method does.
const (
	// Exact p: R's pwilcox counts the arrangements (integers, exact in a
	// double up to 2^53) and divides by choose(m+n, n); ours builds the
	// same distribution as probabilities, k·lo multiply-adds each off by at
	// most an ulp (1.1e-16). An off-by-one in U moves p by a whole point
	// mass: 1e-4 relatively or more at these sizes.
	rTolExact = 1e-9
	// Normal approximation: the same formula on both sides (continuity
	// correction 0.5, tie correction Σ(t³−t)/(N(N−1))), then erfc (Go)
	// against pnorm (R, Cody's algorithm). A relative error δ in z moves p
	// by about z²·δ relatively: z ≲ 13 here, so ~1e-13 at worst. Without
	// the continuity correction R's p differs from ours by 2e-4 to 2e-2 in
	// these cases.
	rTolApprox = 1e-9
	// Welch half-widths: qt(p, df) at fractional df (R) against gonum's
	// distuv.StudentsT.Quantile (inverse regularized incomplete beta),
	// times the same standard error; R's half-width is read as
	// diff(conf.int)/2, which loses about |Delta|/half·1e-16. One degree of
	// freedom more moves the 97.5% quantile by 1.1e-6 relatively even at
	// df = 1049, more than any case here has.
	rTolWelch = 1e-9
	// Delta: two means of the same numbers, summed differently (R in long
	// double with a correction pass), so the bound is absolute, on the
	// scale of the means: 1e-12·(|mean₁|+|mean₂|).
	rTolDelta = 1e-12
)

// rCase is one pair of samples given to R.
type rCase struct {
	name           string
	base, cand     []float64
	shift          stats.Shift // ShiftOf(base, cand)
	tied           bool
	mode           string // what R's wilcox.test is asked: "exact", "approx" or "none"
	p, ci95, ci98  float64
	delta          float64
	rMethod        string
	rNBase, rNCand int
}

// TestAgainstR compares ShiftOf with R (Debian package r-base-core), an
// independent implementation of the same statistics: the rank test's p with
// wilcox.test (exact=TRUE where ours is the exact distribution of U without
// ties; exact=FALSE, correct=TRUE where ours is the normal approximation,
// which has the continuity and tie corrections as R's), and CI95, CI98 and
// Delta with t.test(candidate, baseline, var.equal=FALSE). Where ours is
// the exact permutation distribution with ties, R base has no counterpart
// (its exact test refuses ties and falls back to the approximation): there
// only the Welch figures are compared.
func TestAgainstR(t *testing.T) {
	cases := rCases()
	var data strings.Builder
	for i := range cases {
		c := &cases[i]
		c.shift = stats.ShiftOf(c.base, c.cand)
		c.tied = hasTies(c.base, c.cand)
		// R is asked what ours computed, read from PMethod: the limits
		// live in stats.go and may move.
		switch {
		case c.shift.PMethod == stats.PApprox:
			c.mode = "approx"
		case c.shift.PMethod != "" && !c.tied:
			c.mode = "exact"
		default:
			c.mode = "none"
		}
		fmt.Fprintf(&data, "%s\t%s\t%s\t%s\n", c.name, c.mode, hexList(c.base), hexList(c.cand))
	}
	version := parseROutput(t, runR(t, rScript, data.String()), cases)
	t.Logf("%s, %d cases", version, len(cases))
	compareWithR(t, cases)
}

// runR runs script with Rscript on data (its first argument, a file) and
// returns what it printed. Without Rscript the test is skipped (failed when
// CI is set); it fails when R fails or writes to stderr (a warning: R did
// not compute what was asked?).
func runR(t *testing.T, script, data string) string {
	t.Helper()
	rscript, err := exec.LookPath("Rscript")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and there is no Rscript (Debian package r-base-core, make deps-test)")
		}
		t.Skip("no Rscript: install r-base-core (make deps-test) to check the statistics against R")
	}
	dir := t.TempDir()
	dataPath, scriptPath := filepath.Join(dir, "data.tsv"), filepath.Join(dir, "script.R")
	if err := os.WriteFile(dataPath, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scriptPath, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rscript, "--vanilla", scriptPath, dataPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || strings.TrimSpace(stderr.String()) != "" {
		t.Fatalf("Rscript: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// compareWithR checks every case's figures against R's, logs the largest
// relative differences, and that every kind of case was met.
func compareWithR(t *testing.T, cases []rCase) {
	worst := map[string]float64{}
	kinds := map[string]int{}
	for _, c := range cases {
		s := c.shift
		kind := c.mode
		if c.tied {
			kind += " tied"
		} else {
			kind += " untied"
		}
		kinds[kind]++
		rp := "(none)"
		if c.mode != "none" {
			rp = fmt.Sprintf("%.4g", c.p)
		}
		t.Logf("%-30s %-13s %4d+%-4d p %-10.4g R %-10s CI95 %-10.4g R %.4g",
			c.name, kind, len(c.base), len(c.cand), s.P, rp, s.CI95, c.ci95)
		if c.rNBase != len(c.base) || c.rNCand != len(c.cand) {
			t.Errorf("%s: R read %d and %d values, want %d and %d", c.name, c.rNBase, c.rNCand, len(c.base), len(c.cand))
			continue
		}
		check := func(what string, got, want, tol float64) {
			d := relDiff(got, want)
			worst[what] = math.Max(worst[what], d)
			if d > tol || math.IsNaN(d) {
				t.Errorf("%s (%s, %d+%d): %s = %.17g, R %.17g (relative difference %.3g > %g)",
					c.name, kind, len(c.base), len(c.cand), what, got, want, d, tol)
			}
		}
		switch c.mode {
		case "exact":
			if !strings.Contains(c.rMethod, "exact") {
				t.Errorf("%s: R's method %q, want the exact test", c.name, c.rMethod)
			}
			check("p exact", s.P, c.p, rTolExact)
		case "approx":
			if !strings.Contains(c.rMethod, "continuity correction") {
				t.Errorf("%s: R's method %q, want the approximation with continuity correction", c.name, c.rMethod)
			}
			check("p approx", s.P, c.p, rTolApprox)
		}
		check("CI95", s.CI95, c.ci95, rTolWelch)
		check("CI98", s.CI98, c.ci98, rTolWelch)
		scale := math.Abs(s.Baseline.Mean) + math.Abs(s.Candidate.Mean)
		if d := math.Abs(s.Delta - c.delta); d > rTolDelta*scale {
			t.Errorf("%s: Delta = %.17g, R %.17g", c.name, s.Delta, c.delta)
		} else {
			worst["Delta (/scale)"] = math.Max(worst["Delta (/scale)"], d/scale)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("largest relative difference, %-14s %.3g", k+":", worst[k])
	}
	t.Logf("cases by R's p method and ties: %v", kinds)
	// The table is meant to meet each of ours: exact without ties, exact
	// with ties (Welch only), the approximation with and without ties.
	for _, k := range []string{"exact untied", "none tied", "approx untied", "approx tied"} {
		if kinds[k] == 0 {
			t.Errorf("no case of kind %q: the exact limits in stats.go moved? resize the cases", k)
		}
	}
}

// rScript reads the cases (name, mode, baseline, candidate; the samples as
// comma-separated hexadecimal doubles, read exactly) and prints, per case,
// the p of wilcox.test (NA when mode is "none"), the 95% and 98% half-widths
// of Welch's interval of candidate − baseline, that difference of means,
// the sizes read and wilcox.test's method. Its first line is R's version.
const rScript = `
args <- commandArgs(trailingOnly = TRUE)
cat(R.version.string, "\n", sep = "")
num <- function(s) as.numeric(strsplit(s, ",", fixed = TRUE)[[1]])
for (line in readLines(args[1])) {
  f <- strsplit(line, "\t", fixed = TRUE)[[1]]
  x <- num(f[3]); y <- num(f[4])
  p <- NA; method <- "none"
  if (f[2] != "none") {
    w <- wilcox.test(x, y, alternative = "two.sided", exact = (f[2] == "exact"), correct = TRUE)
    p <- w$p.value; method <- w$method
  }
  t95 <- t.test(y, x, var.equal = FALSE, conf.level = 0.95)
  t98 <- t.test(y, x, var.equal = FALSE, conf.level = 0.98)
  est <- unname(t95$estimate[1] - t95$estimate[2])
  cat(f[1], sprintf("%.17g", c(p, diff(t95$conf.int) / 2, diff(t98$conf.int) / 2, est)),
      length(x), length(y), method, sep = "\t")
  cat("\n")
}
`

// parseROutput fills the cases' R figures from the script's output and
// returns R's version.
func parseROutput(t *testing.T, out string, cases []rCase) string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(cases)+1 {
		t.Fatalf("R printed %d lines, want %d:\n%s", len(lines), len(cases)+1, out)
	}
	for i, line := range lines[1:] {
		f := strings.Split(line, "\t")
		c := &cases[i]
		if len(f) != 8 || f[0] != c.name {
			t.Fatalf("R's line %d %q: want 8 fields for %s", i+2, line, c.name)
		}
		var nums [4]float64
		for j := range nums {
			if f[1+j] == "NA" {
				nums[j] = math.NaN()
				continue
			}
			v, err := strconv.ParseFloat(f[1+j], 64)
			if err != nil {
				t.Fatalf("R's line %d %q: %v", i+2, line, err)
			}
			nums[j] = v
		}
		c.p, c.ci95, c.ci98, c.delta = nums[0], nums[1], nums[2], nums[3]
		var err1, err2 error
		c.rNBase, err1 = strconv.Atoi(f[5])
		c.rNCand, err2 = strconv.Atoi(f[6])
		if err1 != nil || err2 != nil {
			t.Fatalf("R's line %d %q: sizes", i+2, line)
		}
		c.rMethod = f[7]
	}
	return lines[0]
}

// rCases are the samples, from a fixed seed: untied (continuous values)
// and tied (values rounded to a grid, exact in binary), small and large,
// on both sides of the exact limits (400 in all without ties, 120 with),
// with and without a shift, with unequal sizes and spreads.
func rCases() []rCase {
	rng := rand.New(rand.NewPCG(20261202, 0x7a5))
	normal := func(n int, mean, sd float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = mean + sd*rng.NormFloat64()
		}
		return xs
	}
	// grid rounds to multiples of step (a power of two: exact), making ties.
	grid := func(xs []float64, step float64) []float64 {
		for i := range xs {
			xs[i] = math.Round(xs[i]/step) * step
		}
		return xs
	}
	constant := func(n int, v float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = v
		}
		return xs
	}
	return []rCase{
		// Exact, no ties (R: exact=TRUE).
		{name: "3v4", base: normal(3, 10, 1), cand: normal(4, 11, 1)},
		{name: "5v5 separated", base: normal(5, 0, 0.1), cand: normal(5, 100, 0.1)},
		{name: "8v8 no shift", base: normal(8, 50, 5), cand: normal(8, 50, 5)},
		{name: "2v30", base: normal(2, 1, 1), cand: normal(30, 1.5, 1)},
		{name: "12v15 shift", base: normal(12, 1000, 30), cand: normal(15, 1040, 30)},
		{name: "60v60 small shift", base: normal(60, 100, 10), cand: normal(60, 102, 10)},
		{name: "40v70 tiny p", base: normal(40, 100, 5), cand: normal(70, 115, 5)},
		{name: "5v300", base: normal(5, -3, 2), cand: normal(300, -1, 2)},
		{name: "300v5", base: normal(300, 7e-4, 1e-5), cand: normal(5, 6.9e-4, 1e-5)},
		{name: "5v200 unequal spread", base: normal(5, 20, 10), cand: normal(200, 25, 0.1)},
		// Exact with ties, up to 120 in all: R base has no counterpart,
		// Welch's interval only.
		{name: "tied 10v12", base: grid(normal(10, 20, 2), 1), cand: grid(normal(12, 21, 2), 1)},
		{name: "tied 60v60", base: grid(normal(60, 5, 1), 0.5), cand: grid(normal(60, 5.3, 1), 0.5)},
		{name: "tied constant baseline", base: constant(10, 7), cand: grid(normal(30, 7.5, 1), 1)},
		// Normal approximation with ties, above 120 (R: exact=FALSE,
		// correct=TRUE, its tie correction always on).
		{name: "tied 61v60", base: grid(normal(61, 5, 1), 0.5), cand: grid(normal(60, 5.3, 1), 0.5)},
		{name: "tied 100v150 heavy", base: grid(normal(100, 2, 1), 1), cand: grid(normal(150, 2.2, 1), 1)},
		{name: "tied 80v80 tiny p", base: grid(normal(80, 20, 3), 1), cand: grid(normal(80, 30, 3), 1)},
		{name: "tied 200v200 no shift", base: grid(normal(200, 0, 1), 0.25), cand: grid(normal(200, 0, 1), 0.25)},
		{name: "tied constant baseline 100v30", base: constant(100, 7), cand: grid(normal(30, 7.2, 1), 1)},
		// Normal approximation without ties, above 400.
		{name: "201v200", base: normal(201, 100, 10), cand: normal(200, 101, 10)},
		{name: "300v500 shift", base: normal(300, 1e5, 1e3), cand: normal(500, 1.002e5, 1.5e3)},
		{name: "250v250 tiny p", base: normal(250, 10, 1), cand: normal(250, 11.5, 1)},
		{name: "1000v50", base: normal(1000, 0, 1), cand: normal(50, -0.3, 3)},
	}
}

// hasTies says whether a and b pooled hold a value twice.
func hasTies(a, b []float64) bool {
	all := slices.Concat(a, b)
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			return true
		}
	}
	return false
}

// hexList writes xs as comma-separated hexadecimal doubles, which R reads
// bit for bit (a decimal string need not round the same way in R_strtod).
func hexList(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatFloat(x, 'x', -1, 64)
	}
	return strings.Join(s, ",")
}

// relDiff is |a − b| relative to the larger magnitude (0 when both are 0).
func relDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}
