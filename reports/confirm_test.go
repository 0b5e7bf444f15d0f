package reports_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
	"github.com/tlsbench/tlsbench/reports"
	"github.com/tlsbench/tlsbench/reports/reporttest"
	"github.com/tlsbench/tlsbench/schemas/schematest"
)

// TestCompareConfirm: two campaigns of one plan, the second judged against
// the first cell by cell: within the stricter of the two plans' tolerances
// (5%, not 10%) a cell is confirmed, beyond it flagged; cells on one side
// only and cells without a published value are listed as such, not as 0.
func TestCompareConfirm(t *testing.T) {
	first, second := reporttest.Repeat()
	c := compare(t, campaign(t, first), campaign(t, second))
	conf := c.Confirmation
	if conf == nil {
		t.Fatal("two campaigns compared without a confirmation")
	}
	if conf.Tolerance != 0.05 || !strings.Contains(conf.ToleranceNote, "(A ±5%, B ±10%): the stricter is used") {
		t.Errorf("tolerance %v (%q), want the stricter 0.05 and a note", conf.Tolerance, conf.ToleranceNote)
	}
	want := map[string]string{
		"adc-a cps HTTP/1.1 " + reporttest.P384:        method.VerdictConfirmed,
		"adc-a cps HTTP/1.1 " + reporttest.RSA:         method.VerdictConfirmed,
		"adc-a throughput HTTP/1.1 " + reporttest.P384: method.VerdictOnlyA,
		"adc-b cps HTTP/1.1 " + reporttest.P384:        method.VerdictDiffers,
		"adc-b cps HTTP/1.1 " + reporttest.RSA:         method.VerdictNoValue,
		"adc-b throughput HTTP/1.1 " + reporttest.P384: method.VerdictOnlyA,
		"adc-c cps HTTP/1.1 " + reporttest.P384:        method.VerdictOnlyB,
		"adc-c cps HTTP/1.1 " + reporttest.RSA:         method.VerdictOnlyB,
	}
	if len(conf.Cells) != len(want) {
		t.Errorf("%d cells, want %d", len(conf.Cells), len(want))
	}
	for _, cc := range conf.Cells {
		if cc.Verdict != want[cc.Cell] {
			t.Errorf("%s: verdict %q, want %q", cc.Cell, cc.Verdict, want[cc.Cell])
		}
		switch cc.Verdict {
		case method.VerdictConfirmed, method.VerdictDiffers:
			if cc.A == nil || cc.B == nil || cc.Delta == nil || cc.DeltaPct == nil {
				t.Fatalf("%s: compared without both values: %+v", cc.Cell, cc)
			}
			if got := (*cc.B - *cc.A) / *cc.A * 100; *cc.DeltaPct != got {
				t.Errorf("%s: Δ%% %v, want (B − A) ÷ A = %v", cc.Cell, *cc.DeltaPct, got)
			}
		default:
			if cc.Delta != nil || cc.DeltaPct != nil {
				t.Errorf("%s (%s): a difference %v without two published values", cc.Cell, cc.Verdict, *cc.Delta)
			}
		}
		if cc.Cell == "adc-b cps HTTP/1.1 "+reporttest.RSA && (cc.B != nil || cc.StateB != "no final run was accepted") {
			t.Errorf("%s: B %v, state %q: want no value, and why", cc.Cell, cc.B, cc.StateB)
		}
	}
	const summary = "2 of 3 cells confirmed within ±5%; 1 differs: adc-b cps HTTP/1.1 " + reporttest.P384 + " (+21.0%); " +
		"5 cells not compared (on one side only or without a published value)"
	if conf.Summary != summary {
		t.Errorf("summary\n%s\nwant\n%s", conf.Summary, summary)
	}

	for _, tc := range []struct {
		file   string
		render func(io.Writer) error
	}{
		{"compare-confirm.txt", func(w io.Writer) error { return reports.ComparisonDoc(c).Text(w) }},
		{"compare-confirm.md", func(w io.Writer) error { return reports.ComparisonDoc(c).Markdown(w, "confirm-", nil) }},
		{"compare-confirm.csv", func(w io.Writer) error { return reports.ComparisonCSV(w, c) }},
		{"compare-confirm.json", func(w io.Writer) error { return reports.ComparisonJSON(w, c) }},
	} {
		var buf bytes.Buffer
		if err := tc.render(&buf); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if strings.HasSuffix(tc.file, ".json") {
			schematest.Valid(t, schematest.Detect(buf.Bytes()), tc.file, buf.Bytes())
		}
		if !strings.Contains(buf.String(), "adc-b cps HTTP/1.1 "+reporttest.P384) {
			t.Errorf("%s: no flagged cell", tc.file)
		}
		golden := filepath.Join("testdata", "golden", tc.file)
		if *update {
			if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./reports -run TestCompareConfirm -update to create it)", err)
		}
		if got := buf.String(); got != string(want) {
			t.Errorf("%s differs from the golden file:\n%s", tc.file, firstDiff(got, string(want)))
		}
	}
	var html bytes.Buffer
	if err := reports.ComparisonDoc(c).HTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Does B confirm A?", "DIFFERS (beyond ±5%)", ">only in B</td>"} {
		if !strings.Contains(html.String(), w) {
			t.Errorf("HTML: no %q", w)
		}
	}
}
