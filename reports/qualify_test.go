package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/bench/method"
)

// TestQualifyTableNotes: an inconsistent cell is marked [i] in its cell,
// a note says so in a sentence and the legend says what to do; a refused
// profile names its profile and says "not supported", and why below.
func TestQualifyTableNotes(t *testing.T) {
	v := 100.0
	s := &method.Summary{
		Rows: []method.Row{
			{DUT: "a", Profile: "p1", Cipher: "X", CPS: &v, CPSRuns: method.RunCount{Accepted: 5, Total: 5}, Consistent: false},
			{DUT: "a", Profile: "p2", Unsupported: "tls_alert:handshake_failure: remote error"},
		},
		Cells: []*method.Cell{
			{DUT: "a", Engine: "cps", Profile: "p1", Value: v, Accepted: 5, Total: 5, Spread: 0.02},
			{DUT: "a", Engine: "cps", Profile: "p2", Unsupported: "tls_alert:handshake_failure: remote error", Failed: "not supported: x"},
		},
	}
	var b bytes.Buffer
	if err := QualifyTable(&Campaign{Summary: s}).Text(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[1], "100 ±2.0% [i]") || !strings.Contains(lines[1], "p1") {
		t.Errorf("row 1: %q", lines[1])
	}
	if !strings.Contains(lines[2], "p2") || strings.Count(lines[2], "not supported") != 1 {
		t.Errorf("row 2: %q", lines[2])
	}
	for _, want := range []string{"a p1 CPS: [i] inconsistent: too few of the 5 accepted final runs (of 5)",
		"a p2 CPS: not supported: tls_alert:handshake_failure", "To do: rerun", "RUNS a/t: a of the t final runs"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--quick") {
		t.Errorf("advice to a plan names --quick:\n%s", out)
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

// TestQualifyTableProtocols: one profile over HTTP/1.1 and HTTP/2 is two
// rows, each naming its protocol with its own cells' values (a summary's
// row and cell without a protocol are HTTP/1.1's).
func TestQualifyTableProtocols(t *testing.T) {
	h1, h2 := 100.0, 200.0
	one := method.RunCount{Accepted: 1, Total: 1}
	s := &method.Summary{
		Rows: []method.Row{{DUT: "a", Profile: "p", CPS: &h1, CPSRuns: one, Consistent: true},
			{DUT: "a", Profile: "p", Protocol: "http/2", CPS: &h2, CPSRuns: one, Consistent: true}},
		Cells: []*method.Cell{{DUT: "a", Engine: "cps", Profile: "p", Value: h1, Accepted: 1, Total: 1, Consistent: true},
			{DUT: "a", Engine: "cps", Protocol: "http/2", Profile: "p", Value: h2, Accepted: 1, Total: 1, Consistent: true}},
	}
	var b bytes.Buffer
	if err := QualifyTable(&Campaign{Summary: s}).Text(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[0], "PROTOCOL") || !strings.Contains(lines[1], "HTTP/1.1") ||
		!strings.Contains(lines[1], " 100 ") || !strings.Contains(lines[2], "HTTP/2") || !strings.Contains(lines[2], " 200 ") {
		t.Errorf("table:\n%s", b.String())
	}
}
