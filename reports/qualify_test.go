package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
)

// TestQualifyTableNotes: an inconsistent cell names its metric and the
// table says what to do; a refused profile is "not supported: reason".
func TestQualifyTableNotes(t *testing.T) {
	v := 100.0
	s := &method.Summary{
		Rows: []method.Row{
			{DUT: "a", Profile: "p1", Cipher: "X", CPS: &v, CPSRuns: method.RunCount{Accepted: 5, Total: 5}, Consistent: false},
			{DUT: "a", Profile: "p2", Unsupported: "tls_alert:handshake_failure: remote error"},
		},
		Cells: []*method.Cell{
			{DUT: "a", Engine: "cps", Profile: "p1", Value: v, Accepted: 5, Total: 5},
			{DUT: "a", Engine: "cps", Profile: "p2", Unsupported: "tls_alert:handshake_failure: remote error", Failed: "not supported: x"},
		},
	}
	var b bytes.Buffer
	if err := QualifyTable(s).Text(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[1], "inconsistent CPS") || strings.Contains(lines[1], "Gbps") {
		t.Errorf("row 1: %q", lines[1])
	}
	if strings.Count(lines[2], "not supported") != 2 || !strings.Contains(lines[2], "not supported: tls_alert:handshake_failure") {
		t.Errorf("row 2: %q", lines[2])
	}
	if !strings.Contains(out, "To do: rerun") {
		t.Errorf("no advice:\n%s", out)
	}
	var p bytes.Buffer
	if err := PreliminaryTable([]method.Prelim{{DUT: "a", Engine: "cps", Profile: "p2", Unsupported: "refused"}}).Text(&p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.String(), "not supported: refused") {
		t.Errorf("preliminary: %q", p.String())
	}
}

// TestUnsupportedNotConsistent: a row the DUT does not support measured
// nothing, so it is not consistent: in the CSV and the JSON as in its cells
// (the Apache/Caddy cross-check found "true" there, "false" in the cells).
func TestUnsupportedNotConsistent(t *testing.T) {
	why := "tls_alert:handshake_failure: remote error"
	s := &method.Summary{Schema: method.SummarySchema, Name: "x",
		Rows: []method.Row{{DUT: "a", Profile: "p2", Unsupported: why}},
		Cells: []*method.Cell{
			{DUT: "a", Engine: "cps", Profile: "p2", Unsupported: why, Failed: "not supported: " + why},
			{DUT: "a", Engine: "throughput", Profile: "p2", Unsupported: why, Failed: "not supported: " + why},
		}}
	r, err := Build([]Input{{Name: "c", Campaign: &Campaign{Summary: s}}})
	if err != nil {
		t.Fatal(err)
	}
	var c, j bytes.Buffer
	if err := ReportCSV(&c, r); err != nil {
		t.Fatal(err)
	}
	if err := ReportJSON(&j, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.String(), ",false,") || strings.Contains(c.String(), ",true,") {
		t.Errorf("csv:\n%s", c.String())
	}
	if strings.Contains(j.String(), `"consistent": true`) {
		t.Errorf("json says consistent:\n%s", j.String())
	}
}
