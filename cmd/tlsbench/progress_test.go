package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/metrics"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestQualifyProgressLines: without a terminal, qualify prints a progress
// line when each run starts (times, runs done and left, phase, cell, run k
// of at most n) and, as before, a line per finished run.
func TestQualifyProgressLines(t *testing.T) {
	_, _, stderr := qualifyPlan(t, `name: tiny
duts: [{name: ref, url: reference}]
tests:
  - {engine: cps, profiles: [ecdhe-ecdsa-aes128-sha256-p256]}
method:
  duration: 300ms
  warmup: 50ms
  cooldown: 100ms
  explore: {concurrency: {min: 2, max: 8}, probe_duration: 150ms, min_gain: 5%}
  accept: {max_generator_cpu: 100%}
  final: {min_accepted: 2, max_runs: 4, tolerance: 60%}
`)
	line := regexp.MustCompile(`^progress +(\S+) elapsed, ≤(\S+) left \| runs (\d+) done, ≤(\d+) left \| (preliminary|exploratory|final) run (\d+)/≤(\d+) ref cps ecdhe-ecdsa-aes128-sha256-p256`)
	var starts, ends int
	lastLeft := -1
	for _, l := range strings.Split(stderr, "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			done, _ := strconv.Atoi(m[3])
			left, _ := strconv.Atoi(m[4])
			k, _ := strconv.Atoi(m[6])
			n, _ := strconv.Atoi(m[7])
			if done != starts || done != ends {
				t.Errorf("%q: %d done, after %d starts and %d finished runs", l, done, starts, ends)
			}
			if left < 1 || k < 1 || k > n || lastLeft >= 0 && left >= lastLeft {
				t.Errorf("%q: %d runs left (%d before), run %d of at most %d", l, left, lastLeft, k, n)
			}
			if _, err := time.ParseDuration(m[2]); err != nil {
				t.Errorf("%q: estimate %q: %v", l, m[2], err)
			}
			if m[5] == "final" && n != 4 {
				t.Errorf("%q: a final run of at most %d, want 4 (max_runs)", l, n)
			}
			starts++
			lastLeft = left
			continue
		}
		for _, ph := range vocab.MethodPhases {
			if strings.HasPrefix(l, ph.String()+" ") {
				ends++
			}
		}
	}
	if starts == 0 || starts != ends {
		t.Errorf("%d progress lines for %d finished runs:\n%s", starts, ends, stderr)
	}
}

// TestProgressLiveLine: on a terminal the progress is one line, redrawn in
// place (carriage return, erase line), cleared before a finished run's line
// and drawn again below it; cleared at the end.
func TestProgressLiveLine(t *testing.T) {
	var buf bytes.Buffer
	p := &campaignProgress{w: &buf, tty: true, plain: func(metrics.Second) { t.Error("a plain line on a terminal") }}
	pr := method.Progress{Phase: vocab.Final, DUT: "a", Engine: vocab.EngineCPS, Profile: "p", Level: 32, Run: 2, Of: 10,
		Running: true, RunsDone: 14, RunsLeft: 43, Elapsed: 192 * time.Second, Remaining: 21*time.Minute + 40*time.Second}
	p.status = func() method.Progress { return pr }
	p.watch(pr)
	p.second(metrics.Second{T: 12, Transactions: 3400})
	p.event(method.Event{Phase: vocab.Final, DUT: "a", Engine: vocab.EngineCPS, Profile: "p", Seq: 2, Of: 10, Level: 32, Value: 3400, Accepted: true})
	p.done()
	want := "\r\033[K3m12s elapsed, ≤21m40s left | runs 14 done, ≤43 left | final run 2/≤10 a cps p c=32" +
		"\r\033[K3m12s elapsed, ≤21m40s left | runs 14 done, ≤43 left | final run 2/≤10 a cps p c=32 | 12s 3400 transactions  0 errors" +
		"\r\033[Kfinal       a cps p run 2/10 c=32: 3400 cps, accepted\n" +
		"\r\033[K3m12s elapsed, ≤21m40s left | runs 14 done, ≤43 left | final run 2/≤10 a cps p c=32 | 12s 3400 transactions  0 errors" +
		"\r\033[K"
	if got := buf.String(); got != want {
		t.Errorf("terminal output\n%q\nwant\n%q", got, want)
	}

	// Quiet: no live line, no per-second line; the finished runs remain.
	buf.Reset()
	p = &campaignProgress{w: &buf, tty: true, quiet: true}
	p.watch(pr)
	p.second(metrics.Second{T: 1})
	p.done()
	if buf.Len() != 0 {
		t.Errorf("quiet terminal output %q", buf.String())
	}
}

func TestRoughDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                             "0s",
		1499 * time.Millisecond:       "1s",
		4*time.Minute + 5*time.Second: "4m05s",
		time.Hour + 2*time.Minute + 3*time.Second: "1h02m03s",
		30 * time.Hour: "30h00m00s",
	} {
		if got := roughDuration(d); got != want {
			t.Errorf("roughDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
