package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/vocab"
)

// TestQualifyRepeat: qualify --repeat 3 makes the final phase three times
// against the reference target; the summary holds each repeat's published
// value and their spread beside the tolerance, the table and the HTML
// report show it in the cell's note, the ledger marks the repeats, and a
// resume makes no run and prints the same table.
func TestQualifyRepeat(t *testing.T) {
	out, stdout, stderr := qualifyPlan(t, `name: repeat
duts: [{name: ref, url: reference}]
tests:
  - {engine: cps, profiles: [ecdhe-ecdsa-aes128-sha256-p256]}
method:
  duration: 300ms
  warmup: 50ms
  cooldown: 0s
  explore: {concurrency: {min: 2, max: 4}, probe_duration: 150ms, min_gain: 5%}
  accept: {max_generator_cpu: 100%}
  final: {min_accepted: 2, max_runs: 3, tolerance: 60%}
`, "--repeat", "3")
	if !strings.Contains(stderr, "repeat 3") {
		t.Errorf("progress does not show the repeats:\n%s", stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, method.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := method.DecodeSummary(data)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cells[0]
	r := c.Repeats
	if r == nil || len(r.Values) != 3 || r.Values[0] != c.Value || r.Tolerance != 0.6 || r.Spread != method.RepeatSpread(r.Values) {
		t.Fatalf("repeats %+v of cell value %v", r, c.Value)
	}
	if !strings.Contains(stdout, "CPS repeats ") || !strings.Contains(stdout, "tolerance 60%") {
		t.Errorf("table lacks the repeats' note:\n%s", stdout)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "CPS repeats ") {
		t.Error("the HTML report lacks the repeats' note")
	}
	if plan, err := os.ReadFile(filepath.Join(out, "plan.yaml")); err != nil || !strings.Contains(string(plan), "repeat: 3") {
		t.Errorf("the campaign's plan does not keep --repeat 3 (%v):\n%s", err, plan)
	}
	entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	repeats := map[int]bool{}
	for _, e := range entries {
		if e.Phase == vocab.Final {
			repeats[e.Repeat] = true
		}
	}
	if !repeats[0] || !repeats[2] || !repeats[3] {
		t.Errorf("final runs of repeats %v in the ledger, want the first, 2 and 3", repeats)
	}
	code, again, stderr := invoke(t, context.Background(), "qualify", "-q", "--resume", out)
	if code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, "(from the ledger)") != strings.Count(stderr, " c=") {
		t.Errorf("resume of a finished campaign made runs:\n%s", stderr)
	}
	if again != stdout {
		t.Errorf("resumed table differs:\n%s\nvs\n%s", again, stdout)
	}
}
