package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/stats"
	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

// impactTargets starts two reference targets, the second with delay, and
// writes one CA file that verifies both.
func impactTargets(t *testing.T, delay time.Duration) (a, b, ca string) {
	t.Helper()
	p, _ := profiles.Builtin().Get("ecdhe-ecdsa-aes128-gcm-sha256-p256")
	var pems []byte
	var urls []string
	for _, d := range []time.Duration{0, delay} {
		tg, err := target.Start(target.Config{Profiles: []*profiles.Profile{p}, Delay: d})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tg.Close() })
		pems = append(pems, tg.CA.CertPEM()...)
		urls = append(urls, "https://localhost:"+portOf(tg.Listeners[0].Addr)+"/1k")
	}
	ca = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pems, 0o644); err != nil {
		t.Fatal(err)
	}
	return urls[0], urls[1], ca
}

// TestImpact: a candidate that adds 20 ms before every response is found to
// add about 20 ms (10 to 40 ms, the median of the rounds' differences),
// significantly, at 8 rounds a side; identical targets are never
// significant, their shift within ±10 ms; 2 rounds a side are inconclusive
// whatever the shift, with the reason.
func TestImpact(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delay  time.Duration
		rounds string
		bound  string
		// verdicts are the acceptable verdicts; lo and hi bound the mean
		// shift (ms), medLo and medHi the median of the rounds' paired
		// differences (candidate − baseline, ms: a stalled round or two
		// moves the mean, not the median); reason is a phrase of the
		// reason if inconclusive.
		verdicts     []string
		lo, hi       float64
		medLo, medHi float64
		reason       string
	}{
		// A 20 ms sleep in the target: about 20 ms more per request. The
		// samples are the rounds' means; when the two cores are busy the
		// baseline (all CPU) slows more than the candidate (mostly asleep),
		// so the shift reads less (a 5 ms sleep read +1.7 ms at load
		// average 17, with a 6.4 ms baseline). 8 rounds a side: p < 0.01
		// allows 7 of the 64 pairs out of order. A round stalled for long
		// can widen the Welch interval past zero (+25 ms ± 49 seen): then
		// inconclusive, saying so.
		// Bounds: the median paired difference within 10 to 40 ms (read
		// 14.6 and 13.1 at load average 15 to 20, per-round differences
		// 1.7 to 40.8 ms); the mean within 10 to 80 ms (read 18.8, 15.3,
		// and +25 seen: 80 is two rounds stalled by 240 ms).
		{"20ms delay", 20 * time.Millisecond, "8", "5", []string{stats.VerdictSignificant, stats.VerdictInconclusive}, 10, 80,
			10, 40, "but the 95% interval"},
		// Identical targets: equivalent within 50%, or inconclusive when the
		// shared CPU spreads the rounds more than that; never significant
		// but by the 1% chance of the test. One stalled round can move the
		// mean (+9.6 ms ± 27.6 seen at load average 20).
		// Bounds: the median paired difference within ±10 ms (read +5.6
		// and +4.2 ms at load average 15 to 20 with a 15 to 22 ms baseline,
		// per-round differences −21 to +67 ms); the mean within ±60 ms (read
		// +19.7, +1.75, +9.6: 60 is one of 6 rounds stalled by 360 ms).
		{"identical", 0, "6", "50", []string{stats.VerdictEquivalent, stats.VerdictInconclusive}, -60, 60, -10, 10,
			"rounds a side would be needed"},
		// 2 rounds a side: the smallest possible p is 2/6.
		// Any shift: one loaded round can swamp it (−0.6 ms seen at load
		// average 18).
		{"2 rounds", 20 * time.Millisecond, "2", "5", []string{stats.VerdictInconclusive}, math.Inf(-1), math.Inf(1),
			math.Inf(-1), math.Inf(1), "2 rounds a side cannot reach p < 0.01: the smallest possible p is 0.333"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, ca := impactTargets(t, tc.delay)
			code, stdout, stderr := invoke(t, context.Background(), "impact", "-q", "--baseline", a, "--candidate", b, "--cacert", ca,
				"-c", "2", "-d", "500ms", "--warmup", "200ms", "--rounds", tc.rounds, "--cooldown", "0s", "--format", "json",
				"--equivalence-bound", tc.bound,
				"-H", "User-Agent: {{random.base64 500}}", "--profile", "ecdhe-ecdsa-aes128-gcm-sha256-p256")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep struct {
				Metrics map[string]struct {
					Baseline, Candidate, Delta float64
					DeltaPct                   float64 `json:"delta_pct"`
					Significant                bool
					Verdict                    string
				}
				Shift struct {
					Delta, CI95, P      float64
					Significant         bool
					Verdict             string
					Bound               float64 `json:"equivalence_bound"`
					BoundPct            float64 `json:"equivalence_bound_pct"`
					Reason              string
					RoundsNeeded        int `json:"rounds_needed"`
					Baseline, Candidate struct{ N int }
				} `json:"response_time_shift"`
				Verdict, Summary string
				Rounds           []struct {
					Baseline  float64 `json:"baseline_response_time_ms"`
					Candidate float64 `json:"candidate_response_time_ms"`
				}
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			s := rep.Shift
			t.Logf("%s", rep.Summary)
			if !slices.Contains(tc.verdicts, rep.Verdict) || s.Verdict != rep.Verdict || rep.Metrics["response_time"].Verdict != rep.Verdict {
				t.Errorf("verdict %q (shift %q, metric %q), want one of %q", rep.Verdict, s.Verdict, rep.Metrics["response_time"].Verdict, tc.verdicts)
			}
			if tc.delay > 0 && tc.rounds == "8" && s.P >= stats.Alpha {
				t.Errorf("p = %v at 8 rounds a side against a 20 ms delay", s.P)
			}
			if n, _ := strconv.Atoi(tc.rounds); s.Baseline.N != n || s.Candidate.N != n {
				t.Errorf("samples %d and %d, want one per round (%d)", s.Baseline.N, s.Candidate.N, n)
			}
			bound, _ := strconv.ParseFloat(tc.bound, 64)
			if s.BoundPct != bound || s.Bound <= 0 || !strings.Contains(rep.Summary, "±"+tc.bound+"% of the baseline") {
				t.Errorf("bound %v (%v%%), want %s%% of the baseline, said in %q", s.Bound, s.BoundPct, tc.bound, rep.Summary)
			}
			if rep.Verdict == stats.VerdictInconclusive {
				if !strings.Contains(s.Reason, tc.reason) || s.RoundsNeeded == 0 && !strings.Contains(s.Reason, "no number of rounds") {
					t.Errorf("reason %q (rounds needed %d), want %q", s.Reason, s.RoundsNeeded, tc.reason)
				}
			} else if s.Reason != "" || s.RoundsNeeded != 0 {
				t.Errorf("%s with reason %q, rounds needed %d", rep.Verdict, s.Reason, s.RoundsNeeded)
			}
			if d := s.Delta; d < tc.lo || d > tc.hi {
				t.Errorf("shift %.2f ms, want %.1f to %.1f", d, tc.lo, tc.hi)
			}
			var diffs []float64
			for _, r := range rep.Rounds {
				diffs = append(diffs, r.Candidate-r.Baseline)
			}
			slices.Sort(diffs)
			med := math.NaN()
			if n := len(diffs); n > 0 {
				med = (diffs[(n-1)/2] + diffs[n/2]) / 2
			}
			t.Logf("rounds' paired differences (ms): %.2f; median %.2f", diffs, med)
			if !(med >= tc.medLo && med <= tc.medHi) {
				t.Errorf("median paired difference %.2f ms, want %.1f to %.1f (differences %.2f)", med, tc.medLo, tc.medHi, diffs)
			}
			// Siege's keys and units.
			for _, k := range []string{"transactions", "availability", "elapsed_time", "data_transferred", "response_time",
				"transaction_rate", "throughput", "concurrency", "successful_transactions", "failed_transactions",
				"longest_transaction", "shortest_transaction"} {
				if _, ok := rep.Metrics[k]; !ok {
					t.Errorf("no metric %q", k)
				}
			}
			rt := rep.Metrics["response_time"]
			if got := rt.Candidate - rt.Baseline; got != rt.Delta || rt.Baseline <= 0 || rt.Baseline > 1 {
				t.Errorf("response_time %+v (seconds)", rt)
			}
			if rep.Metrics["availability"].Baseline != 100 {
				t.Errorf("availability %+v", rep.Metrics["availability"])
			}
		})
	}
}

func TestImpactBadInput(t *testing.T) {
	dir := t.TempDir()
	urls := filepath.Join(dir, "urls.txt")
	os.WriteFile(urls, []byte("https://h/a\nftp://h/b\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"impact", "--baseline", "https://a/"}, "both required"},                                          // no candidate
		{[]string{"impact", "--baseline", "http://a/", "--candidate", "https://b/"}, "scheme must be https"},       // plain HTTP
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "--rounds", "0"}, "--rounds"}, // no rounds
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "-H", "X: {{random.b64 5}}"}, "bad --header"},
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "--urls", urls}, "urls.txt:2"},
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "--format", "pdf"}, "unknown --format"},
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "--rate", "5"}, "--rate"},
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "--equivalence-bound", "0"}, "--equivalence-bound"},
		{[]string{"impact", "--baseline", "https://a/", "--candidate", "https://b/", "--equivalence-bound", "five"}, "--equivalence-bound"},
	} {
		code, _, stderr := invoke(t, context.Background(), tc.args...)
		if code != exitBadUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestReportSiege prints a run record in Siege's layout.
func TestReportSiege(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.json")
	if code, _, stderr := invoke(t, context.Background(), "cps", "-q", "-c", "2", "-d", "300ms", "--warmup", "0s", "--json", file); code != exitOK {
		t.Fatalf("cps: exit %d: %s", code, stderr)
	}
	var rec struct{ Transactions int64 }
	data, _ := os.ReadFile(file)
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := invoke(t, context.Background(), "report", "--format", "siege", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Transactions:", " hits", "Availability:", "100.00 %", "Transaction rate:", "Longest transaction:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
	if want := strconv.FormatInt(rec.Transactions, 10) + " hits"; !strings.Contains(stdout, want) {
		t.Errorf("want %q in:\n%s", want, stdout)
	}
}
