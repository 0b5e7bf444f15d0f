package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/bench/method/plan"
)

// TestQualifySuiteQuick: qualify --suite rfc9411 --quick against the
// reference target runs every test of the quick subset within a minute:
// each is a row of the table and of summary.json with a value, a cell, and
// runs in the ledger judged by RFC 9411 (verdict recorded); the progress
// lines name the test and its verdict.
func TestQualifySuiteQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("a campaign of about 15 s")
	}
	out := filepath.Join(t.TempDir(), "suite")
	start := time.Now()
	// Two tests of the quick suite, a §7.8 and the §7.6 it takes its rate
	// from (the whole quick suite runs against nginx and HAProxy in
	// suite_duts_test.go).
	code, stdout, stderr := invoke(t, context.Background(), "qualify", "-q", "--suite", "rfc9411", "--quick",
		"--tests", "7.6 1k,7.8 1k s1,7.9", "--dut", "ref=reference", "--out", out)
	took := time.Since(start)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Logf("%s\n%s", took, stdout)
	if took > 60*time.Second {
		t.Errorf("the quick suite took %s, want 60 s at most", took)
	}
	all, _, err := plan.Suite(plan.SuiteRFC9411, true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := plan.FilterTests(all, []string{"7.6 1k", "7.8 1k s1", "7.9"})
	if err != nil || len(want) != 3 {
		t.Fatalf("FilterTests: %d tests, %v", len(want), err)
	}
	data, err := os.ReadFile(filepath.Join(out, method.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := method.DecodeSummary(data)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := method.ReadLedger(filepath.Join(out, method.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		i := slices.IndexFunc(s.Rows, func(r method.Row) bool { return r.Test == w.Name })
		if i < 0 {
			t.Errorf("%s: no row in summary.json", w.Name)
			continue
		}
		if r := s.Rows[i]; r.Value == nil || r.Runs == nil || r.Runs.Accepted == 0 || r.Unit == "" {
			t.Errorf("%s: row %+v, want a value and its runs", w.Name, r)
		}
		if !slices.ContainsFunc(s.Cells, func(c *method.Cell) bool { return c.Test == w.Name && c.RFC9411 == w.RFC9411 }) {
			t.Errorf("%s: no cell in summary.json", w.Name)
		}
		judged := slices.ContainsFunc(entries, func(e *method.Entry) bool {
			return e.Test == w.Name && e.Phase == "final" && e.Verdict != "" && strings.Contains(e.Key, "|"+w.Name+"|")
		})
		if !judged {
			t.Errorf("%s: no final run with its verdict in the ledger", w.Name)
		}
		if !strings.Contains(stdout, w.Name) || !strings.Contains(stderr, " "+w.Name+" ") {
			t.Errorf("%s: not in the table or the progress", w.Name)
		}
	}
	// §7.9's search stops at the quick suite's ceiling, 32, or below it
	// at the device: at the ceiling, the value is a lower bound, "≥ N (the
	// search's ceiling …)" in the table, never the device's capacity.
	held := slices.IndexFunc(s.Cells, func(c *method.Cell) bool { return c.Test == "7.9 1k" })
	row := slices.IndexFunc(s.Rows, func(r method.Row) bool { return r.Test == "7.9 1k" })
	if held < 0 || row < 0 {
		t.Fatalf("no 7.9 cell or row")
	}
	const ceiling = "the search's ceiling, explore.connections.max 32"
	switch c := s.Cells[held]; {
	case c.Level == 32 && (c.Bound != ceiling || s.Rows[row].Bound != ceiling || !strings.Contains(stdout, "≥ ") ||
		!strings.Contains(stdout, ceiling)):
		t.Errorf("7.9 held the ceiling's 32 connections, published bound %q (row %q), not as a lower bound:\n%s",
			c.Bound, s.Rows[row].Bound, stdout)
	case c.Level < 32 && c.Bound != "":
		t.Errorf("7.9 failed at %d (below the ceiling), yet bound %q", c.Level, c.Bound)
	}
	if !strings.Contains(stderr, "RFC 9411 pass") {
		t.Errorf("the progress does not print the verdicts:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Error(err)
	}
	// The report (its JSON checked against its schema by invoke) has a
	// table of the suite's tests.
	code, rep, stderr := invoke(t, context.Background(), "report", out, "--format", "json")
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var doc struct {
		Suite   []struct{ Test, Bound string } `json:"suite"`
		RFC9411 []struct {
			Name    string
			Results []struct {
				KPIs []struct{ Name, Value string }
			}
		} `json:"rfc9411"`
	}
	if err := json.Unmarshal([]byte(rep), &doc); err != nil || len(doc.Suite) != len(want) {
		t.Errorf("report: %v, %d suite results, want %d", err, len(doc.Suite), len(want))
	}
	for _, r := range doc.Suite {
		if r.Test == "7.9 1k" && r.Bound != s.Cells[held].Bound {
			t.Errorf("report: 7.9's bound %q, want the summary's %q", r.Bound, s.Cells[held].Bound)
		}
	}
	var kpi string
	for _, rt := range doc.RFC9411 {
		for _, r := range rt.Results {
			for _, k := range r.KPIs {
				if rt.Name == "7.9 1k" && k.Name == "connection capacity" {
					kpi = k.Value
				}
			}
		}
	}
	if b := s.Cells[held].Bound; b != "" && (!strings.HasPrefix(kpi, "≥ ") || !strings.Contains(kpi, b)) {
		t.Errorf("report: §7.9's KPI %q, want the lower bound (%s)", kpi, b)
	}
	// Resumed, the campaign takes every run from the ledger (the §7.8 and
	// §7.9 requests derived from the published values are the same) and
	// prints the same table.
	code, again, stderr := invoke(t, context.Background(), "qualify", "-q", "--resume", out)
	if code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, "(from the ledger)") != strings.Count(stderr, " c=") {
		t.Errorf("resume of a finished suite made runs:\n%s", stderr)
	}
	if again != stdout {
		t.Errorf("resumed table differs:\n%s\nvs\n%s", again, stdout)
	}
}
